package configstatuscontrol

import (
	"context"
	"errors"
	"strings"
	"testing"

	imagev1 "github.com/openshift/api/image/v1"
	operatorv1 "github.com/openshift/api/operator/v1"
	samplesv1 "github.com/openshift/api/samples/v1"
	templatev1 "github.com/openshift/api/template/v1"
	samplesfake "github.com/openshift/client-go/samples/clientset/versioned/fake"
	"github.com/openshift/library-go/pkg/operator/events"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	corelisters "k8s.io/client-go/listers/core/v1"
	clienttesting "k8s.io/client-go/testing"
	"k8s.io/client-go/tools/cache"
	"k8s.io/utils/clock"

	"github.com/samples-operator-dev/cluster-samples-operator/pkg/configstatus"
	"github.com/samples-operator-dev/cluster-samples-operator/pkg/desired"
	"github.com/samples-operator-dev/cluster-samples-operator/pkg/imports"
	"github.com/samples-operator-dev/cluster-samples-operator/pkg/names"
)

// told returns the events recorded since the last call, as "Type Reason: message".
func told(recorder events.InMemoryRecorder, seen *int) []string {
	var out []string
	all := recorder.Events()
	for _, e := range all[*seen:] {
		out = append(out, e.Type+" "+e.Reason+": "+e.Message)
	}
	*seen = len(all)
	return out
}

// The allow-list's verdict on the samples is told once per change: a Warning naming what it keeps
// out, without the leading "; " of the status sentence, and a Normal event when it keeps none
// out any more.
func TestEachChangeOfWhatTheAllowListKeepsOutIsToldOnce(t *testing.T) {
	c := &Controller{}
	recorder := events.NewInMemoryRecorder("test", clock.RealClock{})
	seen := 0
	c.reportBlocked(recorder, nil)
	if got := told(recorder, &seen); len(got) != 0 {
		t.Errorf("nothing kept out from the start: told %q", got)
	}
	blocked := map[string]string{"ruby": "registry.redhat.io"}
	c.reportBlocked(recorder, blocked)
	c.reportBlocked(recorder, blocked)
	got := told(recorder, &seen)
	if len(got) != 1 || !strings.HasPrefix(got[0], corev1.EventTypeWarning+" SamplesBlockedByImportAllowList: 1 imagestreams") || !strings.Contains(got[0], "ruby") {
		t.Errorf("ruby kept out, twice: told %q, want one Warning naming it", got)
	}
	c.reportBlocked(recorder, nil)
	c.reportBlocked(recorder, nil)
	if got := told(recorder, &seen); len(got) != 1 || !strings.HasPrefix(got[0], corev1.EventTypeNormal+" SamplesAllowedByImportAllowList:") {
		t.Errorf("nothing kept out any more, twice: told %q, want one Normal event", got)
	}
}

// What SamplesExist says of the mirror sets is told once per change: a Normal event when the
// samples come through them, a Warning when some do not or no longer can, nothing when there is
// nothing to say.
func TestEachChangeOfWhatTheMirrorSetsDoIsToldOnce(t *testing.T) {
	c := &Controller{}
	recorder := events.NewInMemoryRecorder("test", clock.RealClock{})
	seen := 0
	for _, step := range []struct {
		text, want string
	}{
		{"", ""},
		{"; their images are imported through the cluster's mirror sets (itms/a)", corev1.EventTypeNormal + " SamplesThroughMirrorSets: samples: their images"},
		{"; their images are imported through the cluster's mirror sets (itms/a)", ""},
		{"; their images ... ruby, which will not import unless", corev1.EventTypeWarning + " SamplesWithoutMirror: samples: their images"},
		{"; ... ruby can no longer import unless", corev1.EventTypeWarning + " SamplesWithoutMirror: samples: ..."},
		{"", ""},
		{"; ... ruby can no longer import unless", corev1.EventTypeWarning + " SamplesWithoutMirror: samples: ..."},
	} {
		c.reportMirrors(recorder, step.text)
		got := told(recorder, &seen)
		switch {
		case step.want == "" && len(got) != 0:
			t.Errorf("after %q: told %q, want nothing", step.text, got)
		case step.want != "" && (len(got) != 1 || !strings.HasPrefix(got[0], step.want)):
			t.Errorf("after %q: told %q, want one event beginning %q", step.text, got, step.want)
		}
	}
}

func condition(t samplesv1.ConfigConditionType, status corev1.ConditionStatus, message string) samplesv1.ConfigCondition {
	return samplesv1.ConfigCondition{Type: t, Status: status, Reason: "Because", Message: message}
}

