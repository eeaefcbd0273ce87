package bootstrap

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	configv1 "github.com/openshift/api/config/v1"
	operatorv1 "github.com/openshift/api/operator/v1"
	samplesv1 "github.com/openshift/api/samples/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	clienttesting "k8s.io/client-go/testing"

	"github.com/samples-operator-dev/cluster-samples-operator/pkg/bootstrapstate"
	"github.com/samples-operator-dev/cluster-samples-operator/pkg/configspec"
	"github.com/samples-operator-dev/cluster-samples-operator/pkg/names"
)

// written is the Config of the one write, of verb (create or update), by the operator's field
// manager.
func written(t *testing.T, writes []clienttesting.Action, verb string) *samplesv1.Config {
	t.Helper()
	if len(writes) != 1 || writes[0].GetVerb() != verb {
		t.Fatalf("writes %v, want one %s", writes, verb)
	}
	var manager string
	switch w := writes[0].(type) {
	case clienttesting.CreateActionImpl:
		manager = w.CreateOptions.FieldManager
	case clienttesting.UpdateActionImpl:
		manager = w.UpdateOptions.FieldManager
	}
	if manager != bootstrapstate.FieldManager {
		t.Errorf("written by field manager %q, want %q", manager, bootstrapstate.FieldManager)
	}
	return writes[0].(interface{ GetObject() runtime.Object }).GetObject().(*samplesv1.Config)
}

func created(t *testing.T, writes []clienttesting.Action) *samplesv1.Config {
	t.Helper()
	return written(t, writes, "create")
}

func ipv6Network() *configv1.Network {
	return &configv1.Network{ObjectMeta: metav1.ObjectMeta{Name: names.ClusterConfigName, ResourceVersion: "1"},
		Status: configv1.NetworkStatus{ClusterNetwork: []configv1.ClusterNetworkEntry{{CIDR: "fd01::/48"}}, ServiceNetwork: []string{"fd02::/112"}}}
}

func blockingImage() *configv1.Image {
	return &configv1.Image{ObjectMeta: metav1.ObjectMeta{Name: names.ClusterConfigName, ResourceVersion: "1"},
		Spec: configv1.ImageSpec{RegistrySources: configv1.RegistrySources{BlockedRegistries: []string{"registry.redhat.io"}}}}
}

func clusterProxy() *configv1.Proxy {
	return &configv1.Proxy{ObjectMeta: metav1.ObjectMeta{Name: names.ClusterConfigName, ResourceVersion: "2"},
		Status: configv1.ProxyStatus{HTTPSProxy: "http://proxy.example.com:3128"}}
}

// rhMirror is a mirror set that mirrors registry.redhat.io, whose images most samples use, to
// 127.0.0.1:5000.
func rhMirror() *configv1.ImageTagMirrorSet {
	return &configv1.ImageTagMirrorSet{ObjectMeta: metav1.ObjectMeta{Name: "rh", ResourceVersion: "1"}, Spec: configv1.ImageTagMirrorSetSpec{
		ImageTagMirrors: []configv1.ImageTagMirrors{{Source: "registry.redhat.io", Mirrors: []configv1.ImageMirror{"127.0.0.1:5000/rh"}}}}}
}

func isMirror(address string) bool { return strings.HasPrefix(address, "127.0.0.1:") }

// Without a Config the operator probes the samples registry and, when it answers, creates the
// default Config Managed for the cluster's architecture, says so in an event, and asks for no
// later look.
func TestWithoutAConfigTheDefaultIsCreatedManagedWhenTheRegistryAnswers(t *testing.T) {
	f := newFixture(t, options{})
	writes, err := f.sync()
	if err != nil {
		t.Fatal(err)
	}
	cfg := created(t, writes)
	if cfg.Name != names.ConfigName || cfg.Spec.ManagementState != operatorv1.Managed || !slices.Equal(cfg.Spec.Architectures, []string{"x86_64"}) ||
		len(cfg.Annotations) != 0 || !slices.Equal(cfg.Finalizers, []string{samplesv1.ConfigFinalizer}) {
		t.Errorf("created %+v, want the default Config, Managed for x86_64, with the finalizer and no bootstrap annotations", cfg)
	}
	if probed, dialed := f.probes(); probed != 1 || len(dialed) != 0 {
		t.Errorf("probed the registry %d times and dialed %v, want one registry probe", probed, dialed)
	}
	if got, want := f.told(), []string{"Normal ConfigCreated: created Config cluster with managementState Managed"}; !slices.Equal(got, want) {
		t.Errorf("told %q, want %q", got, want)
	}
	if after := f.queue.taken(); len(after) != 0 {
		t.Errorf("asked to look again after %v", after)
	}
}

