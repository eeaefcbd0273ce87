package integration

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	configv1 "github.com/openshift/api/config/v1"
	imagev1 "github.com/openshift/api/image/v1"
	samplesv1 "github.com/openshift/api/samples/v1"
	templatev1 "github.com/openshift/api/template/v1"
	"github.com/openshift/library-go/pkg/config/clusteroperator/v1helpers"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/discovery"

	"github.com/samples-operator-dev/cluster-samples-operator/pkg/configspec"
	"github.com/samples-operator-dev/cluster-samples-operator/pkg/configstatus"
	"github.com/samples-operator-dev/cluster-samples-operator/pkg/desired"
	"github.com/samples-operator-dev/cluster-samples-operator/pkg/inventory"
	"github.com/samples-operator-dev/cluster-samples-operator/pkg/metrics"
	"github.com/samples-operator-dev/cluster-samples-operator/pkg/operator"
	"github.com/samples-operator-dev/cluster-samples-operator/pkg/samplereport"
	"github.com/samples-operator-dev/cluster-samples-operator/pkg/usability"
	"github.com/samples-operator-dev/cluster-samples-operator/test/controlplane"
)

// The tests of issue 50: the operator judges whether each sample can work on this cluster from
// what the cluster says, marks and hides those that cannot, says why, and undoes it all when
// the cause goes; and the managed tags follow the cluster's import mode.

// workloadKinds are the kinds of the groups a cluster without the DeploymentConfig and Build
// capabilities does not serve, by kind, with the group/version the verdict names.
var workloadKinds = map[string]string{"DeploymentConfig": "apps.openshift.io/v1", "BuildConfig": "build.openshift.io/v1"}

