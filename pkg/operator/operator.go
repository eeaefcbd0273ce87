// Package operator wires the clients, informers and controllers together and runs them. It is the
// only place that knows every controller.
package operator

import (
	"context"
	"fmt"
	"sync"
	"time"

	imagev1 "github.com/openshift/api/image/v1"
	templatev1 "github.com/openshift/api/template/v1"
	configclient "github.com/openshift/client-go/config/clientset/versioned"
	configinformers "github.com/openshift/client-go/config/informers/externalversions"
	configv1informers "github.com/openshift/client-go/config/informers/externalversions/config/v1"
	configlisters "github.com/openshift/client-go/config/listers/config/v1"
	imageclient "github.com/openshift/client-go/image/clientset/versioned"
	imageinformers "github.com/openshift/client-go/image/informers/externalversions"
	imagelisters "github.com/openshift/client-go/image/listers/image/v1"
	operatorclient "github.com/openshift/client-go/operator/clientset/versioned"
	operatorinformers "github.com/openshift/client-go/operator/informers/externalversions"
	operatorv1alpha1informers "github.com/openshift/client-go/operator/informers/externalversions/operator/v1alpha1"
	samplesclient "github.com/openshift/client-go/samples/clientset/versioned"
	samplesinformers "github.com/openshift/client-go/samples/informers/externalversions"
	sampleslisters "github.com/openshift/client-go/samples/listers/samples/v1"
	templateclient "github.com/openshift/client-go/template/clientset/versioned"
	templateinformers "github.com/openshift/client-go/template/informers/externalversions"
	templatelisters "github.com/openshift/client-go/template/listers/template/v1"
	"github.com/openshift/library-go/pkg/controller/factory"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/client-go/dynamic"
	corev1client "k8s.io/client-go/kubernetes/typed/core/v1"
	corelisters "k8s.io/client-go/listers/core/v1"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/util/flowcontrol"
	"k8s.io/klog/v2"
	"k8s.io/utils/clock"

	"github.com/samples-operator-dev/cluster-samples-operator/pkg/access"
	"github.com/samples-operator-dev/cluster-samples-operator/pkg/clusteroperator"
	"github.com/samples-operator-dev/cluster-samples-operator/pkg/configspec"
	"github.com/samples-operator-dev/cluster-samples-operator/pkg/controller/accesscontrol"
	"github.com/samples-operator-dev/cluster-samples-operator/pkg/controller/availability"
	"github.com/samples-operator-dev/cluster-samples-operator/pkg/controller/bootstrap"
	"github.com/samples-operator-dev/cluster-samples-operator/pkg/controller/clusteroperatorcontrol"
	"github.com/samples-operator-dev/cluster-samples-operator/pkg/controller/configreader"
	"github.com/samples-operator-dev/cluster-samples-operator/pkg/controller/configstatuscontrol"
	"github.com/samples-operator-dev/cluster-samples-operator/pkg/controller/finalizer"
	"github.com/samples-operator-dev/cluster-samples-operator/pkg/controller/importscontrol"
	"github.com/samples-operator-dev/cluster-samples-operator/pkg/controller/mirrorsetinformers"
	"github.com/samples-operator-dev/cluster-samples-operator/pkg/controller/samples"
	"github.com/samples-operator-dev/cluster-samples-operator/pkg/controller/tagmap"
	"github.com/samples-operator-dev/cluster-samples-operator/pkg/controller/usabilitycontrol"
	"github.com/samples-operator-dev/cluster-samples-operator/pkg/desired"
	"github.com/samples-operator-dev/cluster-samples-operator/pkg/imports"
	"github.com/samples-operator-dev/cluster-samples-operator/pkg/metrics"
	"github.com/samples-operator-dev/cluster-samples-operator/pkg/names"
	"github.com/samples-operator-dev/cluster-samples-operator/pkg/refusal"
	"github.com/samples-operator-dev/cluster-samples-operator/pkg/samplewriter"
	"github.com/samples-operator-dev/cluster-samples-operator/pkg/standdown"
)

