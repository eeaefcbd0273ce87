package operator

import (
	"context"
	"net/http"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
	coreinformers "k8s.io/client-go/informers/core/v1"
	authenticationv1client "k8s.io/client-go/kubernetes/typed/authentication/v1"
	authorizationv1client "k8s.io/client-go/kubernetes/typed/authorization/v1"
	coordinationv1client "k8s.io/client-go/kubernetes/typed/coordination/v1"
	corev1client "k8s.io/client-go/kubernetes/typed/core/v1"
	corelisters "k8s.io/client-go/listers/core/v1"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/util/flowcontrol"
)

// kubeClients are the clients of the Kubernetes API groups the operator uses.
// kubernetes.NewForConfig builds one for each of the 50-odd groups Kubernetes serves: at start
// that runs code, and allocates, in every one of them, and those pages of the binary stay
// resident for the life of the process although the operator never calls them again.
type kubeClients struct {
	core          corev1client.CoreV1Interface
	coordination  coordinationv1client.CoordinationV1Interface
	authorization authorizationv1client.AuthorizationV1Interface
	// scraperTokens and scraperAccess review the metrics server's callers (see newKubeClients).
	scraperTokens authenticationv1client.TokenReviewInterface
	scraperAccess authorizationv1client.SubjectAccessReviewInterface
}

// Scrapers' token reviews have a rate limit of their own: every request to the metrics port with
// a new bearer token costs a TokenReview, and a flood of made-up tokens must not spend the budget
// the operator's own writes need.
const (
	scraperReviewQPS   = 10
	scraperReviewBurst = 20
)

// A renewal is a get and an update each retry period (26 s by default, half a second at the
// least a test sets): this bounds the lease's requests without ever making one wait.
const (
	leaseQPS   = 5
	leaseBurst = 10
)

func newKubeClients(cfg *rest.Config) (*kubeClients, error) {
	// One HTTP client, and so one connection pool, for the operator's own clients, as a clientset shares one.
	httpClient, err := rest.HTTPClientFor(cfg)
	if err != nil {
		return nil, err
	}
	k, err := newKubeClientsFor(cfg, httpClient)
	if err != nil {
		return nil, err
	}
	// ... and on a connection of their own, so that they do not queue the operator's requests
	// behind theirs either.
	reviewCfg := rest.CopyConfig(cfg)
	reviewCfg.QPS, reviewCfg.Burst = scraperReviewQPS, scraperReviewBurst
	reviewCfg.RateLimiter = flowcontrol.NewTokenBucketRateLimiter(scraperReviewQPS, scraperReviewBurst)
	reviewHTTP, err := rest.HTTPClientFor(reviewCfg)
	if err != nil {
		return nil, err
	}
	authentication, err := authenticationv1client.NewForConfigAndClient(reviewCfg, reviewHTTP)
	if err != nil {
		return nil, err
	}
	authorization, err := authorizationv1client.NewForConfigAndClient(reviewCfg, reviewHTTP)
	if err != nil {
		return nil, err
	}
	k.scraperTokens, k.scraperAccess = authentication.TokenReviews(), authorization.SubjectAccessReviews()
	return k, nil
}

func newKubeClientsFor(cfg *rest.Config, httpClient *http.Client) (*kubeClients, error) {
	k := &kubeClients{}
	var err error
	// Core objects in protobuf: a Node, a ConfigMap or a Secret decodes from it with a fraction
	// of the allocations of JSON, and the Nodes informer's first list of a large cluster is
	// the operator's largest read.
	core := rest.CopyConfig(cfg)
	core.ContentType = runtime.ContentTypeProtobuf
	core.AcceptContentTypes = runtime.ContentTypeProtobuf + "," + runtime.ContentTypeJSON
	if k.core, err = corev1client.NewForConfigAndClient(core, httpClient); err != nil {
		return nil, err
	}
	// The lease has a token bucket of its own: a renewal that waits behind a burst of the
	// operator's reads and writes (a first install, discovery of every group) past the renew
	// deadline costs the operator its leadership, and so the process, for work it was doing.
	leaseCfg := rest.CopyConfig(cfg)
	leaseCfg.QPS, leaseCfg.Burst = leaseQPS, leaseBurst
	leaseCfg.RateLimiter = flowcontrol.NewTokenBucketRateLimiter(leaseQPS, leaseBurst)
	if k.coordination, err = coordinationv1client.NewForConfigAndClient(leaseCfg, httpClient); err != nil {
		return nil, err
	}
	if k.authorization, err = authorizationv1client.NewForConfigAndClient(cfg, httpClient); err != nil {
		return nil, err
	}
	return k, nil
}

func (k *kubeClients) CoreV1() corev1client.CoreV1Interface { return k.core }
func (k *kubeClients) CoordinationV1() coordinationv1client.CoordinationV1Interface {
	return k.coordination
}
func (k *kubeClients) AuthorizationV1() authorizationv1client.AuthorizationV1Interface {
	return k.authorization
}

