package integration

import (
	"context"
	"fmt"
	"testing"
	"time"

	imagev1 "github.com/openshift/api/image/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/util/retry"
)

// tagOf returns the spec tag `tag` of the live imagestream `stream` in openshift.
func (e *env) tagOf(t *testing.T, stream, tag string) (*imagev1.ImageStream, *imagev1.TagReference) {
	t.Helper()
	is, err := e.images.ImageV1().ImageStreams("openshift").Get(context.Background(), stream, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for i := range is.Spec.Tags {
		if is.Spec.Tags[i].Name == tag {
			return is, &is.Spec.Tags[i]
		}
	}
	t.Fatalf("%s has no tag %s", stream, tag)
	return nil, nil
}

// editTag applies an admin's change to one spec tag, retrying on conflicts only (the importer
// and the operator write the stream too): any other answer is the server's verdict on the edit.
func (e *env) editTag(t *testing.T, stream, tag string, change func(*imagev1.TagReference)) {
	t.Helper()
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		is, ref := e.tagOf(t, stream, tag)
		change(ref)
		_, err := e.images.ImageV1().ImageStreams("openshift").Update(context.Background(), is, metav1.UpdateOptions{})
		return err
	})
	if err != nil {
		t.Fatalf("updating %s: %v", stream, err)
	}
}

// TestAdminImportScheduleAndModeSurviveUntilAnUpgrade plays OpenShift's documented procedures on
// a managed sample tag: "oc tag <image> python:3.12-ubi8 --scheduled" and PreserveOriginal for a
// multi-arch cluster. The schedule and the mode stay through an operator restart and its resyncs
// with no write; the same tag's from, which `oc tag` also changed, is reverted and the schedule kept;
// an upgrade to a new version puts the inventory's import policy back.
func TestAdminImportScheduleAndModeSurviveUntilAnUpgrade(t *testing.T) {
	parallel(t, aboutTwentySecond)
	e := newEnv(t)
	inv := x86Inventory(t)
	// The shipped resync until the revert: the admin's edit reaches the operator through the
	// stream's event, not at the next resync.
	opts := defaultOptions()
	op := e.startOperator(opts)
	e.waitManaged(t, inv, "v1")
	e.waitQuiet(t, 500*time.Millisecond)

	_, shipped := e.tagOf(t, "python", "3.12-ubi8")
	shippedFrom := shipped.From.Name
	if shipped.ImportPolicy.Scheduled || shipped.ImportPolicy.ImportMode == imagev1.ImportModePreserveOriginal {
		t.Fatalf("the library's python:3.12-ubi8 already has %+v: pick another tag", shipped.ImportPolicy)
	}
	admins := func(p imagev1.TagImportPolicy) bool {
		return p.Scheduled && p.ImportMode == imagev1.ImportModePreserveOriginal
	}

	// oc tag --scheduled: a new from and a schedule; PreserveOriginal on top.
	edited := time.Now()
	e.editTag(t, "python", "3.12-ubi8", func(tag *imagev1.TagReference) {
		tag.From.Name = "mirror.example:5000/ubi8/python-312:latest"
		tag.ImportPolicy.Scheduled = true
		tag.ImportPolicy.ImportMode = imagev1.ImportModePreserveOriginal
	})
	eventually(t, 10*time.Second, func() (bool, string) {
		_, tag := e.tagOf(t, "python", "3.12-ubi8")
		return tag.From.Name == shippedFrom && admins(tag.ImportPolicy), fmt.Sprintf("from %s, import policy %+v", tag.From.Name, tag.ImportPolicy)
	})
	// kube-apiserver logs a proxied write once the aggregated server's answer has gone back,
	// which may be after the test has read the result. The admin's new from also starts an
	// import, whose write to the stream may land between the operator's decision and its
	// update: that update is refused (409) and changes nothing, and the import's event brings
	// the decision again. So the writes counted are those the server carried out.
	var reverts []string
	eventually(t, 5*time.Second, func() (bool, string) {
		reverts = nil
		for _, ev := range e.operatorRequests(t, writes, onSamples, carriedOut, receivedAfter(edited)) {
			reverts = append(reverts, ev.Verb+" "+byObject(ev))
		}
		return len(reverts) > 0, "no sample write in the audit log yet"
	})
	if len(reverts) != 1 || reverts[0] != "update imagestreams/python" {
		t.Errorf("reverting the from wrote %v, want one update of python", reverts)
	}

	// A restart and resyncs: no write, the admin's policy in place.
	quietFrom := time.Now()
	time.Sleep(time.Second) // nothing more after the revert
	op.stop(t)
	opts.Resync = time.Second
	op = e.startOperator(opts)
	e.waitManaged(t, inv, "v1")
	time.Sleep(3 * time.Second) // the restarted operator's first syncs and two or three resyncs
	if w := e.operatorRequests(t, writes, onSamples, receivedAfter(quietFrom)); len(w) > 0 {
		t.Errorf("with the admin's schedule in place the operator wrote %v (quiet from %s)", describe(w), quietFrom.Format("15:04:05.000"))
	}
	if _, tag := e.tagOf(t, "python", "3.12-ubi8"); !admins(tag.ImportPolicy) {
		t.Errorf("the admin's import policy is gone: %+v", tag.ImportPolicy)
	}

	// An upgrade resets it to the inventory's.
	op.stop(t)
	opts.Version = "v2"
	e.startOperator(opts)
	e.waitManaged(t, inv, "v2")
	_, tag := e.tagOf(t, "python", "3.12-ubi8")
	if tag.ImportPolicy.Scheduled || tag.ImportPolicy.ImportMode == imagev1.ImportModePreserveOriginal {
		t.Errorf("after the upgrade python:3.12-ubi8 keeps %+v, want the inventory's import policy", tag.ImportPolicy)
	}
}
