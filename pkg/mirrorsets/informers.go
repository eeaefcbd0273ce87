package mirrorsets

import (
	configinformers "github.com/openshift/client-go/config/informers/externalversions/config/v1"
	operatorinformers "github.com/openshift/client-go/operator/informers/externalversions/operator/v1alpha1"
	"github.com/openshift/library-go/pkg/controller/factory"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/client-go/tools/cache"
)

// Informers are the cluster's mirror sets, all of them (they are cluster-scoped and any name
// counts), as the controllers that read them are given them.
type Informers struct {
	Tag           configinformers.ImageTagMirrorSetInformer
	Digest        configinformers.ImageDigestMirrorSetInformer
	ContentPolicy operatorinformers.ImageContentSourcePolicyInformer
}

// The operator does without the mirror sets where it may not read them (a payload or bundle of
// another release, whose ClusterRole lacks the rule) or their CRDs are missing: a controller does
// not wait for these informers to sync, it asks Synced and is called back by OnChange.

// NewInformers makes the informers of the three kinds. Call it before their factories start:
// an informer a factory has not made by then is never started.
func NewInformers(tag configinformers.ImageTagMirrorSetInformer, digest configinformers.ImageDigestMirrorSetInformer, contentPolicy operatorinformers.ImageContentSourcePolicyInformer) Informers {
	i := Informers{Tag: tag, Digest: digest, ContentPolicy: contentPolicy}
	i.all() // makes each in its factory
	return i
}

func (i Informers) all() []factory.Informer {
	return []factory.Informer{i.Tag.Informer(), i.Digest.Informer(), i.ContentPolicy.Informer()}
}

// Synced: every informer has listed its objects once.
func (i Informers) Synced() bool {
	for _, inf := range i.all() {
		if !inf.HasSynced() {
			return false
		}
	}
	return true
}

// OnChange calls f whenever a mirror set is added, changed or deleted (a list delivers its
// objects as adds).
func (i Informers) OnChange(f func()) error {
	h := cache.ResourceEventHandlerFuncs{
		AddFunc:    func(interface{}) { f() },
		UpdateFunc: func(_, _ interface{}) { f() },
		DeleteFunc: func(interface{}) { f() },
	}
	for _, inf := range i.all() {
		if _, err := inf.AddEventHandler(h); err != nil {
			return err
		}
	}
	return nil
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
