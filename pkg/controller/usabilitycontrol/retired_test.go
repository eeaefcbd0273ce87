package usabilitycontrol

import (
	"strings"
	"testing"

	imagev1 "github.com/openshift/api/image/v1"
	templatev1 "github.com/openshift/api/template/v1"
	imagelisters "github.com/openshift/client-go/image/listers/image/v1"
	templatelisters "github.com/openshift/client-go/template/listers/template/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/tools/cache"

	"github.com/samples-operator-dev/cluster-samples-operator/pkg/configspec/configspectest"
	"github.com/samples-operator-dev/cluster-samples-operator/pkg/desired"
	"github.com/samples-operator-dev/cluster-samples-operator/pkg/names"
	"github.com/samples-operator-dev/cluster-samples-operator/pkg/samplewriter"
)

// retiredTemplate is a template an upgrade retired, whole as the cache keeps it: a
// DeploymentConfig, and a BuildConfig from openshift/perl:5.30-ubi8.
func retiredTemplate(name string, managed string) *templatev1.Template {
	return &templatev1.Template{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: names.SamplesNamespace, ResourceVersion: "1",
			Labels:      map[string]string{desired.ManagedLabel: managed},
			Annotations: map[string]string{desired.RetiredAnnotation: "4.15.0", "tags": "hidden"}},
		Objects: []runtime.RawExtension{
			{Raw: []byte(`{"apiVersion":"apps.openshift.io/v1","kind":"DeploymentConfig","metadata":{"name":"x"}}`)},
			{Raw: []byte(`{"apiVersion":"build.openshift.io/v1","kind":"BuildConfig","metadata":{"name":"x"},"spec":{"strategy":{"sourceStrategy":{"from":{"kind":"ImageStreamTag","namespace":"openshift","name":"perl:5.30-ubi8"}}}}}`)},
		},
	}
}

// TestARetiredTemplateIsJudgedAndMarked (issue 56 item 7): a retired template the operator keeps
// is judged like the inventory's, and its verdict is among the marks, with every reason: a
// kind not served, and the retired tag it builds from. One an admin skips or took over is not.
func TestARetiredTemplateIsJudgedAndMarked(t *testing.T) {
	perl := &imagev1.ImageStream{ObjectMeta: metav1.ObjectMeta{Name: "perl", Namespace: names.SamplesNamespace,
		Labels: map[string]string{desired.ManagedLabel: "true"}},
		Spec: imagev1.ImageStreamSpec{Tags: []imagev1.TagReference{{Name: "5.30-ubi8", Annotations: map[string]string{desired.RetiredAnnotation: "4.15.0"}}}}}
	live := []*templatev1.Template{retiredTemplate("dancer-old", "true"), retiredTemplate("admins-now", "false")}
	c := operatorOver(servingAllBut("apps.openshift.io"), nil, live)
	c.streams = imagelisters.NewImageStreamLister(indexerOf(perl)).ImageStreams(names.SamplesNamespace)
	syncedEvents(t, c)

	marks := c.verdicts.Marks(samplewriter.TemplateKind, "dancer-old")
	mark, ok := marks[""]
	if !ok {
		t.Fatalf("the retired template has no mark; verdicts %v", c.verdicts.All())
	}
	for _, want := range []string{appsNotServed, "image openshift/perl:5.30-ubi8 was retired in 4.15.0"} {
		if !strings.Contains(mark.Reason, want) {
			t.Errorf("the retired template's mark %q does not say %q", mark.Reason, want)
		}
	}
	if got := c.verdicts.Marks(samplewriter.TemplateKind, "admins-now"); len(got) != 0 {
		t.Errorf("a retired template an admin took over was marked: %v", got)
	}

	// Read once: a later sync judges it again from the same facts.
	before := c.retiredFacts["dancer-old"]
	syncedEvents(t, c)
	if after := c.retiredFacts["dancer-old"]; after.resourceVersion != before.resourceVersion || len(c.retiredFacts) != 1 {
		t.Errorf("retired facts kept: %v", c.retiredFacts)
	}
	if m := c.verdicts.Marks(samplewriter.TemplateKind, "dancer-old"); m[""] != mark {
		t.Errorf("a second sync changed the mark: %v", m)
	}
}

// TestOnlyARetiredTemplateBringsTheSyncBack: a change of a template of the inventory changes no
// verdict; one of a retired template, whose verdict reads it, does.
func TestOnlyARetiredTemplateBringsTheSyncBack(t *testing.T) {
	retired := retiredTemplate("dancer-old", "true")
	shipped := &templatev1.Template{ObjectMeta: metav1.ObjectMeta{Name: "rails-postgresql-example"}}
	if !isRetired(retired) || !isRetired(cache.DeletedFinalStateUnknown{Obj: retired}) || isRetired(shipped) {
		t.Errorf("isRetired: retired %v, its tombstone %v, a shipped one %v", isRetired(retired), isRetired(cache.DeletedFinalStateUnknown{Obj: retired}), isRetired(shipped))
	}
}

// TestARetiredTemplateIsReadAgainWhenItChanges: a retired template is read once, but read again
// when it changes (an admin removed its DeploymentConfig): its verdict is of the template as it
// is, not as it was.
func TestARetiredTemplateIsReadAgainWhenItChanges(t *testing.T) {
	old := retiredTemplate("dancer-old", "true")
	c := operatorOver(servingAllBut("apps.openshift.io"), nil, []*templatev1.Template{old})
	syncedEvents(t, c)
	if mark := c.verdicts.Marks(samplewriter.TemplateKind, "dancer-old")[""]; !strings.Contains(mark.Reason, appsNotServed) {
		t.Fatalf("the retired template's mark %q does not say %q", mark.Reason, appsNotServed)
	}

	changed := old.DeepCopy()
	changed.ResourceVersion = "2"
	changed.Objects = changed.Objects[1:]
	c.templates = templatelisters.NewTemplateLister(indexerOf(changed)).Templates(names.SamplesNamespace)
	syncedEvents(t, c)
	if mark := c.verdicts.Marks(samplewriter.TemplateKind, "dancer-old")[""]; strings.Contains(mark.Reason, appsNotServed) {
		t.Errorf("the retired template creates no DeploymentConfig any more, and its mark still says %q", mark.Reason)
	}
}

// TestEveryRetiredTemplateIsJudgedWhateverComesBeforeIt: the live templates come in no set
// order, the inventory's, an admin's and the retired ones mixed; every retired one the operator
// keeps is judged, wherever it is among them.
func TestEveryRetiredTemplateIsJudgedWhateverComesBeforeIt(t *testing.T) {
	inv, err := configspectest.X86Only{}.For("x86_64")
	if err != nil {
		t.Fatal(err)
	}
	shipped := &templatev1.Template{ObjectMeta: metav1.ObjectMeta{Name: "rails-postgresql-example", Namespace: names.SamplesNamespace,
		Labels: map[string]string{desired.ManagedLabel: "true"}}}
	live := []*templatev1.Template{shipped, retiredTemplate("admins-now", "false"), retiredTemplate("dancer-old", "true"), retiredTemplate("skipped-old", "true")}
	c := &Controller{}
	facts := c.retiredTemplates([]string{"skipped-old"}, inv, live)
	if len(facts) != 1 || len(c.retiredFacts) != 1 || c.retiredFacts["dancer-old"].resourceVersion != "1" {
		t.Errorf("judged %d retired templates, kept %v; want dancer-old alone", len(facts), c.retiredFacts)
	}
}