// TestTemplatesOfKindsTheClusterDoesNotServeAreHiddenAndComeBack: on a cluster installed without
// the DeploymentConfig and Build capabilities (apps.openshift.io and build.openshift.io not
// served: the real openshift-apiserver with the groups off in its perGroupOptions, or the
// stand-ins without their CRDs), every template of the whole x86_64 inventory that creates a
// DeploymentConfig or a BuildConfig is installed marked with the kind it cannot create and
// hidden, and no other template is marked for a kind; the Config's SamplesExist, the unusable
// metric and `oc samples status` name each; one Event tells of each cause, and each template is
// written once, by its create. Once the groups are served again, every one of those marks goes
// within 15 s of the APIServices turning Available, in one update per verdict that changed, no
// other write and no revert, and SamplesUsableAgain tells of each cause. An operator restarted
// then writes nothing, at its start or at its resyncs.
func TestTemplatesOfKindsTheClusterDoesNotServeAreHiddenAndComeBack(t *testing.T) {
	parallel(t, aboutAMinute)
	e := newEnvInstalledOn(t, controlplane.Options{WorkloadAPIsOff: true}, applyManifests)
	inv := fullX86Inventory(t)
	creates, others := workloadTemplates(t, inv)

	// The operator resyncs on its default period (10 minutes) until the groups are served again:
	// a resync would bring a stale discovery up to date by itself, and so hide an operator that
	// misses the APIServices' changes.
	opts := fullInventoryOptions()
	op, scrape := e.startOperatorWithScrape(t, opts)
	e.waitManaged(t, inv, "v1")

	// Marked and hidden: the templates that create one of the kinds, with each kind named; the
	// others not for a kind, unless they create one of another group the cluster does not serve
	// (unexpectedMarks).
	served := servedKinds(t, e)
	eventuallyEvery(t, 30*time.Second, 200*time.Millisecond, func() (bool, string) {
		live := e.templates(t)
		for name, kinds := range creates {
			tmpl := live[name]
			if tmpl == nil {
				return false, "template " + name + " is missing"
			}
			reason, hidden := unusableMarks(tmpl.Annotations)
			for _, kind := range kinds {
				if !strings.Contains(reason, "creates "+kind+",") || !hidden {
					return false, fmt.Sprintf("template %s: %s %q, hidden %v; want it to name %s and be hidden", name, desired.UnusableAnnotation, reason, hidden, kind)
				}
			}
		}
		for _, name := range others {
			if why := unexpectedMarks(t, inv, live[name], served); why != "" {
				return false, why
			}
		}
		return true, ""
	})
	marked := slices.Sorted(maps.Keys(creates))
	// SamplesExist names the first five and counts the rest; `oc samples status`, checked below,
	// lists them all.
	var cond *samplesv1.ConfigCondition
	eventually(t, 10*time.Second, func() (bool, string) {
		cond = configCondition(e.getConfig(), samplesv1.SamplesExist)
		if cond == nil {
			return false, "no SamplesExist"
		}
		var n int
		if m := unusableCount.FindStringSubmatch(cond.Message); m != nil {
			n, _ = strconv.Atoi(m[1])
		}
		if n < len(marked) {
			return false, fmt.Sprintf("SamplesExist %q: want it to count at least the %d templates marked", cond.Message, len(marked))
		}
		return true, ""
	})
	for _, name := range others {
		if entry := statusEntry(cond.Message, name); strings.Contains(entry, notServed) && len(unservedKinds(t, inv, name, served)) == 0 {
			t.Errorf("SamplesExist names template %s, which creates only kinds the cluster serves, for a kind: %q", name, entry)
		}
	}
	assertUnusableSeries(t, scrape(t), marked, nil)
	// `oc samples status`: the UNUSABLE HERE column names each kind, and so does -o json.
	e.assertPluginShowsUnusable(t, creates, nil)

	// Each template was written once, by its create: the verdicts were there before it.
	for name, n := range countBy(e.operatorRequests(t, writes, carriedOut, on("templates")), byObject) {
		if n != 1 {
			t.Errorf("%s was written %d times before the groups were served; want its create only:\n%s", name, n, e.historyOf(t, "templates", strings.TrimPrefix(name, "templates/")))
		}
	}
	// One Event per cause: the two kinds, whatever the number of templates each keeps from
	// working.
	causes := assertOneEventPerCause(t, e, usability.KindNotServed)
	for _, gvk := range []string{"apps.openshift.io/v1 DeploymentConfig", "build.openshift.io/v1 BuildConfig"} {
		if !slices.ContainsFunc(causes, func(c string) bool { return strings.Contains(c, "creates "+gvk+",") }) {
			t.Errorf("no %s Event names %s: %q", usability.KindNotServed, gvk, causes)
		}
	}

	// The groups served again: every mark for them goes at once.
	switched := time.Now()
	if err := e.cp.SetWorkloadAPIs(context.Background(), true); err != nil {
		t.Fatalf("switching apps.openshift.io and build.openshift.io on: %v", err)
	}
	returned := time.Now()
	availableAt, available := apiServicesAvailableAt(t, e)
	t.Logf("SetWorkloadAPIs(true) took %s on %s; %s", returned.Sub(switched).Round(time.Millisecond), apisServedBy(e), available)
	served = servedKinds(t, e)
	cameBack := within(t, 15*time.Second, func() (bool, string) {
		live := e.templates(t)
		for _, name := range marked {
			if why := unexpectedMarks(t, inv, live[name], served); why != "" {
				return false, why
			}
		}
		return true, ""
	})
	t.Logf("every template came back %s after SetWorkloadAPIs returned (the APIServices Available, discovery showing the kinds); %s after the later APIService turned Available (its condition's time, to the second)",
		cameBack.Round(time.Millisecond), returned.Add(cameBack).Sub(availableAt).Round(time.Millisecond))
	// The others were left alone.
	live := e.templates(t)
	for _, name := range others {
		if why := unexpectedMarks(t, inv, live[name], served); why != "" {
			t.Error(why)
		}
	}
	e.waitQuiet(t, 2*time.Second)
	// Writes only where a verdict changed: one update of each template that came back, or two
	// of one that creates both kinds when the operator saw the groups served one after the other
	// (the APIServices, or the stand-ins' CRDs, come one at a time); nothing else on the samples.
	got := countBy(e.operatorRequests(t, writes, carriedOut, onSamples, receivedAfter(switched)), byVerbAndResource)
	perObject := countBy(e.operatorRequests(t, writes, carriedOut, onSamples, receivedAfter(switched)), byObject)
	twice := 0
	for _, name := range marked {
		n := perObject["templates/"+name]
		if n < 1 || n > len(creates[name]) {
			t.Errorf("template %s, which creates %v, was written %d times once the groups were served; want one write per kind at the most, and one at least", name, creates[name], n)
		}
		if n == 2 {
			twice++
		}
		delete(perObject, "templates/"+name)
	}
	if len(perObject) > 0 {
		t.Errorf("the groups served again made the operator write %v besides the templates that came back", perObject)
	}
	t.Logf("writes on the samples once the groups were served: %v for %d templates (%d written twice, once per group)", got, len(marked), twice)
	// Each of them followed a verdict: no one edited a sample, so nothing was reverted.
	if reverted := e.eventsWithReason(t, "SampleReverted"); len(reverted) > 0 {
		t.Errorf("no one edited a sample, yet the operator took its own writes for edits: %q", reverted)
	}
	e.waitSamplesExistSays(t, 10*time.Second)
	if cond := configCondition(e.getConfig(), samplesv1.SamplesExist); cond != nil {
		for _, name := range marked {
			if entry := statusEntry(cond.Message, name); strings.Contains(entry, notServed) && len(unservedKinds(t, inv, name, served)) == 0 {
				t.Errorf("SamplesExist still names template %s for a kind: %q", name, entry)
			}
		}
	}
	var usableNow []string
	for _, name := range marked {
		if len(unservedKinds(t, inv, name, served)) == 0 {
			usableNow = append(usableNow, name)
		}
	}
	eventually(t, 10*time.Second, func() (bool, string) {
		again := e.eventsWithReason(t, "SamplesUsableAgain")
		for _, gvk := range []string{"apps.openshift.io/v1 DeploymentConfig", "build.openshift.io/v1 BuildConfig"} {
			n := 0
			for _, msg := range again {
				if strings.Contains(msg, "creates "+gvk+",") {
					n++
				}
			}
			if n != 1 {
				return false, fmt.Sprintf("%d SamplesUsableAgain Events name %s, want 1: %q", n, gvk, again)
			}
		}
		return true, ""
	})
	assertUnusableSeries(t, scrape(t), nil, usableNow)
	e.assertPluginShowsUnusable(t, nil, usableNow)
	assertOneEventPerCause(t, e, usability.KindNotServed)

	// Settled: an operator restarted with a short resync judges every sample again at its start
	// and at each resync (some still cannot work here: the kinds of groups this control plane
	// does not serve, images their parameters name that the inventory no longer has), and
	// writes nothing for 30 s of them.
	toldBefore := usabilityEventCounts(t, e)
	op.stop(t)
	restarted := time.Now()
	const resync = 5 * time.Second
	opts.Resync = resync
	e.startOperator(opts)
	e.waitManaged(t, inv, "v1")
	// waitManaged takes SamplesExist=True whatever its reason: the restarted operator may still
	// say SamplesUpdating from its first sync, and its SamplesInstalled is a write of its own.
	eventually(t, 30*time.Second, func() (bool, string) {
		c := configCondition(e.getConfig(), samplesv1.SamplesExist)
		return c != nil && c.Reason == "SamplesInstalled", fmt.Sprintf("SamplesExist %+v", c)
	})
	e.assertNoWritesFor(t, 30*time.Second, "templates back, an operator restarted, resyncs every "+resync.String())
	if w := e.sampleWritesSince(t, restarted); len(w) > 0 {
		t.Errorf("the restarted operator wrote %q", w)
	}
	// Nor did it tell again the causes that stand: it read what was told from the marks.
	if told := usabilityEventCounts(t, e); !maps.Equal(told, toldBefore) {
		t.Errorf("usability Events by reason: %v after the restart, %v before; want no more", told, toldBefore)
	}
	t.Logf("usability Events by reason, unchanged by the restart: %v", toldBefore)
}

// usabilityEventCounts counts the operator's Events that tell of a cause that keeps samples
// from working, or of its going, by reason.
func usabilityEventCounts(t *testing.T, e *env) map[string]int {
	t.Helper()
	reasons := []string{usability.KindNotServed, usability.ImageMissing, usability.ImageSkipped, usability.ImageRetired,
		usability.ImageNotImported, usability.ImageUnusable, usability.NoImageForNodes, "SamplesUsableAgain"}
	counts := map[string]int{}
	for _, ev := range e.operatorEvents(t) {
		if slices.Contains(reasons, ev.Reason) {
			counts[ev.Reason] += occurrences(ev, time.Time{})
		}
	}
	return counts
}

// workloadTemplates are what each template of inv creates of the two groups, read from its
// objects (template -> "apps.openshift.io/v1 DeploymentConfig", sorted), and the templates that
// create neither.
func workloadTemplates(t *testing.T, inv *inventory.Inventory) (creates map[string][]string, others []string) {
	t.Helper()
	creates = map[string][]string{}
	for _, name := range inv.TemplateNames() {
		tmpl, _ := inv.Template(name)
		kinds := sets.New[string]()
		for _, o := range templateObjectKinds(t, tmpl) {
			if gv, ok := workloadKinds[o.Kind]; ok && o.GroupVersion().String() == gv {
				kinds.Insert(gv + " " + o.Kind)
			}
		}
		if kinds.Len() > 0 {
			creates[name] = sets.List(kinds)
		} else {
			others = append(others, name)
		}
	}
	if len(creates) == 0 || len(others) == 0 {
		t.Fatalf("of %d templates %d create a DeploymentConfig or a BuildConfig: the test needs some of each", len(inv.TemplateNames()), len(creates))
	}
	t.Logf("%d of %d templates create a DeploymentConfig or a BuildConfig; %d create neither", len(creates), len(inv.TemplateNames()), len(others))
	return creates, others
}

