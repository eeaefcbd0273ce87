package samples

import (
	"testing"

	samplesv1 "github.com/openshift/api/samples/v1"
	templatev1 "github.com/openshift/api/template/v1"
	"k8s.io/utils/clock"

	"github.com/samples-operator-dev/cluster-samples-operator/pkg/desired"
	"github.com/samples-operator-dev/cluster-samples-operator/pkg/samplewriter"
)

// changingVerdicts are verdicts that change each time they are read, as they may while a sync
// runs: a group turning served, then another.
type changingVerdicts struct{ reads []desired.Marks }

func (v *changingVerdicts) Ready() bool                      { return true }
func (v *changingVerdicts) OnChange(func(kind, name string)) {}
func (v *changingVerdicts) Marks(kind, name string) desired.Marks {
	m := v.reads[0]
	if len(v.reads) > 1 {
		v.reads = v.reads[1:]
	}
	return m
}

// TestAWriteIsRecordedWithTheMarksItWasBuiltFrom: the verdicts change while a sync runs (it read
// the template from the server meanwhile). The intent recorded with the write holds the marks
// the object was built from, not the newer ones: with the newer ones the next sync would find
// the operator's own write unlike what it recorded, and revert it as someone's edit.
func TestAWriteIsRecordedWithTheMarksItWasBuiltFrom(t *testing.T) {
	built := desired.Marks{"": {Reason: "creates build.openshift.io/v1 BuildConfig, which this cluster does not serve", Hide: true}}
	verdicts := &changingVerdicts{reads: []desired.Marks{built, nil}}
	r := &run[*templatev1.Template]{
		sampleSync: sampleSync{c: &Controller{usability: verdicts, version: "v1"}, cfg: &samplesv1.Config{}, name: "django-psql-example"},
		writer:     samplewriter.New[*templatev1.Template](samplewriter.TemplateKind, nil, samplewriter.NewRecords[*templatev1.Template](clock.RealClock{}, 0), nil),
	}
	if got := r.marks().String(); got != built.String() {
		t.Fatalf("the run's first look at the verdicts: %q, want %q", got, built.String())
	}
	if got := r.intent().Marks; got != built.String() {
		t.Errorf("the intent recorded with the write says marks %q; want %q, those the object was built from", got, built.String())
	}
}
