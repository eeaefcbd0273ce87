package configspec

import (
	"fmt"
	"slices"
	"strings"
	"unicode"

	samplesv1 "github.com/openshift/api/samples/v1"

	"github.com/samples-operator-dev/cluster-samples-operator/pkg/inventory"
)

// OfferedAnnotation, on the Config, lists samples an admin keeps in the catalog whatever the
// operator's verdict on whether they can work on this cluster: template names and imagestream
// tags as "STREAM:TAG", separated by commas ("rails-postgresql-example,ruby:3.3-ubi9"). The
// verdict is still written on them and reported; they are only not hidden.
const OfferedAnnotation = "samples.operator.openshift.io/offered-whatever-the-verdict"

// Offered are the samples the Config keeps offered, as "Template/NAME" and
// "ImageStreamTag/STREAM:TAG" (usability.Verdict's Kind and Name).
type Offered map[string]bool

// Has reports whether the sample of kind and name is kept offered.
func (o Offered) Has(kind, name string) bool { return o[kind+"/"+name] }

// ParseOffered reads an annotation value as ParseSkippedTags reads its own: spaces around entries
// and empty entries are passed over; an entry with spaces inside, or with an empty stream or tag,
// is malformed; with inv, an entry naming no template or tag it ships is left out. problem names
// what was left out and why ("" when nothing was).
func ParseOffered(value string, inv *inventory.Inventory) (Offered, string) {
	offered := Offered{}
	var malformed, repeated, unknown problemList
	for _, raw := range strings.Split(value, ",") {
		entry := strings.TrimSpace(raw)
		if entry == "" {
			continue
		}
		stream, tag, isTag := strings.Cut(entry, ":")
		key := "Template/" + entry
		if isTag {
			key = "ImageStreamTag/" + entry
		}
		switch {
		case strings.ContainsFunc(entry, unicode.IsSpace):
			malformed.add(fmt.Sprintf("%q (spaces inside)", entry))
			continue
		case isTag && (stream == "" || tag == "" || strings.Contains(tag, ":")):
			malformed.add(fmt.Sprintf("%q (not TEMPLATE or STREAM:TAG)", entry))
			continue
		case offered[key]:
			repeated.add(entry)
			continue
		case inv != nil && !ships(inv, entry, stream, tag, isTag):
			unknown.add(entry)
			continue
		}
		offered[key] = true
	}
	return offered, listProblem(OfferedAnnotation, malformed, repeated, unknown, "samples")
}

// ships reports whether inv has the template entry, or the tag stream:tag.
func ships(inv *inventory.Inventory, entry, stream, tag string, isTag bool) bool {
	if !isTag {
		return slices.Contains(inv.TemplateNames(), entry)
	}
	tags, ok := InventoryTags(inv)(stream)
	return ok && slices.Contains(tags, tag)
}

// OfferedOf parses the Config's OfferedAnnotation against inv.
func OfferedOf(cfg *samplesv1.Config, inv *inventory.Inventory) (Offered, string) {
	value, ok := cfg.Annotations[OfferedAnnotation]
	if !ok {
		return Offered{}, ""
	}
	return ParseOffered(value, inv)
}
