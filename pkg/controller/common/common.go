// Package common holds what several controllers read the same way: the singleton Config, the
// inventory it selects, and the verdict on its spec.
package common

import (
	"sync"

	configv1 "github.com/openshift/api/config/v1"
	imagev1 "github.com/openshift/api/image/v1"
	samplesv1 "github.com/openshift/api/samples/v1"
	configlisters "github.com/openshift/client-go/config/listers/config/v1"
	sampleslisters "github.com/openshift/client-go/samples/listers/samples/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"

	"github.com/samples-operator-dev/cluster-samples-operator/pkg/configspec"
	"github.com/samples-operator-dev/cluster-samples-operator/pkg/desired"
	"github.com/samples-operator-dev/cluster-samples-operator/pkg/importallow"
	"github.com/samples-operator-dev/cluster-samples-operator/pkg/inventory"
)

const (
	// SamplesNamespace is where the samples live.
	SamplesNamespace = "openshift"
	// OperatorNamespace is where the operator runs and keeps its ConfigMaps.
	OperatorNamespace = "openshift-cluster-samples-operator"
	// ClusterConfigName is the name of the cluster-wide config.openshift.io singletons.
	ClusterConfigName = "cluster"
)

// Inventories gives the parsed inventory of an architecture (a spec.architectures value).
type Inventories interface {
	Has(arch string) bool
	For(arch string) (*inventory.Inventory, error)
	// GOARCH is the operator's: the cluster's architecture, which a Config that names none
	// selects (configspec.WithClusterArchitecture).
	GOARCH() string
}

// Evaluation is what a Config means right now.
type Evaluation struct {
	Validation configspec.Validation
	Mode       desired.Mode
	// Inventory is the one the Config selects; nil when its architecture has none.
	Inventory *inventory.Inventory
	// RefusedOnCreate maps each imagestream the Config wants but openshift-apiserver would refuse
	// to create, because images.config.openshift.io/cluster spec.allowedRegistriesForImport does
	// not allow its registry, to that registry. Whether the server also refuses the operator's
	// update of an installed one depends on that stream (Blocks).
	RefusedOnCreate map[string]string
	// refused holds the streams of RefusedOnCreate as the Config wants them, and allow the list,
	// for Blocks.
	refused map[string]*imagev1.ImageStream
	allow   *importallow.List
}

// Blocks reports whether openshift-apiserver would refuse the operator's write of imagestream
// name, live being the stream the server holds (nil when there is none), and names the registry
// it refuses. A create is refused when RefusedOnCreate names the stream; an update is refused only
// when the stream as wanted names a repository on a registry the list leaves out that live does
// not already name (ValidateImageStreamUpdateWithWhitelister, importallow.List.ForUpdateOf): an
// installed sample keeps being upgraded and reverted after an admin narrows the list.
func (e Evaluation) Blocks(name string, live *imagev1.ImageStream) (registry string, blocked bool) {
	registry, blocked = e.RefusedOnCreate[name]
	if !blocked || live == nil {
		return registry, blocked
	}
	registry, err := desired.RefusedRegistry(e.refused[name], e.allow.ForUpdateOf(live))
	return registry, err != nil
}

// Blocked maps each imagestream the import allow-list keeps out right now (Blocks) to the
// registry it refuses, get reading the stream the server holds. The status and the metrics name
// these, and the samples controller leaves them as they are.
func (e Evaluation) Blocked(get func(name string) (*imagev1.ImageStream, error)) (map[string]string, error) {
	if len(e.RefusedOnCreate) == 0 {
		return nil, nil
	}
	blocked := map[string]string{}
	for name := range e.RefusedOnCreate {
		live, err := get(name)
		if apierrors.IsNotFound(err) {
			live = nil
		} else if err != nil {
			return nil, err
		}
		if registry, ok := e.Blocks(name, live); ok {
			blocked[name] = registry
		}
	}
	return blocked, nil
}

