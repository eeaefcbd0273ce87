package mirrorsets

import (
	"fmt"
	"maps"
	"slices"
	"strings"
)

// Coverage is what the mirror sets do for the images of some imagestreams.
type Coverage struct {
	// streams maps each imagestream to its pull specs, routes each pull spec to its route.
	streams map[string][]string
	routes  map[string]Route
}

// Cover routes every pull spec of streams (imagestream name to its pull specs, PullSpecs).
func Cover(s Sets, streams map[string][]string) Coverage {
	c := Coverage{streams: map[string][]string{}, routes: map[string]Route{}}
	r := NewResolver(s)
	for name, specs := range streams {
		c.streams[name] = slices.Clone(specs)
		for _, spec := range specs {
			if _, done := c.routes[spec]; !done {
				c.routes[spec] = r.Resolve(spec)
			}
		}
	}
	return c
}

// Any: a mirror serves at least one image.
func (c Coverage) Any() bool {
	for _, r := range c.routes {
		if r.Mirrored() {
			return true
		}
	}
	return false
}

// All: a mirror serves every image (and there is at least one).
func (c Coverage) All() bool {
	for _, r := range c.routes {
		if !r.Mirrored() {
			return false
		}
	}
	return len(c.routes) > 0
}

// By names the mirror sets that serve at least one image ("ImageTagMirrorSet/name"), sorted.
func (c Coverage) By() []string {
	by := map[string]bool{}
	for _, r := range c.routes {
		for _, b := range r.By {
			by[b] = true
		}
	}
	return slices.Sorted(maps.Keys(by))
}

// Unmirrored maps each imagestream that has images no mirror serves to those images'
// registries, sorted.
func (c Coverage) Unmirrored() map[string][]string {
	return c.failing(func(_ string, r Route) bool { return !r.Mirrored() })
}

// ProbeTargets are the addresses an install decision probes, sorted: the mirrors of every image a
// mirror serves (instead of its registry), and the registry of every other image.
func (c Coverage) ProbeTargets() []string {
	set := map[string]bool{}
	for spec, r := range c.routes {
		for _, a := range candidates(spec, r) {
			set[a] = true
		}
	}
	return slices.Sorted(maps.Keys(set))
}

// Unimportable maps each imagestream with an image that none of its probe targets can serve
// (answered says which addresses answered) to those images' registries, sorted.
func (c Coverage) Unimportable(answered func(address string) bool) map[string][]string {
	return c.failing(func(spec string, r Route) bool {
		return !slices.ContainsFunc(candidates(spec, r), answered)
	})
}

// candidates are the addresses that can serve one image: its mirrors', or its registry's when no
// mirror serves it.
func candidates(spec string, r Route) []string {
	if !r.Mirrored() {
		return []string{Address(spec)}
	}
	var out []string
	for _, m := range r.Mirrors {
		if a := Address(m); !slices.Contains(out, a) {
			out = append(out, a)
		}
	}
	return out
}

func (c Coverage) failing(fails func(spec string, r Route) bool) map[string][]string {
	out := map[string][]string{}
	for name, specs := range c.streams {
		for _, spec := range specs {
			if fails(spec, c.routes[spec]) {
				if h := Host(spec); !slices.Contains(out[name], h) {
					out[name] = append(out[name], h)
				}
			}
		}
		slices.Sort(out[name])
	}
	for name, hosts := range out {
		if len(hosts) == 0 {
			delete(out, name)
		}
	}
	return out
}

// Named is how many imagestreams a message names; the rest are counted.
const Named = 10

// StreamsPhrase names the imagestreams of m (the first Named, then how many more) and their
// registries: "3 imagestreams (registry quay.io): a, b, c".
func StreamsPhrase(m map[string][]string) string {
	names := slices.Sorted(maps.Keys(m))
	hosts := map[string]bool{}
	for _, hs := range m {
		for _, h := range hs {
			hosts[h] = true
		}
	}
	list := names
	more := ""
	if len(names) > Named {
		list, more = names[:Named], fmt.Sprintf(" and %d more", len(names)-Named)
	}
	noun := "registry"
	if len(hosts) > 1 {
		noun = "registries"
	}
	return fmt.Sprintf("%d imagestreams (%s %s): %s%s", len(names), noun, strings.Join(slices.Sorted(maps.Keys(hosts)), ", "), strings.Join(list, ", "), more)
}
