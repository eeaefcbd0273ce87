package main

import (
	"context"
	"fmt"
	"sync"
	"time"

	configv1 "github.com/openshift/api/config/v1"
	imagev1 "github.com/openshift/api/image/v1"
	samplesv1 "github.com/openshift/api/samples/v1"
	templatev1 "github.com/openshift/api/template/v1"
	configclient "github.com/openshift/client-go/config/clientset/versioned"
	configinformers "github.com/openshift/client-go/config/informers/externalversions"
	imageclient "github.com/openshift/client-go/image/clientset/versioned"
	imageinformers "github.com/openshift/client-go/image/informers/externalversions"
	samplesclient "github.com/openshift/client-go/samples/clientset/versioned"
	samplesinformers "github.com/openshift/client-go/samples/informers/externalversions"
	templateclient "github.com/openshift/client-go/template/clientset/versioned"
	templateinformers "github.com/openshift/client-go/template/informers/externalversions"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/cache"

	"github.com/samples-operator-dev/cluster-samples-operator/pkg/desired"
)

const (
	samplesNamespace = "openshift"
	clusterOperator  = "openshift-samples"
)

// Kinds the tracker watches, as passed to subscribe.
const (
	kindImageStream = "imagestream"
	kindTemplate    = "template"
)

// tracker watches, as the admin, what the bench waits for: the samples, the Config and the
// ClusterOperator. Every wait is driven by watch events, never by polling, and is timed at the
// moment the event that satisfied it arrived.
type tracker struct {
	isStore, tStore, cfgStore, coStore cache.Store
	informers                          []cache.SharedIndexInformer

	mu     sync.Mutex
	states map[int]*stateWaiter
	subs   map[int]*subscription
	nextID int
}

type stateWaiter struct {
	pred func() bool
	done chan time.Time
}

// event is one watch event for one object, with the time the bench saw it.
type event struct {
	obj     metav1.Object
	deleted bool
	at      time.Time
}

type subscription struct {
	kind, name string
	ch         chan event
}

func newTracker(images imageclient.Interface, templates templateclient.Interface, samples samplesclient.Interface, config configclient.Interface) *tracker {
	t := &tracker{states: map[int]*stateWaiter{}, subs: map[int]*subscription{}}
	isInf := imageinformers.NewSharedInformerFactoryWithOptions(images, 0, imageinformers.WithNamespace(samplesNamespace)).Image().V1().ImageStreams().Informer()
	tInf := templateinformers.NewSharedInformerFactoryWithOptions(templates, 0, templateinformers.WithNamespace(samplesNamespace)).Template().V1().Templates().Informer()
	cfgInf := samplesinformers.NewSharedInformerFactory(samples, 0).Samples().V1().Configs().Informer()
	coInf := configinformers.NewSharedInformerFactory(config, 0).Config().V1().ClusterOperators().Informer()
	t.isStore, t.tStore, t.cfgStore, t.coStore = isInf.GetStore(), tInf.GetStore(), cfgInf.GetStore(), coInf.GetStore()
	t.informers = []cache.SharedIndexInformer{isInf, tInf, cfgInf, coInf}
	for i, inf := range t.informers[:4] {
		kind := []string{kindImageStream, kindTemplate, "config", "clusteroperator"}[i]
		_, _ = inf.AddEventHandler(cache.ResourceEventHandlerFuncs{
			AddFunc:    func(obj any) { t.on(kind, obj, false) },
			UpdateFunc: func(_, obj any) { t.on(kind, obj, false) },
			DeleteFunc: func(obj any) { t.on(kind, obj, true) },
		})
	}
	// The cluster configuration singletons the operator watches are only synced, not tracked: on a
	// fresh API server the first watch of a CRD-backed resource gets 429 "storage is
	// (re)initializing" and the client backs off a second. A real cluster's watch caches are warm
	// long before the operator starts, so the bench warms them too rather than time the testbed.
	cluster := configinformers.NewSharedInformerFactory(config, 0).Config().V1()
	t.informers = append(t.informers, cluster.Images().Informer(), cluster.Proxies().Informer(), cluster.Networks().Informer(), cluster.APIServers().Informer())
	return t
}

func (t *tracker) run(ctx context.Context) error {
	for _, inf := range t.informers {
		go inf.Run(ctx.Done())
	}
	syncCtx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	for _, inf := range t.informers {
		if !cache.WaitForCacheSync(syncCtx.Done(), inf.HasSynced) {
			return fmt.Errorf("the bench's informers did not sync")
		}
	}
	return nil
}

