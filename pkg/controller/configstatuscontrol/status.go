// Package configstatuscontrol writes the Config's status: it observes the samples through listers, computes
// the status with pkg/configstatus and writes it only when it differs.
//
// It does not wait for the caches of the samples and of the pull secret: without access to them
// (an OLM install before an administrator binds the operator's roles) they never fill, and the
// status is where the operator says so. It reads them only once the access verdict says they are
// granted and synced.
package configstatuscontrol

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	imagev1 "github.com/openshift/api/image/v1"
	operatorv1 "github.com/openshift/api/operator/v1"
	samplesv1 "github.com/openshift/api/samples/v1"
	configinformers "github.com/openshift/client-go/config/informers/externalversions/config/v1"
	configlisters "github.com/openshift/client-go/config/listers/config/v1"
	imageinformers "github.com/openshift/client-go/image/informers/externalversions/image/v1"
	imagelisters "github.com/openshift/client-go/image/listers/image/v1"
	samplesclient "github.com/openshift/client-go/samples/clientset/versioned/typed/samples/v1"
	samplesinformers "github.com/openshift/client-go/samples/informers/externalversions/samples/v1"
	sampleslisters "github.com/openshift/client-go/samples/listers/samples/v1"
	templateinformers "github.com/openshift/client-go/template/informers/externalversions/template/v1"
	templatelisters "github.com/openshift/client-go/template/listers/template/v1"
	"github.com/openshift/library-go/pkg/controller/factory"
	"github.com/openshift/library-go/pkg/operator/events"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/sets"
	coreinformers "k8s.io/client-go/informers/core/v1"
	corelisters "k8s.io/client-go/listers/core/v1"
	"k8s.io/client-go/tools/cache"
	"k8s.io/utils/clock"

	"github.com/samples-operator-dev/cluster-samples-operator/pkg/access"
	"github.com/samples-operator-dev/cluster-samples-operator/pkg/bootstrapstate"
	"github.com/samples-operator-dev/cluster-samples-operator/pkg/configspec"
	"github.com/samples-operator-dev/cluster-samples-operator/pkg/configstatus"
	"github.com/samples-operator-dev/cluster-samples-operator/pkg/controller/configreader"
	"github.com/samples-operator-dev/cluster-samples-operator/pkg/controller/eventfilter"
	"github.com/samples-operator-dev/cluster-samples-operator/pkg/controller/mirrorsetinformers"
	"github.com/samples-operator-dev/cluster-samples-operator/pkg/desired"
	"github.com/samples-operator-dev/cluster-samples-operator/pkg/imports"
	"github.com/samples-operator-dev/cluster-samples-operator/pkg/names"
	"github.com/samples-operator-dev/cluster-samples-operator/pkg/refusal"
	"github.com/samples-operator-dev/cluster-samples-operator/pkg/samplewriter"
	"github.com/samples-operator-dev/cluster-samples-operator/pkg/usability"
)

// SampleEventDelay is how long the controller waits after a sample is edited or deleted before it
// looks again.
// A drift is reverted in milliseconds; waiting a little keeps a deleted-and-recreated sample from
// flipping SamplesExist (and the ClusterOperator's Available) back and forth.
const SampleEventDelay = 250 * time.Millisecond

// Controller writes Config status.
type Controller struct {
	version     string
	inventories configspec.Inventories
	config      *configreader.Reader
	clock       clock.PassiveClock
	// verdicts remembers whether a sample was in sync, per object and Config generation, so a
	// sync costs a comparison only for what changed since the last one. Locked, so that the
	// controller stays correct should it ever run more than its one worker.
	verdictsMu sync.Mutex
	verdicts   map[string]verdict
	// records are the sample writer's: what the server made of its writes, and the samples
	// whose revert budget is spent, which are named.
	records *samplewriter.Book
	access  Access
	// refusals are the sample writes the API server refuses (the samples controller records them).
	refusals               *refusal.Store
	refusalTriggersWatched func() bool

	// mirrorSets are the cluster's mirror sets; reportedMirrors is what was last said of them in
	// an event, so that it is told once.
	mirrorSets      mirrorsetinformers.Informers
	reportedMirrors string
	// announcedRetired is the RetiredAnnouncedAnnotation this process wrote last: the lister
	// may not show it yet.
	announcedRetired string
	// reportedBlocked is the blocked set last announced in an event, so that it is told once.
	mu              sync.Mutex
	reportedBlocked string

	configs      sampleslisters.ConfigLister
	images       configlisters.ImageLister
	imageStreams imagelisters.ImageStreamNamespaceLister
	templates    templatelisters.TemplateNamespaceLister
	configMaps   corelisters.ConfigMapNamespaceLister
	secrets      corelisters.SecretNamespaceLister
	client       samplesclient.ConfigInterface
	usability    Usability
}

