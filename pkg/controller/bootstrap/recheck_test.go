package bootstrap

import (
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	operatorv1 "github.com/openshift/api/operator/v1"
	samplesv1 "github.com/openshift/api/samples/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime"
	clienttesting "k8s.io/client-go/testing"

	"github.com/samples-operator-dev/cluster-samples-operator/pkg/bootstrapstate"
	"github.com/samples-operator-dev/cluster-samples-operator/pkg/configspec"
	"github.com/samples-operator-dev/cluster-samples-operator/pkg/names"
)

// awaitingConfig is the Config as the operator created it when the registry did not answer.
func awaitingConfig() *samplesv1.Config {
	cfg := bootstrapstate.DefaultConfig("amd64", configspec.BootstrapDecision{State: operatorv1.Removed,
		Reason: configspec.ReasonRegistryUnreachable, Message: "the samples registry did not answer"})
	cfg.ResourceVersion = "1"
	return cfg
}

func updated(t *testing.T, writes []clienttesting.Action) *samplesv1.Config {
	t.Helper()
	return written(t, writes, "update")
}

// step runs one sync after by and checks how many registry probes it made and what it asked the
// queue for; it returns the writes.
func (f *fixture) step(t *testing.T, by time.Duration, probes int, after ...time.Duration) []clienttesting.Action {
	t.Helper()
	f.clock.Step(by)
	writes, err := f.sync()
	if err != nil {
		t.Fatalf("after %s: %v", by, err)
	}
	if probed, _ := f.probes(); probed != probes {
		t.Errorf("after %s: probed the registry %d times, want %d", by, probed, probes)
	}
	if got := f.queue.taken(); !slices.Equal(got, after) {
		t.Errorf("after %s: asked to look again after %v, want %v", by, got, after)
	}
	return writes
}

// A registry that did not answer at install is probed again after one wait, then after a wait
// twice as long each time; the reason is written again only when the probe's answer changed,
// and once the registry answers the Config is switched to Managed. Until the cache shows the
// switch, the Config it still shows is not probed again.
func TestARegistryThatDidNotAnswerIsProbedAgainWithADoublingWait(t *testing.T) {
	f := newFixture(t, options{})
	f.probeErr = errors.New("connection refused")
	if _, err := f.sync(); err != nil {
		t.Fatal(err)
	}
	f.probes()
	f.stored(t)
	f.told()

	if writes := f.step(t, 0, 0, base); len(writes) != 0 {
		t.Errorf("before the wait: wrote %v", writes)
	}
	if writes := f.step(t, base, 1, 2*base); len(writes) != 0 {
		t.Errorf("the same answer: wrote %v, want nothing", writes)
	}
	if told := f.told(); len(told) != 1 || !strings.HasPrefix(told[0], "Normal SamplesStayRemoved: the samples stay Removed (RegistryUnreachable): the samples registry "+target) {
		t.Errorf("told %q, want the samples said to stay Removed", told)
	}
	f.step(t, time.Minute, 0, 2*base-time.Minute)
	f.probeErr = errors.New("no route to host")
	cfg := updated(t, f.step(t, 2*base-time.Minute, 1, 4*base))
	if !strings.Contains(cfg.Annotations[bootstrapstate.MessageAnnotation], "no route to host") || cfg.Spec.ManagementState != operatorv1.Removed {
		t.Errorf("another answer: wrote %s, %v; want it recorded, still Removed", cfg.Spec.ManagementState, cfg.Annotations)
	}
	f.stored(t)
	f.told()

	f.probeErr = nil
	awaiting := f.stored(t)
	cfg = updated(t, f.step(t, 4*base, 1))
	if cfg.Spec.ManagementState != operatorv1.Managed || cfg.Annotations[bootstrapstate.ReasonAnnotation] != configspec.ReasonRegistryReachable ||
		cfg.Annotations[bootstrapstate.AwaitingAnnotation] != "" || !strings.Contains(cfg.Annotations[bootstrapstate.MessageAnnotation], "answered at") ||
		cfg.ResourceVersion != awaiting.ResourceVersion {
		t.Errorf("the registry answered: wrote %s, %v at resourceVersion %s; want Managed because it answered, at %s", cfg.Spec.ManagementState, cfg.Annotations, cfg.ResourceVersion, awaiting.ResourceVersion)
	}
	if got, want := f.told(), []string{"Normal ConfigManagedRegistryReachable: the samples registry " + target + " answered: switched Config cluster from Removed (set at install because the registry did not answer) to Managed"}; !slices.Equal(got, want) {
		t.Errorf("told %q, want %q", got, want)
	}
	if writes := f.step(t, time.Second, 0, time.Second); len(writes) != 0 {
		t.Errorf("the cache not showing the switch yet: wrote %v", writes)
	}
}

