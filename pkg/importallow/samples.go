package importallow

import (
	"fmt"
	"strings"

	configv1 "github.com/openshift/api/config/v1"
	imagev1 "github.com/openshift/api/image/v1"
)

// Samples is the allow-list's verdict on each imagestream a Config wants: which the server would
// refuse to create, and, per live stream, which it would refuse to update.
type Samples struct {
	// RefusedOnCreate maps each wanted imagestream openshift-apiserver would refuse to create
	// to the registry it refuses. Whether the server also refuses the update of an installed one
	// depends on that stream (Blocks).
	RefusedOnCreate map[string]string
	// refused holds the streams of RefusedOnCreate as wanted, for Blocks.
	refused map[string]*imagev1.ImageStream
	allow   *List
}

// ForSamples applies the list to the imagestreams wanted (by name); a nil or unrestricted list
// refuses nothing.
func ForSamples(allow *List, wanted map[string]*imagev1.ImageStream) Samples {
	s := Samples{allow: allow}
	if !allow.Restricted() {
		return s
	}
	for name, want := range wanted {
		if registry, err := RefusedRegistry(want, allow); err != nil {
			if s.RefusedOnCreate == nil {
				s.RefusedOnCreate, s.refused = map[string]string{}, map[string]*imagev1.ImageStream{}
			}
			s.RefusedOnCreate[name], s.refused[name] = registry, want
		}
	}
	return s
}

// Blocks reports whether openshift-apiserver would refuse the operator's write of imagestream
// name, live being the stream the server holds (nil when there is none), and names the registry
// it refuses. A create is refused when RefusedOnCreate names the stream; an update is refused only
// when the stream as wanted names a repository on a registry the list leaves out that live does
// not already name (ValidateImageStreamUpdateWithWhitelister, ForUpdateOf): an installed sample
// keeps being upgraded and reverted after an admin narrows the list.
func (s Samples) Blocks(name string, live *imagev1.ImageStream) (registry string, blocked bool) {
	registry, blocked = s.RefusedOnCreate[name]
	if !blocked || live == nil {
		return registry, blocked
	}
	registry, err := RefusedRegistry(s.refused[name], s.allow.ForUpdateOf(live))
	return registry, err != nil
}

// Blocked maps each imagestream the list keeps out right now (Blocks) to the registry it refuses,
// live reading the stream the server holds (nil when there is none). The status and the metrics
// name these, and the samples controller leaves them as they are.
func (s Samples) Blocked(live func(name string) *imagev1.ImageStream) map[string]string {
	if len(s.RefusedOnCreate) == 0 {
		return nil
	}
	blocked := map[string]string{}
	for name := range s.RefusedOnCreate {
		if registry, ok := s.Blocks(name, live(name)); ok {
			blocked[name] = registry
		}
	}
	return blocked
}

// BlocksAll reports whether the cluster's spec.allowedRegistriesForImport allows none of the
// registries the inventory uses, and says so for the admin: then no sample could be written, and
// the bootstrap installs none. When it allows some, the operator installs those and names the
// others (Samples.Blocked).
func BlocksAll(image *configv1.Image, sourceRegistries []string) (string, bool) {
	if image == nil || len(sourceRegistries) == 0 {
		return "", false
	}
	allow := New(image.Spec.AllowedRegistriesForImport, image.Status.InternalRegistryHostname)
	for _, r := range sourceRegistries {
		if allow.AdmitHost(r, Secure) == nil {
			return "", false
		}
	}
	return fmt.Sprintf("images.config.openshift.io/cluster spec.allowedRegistriesForImport allows none of the registries the samples use (%s): add them there, or mirror the samples and point spec.samplesRegistry at an allowed mirror", strings.Join(sourceRegistries, ", ")), true
}