// Access is the operator's verdict on its own access (pkg/controller/accesscontrol.Tracker).
type Access interface {
	Verdict() access.Verdict
	InstalledByOLM() bool
	// OnChange calls f, which must not block, each time the verdict changes.
	OnChange(f func())
}

// Usability is what the operator says on each sample about whether it can work on this cluster
// (pkg/controller/usabilitycontrol.Verdicts): a sample is as wanted only with its marks.
type Usability interface {
	// Ready reports whether the first verdicts are made.
	Ready() bool
	Marks(kind, name string) desired.Marks
	All() []usability.Verdict
	// OnChange calls f, which must not block, with each sample whose marks changed.
	OnChange(f func(kind, name string))
}

// Informers are what the status depends on.
type Informers struct {
	Config      samplesinformers.ConfigInformer
	ImageConfig configinformers.ImageInformer
	ImageStream imageinformers.ImageStreamInformer
	Template    templateinformers.TemplateInformer
	// ConfigMap is the operator namespace's; Secret is openshift-config's pull secret.
	ConfigMap coreinformers.ConfigMapInformer
	Secret    coreinformers.SecretInformer
	// MirrorSets are the cluster's mirror sets: SamplesExist says what they do for the samples.
	MirrorSets mirrorsetinformers.Informers
	// RefusalTriggersWatched says whether the changes that retry refused writes at once (the
	// ResourceQuotas and LimitRanges of openshift) are watched; nil: they are.
	RefusalTriggersWatched func() bool
	Usability              Usability
}

// New wires the controller.
func New(version string, inventories configspec.Inventories, inf Informers, records *samplewriter.Book, accessVerdict Access,
	refusals *refusal.Store, client samplesclient.SamplesV1Interface, recorder events.Recorder, clk clock.PassiveClock) factory.Controller {
	c := newController(version, inventories, inf, records, accessVerdict, refusals, client, clk)
	imageStreamInformer, templateInformer, secretInformer := inf.ImageStream, inf.Template, inf.Secret
	return factory.New().
		WithSync(c.sync).
		// Only the caches the operator can always read are waited for; see the package comment.
		// The Config's resync is the sync's safety net: the others' resyncs would only run it
		// again (eventfilter.WithoutResyncs), the operator namespace's ConfigMaps being one per
		// imagestream.
		WithInformers(inf.Config.Informer(), eventfilter.WithoutResyncs(inf.ImageConfig.Informer()), eventfilter.WithoutResyncs(inf.ConfigMap.Informer())).
		WithPostStartHooks(c.watchMirrorSets).
		WithPostStartHooks(func(ctx context.Context, syncCtx factory.SyncContext) error {
			now := func() { syncCtx.Queue().Add(factory.DefaultQueueKey) }
			c.access.OnChange(now)
			c.refusals.OnChange(now)
			c.usability.OnChange(func(string, string) { now() })
			now() // the verdict may have changed since the first sync, before we listened
			// A new sample can only bring the samples closer to complete: look at once. An edit or
			// a deletion may be drift that the samples controller is about to revert: look a
			// little later.
			delayed := cache.ResourceEventHandlerFuncs{
				AddFunc:    func(interface{}) { now() },
				UpdateFunc: func(_, _ interface{}) { syncCtx.Queue().AddAfter(factory.DefaultQueueKey, SampleEventDelay) },
				DeleteFunc: func(interface{}) { syncCtx.Queue().AddAfter(factory.DefaultQueueKey, SampleEventDelay) },
			}
			if _, err := eventfilter.WithoutResyncs(imageStreamInformer.Informer()).AddEventHandler(delayed); err != nil {
				return err
			}
			if _, err := eventfilter.WithoutResyncs(templateInformer.Informer()).AddEventHandler(delayed); err != nil {
				return err
			}
			_, err := eventfilter.WithoutResyncs(secretInformer.Informer()).AddEventHandler(cache.ResourceEventHandlerFuncs{
				AddFunc:    func(interface{}) { now() },
				UpdateFunc: func(_, _ interface{}) { now() },
				DeleteFunc: func(interface{}) { now() },
			})
			return err
		}).
		ToController("ConfigStatusController", recorder)
}

