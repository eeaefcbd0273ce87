package sampleusage

import (
	"fmt"
	"maps"
	"slices"
	"strings"
)

// Known are the samples a target may name: each imagestream with its tags, and the templates.
type Known struct {
	ImageStreamTags map[string][]string
	Templates       []string
}

// ParseTarget reads SAMPLE or STREAM:TAG. An unknown name is an error that suggests the nearest
// known one; so is a tag the stream lacks, listing the tags it has.
func ParseTarget(arg string, known Known) (Target, error) {
	name, tag, hasTag := strings.Cut(arg, ":")
	if name == "" || hasTag && tag == "" || strings.Contains(tag, ":") {
		return Target{}, fmt.Errorf("%q is not SAMPLE or IMAGESTREAM:TAG", arg)
	}
	if tags, ok := known.ImageStreamTags[name]; ok {
		if hasTag && !slices.Contains(tags, tag) {
			return Target{}, fmt.Errorf("imagestream %s has no tag %q%s; its tags: %s", name, tag, suggestion(tag, tags), strings.Join(tags, ", "))
		}
		return Target{ImageStream: name, Tag: tag}, nil
	}
	if slices.Contains(known.Templates, name) {
		if hasTag {
			return Target{}, fmt.Errorf("%s is a template: templates have no tags", name)
		}
		return Target{Template: name}, nil
	}
	all := slices.Concat(slices.Sorted(maps.Keys(known.ImageStreamTags)), known.Templates)
	return Target{}, fmt.Errorf("no sample imagestream or template is named %q%s", name, suggestion(name, all))
}

// suggestion is ` (did you mean "x"?)` for the candidate nearest to word, or "" when none is near
// enough to be a likely typo.
func suggestion(word string, candidates []string) string {
	best, bestDist := "", -1
	for _, c := range candidates {
		d := distance(word, c)
		if bestDist < 0 || d < bestDist || d == bestDist && c < best {
			best, bestDist = c, d
		}
	}
	limit := max(2, len(word)/3)
	if best == "" || bestDist > limit && !strings.HasPrefix(best, word) {
		return ""
	}
	return fmt.Sprintf(" (did you mean %q?)", best)
}

// distance is the Levenshtein distance of two strings, by bytes.
func distance(a, b string) int {
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}
