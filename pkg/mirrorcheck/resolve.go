package mirrorcheck

import (
	"slices"
	"sort"
	"strings"
)

// Resolver says where openshift-apiserver looks for an image on a cluster with mirror sets. The
// server merges the three kinds into a registries.conf for every ImageStreamImport
// (openshift/runtime-utils EditRegistriesConfig) and pulls through it (containers/image
// sysregistriesv2):
//   - the mirrors of ImageDigestMirrorSets and ImageContentSourcePolicies serve references by
//     digest only, those of ImageTagMirrorSets references by tag only;
//   - a source is a registry host or a repository prefix, and matches an image whose repository
//     is the source or lies below it on a path-component boundary (registry.redhat.io/ubi9 covers
//     registry.redhat.io/ubi9/python-311, never registry.redhat.io/ubi9-minimal); a wildcard
//     host (*.example.org), which the CRDs accept, matches no import (the server's importer looks
//     registries up by location, and a wildcard entry has none);
//   - of the sources that match, only the longest counts, whatever kinds the others are of;
//   - the mirrors of one source from several objects are merged, in the order they are listed,
//     each once; a mirror equal to the source is not a mirror;
//   - the mirrors are tried in order, then the source itself (the server ignores
//     mirrorSourcePolicy NeverContactSource on imports).
//
// The server orders the mirrors of one source given by several objects topologically; Resolver
// keeps the order in which they first appear, which is the same for a single object and for
// lists that agree. It does not model registrySources (insecure or blocked scopes nested in a
// mirrored one), which change no mirror.
type Resolver struct {
	scopes []scope
}

type scope struct {
	source  string
	mirrors []endpoint
}

type endpoint struct {
	location string
	byDigest bool // serves references by digest; otherwise by tag
}

// NewResolver merges s as the server does.
func NewResolver(s Sets) *Resolver {
	digest := map[string][]string{}
	for _, o := range s.DigestMirrorSets {
		for _, m := range o.Spec.ImageDigestMirrors {
			digest[m.Source] = addMirrors(digest[m.Source], m.Source, m.Mirrors)
		}
	}
	for _, o := range s.ContentSourcePolicies {
		for _, m := range o.Spec.RepositoryDigestMirrors {
			digest[m.Source] = addMirrors(digest[m.Source], m.Source, m.Mirrors)
		}
	}
	tag := map[string][]string{}
	for _, o := range s.TagMirrorSets {
		for _, m := range o.Spec.ImageTagMirrors {
			tag[m.Source] = addMirrors(tag[m.Source], m.Source, m.Mirrors)
		}
	}
	r := &Resolver{}
	add := func(sets map[string][]string, byDigest bool) {
		for _, source := range sortedKeys(sets) {
			i := slices.IndexFunc(r.scopes, func(s scope) bool { return s.source == source })
			if i < 0 {
				r.scopes = append(r.scopes, scope{source: source})
				i = len(r.scopes) - 1
			}
			for _, m := range sets[source] {
				r.scopes[i].mirrors = append(r.scopes[i].mirrors, endpoint{location: m, byDigest: byDigest})
			}
		}
	}
	add(digest, true)
	add(tag, false)
	return r
}

// addMirrors appends to have the mirrors of one entry it does not hold yet. An entry whose only
// mirrors are its source is no mirror set.
func addMirrors[M ~string](have []string, source string, mirrors []M) []string {
	real := false
	for _, m := range mirrors {
		real = real || string(m) != source
	}
	if !real {
		return have
	}
	for _, m := range mirrors {
		if s := string(m); s != source && !slices.Contains(have, s) {
			have = append(have, s)
		}
	}
	return have
}

func sortedKeys(m map[string][]string) []string {
	keys := make([]string, 0, len(m))
	for k, v := range m {
		if len(v) > 0 {
			keys = append(keys, k)
		}
	}
	sort.Strings(keys)
	return keys
}

// Mirrors lists, in the order the server tries them, the references on mirrors under which the
// server looks for ref before it tries ref itself; none when no mirror set covers ref.
func (r *Resolver) Mirrors(ref string) []string {
	full := normalize(ref)
	repo, byDigest := repository(full), strings.Contains(full, "@")
	var best *scope
	for i := range r.scopes {
		s := &r.scopes[i]
		if (best == nil || len(s.source) > len(best.source)) && isSubrepo(repo, s.source) {
			best = s
		}
	}
	if best == nil {
		return nil
	}
	var out []string
	for _, m := range best.mirrors {
		if m.byDigest == byDigest {
			out = append(out, m.location+strings.TrimPrefix(full, best.source))
		}
	}
	return out
}

// PullSources is Mirrors and then ref itself (normalized, as the server names it).
func (r *Resolver) PullSources(ref string) []string {
	return append(r.Mirrors(ref), normalize(ref))
}

// isSubrepo: repo is ancestor or lies below it on a path-component boundary.
func isSubrepo(repo, ancestor string) bool {
	return repo == ancestor || strings.HasPrefix(repo, ancestor+"/")
}

// repository is ref without its tag and digest.
func repository(ref string) string {
	if i := strings.Index(ref, "@"); i >= 0 {
		ref = ref[:i]
	}
	if i := strings.LastIndex(ref, ":"); i > strings.LastIndex(ref, "/") {
		ref = ref[:i]
	}
	return ref
}

// normalize names ref as the server does (docker's normalized names): a reference without a
// registry host is on docker.io, and a single-component one in its library/ namespace.
func normalize(ref string) string {
	first, rest, found := strings.Cut(ref, "/")
	if found && (strings.ContainsAny(first, ".:") || first == "localhost" || strings.ToLower(first) != first) {
		return ref
	}
	if !found {
		return "docker.io/library/" + ref
	}
	return "docker.io/" + first + "/" + rest
}
