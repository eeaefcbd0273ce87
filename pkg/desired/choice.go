package desired

import (
	"fmt"

	imagev1 "github.com/openshift/api/image/v1"
)

// Choice is what a write of one sample depends on, computed once from the Config evaluation
// (configspec.Evaluation.ChoiceOf): the Config's generation, samplesRegistry and architecture,
// the operator's version, the stream's skipped tags (comma-separated: an annotation moves no
// generation), the usability marks (Marks.String) and the cluster's import mode. ImageStream
// and Template make the sample from it alone, besides the inventory and the spec's skip lists,
// so the writer can rebuild an earlier write from the Choice it recorded (samplewriter.Intent);
// the refusal backoff's key and the status memo of verdicts are this one value too. A new
// setting that changes a sample is a field here, set in ChoiceOf, named in ChangeSince and read
// by ImageStream or Template.
type Choice struct {
	Generation      int64
	SamplesRegistry string
	Architecture    string
	Version         string
	SkippedTags     string
	Marks           string
	ImportMode      imagev1.ImportModeType
}

// ChangeSince names what changed since a write made for earlier. A change of Version has no case
// of its own: the writer's records live in the process, and a process has one version, so an
// earlier write of another version is never recorded (an upgrade's rewrite is told from the
// managedFields instead, samples.causeOf).
func (c Choice) ChangeSince(earlier Choice) string {
	describe := func(registry string) string {
		if registry == "" {
			return "the inventory's registries"
		}
		return registry
	}
	switch {
	case earlier.SamplesRegistry != c.SamplesRegistry:
		return fmt.Sprintf("spec.samplesRegistry changed: it pulled from %s and now pulls from %s", describe(earlier.SamplesRegistry), describe(c.SamplesRegistry))
	case earlier.Architecture != c.Architecture:
		return fmt.Sprintf("spec.architectures changed from %s to %s", earlier.Architecture, c.Architecture)
	case earlier.SkippedTags != c.SkippedTags:
		return fmt.Sprintf("the Config's skipped tags changed for it: it skipped [%s] and now skips [%s]", earlier.SkippedTags, c.SkippedTags)
	case earlier.ImportMode != c.ImportMode:
		return fmt.Sprintf("the cluster's import mode for imagestreams changed from %q to %q (images.config.openshift.io status)", earlier.ImportMode, c.ImportMode)
	case earlier.Marks != c.Marks:
		return "whether it can work on this cluster changed (" + UnusableAnnotation + ")"
	default:
		return fmt.Sprintf("the Config changed (generation %d, now %d)", earlier.Generation, c.Generation)
	}
}
