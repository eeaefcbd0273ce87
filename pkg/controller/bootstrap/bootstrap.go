// Package bootstrap creates the default samples Config when none exists (at first start, and
// after an admin deletes it), and forgets why a Config was created Removed once an admin has moved
// it on. When it created the Config Removed only because the registry did not answer, it keeps
// probing with backoff, for as long as no admin has changed the Config's spec, and switches it to
// Managed once the registry answers. Its registry probe runs in this controller's own worker, so
// it never holds up the others.
package bootstrap

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"sync"
	"time"

	configv1 "github.com/openshift/api/config/v1"
	operatorv1 "github.com/openshift/api/operator/v1"
	samplesv1 "github.com/openshift/api/samples/v1"
	configinformers "github.com/openshift/client-go/config/informers/externalversions/config/v1"
	configlisters "github.com/openshift/client-go/config/listers/config/v1"
	samplesclient "github.com/openshift/client-go/samples/clientset/versioned/typed/samples/v1"
	samplesinformers "github.com/openshift/client-go/samples/informers/externalversions/samples/v1"
	sampleslisters "github.com/openshift/client-go/samples/listers/samples/v1"
	"github.com/openshift/library-go/pkg/controller/factory"
	"github.com/openshift/library-go/pkg/operator/events"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/klog/v2"

	"github.com/samples-operator-dev/cluster-samples-operator/pkg/bootstrapstate"
	"github.com/samples-operator-dev/cluster-samples-operator/pkg/configspec"
	"github.com/samples-operator-dev/cluster-samples-operator/pkg/controller/mirrorsetinformers"
	"github.com/samples-operator-dev/cluster-samples-operator/pkg/mirrorsets"
	"github.com/samples-operator-dev/cluster-samples-operator/pkg/names"
)

// Probe checks that the samples registry answers.
type Probe func(ctx context.Context) error

// AddressProbe checks that a registry or a mirror at host:port answers.
type AddressProbe func(ctx context.Context, address string) error

// MirrorSetsSyncWait is how long the install decision waits for the mirror sets' caches, which
// it does not wait for otherwise: an operator that may not read them (RBAC of another release)
// or a cluster without their CRDs decides without them.
const MirrorSetsSyncWait = 10 * time.Second

// errMirrorSetsPending: the mirror sets' caches have not synced yet; decide a little later.
var errMirrorSetsPending = errors.New("the mirror sets are not read yet")

// createdUnseenGrace is how long after creating the Config the controller waits for its cache to
// hold it before it would decide (and probe) again.
const createdUnseenGrace = 2 * time.Second

// Controller creates the default Config.
type Controller struct {
	goarch      string
	inventories configspec.Inventories
	probe       Probe
	probeTarget string
	// probeAddress probes the mirrors of the cluster's mirror sets (and the registries no mirror
	// serves) when mirror sets serve the samples' images.
	probeAddress AddressProbe
	mirrors      mirrorsetinformers.Informers

	configs  sampleslisters.ConfigLister
	networks configlisters.NetworkLister
	images   configlisters.ImageLister
	proxies  configlisters.ProxyLister
	client   samplesclient.ConfigInterface

	ignored sets.Set[string] // Configs with other names already reported

	// Probing a registry that did not answer at install: the wait before the next probe doubles
	// from recheckBase up to configspec.RegistryRecheckMax. One worker runs sync; the mutex keeps
	// the state safe whatever the worker count.
	recheckBase time.Duration
	now         func() time.Time
	mu          sync.Mutex
	failures    int
	nextProbe   time.Time
	// started is when the controller first needed the mirror sets: it waits up to
	// MirrorSetsSyncWait from then for their caches before deciding without them.
	started time.Time
	// createdAt is when this controller last created the Config (createdUnseenGrace).
	createdAt time.Time
	// judgedFacts is the fingerprint of the facts the last look judged (factsFingerprint): a
	// change makes the next sync look at once, whatever the backoff.
	judgedFacts string
}

// Informers are the cluster configuration singletons the bootstrap decision reads.
type Informers struct {
	Config  samplesinformers.ConfigInformer
	Network configinformers.NetworkInformer
	Image   configinformers.ImageInformer
	Proxy   configinformers.ProxyInformer
	// MirrorSets are the cluster's mirror sets, through which openshift-apiserver imports.
	MirrorSets mirrorsetinformers.Informers
}