// newController is the controller New wires, without its queue: a test syncs it directly.
func newController(version string, inventories configspec.Inventories, inf Informers, records *samplewriter.Book, accessVerdict Access,
	refusals *refusal.Store, client samplesclient.SamplesV1Interface, clk clock.PassiveClock) *Controller {
	c := &Controller{
		version:                version,
		inventories:            inventories,
		clock:                  clk,
		configs:                inf.Config.Lister(),
		images:                 inf.ImageConfig.Lister(),
		imageStreams:           inf.ImageStream.Lister().ImageStreams(names.SamplesNamespace),
		templates:              inf.Template.Lister().Templates(names.SamplesNamespace),
		configMaps:             inf.ConfigMap.Lister().ConfigMaps(names.OperatorNamespace),
		secrets:                inf.Secret.Lister().Secrets(imports.PullSecretNamespace),
		client:                 client.Configs(),
		verdicts:               map[string]verdict{},
		records:                records,
		access:                 accessVerdict,
		refusals:               refusals,
		refusalTriggersWatched: inf.RefusalTriggersWatched,
		mirrorSets:             inf.MirrorSets,
		usability:              inf.Usability,
	}
	c.config = configreader.New(c.configs, c.images, inventories)
	return c
}

func (c *Controller) sync(ctx context.Context, syncCtx factory.SyncContext) error {
	cfg, eval, found, err := c.config.Current()
	if err != nil || !found {
		return err
	}
	verdict := c.access.Verdict()
	samplesAccess, pullSecretAccess := verdict.State(access.Samples), verdict.State(access.PullSecret)
	if samplesAccess == access.Pending || pullSecretAccess == access.Pending {
		return nil // nothing to tell yet; the verdict's change brings us back
	}
	if samplesAccess == access.Granted && eval.Mode == desired.Managed && eval.Inventory != nil && !c.usability.Ready() {
		// Until the operator has judged which samples can work here, no sample's marks are known:
		// samples found in place (a takeover, a restart) would be reported installed and
		// then, marked a moment later, not yet. The first verdicts bring us back (OnChange).
		// Without access to the samples the judging never starts, and the status must say what
		// to grant.
		return nil
	}
	observed := configstatus.Observed{
		Config:         cfg,
		Version:        c.version,
		Validation:     eval.Validation,
		MissingAccess:  verdict.Missing(),
		InstalledByOLM: c.access.InstalledByOLM(),
		Now:            metav1.NewTime(c.clock.Now()),
	}
	if samplesAccess == access.Granted {
		if err := c.observeSamples(cfg, eval, &observed); err != nil {
			return err
		}
		if eval.Mode == desired.Managed || eval.Mode == desired.Removing {
			var nextReport time.Duration
			observed.Refused, _, nextReport = c.refusals.Reported()
			observed.RefusalTriggersWatched = c.refusalTriggersWatched == nil || c.refusalTriggersWatched()
			if nextReport > 0 {
				// A 5xx that lasts is reported once it has lasted refusal.TransientPatience.
				syncCtx.Queue().AddAfter(factory.DefaultQueueKey, nextReport)
			}
		}
	}
	if pullSecretAccess == access.Granted {
		secret, err := c.secrets.Get(imports.PullSecretName)
		if apierrors.IsNotFound(err) {
			secret = nil
		} else if err != nil {
			return err
		}
		observed.CredentialsOK, observed.CredentialsMessage = imports.Credentials(secret, cfg.Spec.SamplesRegistry)
	}

	if observed.Mirrors, err = c.mirrorCoverage(cfg, eval); err != nil {
		return err
	}
	c.reportBlocked(syncCtx.Recorder(), observed.Blocked)
	if cfg, err = c.announceRetired(ctx, syncCtx.Recorder(), cfg, observed, eval.Mode); err != nil {
		return err
	}
	c.reportMirrors(syncCtx.Recorder(), configstatus.MirrorsMessage(cfg, observed.Mirrors))
	computed := configstatus.Compute(observed)
	if !configstatus.Changed(&cfg.Status, &computed) {
		return nil
	}
	updated := cfg.DeepCopy()
	updated.Status = computed
	if _, err := c.client.UpdateStatus(ctx, updated, metav1.UpdateOptions{}); err != nil {
		if apierrors.IsConflict(err) {
			return nil // computed from a Config the cache has not caught up with: its event brings us back
		}
		return err
	}
	recordTransitions(syncCtx.Recorder(), &cfg.Status, &computed)
	return nil
}

