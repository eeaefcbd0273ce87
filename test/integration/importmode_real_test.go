package integration

import (
	"fmt"
	"path/filepath"
	"testing"
	"time"

	imagev1 "github.com/openshift/api/image/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/samples-operator-dev/cluster-samples-operator/pkg/inventory"
)

// TestRealImportsFollowTheClusterTurningMultiArch: rule 4 of issue 50 with the real
// openshift-apiserver and openshift-controller-manager. A tag whose import mode the inventory
// leaves to the cluster names a manifest list for amd64 and arm64. While the cluster says Legacy
// the server imports one image of the list; once images.config's status says PreserveOriginal
// (what `oc adm upgrade --to-multi-arch` leads to), the operator moves the tag to that mode, the
// import controller imports it again, once, and the tag then holds the whole list; nothing more
// is written after. The operator runs at the shipped resync: it learns of the mode from the image
// configuration's event, not at a resync (TestTagsFollowTheClustersImportMode shows the resyncs
// write nothing).
func TestRealImportsFollowTheClusterTurningMultiArch(t *testing.T) {
	parallel(t, aboutAMinute)
	e, registry := newEnvRealImports(t)
	const stream, tag = "following", "list"
	listRef := registry + "/samples/following:" + tag
	list, err := pushManifestListFor(listRef, "amd64", "arm64/v8")
	if err != nil {
		t.Fatal(err)
	}
	is := &imagev1.ImageStream{
		ObjectMeta: metav1.ObjectMeta{Name: stream, Annotations: map[string]string{"openshift.io/display-name": "Follows the cluster's import mode"}},
		Spec: imagev1.ImageStreamSpec{Tags: []imagev1.TagReference{{
			Name:            tag,
			Annotations:     map[string]string{"tags": "builder"},
			From:            &corev1.ObjectReference{Kind: "DockerImage", Name: listRef},
			ReferencePolicy: imagev1.TagReferencePolicy{Type: imagev1.LocalTagReferencePolicy},
		}}},
	}
	dir := t.TempDir()
	writeJSON(t, filepath.Join(dir, inventory.ArchDirOCPX86_64, stream, "imagestreams", stream+".json"), is, "ImageStream", "image.openshift.io/v1")
	inv, err := inventory.LoadDir(dir, inventory.ArchDirOCPX86_64)
	if err != nil {
		t.Fatal(err)
	}

	e.setClusterImportMode(t, imagev1.ImportModeLegacy)
	opts := defaultOptions()
	opts.InventoryDir = dir
	e.startOperator(opts)
	e.waitManaged(t, inv, "v1")

	// Legacy: the server keeps one image of the list, not the list.
	var single string
	eventually(t, 60*time.Second, func() (bool, string) {
		single = importedImage(e.imageStream(stream), tag)
		return single != "" && single != list, fmt.Sprintf("%s:%s has image %q; want one image of the list %s", stream, tag, single, list)
	})
	e.waitQuiet(t, time.Second)

	changedAt := time.Now()
	e.setClusterImportMode(t, imagev1.ImportModePreserveOriginal)
	took := within(t, 60*time.Second, func() (bool, string) {
		got := importedImage(e.imageStream(stream), tag)
		return got == list, fmt.Sprintf("%s:%s has image %q; want the list %s", stream, tag, got, list)
	})
	t.Logf("the cluster turning PreserveOriginal: %s:%s imported again as the whole list %s after the status changed", stream, tag, took.Round(10*time.Millisecond))
	if ref := specTagOf(e.imageStream(stream), tag); ref == nil || ref.ImportPolicy.ImportMode != imagev1.ImportModePreserveOriginal {
		t.Errorf("%s:%s's spec import mode is %v; want PreserveOriginal", stream, tag, ref)
	}

	idle(t, 5*time.Second)
	imports := e.everyonesRequests(t, verb("create"), on("imagestreamimports"), named(stream), carriedOut, receivedAfter(changedAt))
	if len(imports) != 1 {
		t.Errorf("%d imports of %s after the cluster turned PreserveOriginal; want 1: %v", len(imports), stream, describe(imports))
	}
	writes := e.operatorRequests(t, writes, onSamples, carriedOut, receivedAfter(changedAt))
	if len(writes) != 1 {
		t.Errorf("%d operator writes of the samples after the change; want the one that moved the mode: %v", len(writes), describe(writes))
	}
}
