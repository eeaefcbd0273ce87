package configstatuscontrol

import (
	"testing"
	"time"

	configv1 "github.com/openshift/api/config/v1"
	imagev1 "github.com/openshift/api/image/v1"
	operatorv1 "github.com/openshift/api/operator/v1"
	samplesv1 "github.com/openshift/api/samples/v1"
	templatev1 "github.com/openshift/api/template/v1"
	imagelisters "github.com/openshift/client-go/image/listers/image/v1"
	templatelisters "github.com/openshift/client-go/template/listers/template/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/cache"
	"k8s.io/utils/clock"

	"github.com/samples-operator-dev/cluster-samples-operator/pkg/configspec"
	"github.com/samples-operator-dev/cluster-samples-operator/pkg/configspec/configspectest"
	"github.com/samples-operator-dev/cluster-samples-operator/pkg/desired"
	"github.com/samples-operator-dev/cluster-samples-operator/pkg/names"
	"github.com/samples-operator-dev/cluster-samples-operator/pkg/samplewriter"
	"github.com/samples-operator-dev/cluster-samples-operator/pkg/usability"
)

// markedAs are verdicts whose marks the test sets, by samplewriter kind and name.
type markedAs map[[2]string]desired.Marks

func (markedAs) Ready() bool                             { return true }
func (m markedAs) Marks(kind, name string) desired.Marks { return m[[2]string{kind, name}] }
func (markedAs) All() []usability.Verdict                { return nil }
func (markedAs) OnChange(func(kind, name string))        {}

// TestASampleThatDiffersOnlyInItsMarksIsCountedApart: with every sample installed as the
// verdicts wanted, a verdict change counts the samples it concerns as pending, and as pending
// only their marks; a sample that also drifted is pending for more than its marks.
func TestASampleThatDiffersOnlyInItsMarksIsCountedApart(t *testing.T) {
	notServed := desired.Marks{"": {Reason: "KindNotServed: creates apps.openshift.io/v1 DeploymentConfig", Hide: true}}
	noImage := desired.Marks{"latest": {Reason: "ImageStreamTagNotImported"}}
	written := markedAs{{samplewriter.TemplateKind, "httpd-example"}: notServed}
	cfg, eval, streams, templates := installed(written)
	stream := eval.Inventory.ImageStreamNames()[0]
	count := func(verdicts markedAs) (pending, marksPending int) {
		t.Helper()
		_, pending, marksPending, err := statusOf(streams, templates, verdicts).countPending(cfg, eval, nil)
		if err != nil {
			t.Fatal(err)
		}
		return pending, marksPending
	}

	if p, m := count(written); p != 0 || m != 0 {
		t.Errorf("as written: %d pending (%d marks only), want none", p, m)
	}
	changed := markedAs{
		{samplewriter.TemplateKind, "rails-postgresql-example"}: notServed, // marked
		{samplewriter.ImageStreamKind, stream}:                  noImage,   // a tag marked
		// httpd-example unmarked
	}
	if p, m := count(changed); p != 3 || m != 3 {
		t.Errorf("after a verdict change: %d pending (%d marks only), want 3, all marks only", p, m)
	}

	obj, _, _ := templates.GetByKey(names.SamplesNamespace + "/rails-postgresql-example")
	drifted := obj.(*templatev1.Template).DeepCopy()
	drifted.Message, drifted.ResourceVersion = "edited", "2"
	_ = templates.Update(drifted)
	if p, m := count(changed); p != 3 || m != 2 {
		t.Errorf("after a verdict change, one of its samples edited too: %d pending (%d marks only), want 3, 2 marks only", p, m)
	}
}

// installed is every sample of the x86_64 inventory as a Managed Config of generation 1 wants
// it, marked as written says.
func installed(written markedAs) (*samplesv1.Config, configspec.Evaluation, cache.Indexer, cache.Indexer) {
	cfg := &samplesv1.Config{
		ObjectMeta: metav1.ObjectMeta{Name: names.ConfigName, Generation: 1},
		Spec:       samplesv1.ConfigSpec{ManagementState: operatorv1.Managed, Architectures: []string{"x86_64"}},
	}
	eval := configspec.Evaluate(cfg, configspectest.X86Only{}, &configv1.Image{ObjectMeta: metav1.ObjectMeta{Name: "cluster"}})
	streams := cache.NewIndexer(cache.MetaNamespaceKeyFunc, cache.Indexers{cache.NamespaceIndex: cache.MetaNamespaceIndexFunc})
	templates := cache.NewIndexer(cache.MetaNamespaceKeyFunc, cache.Indexers{cache.NamespaceIndex: cache.MetaNamespaceIndexFunc})
	for _, name := range eval.Inventory.ImageStreamNames() {
		is, _, _ := desired.ImageStream(&cfg.Spec, desired.Choice{Version: "v1"}, eval.Inventory, name)
		desired.MarkImageStream(is, written.Marks(samplewriter.ImageStreamKind, name))
		is.Namespace, is.ResourceVersion = names.SamplesNamespace, "1"
		_ = streams.Add(is)
	}
	for _, name := range eval.Inventory.TemplateNames() {
		tmpl, _, _ := desired.Template(&cfg.Spec, desired.Choice{Version: "v1"}, eval.Inventory, name)
		desired.MarkTemplate(tmpl, written.Marks(samplewriter.TemplateKind, name))
		tmpl.Namespace, tmpl.ResourceVersion = names.SamplesNamespace, "1"
		_ = templates.Add(tmpl)
	}
	return cfg, eval, streams, templates
}

// statusOf is a status controller over these samples and verdicts, with an empty memo.
func statusOf(streams, templates cache.Indexer, verdicts markedAs) *Controller {
	return &Controller{
		version:      "v1",
		imageStreams: imagelisters.NewImageStreamLister(streams).ImageStreams(names.SamplesNamespace),
		templates:    templatelisters.NewTemplateLister(templates).Templates(names.SamplesNamespace),
		verdicts:     map[string]verdict{},
		records:      samplewriter.NewBook(clock.RealClock{}, time.Minute),
		usability:    verdicts,
	}
}

// TestTheVerdictMemoFollowsTheClustersImportMode: the memo of each sample's verdict is keyed by
// the whole configspec.Choice, so a change that moves no generation and no resourceVersion (the
// cluster's import mode turning to PreserveOriginal) counts the streams as pending at once
// instead of leaving SamplesExist on the verdicts of the old mode.
func TestTheVerdictMemoFollowsTheClustersImportMode(t *testing.T) {
	cfg, eval, streams, templates := installed(markedAs{})
	c := statusOf(streams, templates, markedAs{}) // one controller: its memo carries over
	pending := func(eval configspec.Evaluation) int {
		t.Helper()
		_, pending, _, err := c.countPending(cfg, eval, nil)
		if err != nil {
			t.Fatal(err)
		}
		return pending
	}
	if p := pending(eval); p != 0 {
		t.Fatalf("as written: %d pending, want none", p)
	}
	multiArch := eval
	multiArch.ImportMode = imagev1.ImportModePreserveOriginal
	if p, want := pending(multiArch), len(eval.Inventory.ImageStreamNames()); p != want {
		t.Errorf("after the cluster's import mode turned to %s: %d pending, want every stream (%d)", multiArch.ImportMode, p, want)
	}
}