// TestGroupsSwitchedOffAndOnWriteOnlyTheirMarks: with the samples installed and settled,
// apps.openshift.io and build.openshift.io switched off, then on again (the real
// openshift-apiserver restarted each time, its other groups unavailable meanwhile), while the
// operator runs. Each template that creates a DeploymentConfig or a BuildConfig is written for
// its mark and for its unmarking and for nothing else (once per change, or once per kind when the
// operator sees the groups go or come one after the other), no other sample is written, and a
// verdict change being no progress, the ClusterOperator never says Progressing=True nor the
// Config SamplesExist anything but SamplesInstalled, from the first switch to the end.
func TestGroupsSwitchedOffAndOnWriteOnlyTheirMarks(t *testing.T) {
	parallel(t, aboutAMinute)
	e := newEnvInstalledOn(t, controlplane.Options{}, applyManifests)
	inv := fullX86Inventory(t)
	creates, _ := workloadTemplates(t, inv)
	e.startOperator(fullInventoryOptions())
	e.waitManaged(t, inv, "v1")
	e.waitClusterOperator(t, configv1.ConditionTrue, configv1.ConditionFalse, configv1.ConditionFalse, "", "v1")
	eventually(t, 30*time.Second, func() (bool, string) {
		c := configCondition(e.getConfig(), samplesv1.SamplesExist)
		return c != nil && c.Reason == "SamplesInstalled", fmt.Sprintf("SamplesExist %+v", c)
	})
	e.waitQuiet(t, 2*time.Second)

	// Every status the ClusterOperator and the Config go through from here, as their watches
	// deliver them.
	ctx, stop := context.WithCancel(context.Background())
	defer stop()
	var mu sync.Mutex
	var seen []string
	watchStatus := func(resource string, start func(context.Context, metav1.ListOptions) (watch.Interface, error), says func(any) string) {
		w, err := start(ctx, metav1.ListOptions{})
		if err != nil {
			t.Fatalf("watching the %s: %v", resource, err)
		}
		go func() {
			defer w.Stop()
			for ev := range w.ResultChan() {
				if what := says(ev.Object); what != "" {
					mu.Lock()
					seen = append(seen, resource+": "+what)
					mu.Unlock()
				}
			}
		}()
	}
	watchStatus("ClusterOperator", func(ctx context.Context, o metav1.ListOptions) (watch.Interface, error) {
		return e.config.ConfigV1().ClusterOperators().Watch(ctx, o)
	}, func(obj any) string {
		co, ok := obj.(*configv1.ClusterOperator)
		if !ok || co.Name != "openshift-samples" {
			return ""
		}
		if c := v1helpers.FindStatusCondition(co.Status.Conditions, configv1.OperatorProgressing); c != nil && c.Status != configv1.ConditionFalse {
			return fmt.Sprintf("Progressing=%s %s: %s", c.Status, c.Reason, c.Message)
		}
		return ""
	})
	watchStatus("Config", func(ctx context.Context, o metav1.ListOptions) (watch.Interface, error) {
		return e.samples.SamplesV1().Configs().Watch(ctx, o)
	}, func(obj any) string {
		cfg, ok := obj.(*samplesv1.Config)
		if !ok {
			return ""
		}
		if c := configCondition(cfg, samplesv1.SamplesExist); c == nil || c.Reason != "SamplesInstalled" {
			return fmt.Sprintf("SamplesExist %+v", c)
		}
		return ""
	})

	// Each template names the kinds it creates that the cluster does not serve, and no other.
	asServed := func(served sets.Set[string]) func() (bool, string) {
		return func() (bool, string) {
			live := e.templates(t)
			for name := range creates {
				if why := unexpectedMarks(t, inv, live[name], served); why != "" {
					return false, why
				}
			}
			return true, ""
		}
	}
	switched := time.Now()
	for _, on := range []bool{false, true} {
		began := time.Now()
		if err := e.cp.SetWorkloadAPIs(context.Background(), on); err != nil {
			t.Fatalf("switching apps.openshift.io and build.openshift.io on=%v: %v", on, err)
		}
		t.Logf("SetWorkloadAPIs(%v) took %s on %s; every mark followed %s after it returned", on, time.Since(began).Round(time.Millisecond), apisServedBy(e),
			within(t, 30*time.Second, asServed(servedKinds(t, e))).Round(time.Millisecond))
		e.waitQuiet(t, 3*time.Second)
	}
	stop()

	perObject := countBy(e.operatorRequests(t, writes, carriedOut, onSamples, receivedAfter(switched)), byObject)
	total := 0
	for name, kinds := range creates {
		n := perObject["templates/"+name]
		if n < 2 || n > 2*len(kinds) {
			t.Errorf("template %s, which creates %v, was written %d times for the two changes; want its mark and its unmarking, once per kind at the most:\n%s",
				name, kinds, n, e.historyOf(t, "templates", name))
		}
		total += n
		delete(perObject, "templates/"+name)
	}
	if len(perObject) > 0 {
		t.Errorf("switching the groups off and on made the operator write %v besides the templates that create their kinds", perObject)
	}
	t.Logf("%d writes of %d templates for the two changes", total, len(creates))
	mu.Lock()
	defer mu.Unlock()
	for _, what := range seen {
		t.Errorf("while the groups were switched off and on: %s", what)
	}
}