// A status write tells, as events, the management state's change, a registry change while
// Managed, and each condition whose status changed, but not the two conditions the status
// always leaves False nor a message that changed under the same status.
func TestAStatusWriteTellsItsTransitions(t *testing.T) {
	for _, tc := range []struct {
		name          string
		before, after samplesv1.ConfigStatus
		want          []string
	}{{
		name:   "management state",
		before: samplesv1.ConfigStatus{ManagementState: operatorv1.Removed},
		after:  samplesv1.ConfigStatus{ManagementState: operatorv1.Managed, SamplesRegistry: "mirror.example.com"},
		want:   []string{`ManagementStateChanged: samples are now Managed (were "Removed")`},
	}, {
		name:   "registry, while Managed",
		before: samplesv1.ConfigStatus{ManagementState: operatorv1.Managed},
		after:  samplesv1.ConfigStatus{ManagementState: operatorv1.Managed, SamplesRegistry: "mirror.example.com"},
		want:   []string{"SamplesRegistryChanged: spec.samplesRegistry is now mirror.example.com (was empty (the inventory's registries)): the operator moves the imagestreams to it"},
	}, {
		name:   "registry back to none",
		before: samplesv1.ConfigStatus{ManagementState: operatorv1.Managed, SamplesRegistry: "mirror.example.com"},
		after:  samplesv1.ConfigStatus{ManagementState: operatorv1.Managed},
		want:   []string{"SamplesRegistryChanged: spec.samplesRegistry is now empty (the inventory's registries) (was mirror.example.com): the operator moves the imagestreams to it"},
	}, {
		name:   "registry, while Unmanaged",
		before: samplesv1.ConfigStatus{ManagementState: operatorv1.Unmanaged},
		after:  samplesv1.ConfigStatus{ManagementState: operatorv1.Unmanaged, SamplesRegistry: "mirror.example.com"},
	}, {
		name:   "registry, from Managed to Unmanaged",
		before: samplesv1.ConfigStatus{ManagementState: operatorv1.Managed},
		after:  samplesv1.ConfigStatus{ManagementState: operatorv1.Unmanaged, SamplesRegistry: "mirror.example.com"},
		want:   []string{`ManagementStateChanged: samples are now Unmanaged (were "Managed")`},
	}, {
		name: "conditions",
		before: samplesv1.ConfigStatus{Conditions: []samplesv1.ConfigCondition{
			condition(samplesv1.SamplesExist, corev1.ConditionFalse, "not yet"),
			condition(samplesv1.ConfigurationValid, corev1.ConditionTrue, "valid"),
			condition(samplesv1.ImageChangesInProgress, corev1.ConditionTrue, ""),
			condition(samplesv1.RemovePending, corev1.ConditionFalse, ""),
		}},
		after: samplesv1.ConfigStatus{Conditions: []samplesv1.ConfigCondition{
			condition(samplesv1.SamplesExist, corev1.ConditionTrue, "installed"),
			condition(samplesv1.ConfigurationValid, corev1.ConditionTrue, "valid, said otherwise"),
			condition(samplesv1.ImageChangesInProgress, corev1.ConditionFalse, ""),
			condition(samplesv1.MigrationInProgress, corev1.ConditionFalse, ""),
			condition(samplesv1.ImportCredentialsExist, corev1.ConditionTrue, "found"),
			condition(samplesv1.ImportImageErrorsExist, corev1.ConditionTrue, "ruby"),
		}},
		// In ConditionTypes' order, each after one passed over.
		want: []string{
			"ConditionChanged: SamplesExist is True: Because installed",
			"ConditionChanged: ImportCredentialsExist is True: Because found",
			"ConditionChanged: ImportImageErrorsExist is True: Because ruby",
		},
	}} {
		t.Run(tc.name, func(t *testing.T) {
			recorder := events.NewInMemoryRecorder("test", clock.RealClock{})
			recordTransitions(recorder, &tc.before, &tc.after)
			var got []string
			for _, e := range recorder.Events() {
				got = append(got, e.Reason+": "+e.Message)
			}
			if strings.Join(got, "\n") != strings.Join(tc.want, "\n") {
				t.Errorf("told\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(tc.want, "\n"))
			}
		})
	}
}

// Every managed sample is owned; those the inventory no longer has are retired, or awaiting
// their retirement mark; what an admin created is none of these.
func TestOwnedRetiredAndAwaitingRetirement(t *testing.T) {
	_, eval, streams, templates := installed(markedAs{})
	inventorySamples := len(streams.List()) + len(templates.List())
	gone := func(name string, retiredIn string) {
		obj, _, _ := streams.GetByKey(names.SamplesNamespace + "/" + eval.Inventory.ImageStreamNames()[0])
		is := copyStream(obj)
		is.Name = name
		if retiredIn != "" {
			is.Annotations[desired.RetiredAnnotation] = retiredIn
		}
		_ = streams.Add(is)
	}
	gone("left-behind", "")
	gone("left-behind-too", "")
	gone("retired-earlier", "v0")
	admins := copyStream(streams.List()[0])
	admins.Name, admins.Labels = "admins-own", nil
	_ = streams.Add(admins)
	obj, _, _ := templates.GetByKey(names.SamplesNamespace + "/" + eval.Inventory.TemplateNames()[0])
	oldTemplate := copyTemplate(obj)
	oldTemplate.Name = "template-left-behind"
	_ = templates.Add(oldTemplate)

	c := statusOf(streams, templates, markedAs{})
	owned, retired, awaiting, err := c.countOwned(eval)
	if err != nil {
		t.Fatal(err)
	}
	if owned != inventorySamples+4 || awaiting != 3 || len(retired) != 1 || retired[0].Name != "retired-earlier" {
		t.Errorf("owned %d, awaiting retirement %d, retired %v; want %d, 3 and retired-earlier", owned, awaiting, retired, inventorySamples+4)
	}
	// Without an inventory (one that does not load) nothing is awaited.
	eval.Inventory = nil
	if _, _, awaiting, _ := c.countOwned(eval); awaiting != 0 {
		t.Errorf("without an inventory: %d awaiting retirement, want 0", awaiting)
	}
}

// ImportImageErrorsExist names, sorted, the managed imagestreams with an error record; a record
// left for a stream the Config skips is not one of them.
func TestImportErrorsNameTheWantedStreamsWithARecord(t *testing.T) {
	cfg, eval, streams, templates := installed(markedAs{})
	all := eval.Inventory.ImageStreamNames()
	first, second, skipped := all[0], all[1], all[2]
	cfg.Spec.SkippedImagestreams = []string{skipped}
	records := cache.NewIndexer(cache.MetaNamespaceKeyFunc, cache.Indexers{cache.NamespaceIndex: cache.MetaNamespaceIndexFunc})
	for _, r := range []struct {
		name    string
		failing bool
	}{{second, true}, {first, true}, {skipped, true}, {all[3], false}} {
		cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: names.OperatorNamespace, Name: r.name}}
		if r.failing {
			cm.Labels = map[string]string{imports.ErrorLabel: "true"}
		}
		_ = records.Add(cm)
	}
	c := statusOf(streams, templates, markedAs{})
	c.configMaps = corelisters.NewConfigMapLister(records).ConfigMaps(names.OperatorNamespace)
	got, err := c.importErrors(cfg, eval)
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{first, second}; strings.Join(got, ",") != strings.Join(want, ",") {
		t.Errorf("import errors %v, want %v", got, want)
	}
}

