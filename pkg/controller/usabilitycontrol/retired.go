package usabilitycontrol

import (
	"slices"

	templatev1 "github.com/openshift/api/template/v1"
	"k8s.io/client-go/tools/cache"

	"github.com/samples-operator-dev/cluster-samples-operator/pkg/desired"
	"github.com/samples-operator-dev/cluster-samples-operator/pkg/inventory"
	"github.com/samples-operator-dev/cluster-samples-operator/pkg/usability"
)

// retiredFacts are a live retired template's facts, as of its resourceVersion.
type retiredFacts struct {
	resourceVersion string
	facts           usability.Facts
}

// retiredTemplates are the facts of the live templates an upgrade retired that the operator
// still keeps (managed, not skipped, not in inv): they are judged like the inventory's, and
// marked the same. A template is read once per change of it (a mark written on it is one).
func (c *Controller) retiredTemplates(skipped []string, inv *inventory.Inventory, live []*templatev1.Template) []usability.Facts {
	shipped := inv.TemplateNames()
	kept := make(map[string]retiredFacts, len(c.retiredFacts))
	var out []usability.Facts
	for _, t := range live {
		if t.Annotations[desired.RetiredAnnotation] == "" || t.Labels[desired.ManagedLabel] != "true" || t.DeletionTimestamp != nil ||
			desired.IsTrimmed(t) || slices.Contains(skipped, t.Name) || slices.Contains(shipped, t.Name) {
			continue
		}
		f, ok := c.retiredFacts[t.Name]
		if !ok || f.resourceVersion != t.ResourceVersion {
			f = retiredFacts{resourceVersion: t.ResourceVersion, facts: usability.Read(t)}
		}
		kept[t.Name] = f
		out = append(out, f.facts)
	}
	c.retiredFacts = kept
	return out
}

// isRetired lets through the events of retired templates (a tombstone's too): a change of one
// changes its verdict, a change of another template none.
func isRetired(obj any) bool {
	if tombstone, ok := obj.(cache.DeletedFinalStateUnknown); ok {
		obj = tombstone.Obj
	}
	t, ok := obj.(*templatev1.Template)
	return ok && t.Annotations[desired.RetiredAnnotation] != ""
}
