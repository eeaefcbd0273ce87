package desired

import (
	"strings"

	imagev1 "github.com/openshift/api/image/v1"
	samplesv1 "github.com/openshift/api/samples/v1"

	"github.com/samples-operator-dev/cluster-samples-operator/pkg/inventory"
)

// WrittenForRegistry tells an imagestream that the operator itself wrote for another
// spec.samplesRegistry from one an admin edited: it returns the samplesRegistry ("" for the
// inventory's own registries) under which live is exactly what the Config would ask for, when that
// differs from spec's. An update of such a stream follows the Config; it reverts nothing.
func WrittenForRegistry(live *imagev1.ImageStream, spec *samplesv1.ConfigSpec, inv Source, version, name string) (string, bool) {
	original, ok := inv.ImageStreamForRegistry(name, "")
	if !ok || live == nil {
		return "", false
	}
	candidate, found := "", false
	liveTags := map[string]string{}
	for _, tag := range live.Spec.Tags {
		if tag.From != nil && tag.From.Kind == "DockerImage" {
			liveTags[tag.Name] = tag.From.Name
		}
	}
	for _, tag := range original.Spec.Tags {
		if tag.From == nil || tag.From.Kind != "DockerImage" {
			continue
		}
		liveRef, ok := liveTags[tag.Name]
		if !ok {
			continue
		}
		if liveRef == tag.From.Name {
			candidate, found = "", true
			break
		}
		// The rewrite keeps the repository path, tag and digest and replaces what precedes it.
		rest := tag.From.Name
		if host := inventory.RegistryHost(rest); host != "" {
			rest = strings.TrimPrefix(rest, host+"/")
		}
		if registry, ok := strings.CutSuffix(liveRef, "/"+rest); ok && rest != "" && registry != "" {
			candidate, found = registry, true
			break
		}
	}
	if !found || candidate == spec.SamplesRegistry {
		return "", false
	}
	other := *spec.DeepCopy()
	other.SamplesRegistry = candidate
	want, _, _ := ImageStream(&other, inv, version, name)
	if want == nil || !ImageStreamInSync(live, want) {
		return "", false
	}
	return candidate, true
}