// The retirement is announced once the samples are all at this version and nothing awaits its
// retirement mark: one patch of the Config, one event naming what this version retired; a second
// sync tells nothing, and a patch that fails tells nothing and is tried again.
func TestTheRetirementIsAnnouncedOnceEverySampleIsDone(t *testing.T) {
	cfg := &samplesv1.Config{ObjectMeta: metav1.ObjectMeta{Name: names.ConfigName}}
	client := samplesfake.NewSimpleClientset(cfg)
	c := &Controller{version: "v2", client: client.SamplesV1().Configs()}
	recorder := events.NewInMemoryRecorder("test", clock.RealClock{})
	seen := 0
	done := configstatus.Observed{Retired: []desired.Retired{
		{Kind: "imagestream", Name: "perl", Version: "v2"},
		{Kind: "template", Name: "rails", Version: "v2"},
		{Kind: "template", Name: "older", Version: "v1"},
	}}
	patches := func() int {
		n := 0
		for _, a := range client.Actions() {
			if a.GetVerb() == "patch" {
				n++
			}
		}
		return n
	}
	for _, notYet := range []struct {
		name     string
		mode     desired.Mode
		observed configstatus.Observed
	}{
		{"samples pending", desired.Managed, configstatus.Observed{Retired: done.Retired, Pending: 1}},
		{"a sample awaiting its retirement mark", desired.Managed, configstatus.Observed{Retired: done.Retired, AwaitingRetirement: 1}},
		{"Removing", desired.Removing, done},
		{"nothing retired in this version", desired.Managed, configstatus.Observed{Retired: done.Retired[2:]}},
	} {
		if _, err := c.announceRetired(context.Background(), recorder, cfg, notYet.observed, notYet.mode); err != nil {
			t.Fatal(err)
		}
		if got := told(recorder, &seen); len(got) != 0 || patches() != 0 {
			t.Errorf("%s: told %q, %d patches; want nothing yet", notYet.name, got, patches())
		}
	}

	client.PrependReactor("patch", "configs", func(clienttesting.Action) (bool, runtime.Object, error) {
		return true, nil, errors.New("etcdserver: request timed out")
	})
	if _, err := c.announceRetired(context.Background(), recorder, cfg, done, desired.Managed); err == nil {
		t.Error("a patch that failed returned no error")
	}
	if got := told(recorder, &seen); len(got) != 0 {
		t.Errorf("told %q with the record not written", got)
	}
	client.ReactionChain = client.ReactionChain[1:]

	patched, err := c.announceRetired(context.Background(), recorder, cfg, done, desired.Managed)
	if err != nil {
		t.Fatal(err)
	}
	got := told(recorder, &seen)
	if len(got) != 1 || !strings.Contains(got[0], "SamplesRetired") || !strings.Contains(got[0], "imagestream perl, template rails") || strings.Contains(got[0], "older") {
		t.Errorf("told %q, want one SamplesRetired naming perl and rails", got)
	}
	if patched.Annotations[RetiredAnnouncedAnnotation] == "" {
		t.Errorf("the Config returned does not carry the record: %v", patched.Annotations)
	}
	// The lister still shows the Config without the record: what this process wrote counts.
	if _, err := c.announceRetired(context.Background(), recorder, cfg, done, desired.Managed); err != nil {
		t.Fatal(err)
	}
	if got := told(recorder, &seen); len(got) != 0 {
		t.Errorf("a second sync told %q again", got)
	}
}

