package integration

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	samplesv1 "github.com/openshift/api/samples/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
)

// testHold is a finalizer of the test's own: an object carrying it stays, deletionTimestamp set,
// after the operator deleted it, for as long as the test wants its cleanup unfinished.
const testHold = "samples.test.local/hold"

// TestADeletedConfigIsHeldUntilItsLastSampleAndImportRecordAreGone: the finalizer of a deleted
// Config stays until every managed sample and every import error record of its life is gone,
// not only until the operator has asked for their deletion. The test holds one of them back
// with a finalizer of its own after everything else is gone and watches the Config stay for
// 2 s; let go, the Config goes and the operator creates the next one. Once for a sample, once
// for python's import error record.
//
// TestConfigDeletedThriceInQuickSuccession finds a finalizer dropped too early only when the
// operator's deletions happen to be slower than the finalizer's update; this test finds it
// every time. Mutations that fail it: the finalizer controller not waiting for the samples (its
// cache check and its server check both taken out), or not waiting for the import records.
func TestADeletedConfigIsHeldUntilItsLastSampleAndImportRecordAreGone(t *testing.T) {
	parallel(t, aboutHalfAMinute)
	e := newEnv(t)
	inv := x86Inventory(t)
	python, _ := inv.ImageStream("python")
	e.importer.FailReference(python.Spec.Tags[0].From.Name, "manifest unknown")
	e.startOperator(defaultOptions())

	stream := e.images.ImageV1().ImageStreams("openshift")
	records := e.kube.CoreV1().ConfigMaps(operatorNamespace)
	for _, held := range []struct {
		what string
		// sample is the held sample as managedSamples names it; empty when the record is held.
		sample string
		hold   func(ctx context.Context, patch []byte) error
		gone   func(ctx context.Context) (bool, error)
	}{
		{"imagestream jenkins", "imagestreams/jenkins", func(ctx context.Context, patch []byte) error {
			_, err := stream.Patch(ctx, "jenkins", types.MergePatchType, patch, metav1.PatchOptions{})
			return err
		}, func(ctx context.Context) (bool, error) {
			is, err := stream.Get(ctx, "jenkins", metav1.GetOptions{})
			return err == nil && is.DeletionTimestamp != nil, ignoreNotFound(err)
		}},
		{"python's import error record", "", func(ctx context.Context, patch []byte) error {
			_, err := records.Patch(ctx, "python", types.MergePatchType, patch, metav1.PatchOptions{})
			return err
		}, func(ctx context.Context) (bool, error) {
			cm, err := records.Get(ctx, "python", metav1.GetOptions{})
			return err == nil && cm.DeletionTimestamp != nil, ignoreNotFound(err)
		}},
	} {
		t.Run(held.what, func(t *testing.T) {
			ctx := context.Background()
			e.waitManaged(t, inv, "v1")
			eventually(t, 30*time.Second, func() (bool, string) {
				_, ok := e.operatorConfigMaps(t)["python"]
				return ok, "python's import error record is not there"
			})
			cfg := e.getConfig()
			if err := held.hold(ctx, []byte(fmt.Sprintf(`{"metadata":{"finalizers":[%q]}}`, testHold))); err != nil {
				t.Fatalf("holding %s: %v", held.what, err)
			}
			release := func() error { return held.hold(ctx, []byte(`{"metadata":{"finalizers":null}}`)) }
			t.Cleanup(func() { _ = ignoreNotFound(release()) })

			if err := e.samples.SamplesV1().Configs().Delete(ctx, "cluster", metav1.DeleteOptions{Preconditions: &metav1.Preconditions{UID: &cfg.UID}}); err != nil {
				t.Fatal(err)
			}
			// Everything of the life is gone but the held object, which the operator has deleted.
			eventually(t, 30*time.Second, func() (bool, string) {
				deleting, err := held.gone(ctx)
				if err != nil {
					return false, err.Error()
				}
				if !deleting {
					return false, held.what + " is not being deleted"
				}
				left := e.managedSamples(t)
				delete(left, held.sample)
				if len(left) > 0 {
					return false, fmt.Sprintf("%d other managed samples left", len(left))
				}
				if _, ok := e.operatorConfigMaps(t)["python"]; ok && held.sample != "" {
					return false, "python's import error record is still there"
				}
				return true, ""
			})
			for end := time.Now().Add(2 * time.Second); time.Now().Before(end); time.Sleep(100 * time.Millisecond) {
				now, err := e.samples.SamplesV1().Configs().Get(ctx, "cluster", metav1.GetOptions{})
				if err != nil {
					t.Fatalf("with %s still there the deleted Config went: %v", held.what, err)
				}
				if now.UID != cfg.UID || !slices.Contains(now.Finalizers, samplesv1.ConfigFinalizer) {
					t.Fatalf("with %s still there the deleted Config was replaced or lost its finalizer: uid %s (was %s), finalizers %v",
						held.what, now.UID, cfg.UID, now.Finalizers)
				}
			}

			if err := release(); err != nil {
				t.Fatalf("letting %s go: %v", held.what, err)
			}
			eventually(t, 20*time.Second, func() (bool, string) {
				now, err := e.samples.SamplesV1().Configs().Get(ctx, "cluster", metav1.GetOptions{})
				if err != nil {
					return false, err.Error()
				}
				return now.UID != cfg.UID, "no new Config after the held object went"
			})
		})
	}
	e.waitManaged(t, inv, "v1")
}

func ignoreNotFound(err error) error {
	if apierrors.IsNotFound(err) {
		return nil
	}
	return err
}
