package usability

import (
	"encoding/json"
	"slices"

	imagev1 "github.com/openshift/api/image/v1"
)

// ArchitecturesOf is what Cluster.ImageArchitectures holds for an image: the architectures of
// its manifest list's manifests ("arm64/v8" with a variant), or of the single image, sorted.
func ArchitecturesOf(img *imagev1.Image) []string {
	var out []string
	for _, m := range img.DockerImageManifests {
		a := m.Architecture
		if m.Variant != "" {
			a += "/" + m.Variant
		}
		if a != "" && !slices.Contains(out, a) {
			out = append(out, a)
		}
	}
	if len(out) == 0 && len(img.DockerImageMetadata.Raw) > 0 {
		var meta struct {
			Architecture string `json:"architecture"`
		}
		if json.Unmarshal(img.DockerImageMetadata.Raw, &meta) == nil && meta.Architecture != "" {
			out = append(out, meta.Architecture)
		}
	}
	slices.Sort(out)
	return out
}