// TestASkippedTagMakesTheTemplatesThatDefaultToItUnusable: the Config skips the tag that
// rails-postgresql-example's RUBY_VERSION names by default. The tag goes, and every template
// that names it with its parameters' default values is marked ImageStreamTagSkipped and hidden,
// in one write each, told by one Event; no other template's marks change. The Config keeping the
// template offered whatever the verdict unhides it and keeps the reason, which SamplesExist
// says. The skip cleared, every template is as before it, SamplesUsableAgain says so once,
// nothing was reverted, and an operator restarted writes nothing at its start or its resyncs.
func TestASkippedTagMakesTheTemplatesThatDefaultToItUnusable(t *testing.T) {
	parallel(t, aboutHalfAMinute)
	e := newEnv(t)
	inv := x86Inventory(t)
	const subject = "rails-postgresql-example"
	rails, ok := inv.Template(subject)
	if !ok {
		t.Fatalf("the test inventory has no %s", subject)
	}
	rubyVersion := ""
	for _, p := range rails.Parameters {
		if p.Name == "RUBY_VERSION" {
			rubyVersion = p.Value
		}
	}
	if rubyVersion == "" {
		t.Fatalf("%s has no default RUBY_VERSION", subject)
	}
	skipped := "ruby:" + rubyVersion
	// The templates that name the tag once their parameters take their default values.
	streams := map[string]*imagev1.ImageStream{}
	for _, name := range inv.ImageStreamNames() {
		streams[name], _ = inv.ImageStream(name)
	}
	var affected, unaffected []string
	for _, name := range inv.TemplateNames() {
		tmpl, _ := inv.Template(name)
		v := usability.ForTemplate(tmpl, usability.Cluster{Streams: streams, SkippedTags: sets.New(skipped)})
		if slices.ContainsFunc(v.Reasons, func(r usability.Reason) bool { return r.Code == usability.ImageSkipped }) {
			affected = append(affected, name)
		} else {
			unaffected = append(unaffected, name)
		}
	}
	if !slices.Contains(affected, subject) {
		t.Fatalf("%s does not name %s by default, by pkg/usability's reading", subject, skipped)
	}
	t.Logf("templates that default to %s: %v", skipped, affected)

	// The shipped resync: the skip and its clearing reach the verdicts through the Config's
	// events alone, not at the next resync.
	opts := defaultOptions()
	op := e.startOperator(opts)
	e.waitManaged(t, inv, "v1")
	// Some templates cannot work here before anything is skipped (nginx-example defaults to a
	// tag the inventory's nginx no longer has): what the skip does is compared with how the
	// templates were before it.
	e.waitQuiet(t, 2*time.Second)
	before := e.templates(t)
	for _, name := range inv.TemplateNames() {
		if before[name] == nil {
			t.Fatalf("template %s is missing", name)
		}
		if reason, _ := unusableMarks(before[name].Annotations); reason != "" {
			t.Logf("before the skip, template %s: %s %q", name, desired.UnusableAnnotation, reason)
		}
	}
	for _, name := range affected {
		if reason, hidden := unusableMarks(before[name].Annotations); reason != "" || hidden {
			t.Fatalf("template %s is marked before the skip: %q, hidden %v", name, reason, hidden)
		}
	}
	asBefore := func() (bool, string) {
		live := e.templates(t)
		for _, name := range inv.TemplateNames() {
			for _, key := range []string{desired.UnusableAnnotation, "tags"} {
				if got, was := live[name].Annotations[key], before[name].Annotations[key]; got != was {
					return false, fmt.Sprintf("template %s: annotation %s %q, was %q", name, key, got, was)
				}
			}
		}
		return true, ""
	}
	skippedAt := time.Now()
	e.updateConfig(func(c *samplesv1.Config) {
		if c.Annotations == nil {
			c.Annotations = map[string]string{}
		}
		c.Annotations[configspec.SkippedImageStreamTagsAnnotation] = skipped
	})
	want := "image openshift/" + skipped + " is skipped by the Config"
	marks := func(hide bool) func() (bool, string) {
		return func() (bool, string) {
			live := e.templates(t)
			for _, name := range affected {
				reason, hidden := unusableMarks(live[name].Annotations)
				if !strings.Contains(reason, want) || hidden != hide {
					return false, fmt.Sprintf("template %s: %s %q, hidden %v; want %q, hidden %v", name, desired.UnusableAnnotation, reason, hidden, want, hide)
				}
			}
			for _, name := range unaffected {
				for _, key := range []string{desired.UnusableAnnotation, "tags"} {
					if got, was := live[name].Annotations[key], before[name].Annotations[key]; got != was {
						return false, fmt.Sprintf("template %s, which does not name %s: annotation %s %q, was %q", name, skipped, key, got, was)
					}
				}
			}
			return true, ""
		}
	}
	eventually(t, 15*time.Second, marks(true))
	e.waitSamplesExistSays(t, 10*time.Second, "template/"+subject+" ("+want)
	e.waitQuiet(t, time.Second)
	var templateWrites []string
	for _, w := range e.sampleWritesSince(t, skippedAt) {
		if strings.Contains(w, " templates/") {
			templateWrites = append(templateWrites, w)
		}
	}
	slices.Sort(templateWrites)
	var wantWrites []string
	for _, name := range affected {
		wantWrites = append(wantWrites, "update templates/"+name)
	}
	if !slices.Equal(templateWrites, wantWrites) {
		t.Errorf("the skip made the operator write %q on templates; want one update of each of %v", templateWrites, affected)
	}
	assertOneEventPerCause(t, e, usability.ImageSkipped)

	// Offered whatever the verdict: the reason stays, hidden goes.
	e.updateConfig(func(c *samplesv1.Config) { c.Annotations[configspec.OfferedAnnotation] = subject })
	eventually(t, 15*time.Second, func() (bool, string) {
		reason, hidden := unusableMarks(e.template(subject).Annotations)
		return strings.Contains(reason, want) && !hidden, fmt.Sprintf("offered %s: %s %q, hidden %v; want the reason kept, not hidden", subject, desired.UnusableAnnotation, reason, hidden)
	})
	e.waitSamplesExistSays(t, 10*time.Second, "template/"+subject+" ("+want+", offered all the same)")
	if tags := e.template(subject).Annotations["tags"]; tags != before[subject].Annotations["tags"] {
		t.Errorf("offered %s has tags %q; want the inventory's %q", subject, tags, before[subject].Annotations["tags"])
	}
	e.updateConfig(func(c *samplesv1.Config) { delete(c.Annotations, configspec.OfferedAnnotation) })
	eventually(t, 15*time.Second, marks(true))

	// The skip cleared: the tag is back, and so are the templates.
	e.updateConfig(func(c *samplesv1.Config) { delete(c.Annotations, configspec.SkippedImageStreamTagsAnnotation) })
	eventually(t, 15*time.Second, asBefore)
	// The templates' verdicts follow the Config alone, the stream's tag its own sync: either may
	// come first.
	eventually(t, 15*time.Second, func() (bool, string) {
		return specTagOf(e.imageStream("ruby"), rubyVersion) != nil, "ruby:" + rubyVersion + " is not back"
	})
	eventually(t, 10*time.Second, func() (bool, string) {
		again := e.eventsWithReason(t, "SamplesUsableAgain")
		n := 0
		for _, msg := range again {
			if strings.Contains(msg, want) {
				n++
			}
		}
		return n == 1, fmt.Sprintf("%d SamplesUsableAgain Events name the skip, want 1: %q", n, again)
	})
	e.assertRestartAndResyncsWriteNothing(t, op, opts, inv, "marks gone")
	if reverted := e.eventsWithReason(t, "SampleReverted"); len(reverted) > 0 {
		t.Errorf("no one edited a sample, yet the operator took its own writes for edits: %q", reverted)
	}
}