// Options configures a running operator.
type Options struct {
	// Version is the operator version (RELEASE_VERSION) stamped on every sample.
	Version string
	// GOARCH selects the default Config's architecture.
	GOARCH string
	// InventoryDir loads the inventory from disk instead of the binary; OKD picks okd-x86_64.
	InventoryDir string
	OKD          bool
	// RegistryProbe and ProbeTarget decide, at bootstrap, whether the samples registry answers.
	RegistryProbe bootstrap.Probe
	ProbeTarget   string
	// MirrorProbe dials, instead, the mirrors of the cluster's mirror sets (and the registries no
	// mirror serves) when mirror sets serve the samples' images. Nil refuses every address.
	MirrorProbe bootstrap.AddressProbe
	// RegistryRecheckInterval is the first wait before probing again a registry that did not answer
	// at install, doubled after each failure up to 30 minutes (default 1 minute).
	RegistryRecheckInterval time.Duration
	// SampleWorkers bounds how many sample writes run at once.
	SampleWorkers int
	// Resync is the informers' resync period.
	Resync time.Duration
	// QPS and Burst bound the operator's requests to the API server.
	QPS   float32
	Burst int
	// ImportRetryInterval is the longest wait between two retries of a stream's failed imports
	// (0 means DefaultRetryInterval of pkg/controller/importscontrol): they start about 30 s after the failure and
	// double up to it.
	ImportRetryInterval time.Duration
	// PullSecretRolloutWait is how long after a change of openshift-config/pull-secret the
	// failing imports are retried a second time (0 means PullSecretRolloutWait).
	PullSecretRolloutWait time.Duration
	// DegradedGrace is how long a refused write or an unavailable API lasts before the
	// ClusterOperator is Degraded; 0 means clusteroperator.DegradedGrace, what OpenShift expects.
	// Tests shorten it to see the grace run out.
	DegradedGrace time.Duration
	// RevertWindow is the window of the per-sample revert budget (samplewriter.RevertBudget reverts);
	// 0 means samplewriter.RevertWindow.
	RevertWindow time.Duration
	// LeaderElection decides which replica writes.
	LeaderElection LeaderElection
	// MetricsBindAddress serves /metrics, /healthz and /readyz over HTTPS with the certificate in
	// TLSCertFile and TLSKeyFile, or with one made in memory when TLSSelfSigned is set (outside a
	// cluster, where no service CA issues one); empty means no metrics server.
	MetricsBindAddress string
	TLSCertFile        string
	TLSKeyFile         string
	TLSSelfSigned      bool
	// HealthProbeBindAddress, with MetricsBindAddress, serves /healthz and /readyz again in plain
	// HTTP on a listener of its own, where no metrics client can crowd out the kubelet's probes.
	HealthProbeBindAddress string
	// OperatorConditionName is what OLM puts in OPERATOR_CONDITION_NAME: the name of this copy's
	// CSV and OperatorCondition. Set, the operator knows OLM installed it: it stands down while
	// the cluster-version operator runs its own samples operator, and tells administrators to
	// bind the bundle's ClusterRoles.
	OperatorConditionName string
}

// The defaults of Options, which the command's flags show.
const (
	DefaultSampleWorkers = 8
	DefaultResync        = 10 * time.Minute
	// The one burst this operator makes is the initial sync (and an upgrade or a return from
	// Removed): one write per sample, about 50 on a cluster, and 450 in the 10x benchmark. A
	// burst of 400 lets that go at the API server's pace; 200 per second after it keeps a hot
	// loop, should one ever happen, from flooding the API server. At steady state it sends
	// nothing at all.
	DefaultQPS   = 200
	DefaultBurst = 400
)

