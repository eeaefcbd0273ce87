package configspec

import (
	"fmt"
	"maps"
	"slices"
	"strings"
	"unicode"

	samplesv1 "github.com/openshift/api/samples/v1"

	"github.com/samples-operator-dev/cluster-samples-operator/pkg/inventory"
)

// SkippedImageStreamTagsAnnotation, on the Config, lists imagestream tags an admin does not want, as
// "STREAM:TAG" entries separated by commas ("python:3.9-ubi8,ruby:2.5-ubi8"). openshift/api's
// Config can skip only whole imagestreams: this skips one broken tag and keeps the stream.
const SkippedImageStreamTagsAnnotation = "samples.operator.openshift.io/skipped-imagestream-tags"

// SkippedTags are, per imagestream, the tags skipped, sorted.
type SkippedTags map[string][]string

// Of returns the stream's skipped tags (nil for none).
func (s SkippedTags) Of(stream string) []string { return s[stream] }

// Has reports whether stream:tag is skipped.
func (s SkippedTags) Has(stream, tag string) bool { return slices.Contains(s[stream], tag) }

// problemExamples is how many entries each kind of problem names; a list of 10,000 bad entries
// must still give a message an admin can read.
const problemExamples = 5

// ParseSkippedTags reads an annotation value. Entries may have spaces around them (a list written
// by hand, "a:1, b:2") and empty entries are passed over; an entry with spaces inside, without
// exactly one ':', or with an empty stream or tag is malformed. inventoryTags, if set, gives the tags of a stream the inventory has (ok false
// when it has none of that name): entries that name something the inventory lacks are left out.
// The returned problem, "" when there is none, names what was left out and why; the valid
// entries apply either way.
func ParseSkippedTags(value string, inventoryTags func(stream string) (tags []string, ok bool)) (SkippedTags, string) {
	skipped := SkippedTags{}
	var malformed, repeated, unknown problemList
	seen := map[string]bool{}
	for _, raw := range strings.Split(value, ",") {
		entry := strings.TrimSpace(raw)
		if entry == "" { // "a:1,,b:2", a trailing comma: nothing asked
			continue
		}
		stream, tag, found := strings.Cut(entry, ":")
		switch {
		case strings.ContainsFunc(entry, unicode.IsSpace):
			malformed.add(fmt.Sprintf("%q (spaces inside)", entry))
			continue
		case !found || strings.Contains(tag, ":"):
			malformed.add(fmt.Sprintf("%q (not STREAM:TAG)", entry))
			continue
		case stream == "":
			malformed.add(fmt.Sprintf("%q (no imagestream)", entry))
			continue
		case tag == "":
			malformed.add(fmt.Sprintf("%q (no tag)", entry))
			continue
		case seen[entry]:
			repeated.add(entry)
			continue
		}
		seen[entry] = true
		if inventoryTags != nil {
			if tags, ok := inventoryTags(stream); !ok || !slices.Contains(tags, tag) {
				unknown.add(entry)
				continue
			}
		}
		skipped[stream] = append(skipped[stream], tag)
	}
	for stream := range skipped {
		slices.Sort(skipped[stream])
	}
	return skipped, listProblem(SkippedImageStreamTagsAnnotation, malformed, repeated, unknown, "tags")
}

// listProblem is the problem of a list annotation's entries ("" when there is none): those
// malformed, those repeated, and those naming what (tags, samples) the operator does not ship.
func listProblem(annotation string, malformed, repeated, unknown problemList, what string) string {
	var parts []string
	if malformed.n > 0 {
		parts = append(parts, fmt.Sprintf("%s malformed and ignored: %s", entries(malformed.n), malformed.String()))
	}
	if repeated.n > 0 {
		parts = append(parts, fmt.Sprintf("%s listed more than once: %s", entries(repeated.n), repeated.String()))
	}
	if unknown.n > 0 {
		parts = append(parts, fmt.Sprintf("%s naming %s this operator does not ship, ignored: %s", entries(unknown.n), what, unknown.String()))
	}
	if len(parts) == 0 {
		return ""
	}
	return fmt.Sprintf("annotation %s: %s", annotation, strings.Join(parts, "; "))
}

// SkippedTagsOf parses the Config's annotation against an inventory's tags.
func SkippedTagsOf(cfg *samplesv1.Config, inventoryTags func(stream string) ([]string, bool)) (SkippedTags, string) {
	value, ok := cfg.Annotations[SkippedImageStreamTagsAnnotation]
	if !ok {
		return SkippedTags{}, ""
	}
	return ParseSkippedTags(value, inventoryTags)
}

// InventoryTags gives ParseSkippedTags the tags of inv's imagestreams.
func InventoryTags(inv *inventory.Inventory) func(stream string) ([]string, bool) {
	return func(stream string) ([]string, bool) {
		is, ok := inv.ImageStream(stream)
		if !ok {
			return nil, false
		}
		tags := make([]string, 0, len(is.Spec.Tags))
		for _, t := range is.Spec.Tags {
			tags = append(tags, t.Name)
		}
		return tags, true
	}
}

// orphanedBySkip names the kept tags that follow a skipped tag of their stream (python:latest is
// an ImageStreamTag reference to python:3.12-ubi9): skipping the one leaves the other pointing at
// nothing. "" when there are none.
func orphanedBySkip(inv *inventory.Inventory, skipped SkippedTags) string {
	var orphans problemList
	for _, stream := range slices.Sorted(maps.Keys(skipped)) {
		is, ok := inv.ImageStream(stream)
		if !ok {
			continue
		}
		for _, tag := range is.Spec.Tags {
			if tag.From == nil || tag.From.Kind != "ImageStreamTag" || skipped.Has(stream, tag.Name) {
				continue
			}
			target := tag.From.Name
			if i := strings.LastIndex(target, ":"); i >= 0 {
				target = target[i+1:]
			}
			if skipped.Has(stream, target) {
				orphans.add(fmt.Sprintf("%s:%s follows %s:%s", stream, tag.Name, stream, target))
			}
		}
	}
	if orphans.n == 0 {
		return ""
	}
	return fmt.Sprintf("annotation %s: %s, which is skipped: skip the follower too, or it resolves to no image", SkippedImageStreamTagsAnnotation, orphans.String())
}

func entries(n int) string {
	if n == 1 {
		return "1 entry"
	}
	return fmt.Sprintf("%d entries", n)
}

// problemList counts entries and keeps the first few as examples.
type problemList struct {
	n        int
	examples []string
}

func (p *problemList) add(s string) {
	p.n++
	if len(p.examples) < problemExamples {
		p.examples = append(p.examples, s)
	}
}

func (p problemList) String() string {
	s := strings.Join(p.examples, ", ")
	if more := p.n - len(p.examples); more > 0 {
		s += fmt.Sprintf(" and %d more", more)
	}
	return s
}
