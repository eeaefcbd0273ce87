// Package mirrorsets says where openshift-apiserver imports the samples' images from on a cluster
// set up with mirror sets (ImageTagMirrorSet, ImageDigestMirrorSet and the older
// ImageContentSourcePolicy), as a pure function of those objects and the images' pull specs: which
// images have a mirror, which mirror sets give it, which addresses the install decision probes,
// and which imagestreams cannot import when those addresses do not answer.
//
// Matching follows containers/image's registries.conf, into which openshift-apiserver merges the
// three kinds for every ImageStreamImport:
//   - a source is a registry host (registry.redhat.io, mirror.example:5000) or a repository
//     prefix (registry.redhat.io/ubi9), and matches at a path-component boundary
//     (registry.redhat.io/ubi9 matches registry.redhat.io/ubi9/python-311:1 and
//     registry.redhat.io/ubi9:latest, never registry.redhat.io/ubi9-minimal); a wildcard host
//     (*.redhat.io), which the CRDs accept, matches no import: the importer looks registries up
//     by location and a wildcard entry has none;
//   - one source applies to an image: the longest matching prefix, whatever the kinds of the
//     others; the entries of every object for that source
//     are merged, in the objects' name order, each mirror once, and a mirror equal to the source
//     is no mirror;
//   - of that source's mirrors, those of ImageTagMirrorSets serve a tag reference, those of
//     ImageDigestMirrorSets and ImageContentSourcePolicies a digest reference (runtime-utils marks
//     the latter digest-only; the real openshift-apiserver imports no tag through an
//     ImageContentSourcePolicy, as TestStandInsImportThroughMirrorSetsAsOpenShiftAPIServer shows),
//     so a source whose only mirrors serve digests leaves a tag under it unmirrored;
//   - the mirrors are tried in order, then the source itself: openshift-apiserver's imports do
//     not honour mirrorSourcePolicy NeverContactSource;
//   - an image on a mirror keeps the path below the source: registry.redhat.io/ubi9/python-311:1
//     with registry.redhat.io mirrored to mirror.example:5000/rh is mirror.example:5000/rh/ubi9/python-311:1.
package mirrorsets

import (
	"cmp"
	"fmt"
	"maps"
	"slices"
	"strings"

	configv1 "github.com/openshift/api/config/v1"
	imagev1 "github.com/openshift/api/image/v1"
	operatorv1alpha1 "github.com/openshift/api/operator/v1alpha1"
)

// Kinds of mirror sets, as messages name them.
const (
	KindTag           = "ImageTagMirrorSet"
	KindDigest        = "ImageDigestMirrorSet"
	KindContentPolicy = "ImageContentSourcePolicy"
)

// Sets are the cluster's mirror sets.
type Sets struct {
	Tag           []*configv1.ImageTagMirrorSet
	Digest        []*configv1.ImageDigestMirrorSet
	ContentPolicy []*operatorv1alpha1.ImageContentSourcePolicy
}

// Empty: the cluster has no mirror set at all.
func (s Sets) Empty() bool {
	return len(s.Tag) == 0 && len(s.Digest) == 0 && len(s.ContentPolicy) == 0
}

// Fingerprint is a stable summary of every mirror rule: two Sets with the same rules have the same
// fingerprint, whatever their order or resourceVersions, so that a controller can tell whether
// what it decided on has changed.
func (s Sets) Fingerprint() string {
	var lines []string
	for _, r := range s.rules() {
		lines = append(lines, fmt.Sprintf("%s|%s|%s|%t", r.by, r.source, strings.Join(r.mirrors, ","), r.digests))
	}
	slices.Sort(lines)
	return strings.Join(lines, "\n")
}

// rule is one source entry of one object.
type rule struct {
	by      string // "ImageTagMirrorSet/name"
	source  string
	mirrors []string
	// digests: the mirrors serve digest references only; otherwise tag references only.
	digests bool
}

