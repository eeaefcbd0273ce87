package usabilitycontrol

import (
	"context"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	configv1 "github.com/openshift/api/config/v1"
	imagev1 "github.com/openshift/api/image/v1"
	operatorv1 "github.com/openshift/api/operator/v1"
	samplesv1 "github.com/openshift/api/samples/v1"
	templatev1 "github.com/openshift/api/template/v1"
	configlisters "github.com/openshift/client-go/config/listers/config/v1"
	sampleslisters "github.com/openshift/client-go/samples/listers/samples/v1"
	templatelisters "github.com/openshift/client-go/template/listers/template/v1"
	"github.com/openshift/library-go/pkg/controller/factory"
	"github.com/openshift/library-go/pkg/operator/events"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/cache"
	clocktesting "k8s.io/utils/clock/testing"

	"github.com/samples-operator-dev/cluster-samples-operator/pkg/configspec"
	"github.com/samples-operator-dev/cluster-samples-operator/pkg/configspec/configspectest"
	"github.com/samples-operator-dev/cluster-samples-operator/pkg/controller/configreader"
	"github.com/samples-operator-dev/cluster-samples-operator/pkg/desired"
	"github.com/samples-operator-dev/cluster-samples-operator/pkg/names"
	"github.com/samples-operator-dev/cluster-samples-operator/pkg/samplewriter"
	"github.com/samples-operator-dev/cluster-samples-operator/pkg/usability"
)

const (
	appsNotServed  = "creates apps.openshift.io/v1 DeploymentConfig, which this cluster does not serve"
	buildNotServed = "creates build.openshift.io/v1 BuildConfig, which this cluster does not serve"
)

// servingAllBut is discovery of every group the x86_64 templates use, less those named.
func servingAllBut(groups ...string) *discoveryOf {
	kinds := map[string][]string{
		"v1":                            {"ConfigMap", "PersistentVolumeClaim", "Secret", "Service", "ServiceAccount"},
		"apps/v1":                       {"Deployment", "StatefulSet"},
		"apps.openshift.io/v1":          {"DeploymentConfig"},
		"authorization.openshift.io/v1": {"RoleBinding"},
		"build.openshift.io/v1":         {"BuildConfig"},
		"image.openshift.io/v1":         {"ImageStream"},
		"monitoring.coreos.com/v1":      {"ServiceMonitor"},
		"route.openshift.io/v1":         {"Route"},
	}
	for _, g := range groups {
		delete(kinds, g+"/v1")
	}
	return &discoveryOf{kinds: kinds}
}

func indexerOf[T any](objs ...T) cache.Indexer {
	i := cache.NewIndexer(cache.MetaNamespaceKeyFunc, cache.Indexers{cache.NamespaceIndex: cache.MetaNamespaceIndexFunc})
	for _, o := range objs {
		_ = i.Add(o)
	}
	return i
}

// operatorOver is a controller that starts over the live templates given, under cfg (nil: a
// Managed Config).
func operatorOver(disc Discovery, cfg *samplesv1.Config, live []*templatev1.Template) *Controller {
	c := syncableController(disc, clocktesting.NewFakeClock(time.Now()))
	if cfg != nil {
		image := &configv1.Image{ObjectMeta: metav1.ObjectMeta{Name: "cluster"}}
		c.config = configreader.New(sampleslisters.NewConfigLister(indexerOf(cfg)), configlisters.NewImageLister(indexerOf(image)), configspectest.X86Only{})
	}
	c.templates = templatelisters.NewTemplateLister(indexerOf(live...)).Templates(names.SamplesNamespace)
	return c
}

// syncedEvents runs one sync of c and returns the Events it emitted.
func syncedEvents(t *testing.T, c *Controller) []*corev1.Event {
	t.Helper()
	recorder := events.NewInMemoryRecorder("test", clocktesting.NewFakePassiveClock(time.Now()))
	if err := c.sync(context.Background(), factory.NewSyncContext("test", recorder)); err != nil {
		t.Fatal(err)
	}
	return recorder.Events()
}