// reportBlocked records an event when the set of imagestreams the import allow-list keeps out
// changes.
func (c *Controller) reportBlocked(recorder events.Recorder, blocked map[string]string) {
	text := configstatus.BlockedMessage(blocked)
	c.mu.Lock()
	changed := text != c.reportedBlocked
	c.reportedBlocked = text
	c.mu.Unlock()
	switch {
	case !changed:
	case text == "":
		recorder.Eventf("SamplesAllowedByImportAllowList", "images.config.openshift.io/cluster spec.allowedRegistriesForImport keeps no sample imagestream out any more")
	default:
		recorder.Warningf("SamplesBlockedByImportAllowList", "%s", strings.TrimPrefix(text, "; "))
	}
}

// observeSamples counts what the samples' caches show.
func (c *Controller) observeSamples(cfg *samplesv1.Config, eval configspec.Evaluation, observed *configstatus.Observed) error {
	var err error
	if eval.Mode == desired.Managed {
		observed.Blocked = eval.Blocked(func(name string) *imagev1.ImageStream {
			is, _ := c.imageStreams.Get(name) // nil when absent: a lister fails only so
			return is
		})
		observed.Samples, observed.Pending, observed.MarksPending, err = c.countPending(cfg, eval, observed.Blocked)
		if err != nil {
			return err
		}
		if c.records != nil {
			observed.HeldBack = c.records.HeldBack()
		}
	}

	if observed.Owned, observed.Retired, observed.AwaitingRetirement, err = c.countOwned(eval); err != nil {
		return err
	}
	observed.Unusable, observed.Offered = c.usability.All(), eval.Offered.Has
	if eval.Mode == desired.Managed {
		if observed.ImportErrors, err = c.importErrors(cfg, eval); err != nil {
			return err
		}
	}
	return nil
}

type verdict struct {
	resourceVersion string
	choice          desired.Choice
	answers         uint64
	state           sampleState
}

// sampleState is how a live sample compares with what it should be.
type sampleState int

const (
	inSync sampleState = iota
	// marksOnly: it differs only in its usability marks, those of a verdict it was written with.
	marksOnly
	outOfSync
)

// stateOf tells inSync from marksOnly from outOfSync; inSyncWith reports whether live is as
// wanted with these marks. The marks live carries are tried only when live is not as wanted.
func stateOf(wanted, carried desired.Marks, inSyncWith func(desired.Marks) bool) sampleState {
	switch {
	case inSyncWith(wanted):
		return inSync
	case wanted.String() != carried.String() && inSyncWith(carried):
		return marksOnly
	}
	return outOfSync
}