// rules lists every entry, objects in name order within a kind.
func (s Sets) rules() []rule {
	var out []rule
	for _, o := range sortedByName(s.Tag, func(o *configv1.ImageTagMirrorSet) string { return o.Name }) {
		for _, m := range o.Spec.ImageTagMirrors {
			out = append(out, rule{KindTag + "/" + o.Name, m.Source, mirrorStrings(m.Mirrors), false})
		}
	}
	for _, o := range sortedByName(s.Digest, func(o *configv1.ImageDigestMirrorSet) string { return o.Name }) {
		for _, m := range o.Spec.ImageDigestMirrors {
			out = append(out, rule{KindDigest + "/" + o.Name, m.Source, mirrorStrings(m.Mirrors), true})
		}
	}
	for _, o := range sortedByName(s.ContentPolicy, func(o *operatorv1alpha1.ImageContentSourcePolicy) string { return o.Name }) {
		for _, m := range o.Spec.RepositoryDigestMirrors {
			out = append(out, rule{KindContentPolicy + "/" + o.Name, m.Source, slices.Clone(m.Mirrors), true})
		}
	}
	return out
}

func sortedByName[T any](objs []T, name func(T) string) []T {
	out := slices.Clone(objs)
	slices.SortStableFunc(out, func(a, b T) int { return cmp.Compare(name(a), name(b)) })
	return out
}

func mirrorStrings(ms []configv1.ImageMirror) []string {
	out := make([]string, 0, len(ms))
	for _, m := range ms {
		out = append(out, string(m))
	}
	return out
}

// Route is where an image is imported from.
type Route struct {
	// Source is the matched source of the mirror sets ("" when none matches).
	Source string
	// Mirrors are the image's pull specs on the mirrors, in the order they are tried; empty when
	// no mirror serves this reference.
	Mirrors []string
	// By names the mirror sets that gave the mirrors ("ImageTagMirrorSet/name"), sorted.
	By []string
}

// Mirrored: at least one mirror serves the image.
func (r Route) Mirrored() bool { return len(r.Mirrors) > 0 }

// Resolve is the route of one pull spec.
func (s Sets) Resolve(pullSpec string) Route {
	rules := s.rules()
	best, bestLen := "", -1
	for _, r := range rules {
		if n, ok := matchLength(pullSpec, r.source); ok && n > bestLen {
			best, bestLen = r.source, n
		}
	}
	var route Route
	if bestLen < 0 {
		return route
	}
	route.Source = best
	digest := strings.Contains(pullSpec, "@")
	by := map[string]bool{}
	for _, r := range rules {
		if r.source != best {
			continue
		}
		if r.digests != digest {
			continue
		}
		for _, m := range r.mirrors {
			if m == r.source {
				continue
			}
			spec := m + pullSpec[bestLen:]
			if !slices.Contains(route.Mirrors, spec) {
				route.Mirrors = append(route.Mirrors, spec)
			}
			by[r.by] = true
		}
	}
	route.By = slices.Sorted(maps.Keys(by))
	return route
}

// matchLength tells whether source matches pullSpec, and how many characters of pullSpec it
// matched.
func matchLength(pullSpec, source string) (n int, ok bool) {
	if source == "" || strings.HasPrefix(source, "*.") || !strings.HasPrefix(pullSpec, source) {
		return 0, false
	}
	if len(pullSpec) == len(source) {
		return len(source), true
	}
	switch pullSpec[len(source)] {
	case '/', '@':
		return len(source), true
	case ':':
		// A tag after a repository; after a bare host it would be a port: another registry.
		return len(source), strings.Contains(source, "/")
	}
	return 0, false
}

// Address is the host:port a TLS probe of the registry of a pull spec (or of a mirror location)
// dials: the port the spec names, else 443.
func Address(pullSpec string) string {
	host, _, _ := strings.Cut(pullSpec, "/")
	if strings.Contains(host, ":") {
		return host
	}
	return host + ":443"
}

// Host is the registry host (with its port) of a pull spec.
func Host(pullSpec string) string {
	host, _, _ := strings.Cut(pullSpec, "/")
	return host
}

// PullSpecs are the DockerImage references of an imagestream (its tags' and its
// spec.dockerImageRepository), in order, without duplicates.
func PullSpecs(is *imagev1.ImageStream) []string {
	var out []string
	if is.Spec.DockerImageRepository != "" {
		out = append(out, is.Spec.DockerImageRepository)
	}
	for _, tag := range is.Spec.Tags {
		if tag.From != nil && tag.From.Kind == "DockerImage" && !slices.Contains(out, tag.From.Name) {
			out = append(out, tag.From.Name)
		}
	}
	return out
}