// markedTemplates are the templates as the samples controller leaves them after c's verdicts:
// marked, and trimmed as the operator's cache keeps them.
func markedTemplates(c *Controller) []*templatev1.Template {
	var out []*templatev1.Template
	for _, v := range c.verdicts.All() {
		if v.Kind != usability.KindTemplate {
			continue
		}
		t := &templatev1.Template{ObjectMeta: metav1.ObjectMeta{
			Name: v.Name, Namespace: names.SamplesNamespace,
			Labels: map[string]string{desired.ManagedLabel: "true"}, Annotations: map[string]string{},
		}}
		desired.MarkTemplate(t, c.verdicts.Marks(samplewriter.TemplateKind, v.Name))
		desired.TrimTemplate(t)
		out = append(out, t)
	}
	return out
}

func summary(evs []*corev1.Event) []string {
	var out []string
	for _, e := range evs {
		out = append(out, e.Reason+": "+e.Message)
	}
	return out
}

// TestARestartTellsOnlyWhatChangedWhileTheOperatorWasDown: the first operator tells each cause
// once; one started over the samples it marked tells nothing when nothing changed, a cause that
// appeared meanwhile once, and a cause that went meanwhile with one SamplesUsableAgain.
func TestARestartTellsOnlyWhatChangedWhileTheOperatorWasDown(t *testing.T) {
	first := operatorOver(servingAllBut("apps.openshift.io"), nil, nil)
	if evs := syncedEvents(t, first); !strings.Contains(strings.Join(summary(evs), "\n"), usability.KindNotServed+": ") || !strings.Contains(strings.Join(summary(evs), "\n"), appsNotServed) {
		t.Fatalf("first start: want a KindNotServed Event for apps.openshift.io, got %q", summary(evs))
	}
	live := markedTemplates(first)
	if len(live) == 0 {
		t.Fatal("no template marked with apps.openshift.io not served")
	}

	for _, tc := range []struct {
		name       string
		notServed  []string
		wantReason string
		wantText   string
	}{
		{"nothing changed", []string{"apps.openshift.io"}, "", ""},
		{"build.openshift.io went meanwhile", []string{"apps.openshift.io", "build.openshift.io"}, usability.KindNotServed, buildNotServed},
		{"apps.openshift.io came back meanwhile", nil, "SamplesUsableAgain", "no longer so: " + appsNotServed},
	} {
		t.Run(tc.name, func(t *testing.T) {
			again := operatorOver(servingAllBut(tc.notServed...), nil, live)
			evs := syncedEvents(t, again)
			if tc.wantReason == "" {
				if len(evs) != 0 {
					t.Errorf("restarted over its marks: want no Event, got %q", summary(evs))
				}
				return
			}
			if len(evs) != 1 || evs[0].Reason != tc.wantReason || !strings.Contains(evs[0].Message, tc.wantText) {
				t.Errorf("restarted: want one %s Event saying %q, got %q", tc.wantReason, tc.wantText, summary(evs))
			}
			if evs := syncedEvents(t, again); len(evs) != 0 {
				t.Errorf("the next sync: want no Event, got %q", summary(evs))
			}
		})
	}
}