// countPending counts the samples the Config wants, those not yet as wanted, and of those the
// ones that differ only in their usability marks.
func (c *Controller) countPending(cfg *samplesv1.Config, eval configspec.Evaluation, blocked map[string]string) (wanted, pending, marksPending int, err error) {
	count := func(state sampleState) {
		if state != inSync {
			pending++
		}
		if state == marksOnly {
			marksPending++
		}
	}
	for _, name := range eval.Inventory.ImageStreamNames() {
		if _, out := blocked[name]; out || slices.Contains(cfg.Spec.SkippedImagestreams, name) {
			continue
		}
		wanted++
		live, err := c.imageStreams.Get(name)
		if apierrors.IsNotFound(err) {
			pending++
			continue
		} else if err != nil {
			return 0, 0, 0, err
		}
		marks := c.usability.Marks(samplewriter.ImageStreamKind, name)
		choice := eval.ChoiceOf(cfg, c.version, name, marks)
		count(c.remember("imagestream/"+name, live.ResourceVersion, choice, func() sampleState {
			return stateOf(marks, desired.ImageStreamMarks(live), func(marks desired.Marks) bool {
				choice.Marks = marks.String()
				want, _, _ := desired.ImageStream(&cfg.Spec, choice, eval.Inventory, name)
				return desired.ImageStreamInSync(live, want) || desired.ImageStreamSettled(live, want, c.records.ImageStreams.Answer(name))
			})
		}))
	}
	for _, name := range eval.Inventory.TemplateNames() {
		if slices.Contains(cfg.Spec.SkippedTemplates, name) {
			continue
		}
		wanted++
		live, err := c.templates.Get(name)
		if apierrors.IsNotFound(err) {
			pending++
			continue
		} else if err != nil {
			return 0, 0, 0, err
		}
		marks := c.usability.Marks(samplewriter.TemplateKind, name)
		choice := eval.ChoiceOf(cfg, c.version, "", marks)
		count(c.remember("template/"+name, live.ResourceVersion, choice, func() sampleState {
			return stateOf(marks, desired.TemplateMarks(live), func(marks desired.Marks) bool {
				choice.Marks = marks.String()
				want, _, _ := desired.Template(&cfg.Spec, choice, eval.Inventory, name)
				return desired.TemplateInSync(live, want) || desired.TemplateSettled(live, want, c.records.Templates.Answer(name))
			})
		}))
	}
	return wanted, pending, marksPending, nil
}

// remember returns the verdict for an object at this resourceVersion, Config choice and
// version of the server's answers, computing it only the first time.
func (c *Controller) remember(key, resourceVersion string, choice desired.Choice, compute func() sampleState) sampleState {
	answers := c.records.AnswersVersion()
	c.verdictsMu.Lock()
	defer c.verdictsMu.Unlock()
	if v, ok := c.verdicts[key]; ok && v.resourceVersion == resourceVersion && v.choice == choice && v.answers == answers {
		return v.state
	}
	state := compute()
	c.verdicts[key] = verdict{resourceVersion: resourceVersion, choice: choice, answers: answers, state: state}
	return state
}

// importErrors names the managed imagestreams that have an import error record.
func (c *Controller) importErrors(cfg *samplesv1.Config, eval configspec.Evaluation) ([]string, error) {
	records, err := c.configMaps.List(labels.SelectorFromSet(labels.Set{imports.ErrorLabel: "true"}))
	if err != nil {
		return nil, err
	}
	var names []string
	for _, cm := range records {
		if want, _, _ := desired.ImageStream(&cfg.Spec, eval.ChoiceOf(cfg, c.version, cm.Name, nil), eval.Inventory, cm.Name); want != nil {
			names = append(names, cm.Name)
		}
	}
	sort.Strings(names)
	return names, nil
}

