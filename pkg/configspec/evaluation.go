package configspec

import (
	"fmt"
	"strings"

	configv1 "github.com/openshift/api/config/v1"
	imagev1 "github.com/openshift/api/image/v1"
	samplesv1 "github.com/openshift/api/samples/v1"

	"github.com/samples-operator-dev/cluster-samples-operator/pkg/desired"
	"github.com/samples-operator-dev/cluster-samples-operator/pkg/importallow"
	"github.com/samples-operator-dev/cluster-samples-operator/pkg/inventory"
	"github.com/samples-operator-dev/cluster-samples-operator/pkg/mirrorsets"
)

// Inventories gives the parsed inventory of an architecture (a spec.architectures value).
type Inventories interface {
	Has(arch string) bool
	For(arch string) (*inventory.Inventory, error)
	// GOARCH is the operator's: the cluster's architecture, which a Config that names none
	// selects (WithClusterArchitecture).
	GOARCH() string
}

// Evaluation is what a Config means right now. The import allow-list's verdict on each wanted
// imagestream is embedded: RefusedOnCreate, Blocks and Blocked.
type Evaluation struct {
	Validation Validation
	Mode       desired.Mode
	// Inventory is the one the Config selects; nil when its architecture has none.
	Inventory *inventory.Inventory
	// SkippedTags are the tags the Config's SkippedImageStreamTagsAnnotation validly skips.
	SkippedTags SkippedTags
	// Offered are the samples the Config's OfferedAnnotation keeps in the catalog.
	Offered Offered
	// ImportMode is the cluster's import mode for imagestreams (the image configuration's
	// status), which the tags without a mode of their own follow; "" when it says none.
	ImportMode imagev1.ImportModeType
	importallow.Samples
}

// Evaluate validates a Config against the inventories and the cluster's image configuration and
// says which mode it puts the samples in.
func Evaluate(cfg *samplesv1.Config, inventories Inventories, imageConfig *configv1.Image) Evaluation {
	env := Environment{
		HasInventory:     inventories.Has,
		ValidateRegistry: inventory.ValidateRegistry,
	}
	var inv *inventory.Inventory
	if arch := Architecture(&cfg.Spec); inventories.Has(arch) {
		if loaded, err := inventories.For(arch); err == nil {
			inv = loaded
			env.InventoryImageStreams = inv.ImageStreamNames()
			env.InventoryTemplates = inv.TemplateNames()
		}
	}
	v := Validate(cfg, env)
	skippedTags := SkippedTags{}
	if inv != nil {
		var problem string
		if skippedTags, problem = SkippedTagsOf(cfg, InventoryTags(inv)); problem != "" {
			v.Warnings = append(v.Warnings, problem)
		}
		if orphans := orphanedBySkip(inv, skippedTags); orphans != "" {
			v.Warnings = append(v.Warnings, orphans)
		}
	}
	offered := Offered{}
	if inv != nil {
		var problem string
		if offered, problem = OfferedOf(cfg, inv); problem != "" {
			v.Warnings = append(v.Warnings, problem)
		}
	}
	if v.Err == nil {
		v.Warnings = append(v.Warnings, nodePullWarnings(cfg, inv, imageConfig)...)
	}
	eval := Evaluation{Validation: v, Mode: Mode(cfg, v.Err == nil && inv != nil), Inventory: inv, SkippedTags: skippedTags, Offered: offered}
	if imageConfig != nil {
		eval.ImportMode = imagev1.ImportModeType(imageConfig.Status.ImageStreamImportMode)
	}
	if eval.Mode == desired.Managed && imageConfig != nil {
		allow := importallow.New(imageConfig.Spec.AllowedRegistriesForImport, imageConfig.Status.InternalRegistryHostname)
		if allow.Restricted() {
			eval.Samples = importallow.ForSamples(allow, wantedImageStreams(cfg, inv))
		}
	}
	return eval
}

