package desired

import (
	"slices"
	"strings"

	configv1 "github.com/openshift/api/config/v1"
	imagev1 "github.com/openshift/api/image/v1"
	"github.com/openshift/library-go/pkg/image/reference"
)

// NodePull is a registry from which nodes would pull a sample's images directly although
// images.config.openshift.io/cluster spec.registrySources refuses it.
type NodePull struct {
	// Registry is the registry host of the refused pull spec.
	Registry string
	// Blocked is true when spec.registrySources.blockedRegistries names the registry, false when
	// spec.registrySources.allowedRegistries leaves it out.
	Blocked bool
}

// RefusedNodePulls returns the registries from which nodes would pull images of want directly
// and which sources refuse, each once, in the order of the tags that first name them.
//
// registrySources is the container runtime's policy: the machine-config operator writes it into
// each node's policy.json and registries.conf, and it governs what pods and builds pull, not what
// openshift-apiserver imports (that is spec.allowedRegistriesForImport, importallow.RefusedRegistry). A pod
// that uses a tag whose referencePolicy is Local pulls from the internal registry, which pulls
// through from the source itself; one that uses a tag whose policy is Source (the server's
// default) pulls from the registry its image names: for an ImageStreamTag tag, the image of the
// tag it points at.
func RefusedNodePulls(want *imagev1.ImageStream, sources configv1.RegistrySources) []NodePull {
	if len(sources.AllowedRegistries) == 0 && len(sources.BlockedRegistries) == 0 {
		return nil
	}
	var out []NodePull
	for i := range want.Spec.Tags {
		tag := &want.Spec.Tags[i]
		if referencePolicyType(*tag) == imagev1.LocalTagReferencePolicy {
			continue
		}
		ref, ok := dockerImageOf(want, tag)
		if !ok {
			continue
		}
		if pull, refused := refusedByRegistrySources(sources, ref); refused && !slices.Contains(out, pull) {
			out = append(out, pull)
		}
	}
	return out
}

// dockerImageOf follows a tag's ImageStreamTag references within the stream to the DockerImage
// pull spec they end at; ok is false when they leave the stream, break off or loop.
func dockerImageOf(is *imagev1.ImageStream, tag *imagev1.TagReference) (ref string, ok bool) {
	for steps := 0; steps <= len(is.Spec.Tags) && tag.From != nil; steps++ {
		switch tag.From.Kind {
		case "DockerImage":
			return tag.From.Name, true
		case "ImageStreamTag":
			if tag.From.Namespace != "" {
				return "", false
			}
			target := tag.From.Name
			if stream, t, found := strings.Cut(target, ":"); found {
				if stream != is.Name {
					return "", false
				}
				target = t
			}
			i := slices.IndexFunc(is.Spec.Tags, func(t imagev1.TagReference) bool { return t.Name == target })
			if i < 0 {
				return "", false
			}
			tag = &is.Spec.Tags[i]
		default:
			return "", false
		}
	}
	return "", false
}

// refusedByRegistrySources applies spec.registrySources to a pull spec as a node's container
// runtime does, a name without a registry being on docker.io.
func refusedByRegistrySources(sources configv1.RegistrySources, ref string) (NodePull, bool) {
	parsed, err := reference.Parse(ref)
	if err != nil {
		return NodePull{}, false
	}
	parsed = parsed.DockerClientDefaults()
	repo := parsed.AsRepository().Exact()
	switch {
	case RegistrySourcesMatch(sources.BlockedRegistries, repo):
		return NodePull{Registry: parsed.Registry, Blocked: true}, true
	case len(sources.AllowedRegistries) > 0 && !RegistrySourcesMatch(sources.AllowedRegistries, repo):
		return NodePull{Registry: parsed.Registry}, true
	}
	return NodePull{}, false
}

// RegistrySourcesMatch reports whether one of the registrySources entries, each naming a host
// (with an optional port), a host with a repository scope, or a wildcard host (*.example.com),
// covers repo, a registry host with an optional repository path and no tag or digest.
func RegistrySourcesMatch(entries []string, repo string) bool {
	host, _, _ := strings.Cut(repo, "/")
	for _, e := range entries {
		e = strings.TrimSuffix(strings.TrimSpace(e), "/")
		switch {
		case e == "":
		case e == repo, e == host, strings.HasPrefix(repo, e+"/"):
			return true
		case strings.HasPrefix(e, "*.") && strings.HasSuffix(host, e[1:]):
			return true
		}
	}
	return false
}