// Defaults fills in what Options leaves zero.
func (o *Options) Defaults() {
	if o.SampleWorkers <= 0 {
		o.SampleWorkers = DefaultSampleWorkers
	}
	if o.PullSecretRolloutWait <= 0 {
		o.PullSecretRolloutWait = PullSecretRolloutWait
	}
	if o.Resync <= 0 {
		o.Resync = DefaultResync
	}
	if o.QPS <= 0 {
		o.QPS = DefaultQPS
	}
	if o.Burst <= 0 {
		o.Burst = DefaultBurst
	}
}

// Run starts the operator and blocks until ctx is cancelled. It refuses to start when the
// inventory of its own architecture does not load, naming the file at fault.
func Run(ctx context.Context, restConfig *rest.Config, opts Options) error {
	opts.Defaults()
	inventories := newInventories(opts.InventoryDir, opts.OKD, opts.GOARCH)
	if arch := configspec.ArchitectureForGOARCH(opts.GOARCH); arch != "" {
		if _, err := inventories.For(arch); err != nil && opts.InventoryDir != "" {
			return fmt.Errorf("refusing to start: %w", err)
		} else if err != nil {
			klog.InfoS("No inventory for this architecture; the default Config will be Removed", "goarch", opts.GOARCH, "reason", err)
		}
	}

	cfg := rest.CopyConfig(restConfig)
	cfg.QPS, cfg.Burst = opts.QPS, opts.Burst
	// One token bucket for every client built from cfg, so that --kube-api-qps bounds the
	// operator as a whole, not each API group's client separately.
	cfg.RateLimiter = flowcontrol.NewTokenBucketRateLimiter(opts.QPS, opts.Burst)
	opts.LeaderElection.defaults()
	// The identity in the user agent tells replicas apart in the API server's audit log.
	cfg.UserAgent = fmt.Sprintf("cluster-samples-operator/%s (%s)", opts.Version, opts.LeaderElection.Identity)
	kube, err := newKubeClients(cfg)
	if err != nil {
		return err
	}
	return run(ctx, cfg, kube, inventories, opts)
}

// dropManagedFields keeps managedFields out of the informer caches: the operator never reads
// them, and on every sample they are a large share of the object. An update built from a cached
// object without them leaves the server's record of field managers as it is.
func dropManagedFields(obj interface{}) (interface{}, error) {
	if m, ok := obj.(metav1.Object); ok {
		m.SetManagedFields(nil)
	}
	return obj, nil
}

// trimTemplate keeps of a template, in the cache, what the controllers compare: its metadata and
// digests of its content (desired.TrimTemplate). The objects of the templates are most of what
// the operator would otherwise hold in memory; the samples controller reads the whole template
// before it updates one.
func trimTemplate(obj interface{}) (interface{}, error) {
	if t, ok := obj.(*templatev1.Template); ok {
		desired.TrimTemplate(t)
	}
	return dropManagedFields(obj)
}