// New wires the controller. recheckBase is the first wait before probing again a registry that
// did not answer at install (0: one minute). probe dials the samples registry; probeAddress dials
// the mirrors instead when the cluster's mirror sets serve the samples' images.
func New(goarch string, inventories configspec.Inventories, probe Probe, probeTarget string, probeAddress AddressProbe, recheckBase time.Duration, inf Informers, client samplesclient.SamplesV1Interface, recorder events.Recorder) factory.Controller {
	c := newController(goarch, inventories, probe, probeTarget, probeAddress, recheckBase, inf, client)
	return factory.New().
		WithSync(c.sync).
		// A change of the cluster's network, image or proxy configuration is judged at once by a
		// Config awaiting its registry.
		WithInformers(inf.Config.Informer(), inf.Network.Informer(), inf.Image.Informer(), inf.Proxy.Informer()).
		// No event arrives for a Config that does not exist: look once at start. A mirror set
		// added or changed is judged at once by a Config awaiting its registry, and the install
		// decision waiting for the mirror sets is taken once they are read. Subscribed before the
		// first look: a look that finds them unread is sure to hear when they are.
		WithPostStartHooks(func(ctx context.Context, syncCtx factory.SyncContext) error {
			err := inf.MirrorSets.OnChange(func() { syncCtx.Queue().Add(factory.DefaultQueueKey) })
			syncCtx.Queue().Add(factory.DefaultQueueKey)
			return err
		}).
		ToController("ConfigBootstrapController", recorder)
}

// newController is the controller New wires, without its queue: a test syncs it directly.
func newController(goarch string, inventories configspec.Inventories, probe Probe, probeTarget string, probeAddress AddressProbe, recheckBase time.Duration, inf Informers, client samplesclient.SamplesV1Interface) *Controller {
	if recheckBase <= 0 {
		recheckBase = time.Minute
	}
	c := &Controller{
		recheckBase:  recheckBase,
		now:          time.Now,
		goarch:       goarch,
		inventories:  inventories,
		probe:        probe,
		probeTarget:  probeTarget,
		probeAddress: probeAddress,
		mirrors:      inf.MirrorSets,
		configs:      inf.Config.Lister(),
		networks:     inf.Network.Lister(),
		images:       inf.Image.Lister(),
		proxies:      inf.Proxy.Lister(),
		client:       client.Configs(),
		ignored:      sets.New[string](),
	}
	return c
}

func (c *Controller) sync(ctx context.Context, syncCtx factory.SyncContext) error {
	c.reportIgnoredConfigs(syncCtx.Recorder())

	cfg, err := c.configs.Get(names.ConfigName)
	switch {
	case err == nil && bootstrapstate.Of(cfg).AwaitingRegistry():
		return c.recheckRegistry(ctx, syncCtx, cfg)
	case err == nil:
		c.resetRecheck()
		if archs, ok := configspec.ClusterArchitectures(cfg, c.goarch); ok {
			return c.fillArchitectures(ctx, syncCtx, cfg, archs)
		}
		return c.forgetBootstrapReason(ctx, cfg)
	case !apierrors.IsNotFound(err):
		return err
	}
	// A Config this controller has just created and its cache does not hold yet: its event
	// brings us back. Deciding again would probe again (up to 20 s) for a create the server refuses.
	c.mu.Lock()
	sinceCreate := c.now().Sub(c.createdAt)
	c.mu.Unlock()
	if sinceCreate < createdUnseenGrace {
		syncCtx.Queue().AddAfter(factory.DefaultQueueKey, createdUnseenGrace-sinceCreate)
		return nil
	}

	facts, ready, err := c.factsOrLater(syncCtx)
	if !ready || err != nil {
		return err
	}
	decision := configspec.DecideBootstrap(facts)
	switch {
	case decision.ProbeRegistry:
		probeErr := c.probe(ctx)
		if ctx.Err() != nil {
			return ctx.Err()
		}
		decision = decision.AfterProbe(c.probeTarget, probeErr)
	case len(decision.ProbeMirrors) > 0:
		answered := c.probeAll(ctx, decision.ProbeMirrors)
		if ctx.Err() != nil {
			return ctx.Err()
		}
		decision = decision.AfterMirrorProbe(answered)
	}

	created, err := c.client.Create(ctx, bootstrapstate.DefaultConfig(c.goarch, decision), metav1.CreateOptions{FieldManager: bootstrapstate.FieldManager})
	if apierrors.IsAlreadyExists(err) {
		return nil
	}
	if err != nil {
		return err
	}
	c.mu.Lock()
	c.createdAt = c.now()
	c.mu.Unlock()
	if decision.Reason == configspec.ReasonRegistryUnreachable {
		c.mu.Lock()
		c.failures, c.nextProbe = 1, c.now().Add(configspec.RegistryRecheckDelay(c.recheckBase, 0))
		c.judgedFacts = factsFingerprint(facts)
		c.mu.Unlock()
	}
	klog.InfoS("Created the default samples Config", "managementState", created.Spec.ManagementState, "architectures", created.Spec.Architectures, "reason", decision.Reason)
	switch {
	case decision.Reason == configspec.ReasonThroughMirrorSets:
		syncCtx.Recorder().Eventf("ConfigCreated", "created Config %s with managementState %s: %s", names.ConfigName, created.Spec.ManagementState, decision.Message)
		c.reportUnimportable(syncCtx.Recorder(), decision)
	case decision.Reason != "":
		syncCtx.Recorder().Warningf("ConfigCreatedRemoved", "created Config %s with managementState Removed: %s", names.ConfigName, decision.Message)
	default:
		syncCtx.Recorder().Eventf("ConfigCreated", "created Config %s with managementState %s", names.ConfigName, created.Spec.ManagementState)
	}
	return nil
}