func copyStream(obj interface{}) *imagev1.ImageStream { return obj.(*imagev1.ImageStream).DeepCopy() }

func copyTemplate(obj interface{}) *templatev1.Template { return obj.(*templatev1.Template).DeepCopy() }

// The status counts what the Config wants: the skipped and the blocked are not wanted, and a
// wanted sample that is missing is pending, whichever kind and wherever it stands in the
// inventory's order.
func TestPendingCountsTheWantedSamplesNotInPlace(t *testing.T) {
	cfg, eval, streams, templates := installed(markedAs{})
	streamNames, templateNames := eval.Inventory.ImageStreamNames(), eval.Inventory.TemplateNames()
	all := len(streamNames) + len(templateNames)
	cfg.Spec.SkippedImagestreams = []string{streamNames[0]}
	cfg.Spec.SkippedTemplates = []string{templateNames[0]}
	blocked := map[string]string{streamNames[1]: "registry.redhat.io"}
	for _, key := range []string{streamNames[2], streamNames[len(streamNames)-1]} {
		obj, _, _ := streams.GetByKey(names.SamplesNamespace + "/" + key)
		_ = streams.Delete(obj)
	}
	for _, key := range []string{templateNames[1], templateNames[len(templateNames)-1]} {
		obj, _, _ := templates.GetByKey(names.SamplesNamespace + "/" + key)
		_ = templates.Delete(obj)
	}
	c := statusOf(streams, templates, markedAs{})
	wanted, pending, marksPending, err := c.countPending(cfg, eval, blocked)
	if err != nil {
		t.Fatal(err)
	}
	if wanted != all-3 || pending != 4 || marksPending != 0 {
		t.Errorf("wanted %d, pending %d (%d marks only); want %d, 4, 0", wanted, pending, marksPending, all-3)
	}
}

// A sample's verdict is computed once per resourceVersion, Config choice and version of the
// server's answers, and again when any of them moves.
func TestTheVerdictMemoComputesOncePerState(t *testing.T) {
	c := statusOf(nil, nil, markedAs{})
	computed := 0
	compute := func() sampleState { computed++; return inSync }
	for _, step := range []struct {
		name    string
		rv      string
		choice  desired.Choice
		answer  bool
		compute int
	}{
		{"first", "1", desired.Choice{Version: "v1"}, false, 1},
		{"same", "1", desired.Choice{Version: "v1"}, false, 1},
		{"new resourceVersion", "2", desired.Choice{Version: "v1"}, false, 2},
		{"new choice", "2", desired.Choice{Version: "v2"}, false, 3},
		{"same again", "2", desired.Choice{Version: "v2"}, false, 3},
		{"a new answer of the server", "2", desired.Choice{Version: "v2"}, true, 4},
		{"same after it", "2", desired.Choice{Version: "v2"}, false, 4},
	} {
		if step.answer {
			c.records.ImageStreams.Learn("other", &desired.Answer[*imagev1.ImageStream]{})
		}
		c.remember("imagestream/ruby", step.rv, step.choice, compute)
		if computed != step.compute {
			t.Errorf("%s: computed %d times, want %d", step.name, computed, step.compute)
		}
	}
}