// TestATagAnAdminAddsBringsBackTheTemplateThatNamesIt: the test inventory's nginx-example
// defaults to nginx:1.20-ubi8, a tag its nginx no longer has, and is marked
// ImageStreamTagMissing. An admin adds the tag to the stream: the mark goes, within a bound far
// below the shipped resync the operator runs at, and the operator leaves the admin's tag in
// place. The admin removes it: the mark is back. Only the stream changes each time (no Config,
// no template): the usability controller sees it through the stream's event or not at all.
func TestATagAnAdminAddsBringsBackTheTemplateThatNamesIt(t *testing.T) {
	parallel(t, aboutHalfAMinute)
	e := newEnv(t)
	inv := x86Inventory(t)
	const subject, stream, tag = "nginx-example", "nginx", "1.20-ubi8"
	missing := "image openshift/" + stream + ":" + tag + " does not exist"
	e.startOperator(defaultOptions())
	e.waitManaged(t, inv, "v1")
	markIs := func(want string) func() (bool, string) {
		return func() (bool, string) {
			reason, _ := unusableMarks(e.template(subject).Annotations)
			if want == "" {
				return reason == "", fmt.Sprintf("template %s: %s %q; want none", subject, desired.UnusableAnnotation, reason)
			}
			return strings.Contains(reason, want), fmt.Sprintf("template %s: %s %q; want it to say %q", subject, desired.UnusableAnnotation, reason, want)
		}
	}
	eventually(t, 30*time.Second, markIs(missing))
	e.waitQuiet(t, time.Second)

	// The admin's tag takes its image from a tag of the stream the operator installs.
	var from *corev1.ObjectReference
	for _, ref := range e.imageStream(stream).Spec.Tags {
		if ref.From != nil && ref.From.Kind == "DockerImage" {
			from = ref.From.DeepCopy()
			break
		}
	}
	if from == nil {
		t.Fatalf("%s has no tag from a DockerImage", stream)
	}
	added := time.Now()
	e.editImageStream(stream, func(is *imagev1.ImageStream) {
		is.Spec.Tags = append(is.Spec.Tags, imagev1.TagReference{Name: tag, From: from})
	})
	eventually(t, 10*time.Second, markIs(""))
	t.Logf("the admin's %s:%s: %s's mark gone %s after the edit (the shipped resync: %s)", stream, tag, subject, time.Since(added).Round(10*time.Millisecond), operator.DefaultResync)
	e.waitQuiet(t, time.Second)
	if specTagOf(e.imageStream(stream), tag) == nil {
		t.Errorf("the operator removed the admin's %s:%s", stream, tag)
	}

	removed := time.Now()
	e.editImageStream(stream, func(is *imagev1.ImageStream) {
		is.Spec.Tags = slices.DeleteFunc(is.Spec.Tags, func(ref imagev1.TagReference) bool { return ref.Name == tag })
	})
	eventually(t, 10*time.Second, markIs(missing))
	t.Logf("the admin's %s:%s removed: %s marked again %s after the edit", stream, tag, subject, time.Since(removed).Round(10*time.Millisecond))
}