// recheckRegistry probes, when due, the registry that did not answer when the operator created
// cfg Removed, and switches cfg to Managed once it answers. The update carries cfg's
// resourceVersion: an admin's edit in between wins, and ends the probing.
func (c *Controller) recheckRegistry(ctx context.Context, syncCtx factory.SyncContext, cfg *samplesv1.Config) error {
	// Every gate of the install decision again, not only the dial: what changed since install
	// (a proxy, an allow-list, a blocked registry, a mirror set) decides as it would have then.
	facts, ready, err := c.factsOrLater(syncCtx)
	if !ready || err != nil {
		return err
	}
	c.mu.Lock()
	wait := c.nextProbe.Sub(c.now())
	factsChanged := factsFingerprint(facts) != c.judgedFacts
	c.judgedFacts = factsFingerprint(facts)
	c.mu.Unlock()
	if wait > 0 && !factsChanged {
		syncCtx.Queue().AddAfter(factory.DefaultQueueKey, wait)
		return nil
	}
	decision := configspec.DecideBootstrap(facts)
	// stay is why the samples stay Removed, when they do.
	var stay configspec.BootstrapDecision
	switch {
	case decision.State != operatorv1.Managed:
		// Another gate now keeps the samples out (an allow-list that refuses every registry, say):
		// switching would only install a configuration the cluster refuses, and no probe is made.
		stay = decision
	case decision.ProbeRegistry:
		probeErr := c.probe(ctx)
		if ctx.Err() != nil {
			return ctx.Err()
		}
		if probeErr != nil {
			stay = decision.AfterProbe(c.probeTarget, probeErr)
		}
	case len(decision.ProbeMirrors) > 0:
		answered := c.probeAll(ctx, decision.ProbeMirrors)
		if ctx.Err() != nil {
			return ctx.Err()
		}
		if decision = decision.AfterMirrorProbe(answered); decision.State != operatorv1.Managed {
			stay = decision
		}
	}
	// Otherwise a cluster proxy set since install: imports go through it, and a direct dial
	// says nothing; the install would have been Managed.
	if stay.Reason != "" {
		return c.stayRemoved(ctx, syncCtx, cfg, stay)
	}
	update := bootstrapstate.SwitchedToManaged(cfg, c.probeTarget, !decision.ProbeRegistry, c.now())
	if decision.Reason == configspec.ReasonThroughMirrorSets {
		update = bootstrapstate.SwitchedToManagedThroughMirrors(cfg, decision, c.now())
	}
	switched, err := c.client.Update(ctx, update, metav1.UpdateOptions{FieldManager: bootstrapstate.FieldManager})
	if err != nil {
		return err // a conflict: the next sync sees the admin's edit, or tries again
	}
	// Until the cache holds the switched Config, a sync sees it still awaiting: it waits instead
	// of probing again for an update the server would refuse.
	c.mu.Lock()
	c.failures, c.nextProbe = 0, c.now().Add(createdUnseenGrace)
	c.mu.Unlock()
	if decision.Reason == configspec.ReasonThroughMirrorSets {
		klog.InfoS("The mirrors of the cluster's mirror sets answered: switched the samples Config to Managed", "mirrorSets", decision.Mirrors.By(), "generation", switched.Generation)
		syncCtx.Recorder().Eventf("ConfigManagedThroughMirrorSets", "switched Config %s from Removed (set at install because the registry did not answer) to Managed: %s", cfg.Name, decision.Message)
		c.reportUnimportable(syncCtx.Recorder(), decision)
		return nil
	}
	klog.InfoS("The samples registry answered: switched the samples Config to Managed", "registry", c.probeTarget, "generation", switched.Generation)
	syncCtx.Recorder().Eventf("ConfigManagedRegistryReachable", "the samples registry %s answered: switched Config %s from Removed (set at install because the registry did not answer) to Managed", c.probeTarget, cfg.Name)
	return nil
}

