// Package mirrorsets says where openshift-apiserver imports the samples' images from on a cluster
// set up with mirror sets (ImageTagMirrorSet, ImageDigestMirrorSet and the older
// ImageContentSourcePolicy), as a pure function of those objects and the images' pull specs: which
// images have a mirror, which mirror sets give it, which addresses the install decision probes,
// and which imagestreams cannot import when those addresses do not answer.
//
// This package owns those rules: the install decision and the status (through Cover), `inventory
// check-mirror` (pkg/mirrorcheck) and the import emulator (test/emulator) all resolve through
// Resolver. They follow containers/image's registries.conf, into which openshift-apiserver merges
// the three kinds for every ImageStreamImport (openshift/runtime-utils):
//   - a pull spec is named as the server names it: one without a registry host is on docker.io,
//     and a single-component one in its library/ namespace;
//   - a source is a registry host (registry.redhat.io, mirror.example:5000) or a repository
//     prefix (registry.redhat.io/ubi9), and matches at a path-component boundary
//     (registry.redhat.io/ubi9 matches registry.redhat.io/ubi9/python-311:1 and
//     registry.redhat.io/ubi9:latest, never registry.redhat.io/ubi9-minimal); a wildcard host
//     (*.redhat.io), which the CRDs accept, matches no import: the importer looks registries up
//     by location and a wildcard entry has none;
//   - a mirror equal to its source is no mirror, and an entry without any other mirror is no
//     entry at all: the server writes no registry for it, so it hides no shorter source;
//   - one source applies to an image: the longest matching prefix, whatever the kinds of the
//     others; the entries of every object for that source are merged, kinds in the order
//     ImageTagMirrorSet, ImageDigestMirrorSet, ImageContentSourcePolicy and objects of a kind in
//     name order, each mirror once in the order it first appears (the server orders the mirrors
//     of several objects topologically, which is the same order for a single object and for
//     lists that agree);
//   - of that source's mirrors, those of ImageTagMirrorSets serve a tag reference, those of
//     ImageDigestMirrorSets and ImageContentSourcePolicies a digest reference (runtime-utils marks
//     the latter digest-only; the real openshift-apiserver imports no tag through an
//     ImageContentSourcePolicy, as TestStandInsImportThroughMirrorSetsAsOpenShiftAPIServer shows),
//     so a source whose only mirrors serve digests leaves a tag under it unmirrored;
//   - the mirrors are tried in order, then the source itself: openshift-apiserver's imports do
//     not honour mirrorSourcePolicy NeverContactSource;
//   - an image on a mirror keeps the path below the source: registry.redhat.io/ubi9/python-311:1
//     with registry.redhat.io mirrored to mirror.example:5000/rh is mirror.example:5000/rh/ubi9/python-311:1.
//
// registrySources (insecure or blocked scopes nested in a mirrored one) are not modelled: they
// change no mirror.
package mirrorsets

import (
	"cmp"
	"fmt"
	"slices"
	"strings"

	configv1 "github.com/openshift/api/config/v1"
	imagev1 "github.com/openshift/api/image/v1"
	operatorv1alpha1 "github.com/openshift/api/operator/v1alpha1"

	"github.com/samples-operator-dev/cluster-samples-operator/pkg/pin"
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

// MirrorLocations are the mirrors of every entry, each once, sorted: the places an import may
// be served from besides its source.
func (s Sets) MirrorLocations() []string {
	var out []string
	for _, r := range s.rules() {
		for _, m := range r.mirrors {
			if !slices.Contains(out, m) {
				out = append(out, m)
			}
		}
	}
	slices.Sort(out)
	return out
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
	// Source is the matched source of the mirror sets ("" when none with a mirror matches).
	Source string
	// Mirrors are the image's pull specs on the mirrors, in the order they are tried (the source
	// itself is tried after them); empty when no mirror serves this reference.
	Mirrors []string
	// By names the mirror sets that gave the mirrors ("ImageTagMirrorSet/name"), sorted.
	By []string
}

// Mirrored: at least one mirror serves the image.
func (r Route) Mirrored() bool { return len(r.Mirrors) > 0 }

// Resolve is the route of one pull spec. To route many, make a Resolver once.
func (s Sets) Resolve(pullSpec string) Route { return NewResolver(s).Resolve(pullSpec) }

// Resolver routes pull specs through one Sets. It is read-only once made: routes may be asked
// for concurrently.
type Resolver struct {
	// scopes are the sources that have at least one mirror.
	scopes []scope
}

// scope is the merged mirrors of one source.
type scope struct {
	source string
	// tags serve tag references, digests digest references.
	tags, digests served
}

// served are mirror locations in the order they are tried, and the objects that gave them.
type served struct {
	locations []string
	by        []string // sorted
}

// NewResolver merges the entries of s as the server does.
func NewResolver(s Sets) *Resolver {
	r := &Resolver{}
	for _, e := range s.rules() {
		if e.source == "" || strings.HasPrefix(e.source, "*.") || !slices.ContainsFunc(e.mirrors, func(m string) bool { return m != e.source }) {
			continue
		}
		i := slices.IndexFunc(r.scopes, func(sc scope) bool { return sc.source == e.source })
		if i < 0 {
			r.scopes = append(r.scopes, scope{source: e.source})
			i = len(r.scopes) - 1
		}
		into := &r.scopes[i].tags
		if e.digests {
			into = &r.scopes[i].digests
		}
		for _, m := range e.mirrors {
			if m != e.source && !slices.Contains(into.locations, m) {
				into.locations = append(into.locations, m)
			}
		}
		if !slices.Contains(into.by, e.by) {
			into.by = append(into.by, e.by)
			slices.Sort(into.by)
		}
	}
	return r
}

// Resolve is the route of one pull spec.
func (r *Resolver) Resolve(pullSpec string) Route {
	full := normalize(pullSpec)
	repo := pin.Repository(full)
	var best *scope
	for i := range r.scopes {
		sc := &r.scopes[i]
		if (best == nil || len(sc.source) > len(best.source)) && (repo == sc.source || strings.HasPrefix(repo, sc.source+"/")) {
			best = sc
		}
	}
	if best == nil {
		return Route{}
	}
	serving := best.tags
	if strings.Contains(full, "@") {
		serving = best.digests
	}
	route := Route{Source: best.source, By: slices.Clone(serving.by)}
	for _, m := range serving.locations {
		route.Mirrors = append(route.Mirrors, m+full[len(best.source):])
	}
	return route
}

// normalize names a pull spec as the server does (docker's normalized names): one without a
// registry host is on docker.io, and a single-component one in its library/ namespace.
func normalize(pullSpec string) string {
	first, rest, found := strings.Cut(pullSpec, "/")
	if found && (strings.ContainsAny(first, ".:") || first == "localhost" || strings.ToLower(first) != first) {
		return pullSpec
	}
	if !found {
		return "docker.io/library/" + pullSpec
	}
	return "docker.io/" + first + "/" + rest
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