// newMetricsServer builds the collector (reading only informer caches) and its HTTPS server, whose
// scrapes are authenticated and authorized by the API server.
func newMetricsServer(opts Options, kube *kubeClients, inventories *inventories, configs sampleslisters.ConfigLister,
	imageConfigs configlisters.ImageLister, imageStreams imagelisters.ImageStreamNamespaceLister,
	templates templatelisters.TemplateNamespaceLister, configMaps corelisters.ConfigMapLister,
	secrets corelisters.SecretLister, troubles troubleReport, ready func() bool, verdicts *usabilitycontrol.Verdicts) (*metrics.Server, *metrics.Collector, error) {
	configReader := configreader.New(configs, imageConfigs, inventories)
	collector := metrics.NewCollector(metrics.Inputs{
		Configs:    configs,
		ConfigMaps: configMaps,
		Secrets:    secrets,
		ImageStreams: func(arch string) ([]string, error) {
			inv, err := inventories.For(arch)
			if err != nil {
				return nil, err
			}
			return inv.ImageStreamNames(), nil
		},
		Degraded: func() bool {
			cfg, err := configs.Get(names.ConfigName)
			return err == nil && clusteroperator.Degraded(cfg, opts.Version, troubles.Observed(), time.Now())
		},
		Refused: func() []metrics.RefusedSample {
			records, _, _ := troubles.refusals.Reported()
			out := make([]metrics.RefusedSample, 0, len(records))
			for _, r := range records {
				out = append(out, metrics.RefusedSample{Kind: r.Kind, Name: r.Name})
			}
			return out
		},
		Unusable: verdicts.All,
		Retired: func() []desired.Retired {
			owned := labels.SelectorFromSet(labels.Set{desired.ManagedLabel: "true"})
			streams, _ := imageStreams.List(owned) // a lister fails only for a bad selector
			tmpls, _ := templates.List(owned)
			return desired.RetiredOf(streams, tmpls)
		},
		Blocked: func() map[string]string {
			_, eval, found, err := configReader.Current()
			if err != nil || !found {
				return nil
			}
			return eval.Blocked(func(name string) *imagev1.ImageStream {
				is, _ := imageStreams.Get(name) // nil when absent: a lister fails only so
				return is
			})
		},
	})
	if opts.MetricsBindAddress == "" {
		return nil, collector, nil
	}
	server, err := metrics.NewServer(metrics.ServerOptions{
		BindAddress:          opts.MetricsBindAddress,
		HealthBindAddress:    opts.HealthProbeBindAddress,
		CertFile:             opts.TLSCertFile,
		KeyFile:              opts.TLSKeyFile,
		SelfSigned:           opts.TLSSelfSigned,
		Gatherer:             metrics.NewRegistry(collector),
		TokenReviews:         kube.scraperTokens,
		SubjectAccessReviews: kube.scraperAccess,
		Ready:                ready,
	})
	return server, collector, err
}