// A write that fails while the samples stay Removed or are switched is the sync's error, tells
// nothing, and leaves the wait as it was.
func TestAWriteThatFailsWhileAwaitingTheRegistryIsAnError(t *testing.T) {
	for _, tc := range []struct {
		name     string
		probeErr error
	}{{"staying Removed", errors.New("connection refused")}, {"switching to Managed", nil}} {
		f := newFixture(t, options{cfg: awaitingConfig()})
		f.probeErr = tc.probeErr
		f.fail("update", apierrors.NewConflict(samplesv1.Resource("configs"), names.ConfigName, errors.New("changed")))
		if _, err := f.sync(); err == nil {
			t.Errorf("%s: a failed update returned no error", tc.name)
		}
		if told, after := f.told(), f.queue.taken(); len(told) != 0 || len(after) != 0 {
			t.Errorf("%s: told %q and asked to look again after %v, want nothing", tc.name, told, after)
		}
		f.probes()
		if _, err := f.sync(); err == nil {
			t.Errorf("%s: a failed update returned no error", tc.name)
		}
		if probed, _ := f.probes(); probed != 1 {
			t.Errorf("%s: the next sync probed %d times, want at once", tc.name, probed)
		}
	}
}

// A change of the cluster's configuration is judged at once, whatever the wait: a blocked
// registry keeps the samples Removed for that reason without a probe, and a cluster proxy set
// since install, through which imports go, switches them to Managed without one.
func TestAChangeOfTheClustersConfigurationIsJudgedAtOnce(t *testing.T) {
	f := newFixture(t, options{cfg: awaitingConfig()})
	f.probeErr = errors.New("connection refused")
	f.stored(t)
	f.updateStored(t, f.step(t, 0, 1, base))

	f.cache(blockingImage())
	cfg := updated(t, f.step(t, time.Second, 0, 2*base))
	if cfg.Annotations[bootstrapstate.ReasonAnnotation] != configspec.ReasonImageConfigBlocks || cfg.Spec.ManagementState != operatorv1.Removed {
		t.Errorf("a blocked registry: wrote %s, %v; want Removed for the blocked registry", cfg.Spec.ManagementState, cfg.Annotations)
	}
	f.cache(cfg)
	if told := reasons(f.told()); !slices.Equal(told, []string{"Normal SamplesStayRemoved", "Normal SamplesStayRemoved"}) {
		t.Errorf("told %v", told)
	}

	unblocked := blockingImage()
	unblocked.ResourceVersion, unblocked.Spec.RegistrySources.BlockedRegistries = "2", nil
	f.cache(unblocked, clusterProxy())
	cfg = updated(t, f.step(t, time.Second, 0))
	if cfg.Spec.ManagementState != operatorv1.Managed || !strings.Contains(cfg.Annotations[bootstrapstate.MessageAnnotation], "a cluster proxy was set") {
		t.Errorf("a cluster proxy set: wrote %s, %v; want Managed through the proxy", cfg.Spec.ManagementState, cfg.Annotations)
	}
}

// updateStored puts the Config of an update into the cache, as its event would.
func (f *fixture) updateStored(t *testing.T, writes []clienttesting.Action) {
	t.Helper()
	for _, w := range writes {
		if u, ok := w.(clienttesting.UpdateAction); ok {
			f.cache(u.GetObject())
		}
	}
}

// For a Config awaiting its registry the mirrors of the cluster's mirror sets are probed instead
// of the registry: while none answers the samples stay Removed; once one does they are switched
// to Managed through the mirror sets, with the samples that will not import named.
func TestTheMirrorsAreProbedForAConfigAwaitingItsRegistry(t *testing.T) {
	f := newFixture(t, options{cfg: awaitingConfig(), mirrorSets: []runtime.Object{rhMirror()}})
	f.answering = func(string) bool { return false }
	cfg := updated(t, f.step(t, 0, 0, base))
	if !strings.Contains(cfg.Annotations[bootstrapstate.MessageAnnotation], "none of the mirrors") || cfg.Spec.ManagementState != operatorv1.Removed {
		t.Errorf("no mirror answers: wrote %s, %v; want Removed, none of the mirrors answering", cfg.Spec.ManagementState, cfg.Annotations)
	}
	f.cache(cfg)
	f.told()

	f.answering = isMirror
	cfg = updated(t, f.step(t, base, 0))
	if cfg.Spec.ManagementState != operatorv1.Managed || cfg.Annotations[bootstrapstate.ReasonAnnotation] != configspec.ReasonThroughMirrorSets {
		t.Errorf("the mirror answers: wrote %s, %v; want Managed through the mirror sets", cfg.Spec.ManagementState, cfg.Annotations)
	}
	if told := reasons(f.told()); !slices.Equal(told, []string{"Normal ConfigManagedThroughMirrorSets", "Warning SamplesWithoutMirror"}) {
		t.Errorf("told %v, want the switch and the samples that will not import", told)
	}
	if writes := f.step(t, time.Second, 0, time.Second); len(writes) != 0 {
		t.Errorf("the cache not showing the switch yet: wrote %v", writes)
	}
}

// A Config awaiting its registry is not looked at before the mirror sets are read either.
func TestAConfigAwaitingItsRegistryWaitsForTheMirrorSets(t *testing.T) {
	f := newFixture(t, options{cfg: awaitingConfig(), unsettled: true})
	if writes := f.step(t, 0, 0, MirrorSetsSyncWait); len(writes) != 0 {
		t.Errorf("wrote %v", writes)
	}
}