// TestNoEventUnlessManaged: a Config Removed, being deleted or Unmanaged tells of no cause, nor
// of one going; Managed again over the same marks, only what changed meanwhile is told.
func TestNoEventUnlessManaged(t *testing.T) {
	// Naming its architecture: a Config being deleted that names none selects no inventory, and
	// gets no verdict at all.
	config := func(state operatorv1.ManagementState, deleting bool) *samplesv1.Config {
		cfg := &samplesv1.Config{ObjectMeta: metav1.ObjectMeta{Name: "cluster"}, Spec: samplesv1.ConfigSpec{ManagementState: state, Architectures: []string{"x86_64"}}}
		if deleting {
			cfg.DeletionTimestamp = &metav1.Time{Time: time.Now()}
			cfg.Finalizers = []string{"samples.operator.openshift.io/finalizer"}
		}
		return cfg
	}
	for _, tc := range []struct {
		name string
		cfg  *samplesv1.Config
	}{
		{"Removed", config(operatorv1.Removed, false)},
		{"being deleted", config(operatorv1.Managed, true)},
		{"Unmanaged", config(operatorv1.Unmanaged, false)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := operatorOver(servingAllBut("apps.openshift.io"), tc.cfg, nil)
			if evs := syncedEvents(t, c); len(evs) != 0 {
				t.Errorf("want no Event, got %q", summary(evs))
			}
		})
	}

	// Managed, then Unmanaged while apps.openshift.io comes back and build.openshift.io goes
	// (the samples controller writes no mark), then Managed again over the marks left.
	disc := servingAllBut("apps.openshift.io")
	c := operatorOver(disc, nil, nil)
	if evs := syncedEvents(t, c); len(evs) == 0 {
		t.Fatal("Managed: no Event")
	}
	live := markedTemplates(c)
	c.templates = templatelisters.NewTemplateLister(indexerOf(live...)).Templates(names.SamplesNamespace)
	image := &configv1.Image{ObjectMeta: metav1.ObjectMeta{Name: "cluster"}}
	setConfig := func(cfg *samplesv1.Config) {
		c.config = configreader.New(sampleslisters.NewConfigLister(indexerOf(cfg)), configlisters.NewImageLister(indexerOf(image)), configspectest.X86Only{})
	}
	setConfig(config(operatorv1.Unmanaged, false))
	*disc = *servingAllBut("build.openshift.io")
	c.discoveryStale.Store(true)
	if evs := syncedEvents(t, c); len(evs) != 0 {
		t.Errorf("Unmanaged: want no Event, got %q", summary(evs))
	}
	setConfig(config(operatorv1.Managed, false))
	evs := syncedEvents(t, c)
	if len(evs) != 2 || evs[0].Reason != usability.KindNotServed || !strings.Contains(evs[0].Message, buildNotServed) ||
		evs[1].Reason != "SamplesUsableAgain" || !strings.Contains(evs[1].Message, appsNotServed) {
		t.Errorf("Managed again: want build.openshift.io told and apps.openshift.io told back, got %q", summary(evs))
	}
}

// TestASampleKeptOfferedIsNotSaidHidden: the Event of a cause names the samples the Config keeps
// offered as such, not as hidden, whether all or some of its samples are; and so does the Event
// of its going.
func TestASampleKeptOfferedIsNotSaidHidden(t *testing.T) {
	cause := usability.Reason{Code: usability.KindNotServed, Message: appsNotServed}
	verdicts := []usability.Verdict{template("a", cause), template("b", cause)}
	for _, tc := range []struct {
		name               string
		offered            configspec.Offered
		appeared, cameBack string
	}{
		{"none offered", configspec.Offered{},
			"template/a, template/b cannot work on this cluster and are hidden from the catalog (annotation " + desired.UnusableAnnotation + "): " + appsNotServed,
			"no longer so: " + appsNotServed + "; template/a, template/b offered again"},
		{"all offered", configspec.Offered{"Template/a": true, "Template/b": true},
			"template/a, template/b cannot work on this cluster (annotation " + desired.UnusableAnnotation + ") and are kept offered by the admin (Config annotation " + configspec.OfferedAnnotation + "): " + appsNotServed,
			"no longer so: " + appsNotServed + "; template/a, template/b can work here again (kept offered by the admin)"},
		{"one offered", configspec.Offered{"Template/b": true},
			"template/a, template/b cannot work on this cluster (annotation " + desired.UnusableAnnotation + "): " + appsNotServed + "; template/a hidden from the catalog, template/b kept offered by the admin (Config annotation " + configspec.OfferedAnnotation + ")",
			"no longer so: " + appsNotServed + "; template/a offered again, template/b can work here again (kept offered by the admin)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := &Controller{told: map[string]toldCause{}}
			recorder := events.NewInMemoryRecorder("test", clocktesting.NewFakePassiveClock(time.Now()))
			c.tell(recorder, verdicts, tc.offered)
			c.tell(recorder, nil, tc.offered)
			got := summary(recorder.Events())
			want := []string{usability.KindNotServed + ": " + tc.appeared, "SamplesUsableAgain: " + tc.cameBack}
			if strings.Join(got, "\n") != strings.Join(want, "\n") {
				t.Errorf("got\n%q\nwant\n%q", got, want)
			}
		})
	}
}