// stayRemoved keeps cfg Removed for the reason in stay, records that reason where SamplesExist
// and the ClusterOperator read it (written only when it changed), says so in an Event, and looks
// again after the next wait of the backoff.
func (c *Controller) stayRemoved(ctx context.Context, syncCtx factory.SyncContext, cfg *samplesv1.Config, stay configspec.BootstrapDecision) error {
	if update, changed := bootstrapstate.StillRemoved(cfg, stay.Reason, stay.Message); changed {
		if _, err := c.client.Update(ctx, update, metav1.UpdateOptions{FieldManager: bootstrapstate.FieldManager}); err != nil {
			return err // a conflict: the next sync sees the admin's edit, or looks again
		}
	}
	c.mu.Lock()
	delay := configspec.RegistryRecheckDelay(c.recheckBase, c.failures)
	c.failures++
	c.nextProbe = c.now().Add(delay)
	c.mu.Unlock()
	klog.InfoS("The samples stay Removed", "reason", stay.Reason, "message", stay.Message, "nextLookIn", delay)
	syncCtx.Recorder().Eventf("SamplesStayRemoved", "the samples stay Removed (%s): %s", stay.Reason, stay.Message)
	syncCtx.Queue().AddAfter(factory.DefaultQueueKey, delay)
	return nil
}

// factsFingerprint changes when anything the install decision reads changes: the mirror sets,
// or the cluster's image, proxy or network configuration.
func factsFingerprint(f configspec.BootstrapFacts) string {
	return strings.Join([]string{f.MirrorsFingerprint, resourceVersion(f.Image), resourceVersion(f.Proxy), resourceVersion(f.Network)}, "|")
}

func resourceVersion[T any, P interface {
	*T
	metav1.Object
}](obj P) string {
	if obj == nil {
		return "-"
	}
	return obj.GetResourceVersion()
}

// factsOrLater is facts, or, while the mirror sets are still being read, nothing yet (ready
// false): the mirror sets' OnChange brings the controller back as soon as they are read, and a
// look at MirrorSetsSyncWait decides without them if they never are.
func (c *Controller) factsOrLater(syncCtx factory.SyncContext) (facts configspec.BootstrapFacts, ready bool, err error) {
	facts, err = c.facts()
	if errors.Is(err, errMirrorSetsPending) {
		c.mu.Lock()
		deadline := c.started.Add(MirrorSetsSyncWait).Sub(c.now())
		c.mu.Unlock()
		syncCtx.Queue().AddAfter(factory.DefaultQueueKey, deadline)
		return facts, false, nil
	}
	return facts, err == nil, err
}

// facts are what the install decision reads of the cluster.
func (c *Controller) facts() (configspec.BootstrapFacts, error) {
	facts := configspec.BootstrapFacts{GOARCH: c.goarch, HasInventory: c.inventories.Has}
	var sets mirrorsets.Sets
	var err error
	if c.mirrors.Settled() {
		if sets, err = c.mirrors.Sets(); err != nil {
			return facts, err
		}
		if unreadable := c.mirrors.Unreadable(); len(unreadable) > 0 {
			klog.InfoS("Deciding with the mirror sets that can be read; these kinds cannot be listed", "unreadable", unreadable)
		}
	} else {
		c.mu.Lock()
		if c.started.IsZero() {
			c.started = c.now()
		}
		waited := c.now().Sub(c.started)
		c.mu.Unlock()
		if waited < MirrorSetsSyncWait {
			return facts, errMirrorSetsPending
		}
		klog.InfoS("Deciding without the cluster's mirror sets: they could not be read", "waited", waited)
	}
	facts.MirrorsFingerprint = sets.Fingerprint()
	if inv, err := c.inventories.For(configspec.ArchitectureForGOARCH(c.goarch)); err == nil {
		facts.SourceRegistries = inv.SourceRegistries()
		if !sets.Empty() {
			coverage := mirrorsets.Cover(sets, configspec.InventoryPullSpecs(inv))
			facts.Mirrors = &coverage
		}
	}
	if facts.Network, err = getCluster[configv1.Network](c.networks.Get); err != nil {
		return facts, err
	}
	if facts.Image, err = getCluster[configv1.Image](c.images.Get); err != nil {
		return facts, err
	}
	facts.Proxy, err = getCluster[configv1.Proxy](c.proxies.Get)
	return facts, err
}