// TestTagsFollowTheClustersImportMode: the image configuration's status says Legacy, the mode
// the tags have already: no write. An admin sets one tag PreserveOriginal: theirs. The cluster
// turns PreserveOriginal (what `oc adm upgrade --to-multi-arch` leads to): every operator-owned
// stream is updated once, its tags PreserveOriginal and the mode named on the stream; each tag's
// spec generation moves, which asks the import controller for another import. Back to Legacy:
// once more, one update each, and the admin's tag stays PreserveOriginal throughout. Nothing
// more is written after each change, nor by an operator restarted, at its start or its resyncs.
func TestTagsFollowTheClustersImportMode(t *testing.T) {
	parallel(t, aboutHalfAMinute)
	e := newEnv(t)
	inv := x86Inventory(t)
	// The shipped resync: the samples controller learns of the cluster's import mode from the
	// image configuration's events alone, not at the next resync.
	opts := defaultOptions()
	op := e.startOperator(opts)
	e.waitManaged(t, inv, "v1")
	// The streams with tags whose mode the inventory leaves to the cluster (all of them).
	following := map[string][]string{} // stream -> its DockerImage tags with no import mode of their own
	for _, name := range inv.ImageStreamNames() {
		is, _ := inv.ImageStream(name)
		for _, tag := range is.Spec.Tags {
			if tag.ImportPolicy.ImportMode == "" && tag.From != nil && tag.From.Kind == "DockerImage" {
				following[name] = append(following[name], tag.Name)
			}
		}
	}
	if len(following) == 0 {
		t.Fatal("no tag of the inventory leaves its import mode to the cluster")
	}
	followers := -1 // the admin's tag is theirs
	for _, tags := range following {
		followers += len(tags)
	}
	const adminStream = "python"
	adminTag := unfollowedDockerTags(inv, adminStream)[0]
	// Every stream is imported (its tags have an image) before anything changes.
	eventually(t, 30*time.Second, func() (bool, string) {
		for stream, tags := range following {
			is := e.imageStream(stream)
			for _, tag := range tags {
				if !importedAtItsGeneration(is, tag) {
					return false, fmt.Sprintf("%s:%s not imported yet", stream, tag)
				}
			}
		}
		return true, ""
	})

	e.waitQuiet(t, time.Second)
	legacyAt := time.Now()
	e.setClusterImportMode(t, imagev1.ImportModeLegacy)
	idle(t, quietAfterAChange)
	if w := e.sampleWritesSince(t, legacyAt); len(w) > 0 {
		t.Errorf("the cluster saying Legacy, the mode the tags have, made the operator write %q", w)
	}
	// The admin's own mode.
	e.editTag(t, adminStream, adminTag, func(tag *imagev1.TagReference) { tag.ImportPolicy.ImportMode = imagev1.ImportModePreserveOriginal })
	adminAt := time.Now()
	idle(t, quietAfterAChange)
	if w := e.sampleWritesSince(t, adminAt); len(w) > 0 {
		t.Errorf("the admin's import mode on %s:%s made the operator write %q", adminStream, adminTag, w)
	}
	assertAdminMode := func(when string) {
		t.Helper()
		if _, tag := e.tagOf(t, adminStream, adminTag); tag.ImportPolicy.ImportMode != imagev1.ImportModePreserveOriginal {
			t.Errorf("%s: the admin's %s:%s is %q; want PreserveOriginal, as the admin set it", when, adminStream, adminTag, tag.ImportPolicy.ImportMode)
		}
	}
	assertAdminMode("the cluster Legacy")

	for _, mode := range []imagev1.ImportModeType{imagev1.ImportModePreserveOriginal, imagev1.ImportModeLegacy} {
		before := map[string]*imagev1.ImageStream{}
		for stream := range following {
			before[stream] = e.imageStream(stream)
		}
		changedAt := time.Now()
		e.setClusterImportMode(t, mode)
		eventually(t, 20*time.Second, func() (bool, string) {
			for stream, tags := range following {
				is := e.imageStream(stream)
				if got := is.Annotations[desired.ImportModeAnnotation]; got != string(mode) {
					return false, fmt.Sprintf("%s: %s %q, want %q", stream, desired.ImportModeAnnotation, got, mode)
				}
				for _, tag := range tags {
					if stream == adminStream && tag == adminTag {
						continue
					}
					if ref := specTagOf(is, tag); ref == nil || ref.ImportPolicy.ImportMode != mode {
						return false, fmt.Sprintf("%s:%s's import mode is not %s yet", stream, tag, mode)
					}
				}
			}
			return true, ""
		})
		// Each tag whose mode moved is to be imported again: its spec generation moved, which is
		// what openshift-controller-manager's import controller acts on. (The import emulator,
		// the importer of these tests, imports a tag again only when its reference changes, so
		// no import is awaited here; how many tags' status caught up is logged.)
		caughtUp := 0
		eventually(t, 20*time.Second, func() (bool, string) {
			caughtUp = 0
			for stream, tags := range following {
				is := e.imageStream(stream)
				for _, tag := range tags {
					if stream == adminStream && tag == adminTag {
						continue
					}
					was, now := specTagOf(before[stream], tag), specTagOf(is, tag)
					if was == nil || now == nil || was.Generation == nil || now.Generation == nil || *now.Generation <= *was.Generation {
						return false, fmt.Sprintf("%s:%s's generation did not move (%v -> %v)", stream, tag, genOf(was), genOf(now))
					}
					if importedAtItsGeneration(is, tag) {
						caughtUp++
					}
				}
			}
			return true, ""
		})
		t.Logf("the cluster turning %s: every following tag's generation moved; %d of the %d have a status of that generation", mode, caughtUp, followers)
		e.waitQuiet(t, time.Second)
		updates := countBy(e.operatorRequests(t, writes, onSamples, carriedOut, receivedAfter(changedAt)), byVerbAndResource)
		perStream := countBy(e.operatorRequests(t, writes, onSamples, carriedOut, receivedAfter(changedAt)), byObject)
		for stream := range following {
			if n := perStream["imagestreams/"+stream]; n != 1 {
				t.Errorf("the cluster turning %s: %d writes of imagestream %s; want 1:\n%s", mode, n, stream, e.historyOf(t, "imagestreams", stream))
			}
		}
		t.Logf("the cluster turning %s: the operator's writes on the samples %v (%d streams follow the cluster)", mode, updates, len(following))
		if n := len(perStream) - len(following); n != 0 {
			t.Errorf("the cluster turning %s: writes on %v; want one update of each of the %d streams", mode, perStream, len(following))
		}
		assertAdminMode("the cluster " + string(mode))
		steadyAt := time.Now()
		idle(t, quietAfterAChange)
		if w := e.sampleWritesSince(t, steadyAt); len(w) > 0 {
			t.Errorf("the cluster %s, the operator went on writing %q", mode, w)
		}
	}
	e.assertRestartAndResyncsWriteNothing(t, op, opts, inv, "the cluster Legacy again, the admin's tag PreserveOriginal")
}

// templateObjectKinds are the group, version and kind of each of a template's objects, as
// written (a parameter left in place).
func templateObjectKinds(t *testing.T, tmpl *templatev1.Template) []schema.GroupVersionKind {
	t.Helper()
	var out []schema.GroupVersionKind
	for _, raw := range tmpl.Objects {
		var head metav1.TypeMeta
		if err := json.Unmarshal(raw.Raw, &head); err != nil {
			t.Fatalf("template %s: an object does not decode: %v", tmpl.Name, err)
		}
		out = append(out, schema.FromAPIVersionAndKind(head.APIVersion, head.Kind))
	}
	return out
}

// servedKinds are the kinds discovery lists now, as "group/version Kind".
func servedKinds(t *testing.T, e *env) sets.Set[string] {
	t.Helper()
	_, lists, err := e.kube.Discovery().ServerGroupsAndResources()
	if err != nil && !discovery.IsGroupDiscoveryFailedError(err) {
		t.Fatalf("reading discovery: %v", err)
	}
	out := sets.New[string]()
	for _, list := range lists {
		for _, r := range list.APIResources {
			if !strings.Contains(r.Name, "/") {
				out.Insert(list.GroupVersion + " " + r.Kind)
			}
		}
	}
	return out
}

// unservedKinds are the kinds the inventory's template creates that discovery does not list.
func unservedKinds(t *testing.T, inv *inventory.Inventory, name string, served sets.Set[string]) []string {
	t.Helper()
	tmpl, _ := inv.Template(name)
	out := sets.New[string]()
	for _, o := range templateObjectKinds(t, tmpl) {
		if kind := o.GroupVersion().String() + " " + o.Kind; !served.Has(kind) {
			out.Insert(kind)
		}
	}
	return sets.List(out)
}

// unexpectedMarks says what is wrong with a template's marks as far as kinds go ("" when
// nothing is): it must name exactly the kinds it creates that the cluster does not serve, be
// hidden when it names any reason, and have the inventory's catalog tags when it names none. Other reasons (an image its parameters name by default that
// the inventory no longer has) are the verdicts' of other tests.
func unexpectedMarks(t *testing.T, inv *inventory.Inventory, tmpl *templatev1.Template, served sets.Set[string]) string {
	t.Helper()
	if tmpl == nil {
		return "a template is missing"
	}
	reason, hidden := unusableMarks(tmpl.Annotations)
	named := sets.New[string]()
	for _, clause := range strings.Split(reason, "; ") {
		if kind, ok := strings.CutPrefix(clause, "creates "); ok {
			named.Insert(strings.TrimSuffix(kind, ", "+notServed))
		}
	}
	if unserved := sets.New(unservedKinds(t, inv, tmpl.Name, served)...); !named.Equal(unserved) {
		return fmt.Sprintf("template %s: %s %q names the kinds %v; the cluster does not serve %v of those it creates", tmpl.Name, desired.UnusableAnnotation, reason, sets.List(named), sets.List(unserved))
	}
	// Hidden when it names a reason; else its catalog tags are the inventory's (which hide a few
	// templates of their own).
	shipped, _ := inv.Template(tmpl.Name)
	_, shippedHidden := unusableMarks(shipped.Annotations)
	if reason == "" && tmpl.Annotations["tags"] != shipped.Annotations["tags"] || reason != "" && !hidden {
		return fmt.Sprintf("template %s: %s %q, tags %q (the inventory's %q, hidden there %v)", tmpl.Name, desired.UnusableAnnotation, reason, tmpl.Annotations["tags"], shipped.Annotations["tags"], shippedHidden)
	}
	return ""
}

