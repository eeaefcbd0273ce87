package configspec

import (
	"strings"
	"testing"

	imagev1 "github.com/openshift/api/image/v1"
	samplesv1 "github.com/openshift/api/samples/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/samples-operator-dev/cluster-samples-operator/pkg/desired"
)

// TestChoiceHoldsEverySetting: each input a sample's write depends on reaches the one Choice the
// writer's intent, the refusal key and the status memo are, and ChangeSince names the change. An
// input left out would let the operator take its own write after a change of it for a revert,
// keep holding a changed write that was refused, and keep counting a sample as in sync.
func TestChoiceHoldsEverySetting(t *testing.T) {
	type inputs struct {
		cfg     *samplesv1.Config
		eval    Evaluation
		version string
		marks   desired.Marks
	}
	base := func() inputs {
		return inputs{
			cfg: &samplesv1.Config{ObjectMeta: metav1.ObjectMeta{Name: "cluster", Generation: 3},
				Spec: samplesv1.ConfigSpec{Architectures: []string{"x86_64"}}},
			version: "4.21.0",
		}
	}
	choose := func(in inputs) desired.Choice { return in.eval.ChoiceOf(in.cfg, in.version, "python", in.marks) }
	before := choose(base())
	for _, tc := range []struct {
		name   string
		change func(*inputs)
		told   string
	}{
		{"samplesRegistry", func(in *inputs) { in.cfg.Spec.SamplesRegistry = "mirror.example:5000" },
			"spec.samplesRegistry changed: it pulled from the inventory's registries and now pulls from mirror.example:5000"},
		{"architecture", func(in *inputs) { in.cfg.Spec.Architectures = []string{"aarch64"} },
			"spec.architectures changed from x86_64 to aarch64"},
		{"skipped tags", func(in *inputs) { in.eval.SkippedTags = SkippedTags{"python": {"3.9", "3.11"}} },
			"it skipped [] and now skips [3.9,3.11]"},
		{"import mode", func(in *inputs) { in.eval.ImportMode = imagev1.ImportModePreserveOriginal },
			`import mode for imagestreams changed from "" to "PreserveOriginal"`},
		{"marks", func(in *inputs) { in.marks = desired.Marks{"3.11": {Reason: "no such architecture", Hide: true}} },
			"whether it can work on this cluster changed (" + desired.UnusableAnnotation + ")"},
		{"generation", func(in *inputs) { in.cfg.Generation = 4 },
			"the Config changed (generation 3, now 4)"},
		{"version", func(in *inputs) { in.version = "4.22.0" }, "the Config changed"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			in := base()
			tc.change(&in)
			after := choose(in)
			if after == before {
				t.Fatalf("a change of %s leaves the choice as it was: %+v", tc.name, after)
			}
			if told := after.ChangeSince(before); !strings.Contains(told, tc.told) {
				t.Errorf("ChangeSince = %q, want it to say %q", told, tc.told)
			}
			if again := choose(in); again != after {
				t.Errorf("the same inputs choose differently: %+v, then %+v", after, again)
			}
		})
	}
}