// probeAll probes the addresses at once (each probe may take its full timeout) and says which
// answered.
func (c *Controller) probeAll(ctx context.Context, addresses []string) func(string) bool {
	var wg sync.WaitGroup
	var mu sync.Mutex
	answered := map[string]bool{}
	for _, a := range addresses {
		wg.Go(func() {
			err := c.probeAddress(ctx, a)
			if err != nil {
				klog.InfoS("A mirror or registry the samples import from did not answer", "address", a, "error", err.Error())
			}
			mu.Lock()
			answered[a] = err == nil
			mu.Unlock()
		})
	}
	wg.Wait()
	return func(a string) bool { return answered[a] }
}

// reportUnimportable tells an admin, in a warning event, which samples will not import although
// the Config is Managed through mirror sets.
func (c *Controller) reportUnimportable(recorder events.Recorder, decision configspec.BootstrapDecision) {
	if len(decision.Unimportable) == 0 {
		return
	}
	recorder.Warningf("SamplesWithoutMirror", "%s will not import: none of the mirrors of the cluster's mirror sets (%s) nor the registries that serve their images answered; the other samples are installed",
		mirrorsets.StreamsPhrase(decision.Unimportable), strings.Join(decision.Mirrors.By(), ", "))
}

func (c *Controller) resetRecheck() {
	c.mu.Lock()
	c.failures, c.nextProbe = 0, time.Time{}
	c.mu.Unlock()
}

// fillArchitectures writes the cluster's architecture into a Config that names none, as a
// GitOps tool may apply it: the architecture is then fixed, and shown, as in the Config the
// operator creates. The patch sets that one field and carries cfg's resourceVersion, so an
// admin's or a tool's write in between wins (the next sync looks again); a tool that applies
// the Config server-side without the field leaves it to this operator, the field's manager.
func (c *Controller) fillArchitectures(ctx context.Context, syncCtx factory.SyncContext, cfg *samplesv1.Config, archs []string) error {
	patch, _ := json.Marshal(map[string]interface{}{
		"metadata": map[string]interface{}{"resourceVersion": cfg.ResourceVersion},
		"spec":     map[string]interface{}{"architectures": archs},
	})
	if _, err := c.client.Patch(ctx, cfg.Name, types.MergePatchType, patch, metav1.PatchOptions{FieldManager: bootstrapstate.FieldManager}); apierrors.IsConflict(err) {
		return nil // the Config changed meanwhile: its event brings us back
	} else if err != nil {
		return err
	}
	klog.InfoS("Set the samples Config's spec.architectures to the cluster's architecture", "architectures", archs)
	syncCtx.Recorder().Eventf("ConfigArchitectureDefaulted", "Config %s named no spec.architectures: set it to %s, the cluster's architecture", cfg.Name, archs[0])
	return nil
}

// forgetBootstrapReason drops the bootstrap annotations once they say nothing any more (the
// Config left the operator's Removed, or someone else set its spec), so that a later Removed set
// by an admin is not blamed on the registry, nor the admin's Managed credited to it.
func (c *Controller) forgetBootstrapReason(ctx context.Context, cfg *samplesv1.Config) error {
	if !bootstrapstate.Of(cfg).Stale() {
		return nil
	}
	patch, _ := json.Marshal(map[string]interface{}{
		"metadata": map[string]interface{}{
			"resourceVersion": cfg.ResourceVersion,
			"annotations": map[string]interface{}{
				bootstrapstate.ReasonAnnotation:   nil,
				bootstrapstate.MessageAnnotation:  nil,
				bootstrapstate.AwaitingAnnotation: nil,
			},
		},
	})
	_, err := c.client.Patch(ctx, cfg.Name, types.MergePatchType, patch, metav1.PatchOptions{FieldManager: bootstrapstate.FieldManager})
	return err
}

func (c *Controller) reportIgnoredConfigs(recorder events.Recorder) {
	all, err := c.configs.List(labels.Everything())
	if err != nil {
		return
	}
	for _, cfg := range all {
		if cfg.Name != names.ConfigName && !c.ignored.Has(cfg.Name) {
			c.ignored.Insert(cfg.Name)
			recorder.Warningf("ConfigIgnored", "Config %q is ignored: the samples operator reads only the Config named %q", cfg.Name, names.ConfigName)
		}
	}
}

func getCluster[T any](get func(string) (*T, error)) (*T, error) {
	obj, err := get(names.ClusterConfigName)
	if apierrors.IsNotFound(err) {
		return nil, nil
	}
	return obj, err
}