// unusableCount reads how many samples SamplesExist says cannot work here.
var unusableCount = regexp.MustCompile(`(\d+) samples cannot work on this cluster`)

// notServed ends the clause of a verdict on a kind the cluster does not serve.
const notServed = "which this cluster does not serve"

// statusEntry is the template's entry in SamplesExist's list of the samples that cannot work
// here ("" when it has none): "template/NAME (REASONS".
func statusEntry(message, name string) string {
	i := strings.Index(message, "template/"+name+" (")
	if i < 0 {
		return ""
	}
	entry := message[i:]
	if end := strings.Index(entry, "), "); end >= 0 {
		entry = entry[:end]
	}
	return entry
}

// unusableMarks are a template's or a tag's marks: the reason the operator wrote, and whether
// its tags annotation hides it.
func unusableMarks(annotations map[string]string) (reason string, hidden bool) {
	for _, tag := range strings.Split(annotations["tags"], ",") {
		if strings.TrimSpace(tag) == "hidden" {
			hidden = true
		}
	}
	return annotations[desired.UnusableAnnotation], hidden
}

// templates are the live templates of openshift by name.
func (e *env) templates(t *testing.T) map[string]*templatev1.Template {
	t.Helper()
	list, err := e.tmpl.TemplateV1().Templates("openshift").List(context.Background(), metav1.ListOptions{})
	if err != nil {
		t.Fatalf("listing the templates: %v", err)
	}
	out := map[string]*templatev1.Template{}
	for i := range list.Items {
		out[list.Items[i].Name] = &list.Items[i]
	}
	return out
}

// assertUnusableSeries checks the scrape: a KindNotServed series for each template of marked,
// and none for any of usable.
func assertUnusableSeries(t *testing.T, scraped map[string]scrapedSample, marked, usable []string) {
	t.Helper()
	series := map[string][]string{} // template -> its reasons
	for _, s := range scraped {
		if !strings.HasPrefix(s.exported, metrics.UnusableName+"{") || !strings.Contains(s.exported, `kind="template"`) {
			continue
		}
		for _, name := range append(slices.Clone(marked), usable...) {
			if strings.Contains(s.exported, `name="`+name+`"`) {
				series[name] = append(series[name], s.exported)
			}
		}
	}
	for _, name := range marked {
		if !slices.ContainsFunc(series[name], func(s string) bool { return strings.Contains(s, `reason="`+usability.KindNotServed+`"`) }) {
			t.Errorf("no %s series with reason %s for template %s: %v", metrics.UnusableName, usability.KindNotServed, name, series[name])
		}
	}
	for _, name := range usable {
		if slices.ContainsFunc(series[name], func(s string) bool { return strings.Contains(s, `reason="`+usability.KindNotServed+`"`) }) {
			t.Errorf("template %s creates only kinds the cluster serves, yet %v", name, series[name])
		}
	}
}

// assertPluginShowsUnusable runs `oc samples status` and checks its UNUSABLE HERE column, and
// the "unusable" field of -o json: each template of marked names its kinds, none of usable
// names a kind.
func (e *env) assertPluginShowsUnusable(t *testing.T, marked map[string][]string, usable []string) {
	t.Helper()
	table := e.kubectlSamplesQuiet("status")
	if table.code == 2 {
		t.Fatalf("oc samples status: exit 2: %s", table.errOut)
	}
	header := ""
	rows := map[string]string{}
	for _, line := range strings.Split(table.out, "\n") {
		fields := strings.Fields(line)
		switch {
		case strings.Contains(line, "UNUSABLE HERE"):
			header = line
		case len(fields) >= 2 && fields[0] == "template":
			rows[fields[1]] = line
		}
	}
	// The column runs from its header to the next one's, or to the end of the line.
	column, end := strings.Index(header, "UNUSABLE HERE"), len(header)
	if column < 0 {
		t.Fatalf("oc samples status has no UNUSABLE HERE column:\n%s", table.out)
	}
	if next := strings.IndexFunc(header[column+len("UNUSABLE HERE"):], func(r rune) bool { return r != ' ' }); next >= 0 {
		end = column + len("UNUSABLE HERE") + next
	}
	cell := func(row string) string {
		if len(row) <= column {
			return ""
		}
		if end == len(header) {
			return strings.TrimSpace(row[column:])
		}
		return strings.TrimSpace(row[column:min(end, len(row))])
	}
	asJSON := e.kubectlSamplesQuiet("status", "-o", "json")
	var report samplereport.Report
	if err := json.Unmarshal([]byte(asJSON.out), &report); err != nil {
		t.Fatalf("oc samples status -o json: %v\n%s", err, asJSON.out)
	}
	unusable := map[string]string{}
	for _, s := range report.Samples {
		if s.Kind == samplereport.KindTemplate {
			unusable[s.Name] = s.Unusable
		}
	}
	for name, kinds := range marked {
		for _, kind := range kinds {
			// The table's cell is cut to its width: the kind's name is at its start.
			if c := cell(rows[name]); !strings.Contains(c, "creates") {
				t.Errorf("oc samples status: template %s's UNUSABLE HERE is %q; want the kinds it creates", name, c)
			}
			if !strings.Contains(unusable[name], "creates "+kind+",") {
				t.Errorf("oc samples status -o json: template %s's unusable is %q; want it to name %s", name, unusable[name], kind)
			}
		}
	}
	for _, name := range usable {
		if c := cell(rows[name]); strings.Contains(c, "creates") {
			t.Errorf("oc samples status: template %s's UNUSABLE HERE is %q; want no kind named", name, c)
		}
		if strings.Contains(unusable[name], notServed) {
			t.Errorf("oc samples status -o json: template %s's unusable is %q; want no kind named", name, unusable[name])
		}
	}
}

// assertOneEventPerCause checks that each cause of reason was told in one Event, recorded once,
// and returns their messages.
func assertOneEventPerCause(t *testing.T, e *env, reason string) []string {
	t.Helper()
	var messages []string
	seen := map[string]int{}
	for _, ev := range e.operatorEvents(t) {
		if ev.Reason != reason {
			continue
		}
		cause := ev.Message[strings.LastIndex(ev.Message, "): ")+3:]
		seen[cause] += occurrences(ev, time.Time{})
		if seen[cause] == occurrences(ev, time.Time{}) {
			messages = append(messages, cause)
		}
	}
	for cause, n := range seen {
		if n != 1 {
			t.Errorf("%s: %d Events tell of %q; want one", reason, n, cause)
		}
	}
	if len(messages) == 0 {
		t.Errorf("no %s Event", reason)
	}
	return messages
}

