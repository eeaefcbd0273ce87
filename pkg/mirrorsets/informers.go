package mirrorsets

import (
	"slices"
	"sync"

	configinformers "github.com/openshift/client-go/config/informers/externalversions/config/v1"
	operatorlisters "github.com/openshift/client-go/operator/listers/operator/v1alpha1"
	"github.com/openshift/library-go/pkg/controller/factory"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/client-go/tools/cache"
)

// Informers are the cluster's mirror sets, all of them (they are cluster-scoped and any name
// counts), as the controllers that read them are given them. Digest and ContentPolicy are nil
// where the inventory names no image by digest: openshift-apiserver applies them to digest
// references only, so watching them would cost every cluster memory for nothing.
type Informers struct {
	Tag           configinformers.ImageTagMirrorSetInformer
	Digest        configinformers.ImageDigestMirrorSetInformer
	ContentPolicy ContentPolicyInformer
	changes       *subscribers
}

// ContentPolicyInformer is the informer of ImageContentSourcePolicies. It is not client-go's
// generated one: that would link the operator.openshift.io clientset, whose scheme registers
// every type of the group at start, for one kind (pkg/operator builds it on the dynamic client).
type ContentPolicyInformer interface {
	Informer() cache.SharedIndexInformer
	Lister() operatorlisters.ImageContentSourcePolicyLister
}

// The operator does without the mirror sets where it may not read them (a payload or bundle of
// another release, whose ClusterRole lacks the rule) or their CRDs are missing: a controller does
// not wait for these informers to sync, it asks Synced and is called back by OnChange.

// NewInformers makes the informers of the three kinds. Call it before their factories start:
// an informer a factory has not made by then is never started.
func NewInformers(tag configinformers.ImageTagMirrorSetInformer, digest configinformers.ImageDigestMirrorSetInformer, contentPolicy ContentPolicyInformer) Informers {
	i := Informers{Tag: tag, Digest: digest, ContentPolicy: contentPolicy, changes: &subscribers{}}
	i.all() // makes each in its factory
	return i
}

func (i Informers) all() []factory.Informer {
	all := []factory.Informer{i.Tag.Informer()}
	if i.Digest != nil {
		all = append(all, i.Digest.Informer())
	}
	if i.ContentPolicy != nil {
		all = append(all, i.ContentPolicy.Informer())
	}
	return all
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
// objects as adds). Every caller shares one handler per informer: each handler an informer has
// costs two goroutines for as long as it runs.
func (i Informers) OnChange(f func()) error {
	return i.changes.add(f, i.all())
}

// subscribers fan one handler per informer out to every OnChange caller.
type subscribers struct {
	mu         sync.Mutex
	fs         []func()
	registered bool
}

func (s *subscribers) add(f func(), informers []factory.Informer) error {
	s.mu.Lock()
	s.fs = append(s.fs, f)
	registered := s.registered
	s.registered = true
	s.mu.Unlock()
	if registered {
		// A handler added now would be told of every object the caches hold; so is f, once.
		f()
		return nil
	}
	notify := func() {
		s.mu.Lock()
		fs := slices.Clone(s.fs)
		s.mu.Unlock()
		for _, f := range fs {
			f()
		}
	}
	h := cache.ResourceEventHandlerFuncs{
		AddFunc:    func(interface{}) { notify() },
		UpdateFunc: func(_, _ interface{}) { notify() },
		DeleteFunc: func(interface{}) { notify() },
	}
	for _, inf := range informers {
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
	if i.Digest != nil {
		if s.Digest, err = i.Digest.Lister().List(labels.Everything()); err != nil {
			return s, err
		}
	}
	if i.ContentPolicy != nil {
		s.ContentPolicy, err = i.ContentPolicy.Lister().List(labels.Everything())
	}
	return s, err
}