// run starts the informers and the metrics server in every replica (a standby stays healthy and
// keeps warm caches for a fast takeover), and the controllers only while this replica holds the
// lease. It returns once ctx is done and everything has stopped.
func run(parent context.Context, cfg *rest.Config, kube *kubeClients, inventories *inventories, opts Options) error {
	// A lost lease ends the process: everything started here stops with it.
	ctx, stop := context.WithCancel(parent)
	defer stop()
	samplesClient := samplesclient.NewForConfigOrDie(cfg)
	configClient := configclient.NewForConfigOrDie(cfg)
	dyn, err := dynamic.NewForConfig(cfg)
	if err != nil {
		return err
	}
	// The image and template clients work only in openshift, the pull secret's only on it: their
	// answers are the evidence of the operator's access there (pkg/controller/accesscontrol).
	olm := opts.OperatorConditionName != ""
	tracker := accesscontrol.New(kube.AuthorizationV1().SelfSubjectAccessReviews(), olm)
	// Their answers also tell when openshift-apiserver, which serves both, is unavailable. The
	// informers' clients wait out a short outage; the writers' and the finalizer's never wait
	// (pkg/controller/availability).
	apis := availability.New(ctx, cfg, clock.RealClock{})
	imageAPI, templateAPI := imagev1.GroupVersion.String(), templatev1.GroupVersion.String()
	imagesCfg := tracker.Observe(cfg, access.Samples, "imagestreams")
	templatesCfg := tracker.Observe(cfg, access.Samples, "templates")
	imageClient := imageclient.NewForConfigOrDie(apis.Observe(imagesCfg, imageAPI))
	templateClient := templateclient.NewForConfigOrDie(apis.Observe(templatesCfg, templateAPI))
	imageInformerClient := imageclient.NewForConfigOrDie(apis.ObserveInformers(imagesCfg, imageAPI))
	templateInformerClient := templateclient.NewForConfigOrDie(apis.ObserveInformers(templatesCfg, templateAPI))
	pullSecretCore := corev1client.NewForConfigOrDie(tracker.Observe(cfg, access.PullSecret, "secrets"))

	// The Config keeps its managedFields: they say who set its spec (pkg/bootstrapstate).
	samplesInf := samplesinformers.NewSharedInformerFactoryWithOptions(samplesClient, opts.Resync)
	imageInf := imageinformers.NewSharedInformerFactoryWithOptions(imageInformerClient, opts.Resync,
		imageinformers.WithNamespace(names.SamplesNamespace), imageinformers.WithTransform(dropManagedFields))
	templateInf := templateinformers.NewSharedInformerFactoryWithOptions(templateInformerClient, opts.Resync,
		templateinformers.WithNamespace(names.SamplesNamespace), templateinformers.WithTransform(trimTemplate))
	// Of the ClusterOperators only its own.
	coInf := configinformers.NewSharedInformerFactoryWithOptions(configClient, opts.Resync, configinformers.WithTransform(dropManagedFields),
		configinformers.WithTweakListOptions(func(o *metav1.ListOptions) {
			o.FieldSelector = fields.OneTermEqualSelector("metadata.name", clusteroperator.Name).String()
		}))
	// And openshift-apiserver's, whose rollouts end the import retries' wait (importfixes.go).
	apiServerCOInf := configinformers.NewSharedInformerFactoryWithOptions(configClient, opts.Resync, configinformers.WithTransform(dropManagedFields),
		configinformers.WithTweakListOptions(func(o *metav1.ListOptions) {
			o.FieldSelector = fields.OneTermEqualSelector("metadata.name", APIServerOperatorName).String()
		}))
	// Of the cluster configuration the operator reads only the singletons named "cluster".
	clusterConfigInf := configinformers.NewSharedInformerFactoryWithOptions(configClient, opts.Resync, configinformers.WithTransform(dropManagedFields),
		configinformers.WithTweakListOptions(func(o *metav1.ListOptions) {
			o.FieldSelector = fields.OneTermEqualSelector("metadata.name", names.ClusterConfigName).String()
		}))

	// The mirror sets are cluster-scoped and every one counts: openshift-apiserver imports through
	// them all.
	mirrorConfigInf := configinformers.NewSharedInformerFactoryWithOptions(configClient, opts.Resync, configinformers.WithTransform(dropManagedFields))
	// Digest mirror sets and ImageContentSourcePolicies serve digest references only: they are
	// watched for an inventory pinned to digests.
	var digestMirrorSets configv1informers.ImageDigestMirrorSetInformer
	var contentPolicyInf operatorinformers.SharedInformerFactory
	var contentPolicies operatorv1alpha1informers.ImageContentSourcePolicyInformer
	if namesImagesByDigest(inventories, opts.GOARCH) {
		digestMirrorSets = mirrorConfigInf.Config().V1().ImageDigestMirrorSets()
		contentPolicyInf = operatorinformers.NewSharedInformerFactoryWithOptions(operatorclient.NewForConfigOrDie(cfg), opts.Resync,
			operatorinformers.WithTransform(dropManagedFields))
		contentPolicies = contentPolicyInf.Operator().V1alpha1().ImageContentSourcePolicies()
	}
	mirrorSets := mirrorsetinformers.New(mirrorConfigInf.Config().V1().ImageTagMirrorSets(), digestMirrorSets, contentPolicies)
	mirrorProbe := opts.MirrorProbe
	if mirrorProbe == nil {
		mirrorProbe = func(_ context.Context, address string) error {
			return fmt.Errorf("no mirror probe: %s not dialed", address)
		}
	}

	// Of Kubernetes objects the operator reads its own namespace's ConfigMaps, and of
	// openshift-config only the install pull secret.
	operatorNSInf := newCoreInformers(kube.CoreV1(), names.OperatorNamespace, opts.Resync, dropManagedFields, nil)
	// Of openshift, the ResourceQuotas and LimitRanges: a change may end what refused a sample;
	// and the Secrets, whose credentials the imports use (kept as a digest of their data).
	samplesNSInf := newCoreInformers(kube.CoreV1(), names.SamplesNamespace, opts.Resync, digestSecretData, nil)
	retryRefused := retryTriggers{quotas: samplesNSInf.ResourceQuotas(), limitRanges: samplesNSInf.LimitRanges()}
	samplesSecrets := samplesNSInf.Secrets()
	pullSecretInf := newCoreInformers(pullSecretCore, imports.PullSecretNamespace, opts.Resync, dropManagedFields,
		func(o *metav1.ListOptions) {
			o.FieldSelector = fields.OneTermEqualSelector("metadata.name", imports.PullSecretName).String()
		})

	recorder := newEventRecorder(kube.CoreV1().Events(names.OperatorNamespace), "cluster-samples-operator", &corev1.ObjectReference{
		APIVersion: "apps/v1", Kind: "Deployment", Namespace: names.OperatorNamespace, Name: "cluster-samples-operator",
	})
	defer recorder.Shutdown()

	configInformer := samplesInf.Samples().V1().Configs()
	isInformer := imageInf.Image().V1().ImageStreams()
	templateInformer := templateInf.Template().V1().Templates()
	imageConfigInformer := clusterConfigInf.Config().V1().Images()
	configMapInformer := operatorNSInf.ConfigMaps()
	secretInformer := pullSecretInf.Secrets()
	samplesSynced := []cache.InformerSynced{isInformer.Informer().HasSynced, templateInformer.Informer().HasSynced}
	tracker.AddSynced(access.Samples, samplesSynced...)
	tracker.AddSynced(access.PullSecret, secretInformer.Informer().HasSynced)

	// Of the ClusterVersions only "version", and only in a copy OLM installed.
	var versionInf configinformers.SharedInformerFactory
	var versionInformer configv1informers.ClusterVersionInformer
	if olm {
		versionInf = configinformers.NewSharedInformerFactoryWithOptions(configClient, opts.Resync, configinformers.WithTransform(dropManagedFields),
			configinformers.WithTweakListOptions(func(o *metav1.ListOptions) {
				o.FieldSelector = fields.OneTermEqualSelector("metadata.name", standdown.ClusterVersionName).String()
			}))
		versionInformer = versionInf.Config().V1().ClusterVersions()
	}
	standDown, err := newGate(opts.OperatorConditionName, versionInformer, dyn, recorder, clock.RealClock{})
	if err != nil {
		return err
	}

	// Ready means able to do the work: the Config is cached, the operator may manage the samples
	// and read the pull secret, and no cluster-version operator's copy does it instead.
	ready := func() bool {
		return configInformer.Informer().HasSynced() && standDown.open() && tracker.Verdict().Ready()
	}
	// The sample writes the API server refuses: the samples controller records them, the status,
	// ClusterOperator and metrics report them.
	refusals := refusal.NewStore(clock.RealClock{})
	// Whether each sample can work on this cluster: the usability controller judges, the samples
	// controller writes the marks, the status controller and the metrics name them.
	verdicts := usabilitycontrol.NewVerdicts()
	troubles := troubleReport{refusals: refusals, apis: apis, configMaps: configMapInformer.Lister().ConfigMaps(names.OperatorNamespace), grace: opts.DegradedGrace}
	metricsServer, collector, err := newMetricsServer(opts, kube, inventories, configInformer.Lister(), imageConfigInformer.Lister(),
		isInformer.Lister().ImageStreams(names.SamplesNamespace), templateInformer.Lister().Templates(names.SamplesNamespace),
		configMapInformer.Lister(), secretInformer.Lister(), troubles, ready, verdicts)
	if err != nil {
		return fmt.Errorf("metrics server: %w", err)
	}
	if metricsServer != nil {
		// Bound now, so that a port the operator cannot have is an error at start (the process
		// exits and the kubelet says why), not a log line behind a /healthz that says ok.
		if _, err := metricsServer.Listen(); err != nil {
			return err
		}
		// Until the informer delivers the cluster's profile the server uses the default one,
		// Intermediate, as the API servers do when none is set.
		if err := followTLSProfile(clusterConfigInf.Config().V1().APIServers(), metricsServer, recorder); err != nil {
			return fmt.Errorf("metrics server: %w", err)
		}
	}

	usability, usabilityInformers, err := newUsabilityController(cfg, inventories, configInformer, imageConfigInformer, isInformer,
		templateInformer, verdicts, opts.Resync, recorder)
	if err != nil {
		return err
	}

	// The sample writer's records: the samples controller writes them; the status controller
	// reads what the server made of the writes and which samples' revert budgets are spent.
	records := samplewriter.NewBook(clock.RealClock{}, opts.RevertWindow)
	type runnable struct {
		controller factory.Controller
		workers    int
	}
	// These need only what the operator can always read: its Config, the cluster configuration,
	// its own namespace and its ClusterOperator.
	controllers := []runnable{
		{bootstrap.New(opts.GOARCH, inventories, opts.RegistryProbe, opts.ProbeTarget, mirrorProbe, opts.RegistryRecheckInterval, bootstrap.Informers{
			MirrorSets: mirrorSets,
			Config:     configInformer,
			Network:    clusterConfigInf.Config().V1().Networks(),
			Image:      imageConfigInformer,
			Proxy:      clusterConfigInf.Config().V1().Proxies(),
		}, samplesClient.SamplesV1(), recorder), 1},
		{configstatuscontrol.New(opts.Version, inventories, configstatuscontrol.Informers{
			Config: configInformer, ImageConfig: imageConfigInformer, ImageStream: isInformer, Template: templateInformer,
			ConfigMap: configMapInformer, Secret: secretInformer, MirrorSets: mirrorSets,
			RefusalTriggersWatched: retryRefused.Watched,
			Usability:              verdicts,
		}, records, tracker, refusals, samplesClient.SamplesV1(), recorder, clock.RealClock{}), 1},
		{tagmap.New(opts.Version, opts.GOARCH, inventories, configInformer, configMapInformer, kube.CoreV1(), recorder), 1},
		{clusteroperatorcontrol.New(opts.Version, configInformer, coInf.Config().V1().ClusterOperators(), configMapInformer, configClient.ConfigV1(), troubles, recorder, clock.RealClock{}), 1},
	}
	// These work on the samples, and start once their caches have synced: without access to
	// openshift they never would, and a controller's own wait gives up after ten minutes and
	// ends the process.
	sampleSyncs := &samples.Activity{}
	samplesControllers := []runnable{
		{samples.New(samples.Deps{
			Version:     opts.Version,
			Inventories: inventories,
			Informers: samples.Informers{
				Config: configInformer, ImageConfig: imageConfigInformer, ImageStream: isInformer, Template: templateInformer,
			},
			ImageClient:    imageClient.ImageV1(),
			TemplateClient: templateClient.TemplateV1(),
			Records:        records,
			Refusals:       refusals,
			RetryRefused:   retryRefused,
			Access:         tracker,
			Activity:       sampleSyncs,
			Usability:      verdicts,
			Normalized:     collector.NormalizedCounter(),
			OverBudget:     collector.RevertBudgetCounter(),
			Recorder:       recorder,
		}), opts.SampleWorkers},
		{usability, 1},
		{finalizer.New(configInformer, isInformer, templateInformer, configMapInformer, sampleSyncs.Busy, finalizer.ServerSamples{
			ImageStreams: imageClient.ImageV1().ImageStreams(names.SamplesNamespace),
			Templates:    templateClient.TemplateV1().Templates(names.SamplesNamespace),
		}, samplesClient.SamplesV1(), recorder), 1},
		{importscontrol.New(opts.Version, inventories, opts.ImportRetryInterval, collector.RetryCounter(), importscontrol.Informers{
			Config: configInformer, ImageConfig: imageConfigInformer.Lister(), ImageStream: isInformer, ConfigMap: configMapInformer,
			Fixes: importFixes(importFixInformers{
				config:            configInformer.Informer(),
				imageConfig:       imageConfigInformer.Informer(),
				proxy:             clusterConfigInf.Config().V1().Proxies().Informer(),
				pullSecret:        secretInformer.Informer(),
				apiServerOperator: apiServerCOInf.Config().V1().ClusterOperators().Informer(),
				samplesSecret:     samplesSecrets.Informer(),
				importRegistries: func() sets.Set[string] {
					return importRegistries(configInformer.Lister(), isInformer.Lister().ImageStreams(names.SamplesNamespace), mirrorSets)
				},
				mirrorSets:  mirrorSets,
				rolloutWait: opts.PullSecretRolloutWait,
			}),
		}, imageClient.ImageV1(), kube.CoreV1(), recorder, clock.RealClock{}), 4},
	}

	samplesInf.Start(ctx.Done())
	imageInf.Start(ctx.Done())
	templateInf.Start(ctx.Done())
	clusterConfigInf.Start(ctx.Done())
	mirrorConfigInf.Start(ctx.Done())
	go mirrorSets.NotifyWhenSettled(ctx)
	if contentPolicyInf != nil {
		contentPolicyInf.Start(ctx.Done())
	}
	operatorNSInf.Start(ctx.Done())
	samplesNSInf.Start(ctx.Done())
	pullSecretInf.Start(ctx.Done())
	coInf.Start(ctx.Done())
	apiServerCOInf.Start(ctx.Done())
	for _, inf := range usabilityInformers {
		go inf.Run(ctx.Done())
	}
	if versionInf != nil {
		versionInf.Start(ctx.Done())
	}
	var tracking sync.WaitGroup
	tracking.Go(func() { tracker.Run(ctx) })

	klog.InfoS("Starting the samples operator", "version", opts.Version, "goarch", opts.GOARCH, "inventoryDir", opts.InventoryDir)
	var serving sync.WaitGroup
	// servingErr is why the metrics server stopped on its own: the operator stops with it, so
	// that its probes and metrics are never silently gone.
	var servingErr error
	if metricsServer != nil {
		serving.Go(func() {
			if err := metricsServer.Run(ctx); err != nil && ctx.Err() == nil {
				klog.ErrorS(err, "The metrics server stopped; the operator stops with it")
				servingErr = err
				stop()
			}
		})
	}
	work := func(ctx context.Context) error {
		var wg sync.WaitGroup
		start := func(c runnable) { wg.Go(func() { c.controller.Run(ctx, c.workers) }) }
		for _, c := range controllers {
			start(c)
		}
		wg.Go(func() {
			if waitSynced(ctx, "samples", samplesSynced...) {
				for _, c := range samplesControllers {
					start(c)
				}
			}
		})
		<-ctx.Done()
		wg.Wait()
		return nil
	}
	election := opts.LeaderElection
	if !election.Disabled && !election.timed() {
		election = leaseTiming(election, controlPlaneTopology(parent, configClient.ConfigV1().Infrastructures()))
	}
	leadErr := standDown.run(ctx, func(ctx context.Context) error {
		return runAsLeader(ctx, kube, election, work)
	})
	stop()
	serving.Wait()
	if servingErr != nil && leadErr == nil {
		leadErr = servingErr
	}
	tracking.Wait()
	samplesInf.Shutdown()
	imageInf.Shutdown()
	templateInf.Shutdown()
	clusterConfigInf.Shutdown()
	mirrorConfigInf.Shutdown()
	if contentPolicyInf != nil {
		contentPolicyInf.Shutdown()
	}
	operatorNSInf.Shutdown()
	samplesNSInf.Shutdown()
	pullSecretInf.Shutdown()
	coInf.Shutdown()
	if versionInf != nil {
		versionInf.Shutdown()
	}
	return leadErr
}