// wantedImageStreams are the imagestreams the Config installs, by name.
func wantedImageStreams(cfg *samplesv1.Config, inv *inventory.Inventory) map[string]*imagev1.ImageStream {
	wants := map[string]*imagev1.ImageStream{}
	skippedTags := skippedTagsIn(cfg, inv)
	for _, name := range inv.ImageStreamNames() {
		if want, skipped, _ := desired.ImageStream(&cfg.Spec, skippedTags.Of(name), inv, "", name); !skipped && want != nil {
			wants[name] = want
		}
	}
	return wants
}

// WantedPullSpecs maps each imagestream the Config installs to the images it imports (after
// spec.samplesRegistry): what the cluster's mirror sets are judged on.
func WantedPullSpecs(cfg *samplesv1.Config, inv *inventory.Inventory) map[string][]string {
	out := map[string][]string{}
	if inv == nil {
		return out
	}
	for name, is := range wantedImageStreams(cfg, inv) {
		out[name] = mirrorsets.PullSpecs(is)
	}
	return out
}

// InventoryPullSpecs maps each imagestream of inv to the images it imports, as shipped: what the
// install decision judges the mirror sets on.
func InventoryPullSpecs(inv *inventory.Inventory) map[string][]string {
	out := map[string][]string{}
	for _, name := range inv.ImageStreamNames() {
		if is, ok := inv.ImageStream(name); ok {
			out[name] = mirrorsets.PullSpecs(is)
		}
	}
	return out
}

// Choice is what a write of one sample depends on: the Config's generation, samplesRegistry and
// architecture, the operator's version, the stream's skipped tags (comma-separated: an annotation
// moves no generation), the usability marks (desired.Marks.String) and the cluster's import mode.
// The writer's intent, the refusal backoff's key and the status memo of verdicts are all this one
// value, so a new setting is added here and in ChoiceOf.
type Choice struct {
	Generation      int64
	SamplesRegistry string
	Architecture    string
	Version         string
	SkippedTags     string
	Marks           string
	ImportMode      imagev1.ImportModeType
}

// ChoiceOf is the Choice of a sample written now by the operator at version, with the tags of it
// the Config skips and its usability marks.
func (e Evaluation) ChoiceOf(cfg *samplesv1.Config, version string, skippedTags []string, marks desired.Marks) Choice {
	return Choice{
		Generation:      cfg.Generation,
		SamplesRegistry: cfg.Spec.SamplesRegistry,
		Architecture:    Architecture(&cfg.Spec),
		Version:         version,
		SkippedTags:     strings.Join(skippedTags, ","),
		Marks:           marks.String(),
		ImportMode:      e.ImportMode,
	}
}

// ChangeSince names what changed since a write made for earlier.
func (c Choice) ChangeSince(earlier Choice) string {
	describe := func(registry string) string {
		if registry == "" {
			return "the inventory's registries"
		}
		return registry
	}
	switch {
	case earlier.SamplesRegistry != c.SamplesRegistry:
		return fmt.Sprintf("spec.samplesRegistry changed: it pulled from %s and now pulls from %s", describe(earlier.SamplesRegistry), describe(c.SamplesRegistry))
	case earlier.Architecture != c.Architecture:
		return fmt.Sprintf("spec.architectures changed from %s to %s", earlier.Architecture, c.Architecture)
	case earlier.SkippedTags != c.SkippedTags:
		return fmt.Sprintf("the Config's %s annotation changed for it: it skipped [%s] and now skips [%s]", SkippedImageStreamTagsAnnotation, earlier.SkippedTags, c.SkippedTags)
	case earlier.ImportMode != c.ImportMode:
		return fmt.Sprintf("the cluster's import mode for imagestreams changed from %q to %q (images.config.openshift.io status)", earlier.ImportMode, c.ImportMode)
	case earlier.Marks != c.Marks:
		return "whether it can work on this cluster changed (" + desired.UnusableAnnotation + ")"
	default:
		return fmt.Sprintf("the Config changed (generation %d, now %d)", earlier.Generation, c.Generation)
	}
}