func (t *tracker) on(kind string, obj any, deleted bool) {
	now := time.Now()
	if d, ok := obj.(cache.DeletedFinalStateUnknown); ok {
		obj = d.Obj
	}
	m, err := meta.Accessor(obj)
	if err != nil {
		return
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	for _, s := range t.subs {
		if s.kind == kind && s.name == m.GetName() {
			select {
			case s.ch <- event{obj: m, deleted: deleted, at: now}:
			default: // a reader that fell this far behind has timed out
			}
		}
	}
	for id, w := range t.states {
		if w.pred() {
			w.done <- now
			delete(t.states, id)
		}
	}
}

// expect registers pred and returns a channel that receives the time of the first event after
// which pred held (or now, if it already holds).
func (t *tracker) expect(pred func() bool) <-chan time.Time {
	w := &stateWaiter{pred: pred, done: make(chan time.Time, 1)}
	t.mu.Lock()
	defer t.mu.Unlock()
	if pred() {
		w.done <- time.Now()
		return w.done
	}
	t.states[t.nextID] = w
	t.nextID++
	return w.done
}

// await waits for a channel from expect.
func await(ctx context.Context, ch <-chan time.Time, timeout time.Duration, what string) (time.Time, error) {
	select {
	case at := <-ch:
		return at, nil
	case <-time.After(timeout):
		return time.Time{}, fmt.Errorf("%s: not within %s", what, timeout)
	case <-ctx.Done():
		return time.Time{}, ctx.Err()
	}
}

// subscribe delivers every later watch event of one object; cancel ends it.
func (t *tracker) subscribe(kind, name string) (<-chan event, func()) {
	s := &subscription{kind: kind, name: name, ch: make(chan event, 1024)}
	t.mu.Lock()
	id := t.nextID
	t.nextID++
	t.subs[id] = s
	t.mu.Unlock()
	return s.ch, func() {
		t.mu.Lock()
		delete(t.subs, id)
		t.mu.Unlock()
	}
}

func (t *tracker) config() *samplesv1.Config {
	obj, ok, _ := t.cfgStore.GetByKey("cluster")
	if !ok {
		return nil
	}
	return obj.(*samplesv1.Config)
}

func (t *tracker) imageStream(name string) *imagev1.ImageStream {
	obj, ok, _ := t.isStore.GetByKey(samplesNamespace + "/" + name)
	if !ok {
		return nil
	}
	return obj.(*imagev1.ImageStream)
}

func (t *tracker) template(name string) *templatev1.Template {
	obj, ok, _ := t.tStore.GetByKey(samplesNamespace + "/" + name)
	if !ok {
		return nil
	}
	return obj.(*templatev1.Template)
}

func configCondition(cfg *samplesv1.Config, ct samplesv1.ConfigConditionType) string {
	for _, c := range cfg.Status.Conditions {
		if c.Type == ct {
			return string(c.Status)
		}
	}
	return ""
}

// converged: every sample present, managed and at version; the Config Managed at version with
// SamplesExist=True; the ClusterOperator Available=True.
func (t *tracker) converged(version string, imageStreams, templates []string) func() bool {
	return func() bool {
		cfg := t.config()
		if cfg == nil || cfg.Status.ManagementState != "Managed" || cfg.Status.Version != version ||
			configCondition(cfg, samplesv1.SamplesExist) != "True" {
			return false
		}
		obj, ok, _ := t.coStore.GetByKey(clusterOperator)
		if !ok || !coAvailable(obj.(*configv1.ClusterOperator)) {
			return false
		}
		for _, name := range imageStreams {
			is := t.imageStream(name)
			if is == nil || is.Annotations[desired.VersionAnnotation] != version || is.Labels[desired.ManagedLabel] != "true" {
				return false
			}
		}
		for _, name := range templates {
			tp := t.template(name)
			if tp == nil || tp.Annotations[desired.VersionAnnotation] != version || tp.Labels[desired.ManagedLabel] != "true" {
				return false
			}
		}
		return true
	}
}

func coAvailable(co *configv1.ClusterOperator) bool {
	for _, c := range co.Status.Conditions {
		if c.Type == configv1.OperatorAvailable {
			return c.Status == configv1.ConditionTrue
		}
	}
	return false
}

// statusRemoved: the Config's status says Removed.
func (t *tracker) statusRemoved() bool {
	cfg := t.config()
	return cfg != nil && cfg.Status.ManagementState == "Removed"
}

// samplesGone: none of the named samples exists.
func (t *tracker) samplesGone(imageStreams, templates []string) func() bool {
	return func() bool {
		for _, name := range imageStreams {
			if t.imageStream(name) != nil {
				return false
			}
		}
		for _, name := range templates {
			if t.template(name) != nil {
				return false
			}
		}
		return true
	}
}
