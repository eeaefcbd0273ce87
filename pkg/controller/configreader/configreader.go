// Package configreader reads the singleton Config and the cluster's image configuration from
// listers and keeps what they mean (configspec.Evaluate) until either changes: with one queue key
// per sample, one evaluation serves hundreds of syncs.
package configreader

import (
	"sync"

	configv1 "github.com/openshift/api/config/v1"
	samplesv1 "github.com/openshift/api/samples/v1"
	configlisters "github.com/openshift/client-go/config/listers/config/v1"
	sampleslisters "github.com/openshift/client-go/samples/listers/samples/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"

	"github.com/samples-operator-dev/cluster-samples-operator/pkg/configspec"
	"github.com/samples-operator-dev/cluster-samples-operator/pkg/names"
)

// Reader reads the Config named cluster from a lister and says what it means. The
// evaluation is kept for as long as neither the Config nor the image configuration changes: with
// one queue key per sample, one evaluation serves hundreds of syncs.
type Reader struct {
	configs     sampleslisters.ConfigLister
	images      configlisters.ImageLister
	inventories configspec.Inventories

	mu   sync.Mutex
	key  string
	cfg  *samplesv1.Config // the Config of key, as read (WithClusterArchitecture)
	last configspec.Evaluation
}

// New reads through these listers.
func New(configs sampleslisters.ConfigLister, images configlisters.ImageLister, inventories configspec.Inventories) *Reader {
	return &Reader{configs: configs, images: images, inventories: inventories}
}

// Current returns the Config and its evaluation; found is false when there is no Config (nothing
// to do until the bootstrap creates it). A Config that names no architectures is returned as the
// cluster's architecture fills it (a copy): every controller reads it so until the bootstrap's
// write of spec.architectures lands.
func (r *Reader) Current() (cfg *samplesv1.Config, eval configspec.Evaluation, found bool, err error) {
	cfg, err = r.configs.Get(names.ConfigName)
	if apierrors.IsNotFound(err) {
		return nil, configspec.Evaluation{}, false, nil
	}
	if err != nil {
		return nil, configspec.Evaluation{}, false, err
	}
	image, err := imageConfig(r.images)
	if err != nil {
		return nil, configspec.Evaluation{}, false, err
	}
	key := string(cfg.UID) + "/" + cfg.ResourceVersion
	if image != nil {
		key += "/" + image.ResourceVersion
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if key != r.key {
		r.cfg = configspec.WithClusterArchitecture(cfg, r.inventories.GOARCH())
		r.key, r.last = key, configspec.Evaluate(r.cfg, r.inventories, image)
	}
	return r.cfg, r.last, true, nil
}

// imageConfig returns images.config.openshift.io/cluster from a lister, nil when absent.
func imageConfig(lister configlisters.ImageLister) (*configv1.Image, error) {
	if lister == nil {
		return nil, nil
	}
	img, err := lister.Get(names.ClusterConfigName)
	if apierrors.IsNotFound(err) {
		return nil, nil
	}
	return img, err
}
