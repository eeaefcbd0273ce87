package samples

import (
	"context"
	"errors"
	"slices"
	"sync/atomic"
	"testing"
	"time"

	imagev1 "github.com/openshift/api/image/v1"
	samplesv1 "github.com/openshift/api/samples/v1"
	templatev1 "github.com/openshift/api/template/v1"
	configinformersv1 "github.com/openshift/client-go/config/informers/externalversions/config/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime"
	clienttesting "k8s.io/client-go/testing"
	"k8s.io/client-go/tools/cache"
	clocktesting "k8s.io/utils/clock/testing"

	"github.com/samples-operator-dev/cluster-samples-operator/pkg/access"
	"github.com/samples-operator-dev/cluster-samples-operator/pkg/controller/informertest"
	"github.com/samples-operator-dev/cluster-samples-operator/pkg/desired"
	"github.com/samples-operator-dev/cluster-samples-operator/pkg/refusal"
	"github.com/samples-operator-dev/cluster-samples-operator/pkg/samplewriter"
)

type countedImageConfig struct {
	configinformersv1.ImageInformer
	added *atomic.Int32
}

func (c countedImageConfig) Informer() cache.SharedIndexInformer {
	return informertest.Registrations{SharedIndexInformer: c.ImageInformer.Informer(), Added: c.added}
}

// collect gathers the writes sent until they hold every one of want, or fails after 10 s.
func (f *fixture) collect(t *testing.T, step string, want ...string) []string {
	t.Helper()
	var got []string
	deadline := time.Now().Add(10 * time.Second)
	for {
		got = append(got, f.writes()...)
		missing := slices.DeleteFunc(slices.Clone(want), func(w string) bool { return slices.Contains(got, w) })
		if len(missing) == 0 {
			return got
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: after 10 s, still not written: %q (written: %s)", step, missing, describe(got))
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// quiet fails if anything is written within a while.
func (f *fixture) quiet(t *testing.T, step string) {
	t.Helper()
	time.Sleep(300 * time.Millisecond)
	if got := f.writes(); len(got) != 0 {
		t.Errorf("%s: wrote %s, want nothing", step, describe(got))
	}
}

// idle waits until the running controller has decided no sample for a second: the syncs that
// the events of earlier steps bring may still run after the caches show those steps, and would
// be counted against the next.
func (f *fixture) idle(t *testing.T) {
	t.Helper()
	last, since := f.verdicts.reads(), time.Now()
	for deadline := time.Now().Add(30 * time.Second); time.Since(since) < time.Second; time.Sleep(50 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("the controller kept deciding samples for 30 s")
		}
		if n := f.verdicts.reads(); n != last {
			last, since = n, time.Now()
		}
	}
}

// TestTheRunningControllerFollowsItsInformersAndHooks runs New's controller, which has no
// periodic resync: each change reaches the samples through its own handler or hook, or not at
// all. Nothing is written before the first verdicts, which bring every sample, and a later
// verdict brings its sample; a change that may
// end a refusal retries the refused write at once; an edit of either kind is reverted; while the
// grant is missing nothing is written, and the grant found brings the held edits back; a change
// of the Config's spec concerns every sample, one of its status none (no sample is decided
// again); and the cluster image
// configuration has a handler.
func TestTheRunningControllerFollowsItsInformersAndHooks(t *testing.T) {
	f := newFixture(t, managedConfig())
	f.verdicts.ready = false
	// The refusal backoff runs on a clock that never moves: only the trigger retries.
	f.deps.Refusals = refusal.NewStore(clocktesting.NewFakeClock(time.Now()))
	imageConfigHandlers := &atomic.Int32{}
	f.deps.Informers.ImageConfig = countedImageConfig{f.deps.Informers.ImageConfig, imageConfigHandlers}
	streams, templates := f.inv.ImageStreamNames(), f.inv.TemplateNames()
	refused := streams[1]
	var refusing atomic.Bool
	refusing.Store(true)
	f.images.PrependReactor("create", "imagestreams", func(a clienttesting.Action) (bool, runtime.Object, error) {
		if refusing.Load() && a.(clienttesting.CreateAction).GetObject().(*imagev1.ImageStream).Name == refused {
			return true, nil, apierrors.NewForbidden(imagev1.Resource("imagestreams"), refused, errors.New("exceeded quota: openshift-quota"))
		}
		return false, nil, nil
	})

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go New(f.deps).Run(ctx, 2)
	f.waitFor(t, "every handler and hook to be registered", func() bool {
		return f.verdicts.hooked() && f.grant.onChange.Load() != nil && f.triggers.onChange.Load() != nil && imageConfigHandlers.Load() > 0
	})
	f.quiet(t, "before the first verdicts")

	var everySample []string
	for _, name := range streams {
		everySample = append(everySample, "create imagestreams/"+name)
	}
	for _, name := range templates {
		everySample = append(everySample, "create templates/"+name)
	}
	f.verdicts.set(samplewriter.TemplateKind, templates[0], nil)
	f.collect(t, "the first verdicts", everySample...)

	refusing.Store(false)
	f.triggers.fire()
	f.collect(t, "a change that may end the refusal", "create imagestreams/"+refused)
	f.waitForCaches(t)

	stream, template := streams[0], templates[0]
	f.editStream(t, stream, func(is *imagev1.ImageStream) { is.Spec.Tags[0].From.Name = "example.com/someone/else:1" })
	f.collect(t, "an imagestream edited", "update imagestreams/"+stream)
	f.editTemplate(t, template, func(tpl *templatev1.Template) { tpl.Message = "someone's message" })
	f.collect(t, "a template edited", "update templates/"+template)
	f.waitForCaches(t)

	f.grant.turn(access.Missing)
	f.editStream(t, stream, func(is *imagev1.ImageStream) { is.Spec.Tags[0].From.Name = "example.com/someone/else:2" })
	f.quiet(t, "an edit while the grant is missing")
	f.grant.turn(access.Granted)
	f.collect(t, "the grant found", "update imagestreams/"+stream)
	f.waitForCaches(t)

	f.idle(t)
	decidedBefore := f.verdicts.reads()
	f.verdicts.set(samplewriter.TemplateKind, template, desired.Marks{"": {Reason: "creates build.openshift.io/v1 BuildConfig, which this cluster does not serve", Hide: true}})
	f.collect(t, "a verdict changed", "update templates/"+template)
	f.waitForCaches(t)
	f.idle(t)
	// Its sync and the one its own write's event brings; the first verdicts' every sample once.
	if n := f.verdicts.reads() - decidedBefore; n > 4 {
		t.Errorf("a verdict on one sample: %d samples decided, want that one alone", n)
	}

	f.idle(t)
	decided := f.verdicts.reads()
	f.setConfig(t, func(c *samplesv1.Config) { c.Status.Version = "v0" })
	f.quiet(t, "the Config's status written")
	if n := f.verdicts.reads() - decided; n != 0 {
		t.Errorf("the Config's status written: %d samples decided again, want none", n)
	}
	f.setConfig(t, func(c *samplesv1.Config) { c.Spec.SamplesRegistry = "mirror.example.com" })
	var everyStream []string
	for _, name := range streams {
		everyStream = append(everyStream, "update imagestreams/"+name)
	}
	f.collect(t, "the Config's samplesRegistry changed", everyStream...)
}