// TestToldByMarksReadsTagsAndTemplates: the record read from the marks names each cause a marked
// tag or template carries, split as usability.Annotation joined them, hidden or offered as the
// mark says; an empty message is no cause; a stream or template the operator does not manage is
// not its record.
func TestToldByMarksReadsTagsAndTemplates(t *testing.T) {
	stream := func(name, managed string, marks desired.Marks) *imagev1.ImageStream {
		is := &imagev1.ImageStream{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{desired.ManagedLabel: managed}}}
		for tag := range marks {
			is.Spec.Tags = append(is.Spec.Tags, imagev1.TagReference{Name: tag})
		}
		slices.SortFunc(is.Spec.Tags, func(a, b imagev1.TagReference) int { return strings.Compare(a.Name, b.Name) })
		desired.MarkImageStream(is, marks)
		return is
	}
	tmpl := func(name string, marks desired.Marks) *templatev1.Template {
		t := &templatev1.Template{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{desired.ManagedLabel: "true"}, Annotations: map[string]string{}}}
		desired.MarkTemplate(t, marks)
		return t
	}
	noArch := "no image for node architecture s390x (image for amd64)"
	theirs := tmpl("theirs", desired.Marks{"": {Reason: "someone else's", Hide: true}})
	theirs.Labels[desired.ManagedLabel] = "false"
	// The samples the operator does not manage come first; a mark edited by hand has an empty
	// message before the one that follows.
	got := toldByMarks(
		[]*imagev1.ImageStream{
			stream("theirs", "false", desired.Marks{"1": {Reason: "someone else's", Hide: true}}),
			stream("ruby", "true", desired.Marks{"3.3": {Reason: noArch, Hide: true}, "3.1": {Reason: "; " + noArch}}),
		},
		[]*templatev1.Template{theirs, tmpl("rails", desired.Marks{"": {Reason: appsNotServed + "; " + buildNotServed, Hide: true}})},
	)
	want := map[string]toldCause{
		noArch:         {hidden: []string{"imagestreamtag/ruby:3.3"}, offered: []string{"imagestreamtag/ruby:3.1"}},
		appsNotServed:  {hidden: []string{"template/rails"}},
		buildNotServed: {hidden: []string{"template/rails"}},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("got %+v, want %+v", got, want)
	}
}

// TestAnEventNamesTenSamplesAndCountsTheRest: a cause that keeps a hundred samples from working
// (a group not served) names ten of them and counts the others, or the Event is too long to
// read; ten are all named.
func TestAnEventNamesTenSamplesAndCountsTheRest(t *testing.T) {
	cause := usability.Reason{Code: usability.KindNotServed, Message: appsNotServed}
	for _, tc := range []struct {
		samples int
		want    string
	}{
		{10, "template/t00, template/t01, template/t02, template/t03, template/t04, template/t05, template/t06, template/t07, template/t08, template/t09 cannot work"},
		{12, "template/t00, template/t01, template/t02, template/t03, template/t04, template/t05, template/t06, template/t07, template/t08, template/t09 and 2 more cannot work"},
	} {
		var verdicts []usability.Verdict
		for i := range tc.samples {
			verdicts = append(verdicts, template(fmt.Sprintf("t%02d", i), cause))
		}
		c := &Controller{told: map[string]toldCause{}}
		recorder := events.NewInMemoryRecorder("test", clocktesting.NewFakePassiveClock(time.Now()))
		c.tell(recorder, verdicts, configspec.Offered{})
		if evs := recorder.Events(); len(evs) != 1 || !strings.HasPrefix(evs[0].Message, tc.want+" ") {
			t.Errorf("%d samples: got %q, want it to begin %q", tc.samples, summary(evs), tc.want)
		}
	}
}
