package mirrorsets

import (
	configinformers "github.com/openshift/client-go/config/informers/externalversions/config/v1"
	operatorinformers "github.com/openshift/client-go/operator/informers/externalversions/operator/v1alpha1"
	"github.com/openshift/library-go/pkg/controller/factory"
	"k8s.io/apimachinery/pkg/labels"
)

// Informers are the cluster's mirror sets, all of them (they are cluster-scoped and any name
// counts), as the controllers that read them are given them.
type Informers struct {
	Tag           configinformers.ImageTagMirrorSetInformer
	Digest        configinformers.ImageDigestMirrorSetInformer
	ContentPolicy operatorinformers.ImageContentSourcePolicyInformer
}

// All are the three informers, for a controller to be synced by.
func (i Informers) All() []factory.Informer {
	return []factory.Informer{i.Tag.Informer(), i.Digest.Informer(), i.ContentPolicy.Informer()}
}

// Sets lists the mirror sets from the informers' caches.
func (i Informers) Sets() (Sets, error) {
	var s Sets
	var err error
	if s.Tag, err = i.Tag.Lister().List(labels.Everything()); err != nil {
		return s, err
	}
	if s.Digest, err = i.Digest.Lister().List(labels.Everything()); err != nil {
		return s, err
	}
	s.ContentPolicy, err = i.ContentPolicy.Lister().List(labels.Everything())
	return s, err
}
