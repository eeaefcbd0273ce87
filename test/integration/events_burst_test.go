package integration

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/util/retry"

	"github.com/samples-operator-dev/cluster-samples-operator/pkg/inventory"
)

// everyRevertOfABurstIsReported: an admin script edits 40 samples at once; each revert is
// told by its own SampleReverted event, none swallowed by the event spam filter.
func everyRevertOfABurstIsReported(t *testing.T, e *env, inv *inventory.Inventory) {

	ctx := context.Background()
	// Streams whose display name the operator owns (the inventory sets it): changing it is drift.
	var names []string
	for _, name := range inv.ImageStreamNames() {
		if is, _ := inv.ImageStream(name); is.Annotations["openshift.io/display-name"] != "" && len(names) < 40 {
			names = append(names, name)
		}
	}
	if len(names) < 40 {
		t.Fatalf("the inventory has %d imagestreams with a display name, the test needs 40", len(names))
	}
	for _, name := range names {
		err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
			is, err := e.images.ImageV1().ImageStreams("openshift").Get(ctx, name, metav1.GetOptions{})
			if err != nil {
				return err
			}
			is.Annotations["openshift.io/display-name"] = "edited by a script"
			_, err = e.images.ImageV1().ImageStreams("openshift").Update(ctx, is, metav1.UpdateOptions{})
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	// A revert names every field it puts back: besides the display name, a stream may have had
	// its tags rewritten by an import the scene before requested and the emulator carried out
	// late, which the same revert puts back.
	const edited, told = "metadata.annotations[openshift.io/display-name]", "); the operator put back the fields it manages"
	eventually(t, 30*time.Second, func() (bool, string) {
		reported := map[string]bool{}
		for _, message := range e.eventsWithReason(t, "SampleReverted") {
			for _, name := range names {
				fields, ok := strings.CutPrefix(message, fmt.Sprintf("ImageStream openshift/%s was changed (", name))
				if fields, ok = strings.CutSuffix(fields, told); ok && slices.Contains(strings.Split(fields, ", "), edited) {
					reported[name] = true
				}
			}
		}
		var missing []string
		for _, name := range names {
			if !reported[name] {
				missing = append(missing, name)
			}
		}
		return len(missing) == 0, fmt.Sprintf("%d of 40 reverts have no SampleReverted event: %v", len(missing), missing)
	})
}
