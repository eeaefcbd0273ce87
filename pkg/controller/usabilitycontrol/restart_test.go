package usabilitycontrol

import (
	"testing"
	"time"

	imagev1 "github.com/openshift/api/image/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"

	"github.com/samples-operator-dev/cluster-samples-operator/pkg/desired"
	"github.com/samples-operator-dev/cluster-samples-operator/pkg/names"
	"github.com/samples-operator-dev/cluster-samples-operator/pkg/samplewriter"
)

// TestARestartKeepsTheArchitectureMarksWhileTheImagesCannotBeRead (issue 56, item 10): an
// operator judged ruby's amd64 tags unusable on the arm64 nodes and marked them. It restarts
// while the images cannot be read (openshift-apiserver away), or with the nodes' list refused:
// the marks it wants are those the stream carries, sync after sync, so the samples controller
// writes nothing; once the reads succeed the fresh verdicts are the same.
func TestARestartKeepsTheArchitectureMarksWhileTheImagesCannotBeRead(t *testing.T) {
	streams := map[string][]string{"ruby": {"sha256:r1", "sha256:r2"}}
	store := &answers{images: images{archs: map[string]string{"sha256:r1": "amd64", "sha256:r2": "amd64"}}, fail: map[string]error{}}
	before := newJudgedCluster(t, store, streams)
	before.nodes.OnAdd(node("node-arm64", "arm64"), false)
	before.nodes.OnDelete(node("node-amd64", "amd64"))
	before.sync(t)
	marks := before.c.verdicts.Marks(samplewriter.ImageStreamKind, "ruby")
	if len(marks) != 2 {
		t.Fatalf("marks before the restart %v, want both tags", marks)
	}
	obj, _, _ := before.streams.GetByKey(names.SamplesNamespace + "/ruby")
	marked := obj.(*imagev1.ImageStream).DeepCopy()
	desired.MarkImageStream(marked, marks) // as the samples controller writes them

	busy := apierrors.NewServiceUnavailable("the server is currently unable to handle the request")
	for _, tc := range []struct {
		name string
		// nodesListed: the arm64 node is seen; else the nodes' list was refused.
		nodesListed bool
		readsFail   bool
	}{
		{"image reads failing", true, true},
		{"the nodes' list refused", false, false},
		{"both", false, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			store := &answers{images: images{archs: store.archs}, fail: map[string]error{}}
			if tc.readsFail {
				store.fail["sha256:r1"], store.fail["sha256:r2"] = busy, busy
			}
			after := newJudgedCluster(t, store, nil)
			after.nodes.OnDelete(node("node-amd64", "amd64"))
			if tc.nodesListed {
				after.nodes.OnAdd(node("node-arm64", "arm64"), true)
			} else {
				after.c.nodesListed = func() bool { return false }
				after.c.nodesRefused.Store(true)
			}
			_ = after.streams.Add(marked)
			for i := range 20 { // a sync a second: the reads' backoff, 0.5 to 4 s, runs several times over
				after.sync(t)
				if got := after.c.verdicts.Marks(samplewriter.ImageStreamKind, "ruby"); got.String() != marks.String() {
					t.Fatalf("sync %d after the restart: marks wanted %q, the stream carries %q", i+1, got, marks)
				}
				after.clock.Step(time.Second)
			}
			if len(store.took()) == 0 {
				t.Error("the images were not read")
			}
			clear(store.fail)
			after.clock.Step(5 * time.Second)
			after.sync(t)
			if got := after.c.verdicts.Marks(samplewriter.ImageStreamKind, "ruby"); got.String() != marks.String() {
				t.Errorf("once the images are read, marks wanted %q, the stream carries %q", got, marks)
			}
		})
	}
}