// Evaluate validates a Config against the inventories and the cluster's image configuration and
// says which mode it puts the samples in.
func Evaluate(cfg *samplesv1.Config, inventories Inventories, imageConfig *configv1.Image) Evaluation {
	env := configspec.Environment{
		HasInventory:     inventories.Has,
		ValidateRegistry: inventory.ValidateRegistry,
	}
	var inv *inventory.Inventory
	if arch := configspec.Architecture(&cfg.Spec); inventories.Has(arch) {
		if loaded, err := inventories.For(arch); err == nil {
			inv = loaded
			env.InventoryImageStreams = inv.ImageStreamNames()
			env.InventoryTemplates = inv.TemplateNames()
		}
	}
	v := configspec.Validate(cfg, env)
	if v.Err == nil {
		v.Warnings = append(v.Warnings, nodePullWarnings(cfg, inv, imageConfig)...)
	}
	eval := Evaluation{Validation: v, Mode: configspec.Mode(cfg, v.Err == nil && inv != nil), Inventory: inv}
	if eval.Mode == desired.Managed && imageConfig != nil {
		eval.allow = importallow.New(imageConfig.Spec.AllowedRegistriesForImport, imageConfig.Status.InternalRegistryHostname)
		eval.RefusedOnCreate, eval.refused = refusedOnCreate(cfg, inv, eval.allow)
	}
	return eval
}

// refusedOnCreate applies the cluster's import allow-list to every imagestream the Config wants.
func refusedOnCreate(cfg *samplesv1.Config, inv *inventory.Inventory, allow *importallow.List) (map[string]string, map[string]*imagev1.ImageStream) {
	if !allow.Restricted() {
		return nil, nil
	}
	registries, wants := map[string]string{}, map[string]*imagev1.ImageStream{}
	for _, name := range inv.ImageStreamNames() {
		want, skipped, _ := desired.ImageStream(&cfg.Spec, inv, "", name)
		if skipped || want == nil {
			continue
		}
		if registry, err := desired.RefusedRegistry(want, allow); err != nil {
			registries[name], wants[name] = registry, want
		}
	}
	return registries, wants
}

// ConfigReader reads the Config named cluster from a lister and says what it means. The
// evaluation is kept for as long as neither the Config nor the image configuration changes: with
// one queue key per sample, one evaluation serves hundreds of syncs.
type ConfigReader struct {
	configs     sampleslisters.ConfigLister
	images      configlisters.ImageLister
	inventories Inventories

	mu   sync.Mutex
	key  string
	cfg  *samplesv1.Config // the Config of key, as read (WithClusterArchitecture)
	last Evaluation
}

// NewConfigReader reads through these listers.
func NewConfigReader(configs sampleslisters.ConfigLister, images configlisters.ImageLister, inventories Inventories) *ConfigReader {
	return &ConfigReader{configs: configs, images: images, inventories: inventories}
}

// Current returns the Config and its evaluation; found is false when there is no Config (nothing
// to do until the bootstrap creates it). A Config that names no architectures is returned as the
// cluster's architecture fills it (a copy): every controller reads it so until the bootstrap's
// write of spec.architectures lands.
func (r *ConfigReader) Current() (cfg *samplesv1.Config, eval Evaluation, found bool, err error) {
	cfg, err = r.configs.Get(configspec.ConfigName)
	if apierrors.IsNotFound(err) {
		return nil, Evaluation{}, false, nil
	}
	if err != nil {
		return nil, Evaluation{}, false, err
	}
	image, err := imageConfig(r.images)
	if err != nil {
		return nil, Evaluation{}, false, err
	}
	key := string(cfg.UID) + "/" + cfg.ResourceVersion
	if image != nil {
		key += "/" + image.ResourceVersion
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if key != r.key {
		r.cfg = configspec.WithClusterArchitecture(cfg, r.inventories.GOARCH())
		r.key, r.last = key, Evaluate(r.cfg, r.inventories, image)
	}
	return r.cfg, r.last, true, nil
}

// imageConfig returns images.config.openshift.io/cluster from a lister, nil when absent.
func imageConfig(lister configlisters.ImageLister) (*configv1.Image, error) {
	if lister == nil {
		return nil, nil
	}
	img, err := lister.Get(ClusterConfigName)
	if apierrors.IsNotFound(err) {
		return nil, nil
	}
	return img, err
}