// countOwned counts the live samples labelled managed=true, lists those upgrades retired, and
// counts those the inventory no longer has that are not marked retired yet.
func (c *Controller) countOwned(eval configspec.Evaluation) (owned int, retired []desired.Retired, awaitingRetirement int, err error) {
	selector := labels.SelectorFromSet(labels.Set{desired.ManagedLabel: "true"})
	streams, err := c.imageStreams.List(selector)
	if err != nil {
		return 0, nil, 0, err
	}
	templates, err := c.templates.List(selector)
	if err != nil {
		return 0, nil, 0, err
	}
	if eval.Inventory != nil {
		// By name: the inventory's getters return deep copies, a cost on every status sync.
		streamNames, templateNames := sets.New(eval.Inventory.ImageStreamNames()...), sets.New(eval.Inventory.TemplateNames()...)
		for _, is := range streams {
			if !streamNames.Has(is.Name) && is.Annotations[desired.RetiredAnnotation] == "" {
				awaitingRetirement++
			}
		}
		for _, t := range templates {
			if !templateNames.Has(t.Name) && t.Annotations[desired.RetiredAnnotation] == "" {
				awaitingRetirement++
			}
		}
	}
	return len(streams) + len(templates), desired.RetiredOf(streams, templates), awaitingRetirement, nil
}

// announceRetired tells the admin, in one event once an upgrade has moved every sample to this
// version and retired all it retires, which samples this version retired. The announcement is
// recorded on the Config first (RetiredAnnouncedAnnotation), so that no restart or new leader
// tells it again; the Config returned is the one patched, or cfg when nothing was written.
func (c *Controller) announceRetired(ctx context.Context, recorder events.Recorder, cfg *samplesv1.Config, observed configstatus.Observed, mode desired.Mode) (*samplesv1.Config, error) {
	if mode != desired.Managed || observed.Pending > 0 || observed.AwaitingRetirement > 0 {
		return cfg, nil
	}
	var names []string
	for _, r := range observed.Retired {
		if r.Version == c.version {
			names = append(names, r.Kind+" "+r.Name)
		}
	}
	c.mu.Lock()
	written := c.announcedRetired
	c.mu.Unlock()
	record, announce := retiredToAnnounce(c.version, names, cfg.Annotations[RetiredAnnouncedAnnotation], written)
	if !announce {
		return cfg, nil
	}
	patch, _ := json.Marshal(map[string]interface{}{
		"metadata": map[string]interface{}{"annotations": map[string]string{RetiredAnnouncedAnnotation: record}},
	})
	patched, err := c.client.Patch(ctx, cfg.Name, types.MergePatchType, patch, metav1.PatchOptions{FieldManager: bootstrapstate.FieldManager})
	if err != nil {
		return cfg, fmt.Errorf("recording the SamplesRetired announcement on the Config: %w", err)
	}
	c.mu.Lock()
	c.announcedRetired = record
	c.mu.Unlock()
	recorder.Eventf("SamplesRetired", "the inventory of version %s no longer has %d samples; they are kept for the builds and deployments that use them, hidden from the catalog and annotated %s: %s",
		c.version, len(names), desired.RetiredAnnotation, strings.Join(names, ", "))
	return patched, nil
}

// recordTransitions tells the admin, through events, when the Config's management state or a
// condition's status changes.
func recordTransitions(recorder events.Recorder, before, after *samplesv1.ConfigStatus) {
	if before.ManagementState != after.ManagementState {
		recorder.Eventf("ManagementStateChanged", "samples are now %s (were %q)", after.ManagementState, before.ManagementState)
	}
	if before.ManagementState == operatorv1.Managed && after.ManagementState == operatorv1.Managed && before.SamplesRegistry != after.SamplesRegistry {
		recorder.Eventf("SamplesRegistryChanged", "spec.samplesRegistry is now %s (was %s): the operator moves the imagestreams to it",
			registryOrDefault(after.SamplesRegistry), registryOrDefault(before.SamplesRegistry))
	}
	for _, t := range configstatus.ConditionTypes {
		b, a := configstatus.Condition(before, t), configstatus.Condition(after, t)
		if a == nil || (b != nil && b.Status == a.Status) {
			continue
		}
		if t == samplesv1.ImageChangesInProgress || t == samplesv1.MigrationInProgress {
			continue
		}
		recorder.Eventf("ConditionChanged", "%s is %s: %s %s", t, a.Status, a.Reason, a.Message)
	}
}

func registryOrDefault(registry string) string {
	if registry == "" {
		return "empty (the inventory's registries)"
	}
	return registry
}
