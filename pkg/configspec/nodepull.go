package configspec

import (
	"fmt"
	"sort"
	"strings"

	configv1 "github.com/openshift/api/config/v1"
	samplesv1 "github.com/openshift/api/samples/v1"

	"github.com/samples-operator-dev/cluster-samples-operator/pkg/desired"
)

// namedSamplesMax is how many samples a warning names before it counts the rest.
const namedSamplesMax = 5

// nodePullWarnings names, per registry that images.config.openshift.io/cluster
// spec.registrySources refuses, the imagestreams the Config wants (samplesRegistry applied) whose
// images nodes would pull from it directly (desired.RefusedNodePulls). These samples are
// installed all the same: registrySources is the container runtime's policy for pods and builds,
// not openshift-apiserver's for imports, and the Config stays valid.
func nodePullWarnings(cfg *samplesv1.Config, eval Evaluation, imageConfig *configv1.Image) []string {
	if eval.Inventory == nil || imageConfig == nil {
		return nil
	}
	sources := imageConfig.Spec.RegistrySources
	if len(sources.AllowedRegistries) == 0 && len(sources.BlockedRegistries) == 0 {
		return nil
	}
	streams := map[desired.NodePull][]string{}
	wants := eval.wantedImageStreams(cfg)
	for _, name := range eval.Inventory.ImageStreamNames() {
		if want := wants[name]; want != nil {
			for _, pull := range desired.RefusedNodePulls(want, sources) {
				streams[pull] = append(streams[pull], name)
			}
		}
	}
	pulls := make([]desired.NodePull, 0, len(streams))
	for pull := range streams {
		pulls = append(pulls, pull)
	}
	// One registry can be refused twice, blocked for some repositories and left out of the
	// allowed list for others: blocked first, so that the message does not change with the map's
	// order and rewrite the Config's status.
	sort.Slice(pulls, func(i, j int) bool {
		if pulls[i].Registry != pulls[j].Registry {
			return pulls[i].Registry < pulls[j].Registry
		}
		return pulls[i].Blocked && !pulls[j].Blocked
	})
	var warnings []string
	for _, pull := range pulls {
		const where = "images.config.openshift.io/cluster spec.registrySources."
		refusal, fix := where+"allowedRegistries does not include "+pull.Registry, "add it there, point spec.samplesRegistry at a mirror it allows"
		if pull.Blocked {
			refusal, fix = where+"blockedRegistries blocks "+pull.Registry, "remove it there, point spec.samplesRegistry at another mirror"
		}
		warnings = append(warnings, fmt.Sprintf("%s, from which nodes would pull the images of %s directly (tags with referencePolicy Source): they are installed, but pods and builds that use them cannot pull; %s, or skip them",
			refusal, namedStreams(streams[pull]), fix))
	}
	return warnings
}

// namedStreams is "imagestream a", or "3 imagestreams: a, b, c", naming at most namedSamplesMax
// (sorted) and counting the rest.
func namedStreams(names []string) string {
	if len(names) == 1 {
		return "imagestream " + names[0]
	}
	sort.Strings(names)
	shown := names
	more := ""
	if len(names) > namedSamplesMax {
		shown, more = names[:namedSamplesMax], fmt.Sprintf(" and %d more", len(names)-namedSamplesMax)
	}
	return fmt.Sprintf("%d imagestreams: %s%s", len(names), strings.Join(shown, ", "), more)
}