// A registry that does not answer at install leaves the samples Removed, with why recorded on
// the Config and the Config marked as awaiting the registry, and a warning says so.
func TestARegistryThatDoesNotAnswerAtInstallLeavesTheSamplesRemovedAwaitingIt(t *testing.T) {
	f := newFixture(t, options{})
	f.probeErr = errors.New("dial tcp: i/o timeout")
	writes, err := f.sync()
	if err != nil {
		t.Fatal(err)
	}
	cfg := created(t, writes)
	a := cfg.Annotations
	if cfg.Spec.ManagementState != operatorv1.Removed || a[bootstrapstate.ReasonAnnotation] != configspec.ReasonRegistryUnreachable ||
		a[bootstrapstate.AwaitingAnnotation] != "true" || !strings.Contains(a[bootstrapstate.MessageAnnotation], target+" could not be reached (dial tcp: i/o timeout)") ||
		strings.Contains(a[bootstrapstate.MessageAnnotation], "mirror sets") {
		t.Errorf("created %s with annotations %v, want Removed, awaiting the registry, the probe's error said and no mirror set named", cfg.Spec.ManagementState, a)
	}
	told := f.told()
	if len(told) != 1 || !strings.HasPrefix(told[0], "Warning ConfigCreatedRemoved: created Config cluster with managementState Removed: the samples registry "+target) {
		t.Errorf("told %q, want one warning that the Config was created Removed, and why", told)
	}
}

// What the cluster's configuration says decides without a probe: an IPv6-only network or an
// image configuration that blocks the registry leave the samples Removed for that reason (and
// nothing awaits the registry), and a cluster proxy, through which imports go, makes them Managed.
// Once the Config is in the cache, nothing more is written.
func TestTheClustersConfigurationDecidesWithoutAProbe(t *testing.T) {
	for _, tc := range []struct {
		name   string
		facts  []runtime.Object
		state  operatorv1.ManagementState
		reason string
		told   string
	}{
		{"an IPv6-only network", []runtime.Object{ipv6Network()}, operatorv1.Removed, configspec.ReasonIPv6Only, "Warning ConfigCreatedRemoved"},
		{"a blocked registry", []runtime.Object{blockingImage()}, operatorv1.Removed, configspec.ReasonImageConfigBlocks, "Warning ConfigCreatedRemoved"},
		{"a cluster proxy", []runtime.Object{clusterProxy()}, operatorv1.Managed, "", "Normal ConfigCreated"},
	} {
		f := newFixture(t, options{})
		f.probeErr = errors.New("unreachable")
		f.cache(tc.facts...)
		writes, err := f.sync()
		if err != nil {
			t.Fatal(err)
		}
		cfg := created(t, writes)
		if cfg.Spec.ManagementState != tc.state || cfg.Annotations[bootstrapstate.ReasonAnnotation] != tc.reason || cfg.Annotations[bootstrapstate.AwaitingAnnotation] != "" {
			t.Errorf("%s: created %s with annotations %v, want %s for %q", tc.name, cfg.Spec.ManagementState, cfg.Annotations, tc.state, tc.reason)
		}
		if probed, _ := f.probes(); probed != 0 {
			t.Errorf("%s: probed the registry", tc.name)
		}
		if got := reasons(f.told()); !slices.Equal(got, []string{tc.told}) {
			t.Errorf("%s: told %v, want %s", tc.name, got, tc.told)
		}
		f.stored(t)
		f.clock.Step(time.Hour)
		if writes, err := f.sync(); err != nil || len(writes) != 0 || len(f.told()) != 0 || len(f.queue.taken()) != 0 {
			t.Errorf("%s: with the Config in the cache a sync wrote %v (%v), want nothing", tc.name, writes, err)
		}
	}
}

// A Config this controller has just created is not decided again while the cache does not show
// it: for two seconds the sync waits out the rest of them; after, it decides again, and the
// server's "already exists" ends it quietly.
func TestAConfigJustCreatedIsNotDecidedAgainBeforeTheCacheShowsIt(t *testing.T) {
	f := newFixture(t, options{})
	if _, err := f.sync(); err != nil {
		t.Fatal(err)
	}
	f.probes()
	f.told()
	f.clock.Step(1500 * time.Millisecond)
	writes, err := f.sync()
	if probed, _ := f.probes(); err != nil || probed != 0 || len(writes) != 0 {
		t.Errorf("1.5s after the create: probed %d times, wrote %v (%v); want nothing", probed, writes, err)
	}
	if after := f.queue.taken(); !slices.Equal(after, []time.Duration{500 * time.Millisecond}) {
		t.Errorf("1.5s after the create: asked to look again after %v, want 500ms", after)
	}
	f.clock.Step(500 * time.Millisecond)
	writes, err = f.sync()
	if probed, _ := f.probes(); err != nil || probed != 1 || len(writes) != 1 {
		t.Errorf("2s after the create: probed %d times, wrote %v (%v); want the decision taken again", probed, writes, err)
	}
	if told := f.told(); len(told) != 0 {
		t.Errorf("a create the server refused as already done told %q", told)
	}
}

// A create that fails is the sync's error, tells nothing, and does not hold up the next look.
func TestACreateThatFailsIsAnErrorAndTriedAgainAtOnce(t *testing.T) {
	f := newFixture(t, options{})
	f.fail("create", apierrors.NewServiceUnavailable("etcd is down"))
	if _, err := f.sync(); err == nil {
		t.Error("a failed create returned no error")
	}
	if told := f.told(); len(told) != 0 {
		t.Errorf("told %q of a create that failed", told)
	}
	f.probes()
	if _, err := f.sync(); err == nil {
		t.Error("a failed create returned no error")
	}
	if probed, _ := f.probes(); probed != 1 {
		t.Errorf("the next sync probed %d times, want it to decide again at once", probed)
	}
}

