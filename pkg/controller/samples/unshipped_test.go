package samples

import (
	"testing"

	imagev1 "github.com/openshift/api/image/v1"
	samplesv1 "github.com/openshift/api/samples/v1"
	"k8s.io/utils/clock"

	"github.com/samples-operator-dev/cluster-samples-operator/pkg/configspec"
	"github.com/samples-operator-dev/cluster-samples-operator/pkg/configspec/configspectest"
	"github.com/samples-operator-dev/cluster-samples-operator/pkg/desired"
	"github.com/samples-operator-dev/cluster-samples-operator/pkg/refusal"
	"github.com/samples-operator-dev/cluster-samples-operator/pkg/samplewriter"
)

// TestAnAdminsTagIsMarkedOnAStreamTheServerNormalized (issue 56 item 7): the live stream is the
// server's version of the operator's last write (in sync by its answer), and an admin's tag of it
// cannot work here: its mark is written, by an update of the mark alone, and once written
// nothing more is.
func TestAnAdminsTagIsMarkedOnAStreamTheServerNormalized(t *testing.T) {
	inv, err := configspectest.X86Only{}.For("x86_64")
	if err != nil {
		t.Fatal(err)
	}
	name := inv.ImageStreamNames()[0]
	marks := desired.Marks{"mine": {Reason: "no image for node architecture arm64 (image for amd64)", Hide: true}}
	records := samplewriter.NewRecords[*imagev1.ImageStream](clock.RealClock{}, 0)
	r := &run[*imagev1.ImageStream]{
		sampleSync: sampleSync{c: &Controller{usability: &changingVerdicts{reads: []desired.Marks{marks}}, version: "v1"}, cfg: &samplesv1.Config{},
			eval: configspec.Evaluation{Mode: desired.Managed, Inventory: inv}, name: name},
		kind:   imageStreams{},
		writer: samplewriter.New[*imagev1.ImageStream](samplewriter.ImageStreamKind, nil, records, refusal.NewStore(clock.RealClock{})),
	}
	want, _ := r.want()
	got := want.DeepCopy()
	got.Spec.LookupPolicy.Local = !want.Spec.LookupPolicy.Local // the server's own value
	records.Learn(name, desired.AnswerForImageStream(want, got))
	live := got.DeepCopy()
	live.Spec.Tags = append(live.Spec.Tags, imagev1.TagReference{Name: "mine"})

	action := r.decide(want, false, live)
	if action.Verb != desired.Update || !action.MarksOnly || r.nothingToWrite(action, live, want) {
		t.Fatalf("an admin's tag to mark on a settled stream: %s marksOnly=%v %v, want a marks-only update written", action.Verb, action.MarksOnly, action.Drift)
	}
	if action.Object.Spec.LookupPolicy != got.Spec.LookupPolicy {
		t.Errorf("the marks' update put back the field the server normalized")
	}
	if c := r.causeOf(action, live); c.revert {
		t.Errorf("writing a mark counted as a revert")
	}
	if again := r.decide(want, false, action.Object); !r.nothingToWrite(again, action.Object, want) {
		t.Errorf("marked: %s %v, want nothing to write", again.Verb, again.Drift)
	}
}
