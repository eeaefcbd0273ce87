package configspec

import (
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
	eval := Evaluation{Validation: v, Mode: Mode(cfg, v.Err == nil && inv != nil), Inventory: inv, SkippedTags: skippedTags, Offered: offered}
	if imageConfig != nil {
		eval.ImportMode = imagev1.ImportModeType(imageConfig.Status.ImageStreamImportMode)
	}
	if v.Err == nil {
		eval.Validation.Warnings = append(eval.Validation.Warnings, nodePullWarnings(cfg, eval, imageConfig)...)
	}
	if eval.Mode == desired.Managed && imageConfig != nil {
		allow := importallow.New(imageConfig.Spec.AllowedRegistriesForImport, imageConfig.Status.InternalRegistryHostname)
		if allow.Restricted() {
			eval.Samples = importallow.ForSamples(allow, eval.wantedImageStreams(cfg))
		}
	}
	return eval
}

// wantedImageStreams are the imagestreams the Config installs, by name; none without an inventory.
func (e Evaluation) wantedImageStreams(cfg *samplesv1.Config) map[string]*imagev1.ImageStream {
	wants := map[string]*imagev1.ImageStream{}
	if e.Inventory == nil {
		return wants
	}
	for _, name := range e.Inventory.ImageStreamNames() {
		// want is nil for a skipped stream only: name is the inventory's.
		if want, _, _ := desired.ImageStream(&cfg.Spec, e.ChoiceOf(cfg, "", name, nil), e.Inventory, name); want != nil {
			wants[name] = want
		}
	}
	return wants
}

// WantedPullSpecs maps each imagestream the Config installs to the images it imports (after
// spec.samplesRegistry): what the cluster's mirror sets are judged on.
func (e Evaluation) WantedPullSpecs(cfg *samplesv1.Config) map[string][]string {
	out := map[string][]string{}
	for name, is := range e.wantedImageStreams(cfg) {
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

// ChoiceOf is the desired.Choice of a sample written now by the operator at version, with its
// usability marks; stream is the sample's name when it is an imagestream, "" for a template.
func (e Evaluation) ChoiceOf(cfg *samplesv1.Config, version, stream string, marks desired.Marks) desired.Choice {
	return desired.Choice{
		Generation:      cfg.Generation,
		SamplesRegistry: cfg.Spec.SamplesRegistry,
		Architecture:    Architecture(&cfg.Spec),
		Version:         version,
		SkippedTags:     strings.Join(e.SkippedTags.Of(stream), ","),
		Marks:           marks.String(),
		ImportMode:      e.ImportMode,
	}
}
