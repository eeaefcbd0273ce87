// Package mirrorsetinformers reads the cluster's mirror sets (what they mean is pkg/mirrorsets')
// for the controllers. The operator does without a kind of mirror set it may not read (a payload
// or bundle of another release, whose ClusterRole lacks the rule) or whose CRD is missing: a
// controller does not wait for these informers to sync, it asks Settled and is called back by
// OnChange, and decides with the kinds that can be read.
package mirrorsetinformers

import (
	"context"
	"fmt"
	"slices"
	"sync"

	configinformers "github.com/openshift/client-go/config/informers/externalversions/config/v1"
	operatorinformers "github.com/openshift/client-go/operator/informers/externalversions/operator/v1alpha1"
	"github.com/openshift/library-go/pkg/controller/factory"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/client-go/tools/cache"

	"github.com/samples-operator-dev/cluster-samples-operator/pkg/mirrorsets"
)

// Informers are the cluster's mirror sets, all of them (they are cluster-scoped and any name
// counts), as the controllers that read them are given them. Digest and ContentPolicy are nil
// where the inventory names no image by digest: openshift-apiserver applies them to digest
// references only, so watching them would cost every cluster memory for nothing.
type Informers struct {
	Tag           configinformers.ImageTagMirrorSetInformer
	Digest        configinformers.ImageDigestMirrorSetInformer
	ContentPolicy operatorinformers.ImageContentSourcePolicyInformer
	changes       *subscribers
	// unreadable are the kinds whose list the server refuses for good (no RBAC, no CRD).
	unreadable *listErrors
}

// New makes the informers of the three kinds. Call it before their factories start: an informer
// a factory has not made by then is never started, and its list error handler is set only before.
func New(tag configinformers.ImageTagMirrorSetInformer, digest configinformers.ImageDigestMirrorSetInformer, contentPolicy operatorinformers.ImageContentSourcePolicyInformer) Informers {
	i := Informers{Tag: tag, Digest: digest, ContentPolicy: contentPolicy, changes: &subscribers{}, unreadable: &listErrors{byKind: map[string]error{}}}
	for _, k := range i.kinds() {
		kind := k.kind
		// A kind that cannot be listed is reported (and subscribers told) rather than waited
		// for: ImageContentSourcePolicy's CRD is deprecated, and an older ClusterRole lacks it.
		_ = k.informer.SetWatchErrorHandlerWithContext(func(ctx context.Context, r *cache.Reflector, err error) {
			cache.DefaultWatchErrorHandler(ctx, r, err)
			if i.unreadable.set(kind, err) {
				i.changes.notify()
			}
		})
	}
	return i
}

// kindInformer is one kind's informer.
type kindInformer struct {
	kind     string
	informer cache.SharedIndexInformer
}

func (i Informers) kinds() []kindInformer {
	out := []kindInformer{{mirrorsets.KindTag, i.Tag.Informer()}}
	if i.Digest != nil {
		out = append(out, kindInformer{mirrorsets.KindDigest, i.Digest.Informer()})
	}
	if i.ContentPolicy != nil {
		out = append(out, kindInformer{mirrorsets.KindContentPolicy, i.ContentPolicy.Informer()})
	}
	return out
}

func (i Informers) all() []factory.Informer {
	var all []factory.Informer
	for _, k := range i.kinds() {
		all = append(all, k.informer)
	}
	return all
}

// Settled: every kind has been listed, or the server refuses to list it for good (forbidden,
// not served). Decide then, with the kinds that can be read (Sets), and say which cannot
// (Unreadable).
func (i Informers) Settled() bool {
	for _, k := range i.kinds() {
		if !k.informer.HasSynced() && i.unreadable.get(k.kind) == nil {
			return false
		}
	}
	return true
}

// Unreadable names the kinds that cannot be listed, with the server's answer ("" for none).
func (i Informers) Unreadable() []string {
	var out []string
	for _, k := range i.kinds() {
		if err := i.unreadable.get(k.kind); err != nil && !k.informer.HasSynced() {
			out = append(out, fmt.Sprintf("%s (%v)", k.kind, err))
		}
	}
	return out
}

// NotifyWhenSettled tells the OnChange subscribers once every kind has settled, so that a
// decision waiting for the mirror sets is taken as soon as they are read: a kind listed empty
// delivers no event, and client-go has no callback for a first sync. The wait is the library's
// cache-sync wait, run once per start instead of each waiting controller looking again later.
func (i Informers) NotifyWhenSettled(ctx context.Context) {
	if cache.WaitForCacheSync(ctx.Done(), i.Settled) {
		i.changes.notify()
	}
}

// listErrors keeps, per kind, the last list error that will not go away by itself.
type listErrors struct {
	mu     sync.Mutex
	byKind map[string]error
}

// set records err if it is for good, and says whether the kind became unreadable.
func (l *listErrors) set(kind string, err error) bool {
	if !apierrors.IsForbidden(err) && !apierrors.IsNotFound(err) && !apierrors.IsMethodNotSupported(err) {
		return false
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	first := l.byKind[kind] == nil
	l.byKind[kind] = err
	return first
}

func (l *listErrors) get(kind string) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.byKind[kind]
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
	notify := s.notify
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

// notify calls every subscriber.
func (s *subscribers) notify() {
	s.mu.Lock()
	fs := slices.Clone(s.fs)
	s.mu.Unlock()
	for _, f := range fs {
		f()
	}
}

// Sets lists the mirror sets from the caches of the kinds that have been listed.
func (i Informers) Sets() (mirrorsets.Sets, error) {
	var s mirrorsets.Sets
	var err error
	if i.Tag.Informer().HasSynced() {
		if s.Tag, err = i.Tag.Lister().List(labels.Everything()); err != nil {
			return s, err
		}
	}
	if i.Digest != nil && i.Digest.Informer().HasSynced() {
		if s.Digest, err = i.Digest.Lister().List(labels.Everything()); err != nil {
			return s, err
		}
	}
	if i.ContentPolicy != nil && i.ContentPolicy.Informer().HasSynced() {
		s.ContentPolicy, err = i.ContentPolicy.Lister().List(labels.Everything())
	}
	return s, err
}