// coreInformers starts the ConfigMap and Secret informers of one namespace from the core client
// alone: client-go's shared informer factory wants the whole clientset, and its ForResource
// links an informer and a lister for every kind of every group into the binary.
type coreInformers struct {
	client    corev1client.CoreV1Interface
	namespace string
	resync    time.Duration
	transform cache.TransformFunc
	tweak     func(*metav1.ListOptions)

	mu        sync.Mutex
	informers []cache.SharedIndexInformer
	started   int
	stopping  bool
	running   sync.WaitGroup
}

func newCoreInformers(client corev1client.CoreV1Interface, namespace string, resync time.Duration, transform cache.TransformFunc,
	tweak func(*metav1.ListOptions)) *coreInformers {
	return &coreInformers{client: client, namespace: namespace, resync: resync, transform: transform, tweak: tweak}
}

func (f *coreInformers) options(o metav1.ListOptions) metav1.ListOptions {
	if f.tweak != nil {
		f.tweak(&o)
	}
	return o
}

func (f *coreInformers) newInformer(example runtime.Object, list func(context.Context, metav1.ListOptions) (runtime.Object, error),
	watchFn func(context.Context, metav1.ListOptions) (watch.Interface, error)) cache.SharedIndexInformer {
	lw := &cache.ListWatch{
		ListWithContextFunc: func(ctx context.Context, o metav1.ListOptions) (runtime.Object, error) {
			return list(ctx, f.options(o))
		},
		WatchFuncWithContext: func(ctx context.Context, o metav1.ListOptions) (watch.Interface, error) {
			return watchFn(ctx, f.options(o))
		},
	}
	informer := cache.NewSharedIndexInformer(cache.ToListWatcherWithWatchListSemantics(lw, f.client), example, f.resync,
		cache.Indexers{cache.NamespaceIndex: cache.MetaNamespaceIndexFunc})
	if f.transform != nil {
		_ = informer.SetTransform(f.transform) // cannot fail before the informer runs
	}
	f.mu.Lock()
	f.informers = append(f.informers, informer)
	f.mu.Unlock()
	return informer
}

// ConfigMaps returns a new informer of the namespace's ConfigMaps; call it once.
func (f *coreInformers) ConfigMaps() coreinformers.ConfigMapInformer {
	c := f.client.ConfigMaps(f.namespace)
	i := f.newInformer(&corev1.ConfigMap{},
		func(ctx context.Context, o metav1.ListOptions) (runtime.Object, error) { return c.List(ctx, o) }, c.Watch)
	return configMapInformer{i}
}

// Secrets returns a new informer of the namespace's Secrets; call it once.
func (f *coreInformers) Secrets() coreinformers.SecretInformer {
	c := f.client.Secrets(f.namespace)
	i := f.newInformer(&corev1.Secret{},
		func(ctx context.Context, o metav1.ListOptions) (runtime.Object, error) { return c.List(ctx, o) }, c.Watch)
	return secretInformer{i}
}

// ResourceQuotas returns a new informer of the namespace's ResourceQuotas; call it once.
func (f *coreInformers) ResourceQuotas() cache.SharedIndexInformer {
	c := f.client.ResourceQuotas(f.namespace)
	return f.newInformer(&corev1.ResourceQuota{},
		func(ctx context.Context, o metav1.ListOptions) (runtime.Object, error) { return c.List(ctx, o) }, c.Watch)
}

// LimitRanges returns a new informer of the namespace's LimitRanges; call it once.
func (f *coreInformers) LimitRanges() cache.SharedIndexInformer {
	c := f.client.LimitRanges(f.namespace)
	return f.newInformer(&corev1.LimitRange{},
		func(ctx context.Context, o metav1.ListOptions) (runtime.Object, error) { return c.List(ctx, o) }, c.Watch)
}

// Start runs the informers not yet running until stop is closed.
func (f *coreInformers) Start(stop <-chan struct{}) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.stopping {
		return
	}
	for _, informer := range f.informers[f.started:] {
		f.running.Go(func() { informer.Run(stop) })
	}
	f.started = len(f.informers)
}

// Shutdown waits for the started informers to stop (their stop channel must be closed).
func (f *coreInformers) Shutdown() {
	f.mu.Lock()
	f.stopping = true
	f.mu.Unlock()
	f.running.Wait()
}

type configMapInformer struct{ informer cache.SharedIndexInformer }

func (i configMapInformer) Informer() cache.SharedIndexInformer { return i.informer }
func (i configMapInformer) Lister() corelisters.ConfigMapLister {
	return corelisters.NewConfigMapLister(i.informer.GetIndexer())
}

type secretInformer struct{ informer cache.SharedIndexInformer }

func (i secretInformer) Informer() cache.SharedIndexInformer { return i.informer }
func (i secretInformer) Lister() corelisters.SecretLister {
	return corelisters.NewSecretLister(i.informer.GetIndexer())
}