// assertNoWritesFor checks that the operator writes no state (its Lease left aside) for d from
// the moment it has been quiet for a second.
func (e *env) assertNoWritesFor(t *testing.T, d time.Duration, when string) {
	t.Helper()
	e.waitQuiet(t, time.Second)
	before := e.operatorWrites(t)
	statusBefore, _ := json.Marshal(e.getConfig().Status)
	idle(t, d)
	if after := e.operatorWrites(t); !maps.Equal(before, after) {
		statusAfter, _ := json.Marshal(e.getConfig().Status)
		t.Errorf("%s: the operator wrote in %s with nothing changed: before %v, after %v; Config status before %s, after %s", when, d, before, after, statusBefore, statusAfter)
	} else {
		t.Logf("%s: no write in %s", when, d)
	}
}

// quietAfterAChange is how long a test watches for writes that a change it made should not
// bring: the operator answers an event within a second or two, even on a loaded machine.
const quietAfterAChange = 3 * time.Second

// shortResync is the resync of an operator restarted to show that its resyncs write nothing.
const shortResync = time.Second

// assertRestartAndResyncsWriteNothing stops op, starts the operator again with opts at a short
// resync, and fails the test if its start or three of its resyncs write a sample, or if anything
// is written once it settled. The tests change the cluster under the shipped resync (ten
// minutes), so that an event handler gone missing is not covered by the next resync; a resync
// runs every sync again, as a start does, and this is where they show it writes nothing.
func (e *env) assertRestartAndResyncsWriteNothing(t *testing.T, op *runningOperator, opts operator.Options, inv *inventory.Inventory, state string) {
	t.Helper()
	// The claim is about a restart of an operator with nothing left to do: one stopped while its
	// status still said a sample was pending (a tag just put back, on a loaded machine) leaves
	// the restarted one the status it had yet to write.
	eventually(t, 30*time.Second, func() (bool, string) {
		c := configCondition(e.getConfig(), samplesv1.SamplesExist)
		return c != nil && c.Reason != configstatus.ReasonUpdating, fmt.Sprintf("%s: SamplesExist %+v before the restart", state, c)
	})
	op.stop(t)
	restarted := time.Now()
	opts.Resync = shortResync
	e.startOperator(opts)
	e.waitManaged(t, inv, opts.Version)
	e.assertNoWritesFor(t, 3*shortResync+500*time.Millisecond, state+", an operator restarted, resyncs every "+shortResync.String())
	if w := e.sampleWritesSince(t, restarted); len(w) > 0 {
		t.Errorf("%s: the operator restarted with a resync of %s wrote %q", state, shortResync, w)
	}
}

// apiServicesAvailableAt says when the workload groups' APIServices last turned Available, as
// their conditions record it (to the second), and returns the later of the two.
func apiServicesAvailableAt(t *testing.T, e *env) (time.Time, string) {
	t.Helper()
	var parts []string
	var latest time.Time
	for _, group := range []string{"apps.openshift.io", "build.openshift.io"} {
		raw, err := e.kube.Discovery().RESTClient().Get().AbsPath("/apis/apiregistration.k8s.io/v1/apiservices/v1." + group).DoRaw(context.Background())
		if err != nil {
			t.Fatalf("reading APIService v1.%s: %v", group, err)
		}
		var svc struct {
			Status struct {
				Conditions []metav1.Condition `json:"conditions"`
			} `json:"status"`
		}
		if err := json.Unmarshal(raw, &svc); err != nil {
			t.Fatalf("APIService v1.%s: %v", group, err)
		}
		for _, c := range svc.Status.Conditions {
			if c.Type == "Available" {
				parts = append(parts, fmt.Sprintf("v1.%s Available %s since %s", group, c.Status, c.LastTransitionTime.Format("15:04:05")))
				if c.LastTransitionTime.After(latest) {
					latest = c.LastTransitionTime.Time
				}
			}
		}
	}
	return latest, strings.Join(parts, ", ")
}

// apisServedBy names the server of the OpenShift APIs.
func apisServedBy(e *env) string {
	if e.cp.RealOpenShiftAPIServer() {
		return "the real openshift-apiserver"
	}
	return "the stand-ins"
}

// setClusterImportMode sets images.config.openshift.io/cluster status.imageStreamImportMode, as
// the cluster image registry operator does, creating the object where the control plane has none.
func (e *env) setClusterImportMode(t *testing.T, mode imagev1.ImportModeType) {
	t.Helper()
	ctx := context.Background()
	images := e.config.ConfigV1().Images()
	for i := 0; ; i++ {
		img, err := images.Get(ctx, "cluster", metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			img, err = images.Create(ctx, &configv1.Image{ObjectMeta: metav1.ObjectMeta{Name: "cluster"}}, metav1.CreateOptions{})
		}
		if err == nil {
			img.Status.ImageStreamImportMode = configv1.ImportModeType(mode)
			_, err = images.UpdateStatus(ctx, img, metav1.UpdateOptions{})
		}
		if err == nil {
			return
		}
		if i > 20 {
			t.Fatalf("setting the cluster's import mode to %s: %v", mode, err)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// specTagOf is the stream's spec tag of that name, nil if none.
func specTagOf(is *imagev1.ImageStream, tag string) *imagev1.TagReference {
	for i := range is.Spec.Tags {
		if is.Spec.Tags[i].Name == tag {
			return &is.Spec.Tags[i]
		}
	}
	return nil
}

func genOf(tag *imagev1.TagReference) any {
	if tag == nil || tag.Generation == nil {
		return nil
	}
	return *tag.Generation
}

// importedAtItsGeneration reports whether the tag's newest image, or its newest import
// condition, is of its spec generation: the import its spec asked for happened.
func importedAtItsGeneration(is *imagev1.ImageStream, tag string) bool {
	ref := specTagOf(is, tag)
	if ref == nil || ref.Generation == nil {
		return false
	}
	for _, st := range is.Status.Tags {
		if st.Tag != tag {
			continue
		}
		if len(st.Items) > 0 && st.Items[0].Generation >= *ref.Generation {
			return true
		}
		for _, c := range st.Conditions {
			if c.Type == imagev1.ImportSuccess && c.Generation >= *ref.Generation && c.Status == corev1.ConditionFalse {
				return true
			}
		}
	}
	return false
}