// Until the mirror sets are read the install decision waits, up to ten seconds from the first
// look, and then decides without them.
func TestTheInstallDecisionWaitsUpToTenSecondsForTheMirrorSets(t *testing.T) {
	f := newFixture(t, options{unsettled: true})
	for _, step := range []struct {
		by   time.Duration
		want []time.Duration
	}{{0, []time.Duration{10 * time.Second}}, {4 * time.Second, []time.Duration{6 * time.Second}}, {5999 * time.Millisecond, []time.Duration{time.Millisecond}}} {
		f.clock.Step(step.by)
		writes, err := f.sync()
		if probed, _ := f.probes(); err != nil || probed != 0 || len(writes) != 0 {
			t.Fatalf("mirror sets unread: probed %d times, wrote %v (%v); want nothing yet", probed, writes, err)
		}
		if after := f.queue.taken(); !slices.Equal(after, step.want) {
			t.Errorf("asked to look again after %v, want %v", after, step.want)
		}
	}
	f.clock.Step(time.Millisecond)
	writes, err := f.sync()
	if err != nil {
		t.Fatal(err)
	}
	if cfg := created(t, writes); cfg.Spec.ManagementState != operatorv1.Managed {
		t.Errorf("after ten seconds: created %s, want Managed", cfg.Spec.ManagementState)
	}
}

// With mirror sets that serve the samples' images, their mirrors (and the registries no mirror
// serves) are dialed instead of the registry: any answering makes the samples Managed through the
// mirror sets, with a warning naming the samples that will not import; none answering leaves
// them Removed, awaiting the registry.
func TestTheMirrorsOfTheClustersMirrorSetsAreProbedInsteadOfTheRegistry(t *testing.T) {
	for _, tc := range []struct {
		name      string
		answering func(string) bool
		state     operatorv1.ManagementState
		reason    string
		told      []string
	}{
		{"all answer", func(string) bool { return true }, operatorv1.Managed, configspec.ReasonThroughMirrorSets, []string{"Normal ConfigCreated"}},
		{"only the mirror answers", isMirror, operatorv1.Managed, configspec.ReasonThroughMirrorSets, []string{"Normal ConfigCreated", "Warning SamplesWithoutMirror"}},
		{"none answer", func(string) bool { return false }, operatorv1.Removed, configspec.ReasonRegistryUnreachable, []string{"Warning ConfigCreatedRemoved"}},
	} {
		f := newFixture(t, options{mirrorSets: []runtime.Object{rhMirror()}})
		f.answering = tc.answering
		writes, err := f.sync()
		if err != nil {
			t.Fatal(err)
		}
		cfg := created(t, writes)
		if cfg.Spec.ManagementState != tc.state || cfg.Annotations[bootstrapstate.ReasonAnnotation] != tc.reason {
			t.Errorf("%s: created %s for %q, want %s for %q", tc.name, cfg.Spec.ManagementState, cfg.Annotations[bootstrapstate.ReasonAnnotation], tc.state, tc.reason)
		}
		probed, dialed := f.probes()
		if probed != 0 || !slices.Contains(dialed, "127.0.0.1:5000") || !slices.ContainsFunc(dialed, func(a string) bool { return !isMirror(a) }) {
			t.Errorf("%s: probed the registry %d times, dialed %v; want the mirror and the registries no mirror serves dialed instead", tc.name, probed, dialed)
		}
		told := f.told()
		if got := reasons(told); !slices.Equal(got, tc.told) {
			t.Errorf("%s: told %q, want %v", tc.name, told, tc.told)
		}
		if tc.state == operatorv1.Managed && !strings.Contains(told[0], "ImageTagMirrorSet/rh") {
			t.Errorf("%s: told %q, want the mirror set named", tc.name, told[0])
		}
	}
}

// A sync cut short while it probes (the operator stops) writes nothing and returns the context's
// error, whichever it probed.
func TestASyncCutShortWhileItProbesWritesNothing(t *testing.T) {
	awaiting := awaitingConfig()
	for _, tc := range []struct {
		name string
		o    options
	}{
		{"the registry, at install", options{}},
		{"the mirrors, at install", options{mirrorSets: []runtime.Object{rhMirror()}}},
		{"the registry, awaiting it", options{cfg: awaiting}},
		{"the mirrors, awaiting the registry", options{cfg: awaiting, mirrorSets: []runtime.Object{rhMirror()}}},
	} {
		f := newFixture(t, tc.o)
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		writes, err := f.syncWith(ctx)
		if !errors.Is(err, context.Canceled) || len(writes) != 0 {
			t.Errorf("%s: wrote %v and returned %v, want nothing written and the context's error", tc.name, writes, err)
		}
		if probed, dialed := f.probes(); probed+len(dialed) == 0 {
			t.Errorf("%s: probed nothing", tc.name)
		}
	}
}
