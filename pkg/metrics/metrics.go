// Package metrics exposes the operator's Prometheus metrics and serves them over HTTPS to
// authorised scrapers only.
//
// Every value is computed at scrape time from informer caches (the samples Config, the import
// error ConfigMaps, the pull secret) and from the inventory; a scrape never calls the API server.
// The only state the package keeps is the retry counter, which lives in the Collector, not in a
// package variable.
package metrics

import (
	"slices"
	"strings"

	operatorv1 "github.com/openshift/api/operator/v1"
	samplesv1 "github.com/openshift/api/samples/v1"
	samplesv1listers "github.com/openshift/client-go/samples/listers/samples/v1"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/labels"
	corev1listers "k8s.io/client-go/listers/core/v1"
	"k8s.io/klog/v2"

	"github.com/samples-operator-dev/cluster-samples-operator/pkg/bootstrapstate"
	"github.com/samples-operator-dev/cluster-samples-operator/pkg/configspec"
	"github.com/samples-operator-dev/cluster-samples-operator/pkg/configstatus"
	"github.com/samples-operator-dev/cluster-samples-operator/pkg/desired"
	"github.com/samples-operator-dev/cluster-samples-operator/pkg/imports"
	"github.com/samples-operator-dev/cluster-samples-operator/pkg/names"
	"github.com/samples-operator-dev/cluster-samples-operator/pkg/usability"
)

// Metric names and label values, as dashboards and the alerts in manifests/010-prometheus-rules.yaml
// know them.
const (
	FailedImportName    = "openshift_samples_failed_imagestream_import_info"
	InvalidSecretName   = "openshift_samples_invalidsecret_info"
	InvalidConfigName   = "openshift_samples_invalidconfig_info"
	DegradedName        = "openshift_samples_degraded_info"
	TBRInaccessibleName = "openshift_samples_tbr_inaccessible_info"
	RetryImportName     = "openshift_samples_retry_imagestream_import_total"
	NormalizedName      = "openshift_samples_server_normalized_fields_total"
	RevertBudgetName    = "openshift_samples_revert_budget_exceeded_total"
	BlockedName         = "openshift_samples_import_allowlist_blocked_imagestream_info"
	RefusedWriteName    = "openshift_samples_refused_write_info"
	RetiredName         = "openshift_samples_retired_info"
	UnusableName        = "openshift_samples_unusable_info"

	ReasonMissingSecret        = "missing_secret"
	ReasonMissingTBRCredential = "missing_tbr_credential"
)

// Help texts.
const (
	helpFailedImport    = "1 while imports of a sample imagestream fail (an import error ConfigMap exists for it), 0 otherwise; skipped imagestreams are always 0."
	helpInvalidSecret   = "1 when imports of the samples lack credentials for registry.redhat.io: reason missing_secret when there is no pull secret openshift-config/pull-secret, missing_tbr_credential when the pull secret has no credentials for registry.redhat.io; both 0 while spec.samplesRegistry is set, and absent while the operator may not read the pull secret."
	helpInvalidConfig   = "1 unless the samples Config's ConfigurationValid condition is True."
	helpDegraded        = "1 while the openshift-samples ClusterOperator is Degraded."
	helpTBRInaccessible = "1 while the samples are Removed because registry.redhat.io was unreachable when the Config was created."
	helpRetries         = "Retries (ImageStreamImports) issued for imagestreams whose imports failed."
	helpBlocked         = "1 for each sample imagestream the operator does not install or update because images.config.openshift.io/cluster spec.allowedRegistriesForImport does not allow its registry."
	helpRefusedWrite    = "1 for each sample whose last write the API server refused for a reason other than RBAC (a quota, an admission plugin or webhook, an invalid object, a 5xx lasting 30 s); the samples Config's SamplesExist quotes the answer."
	helpUnusable        = "1 for each cause that keeps a sample from working on this cluster: kind template or imagestreamtag (name STREAM:TAG), and the reason (KindNotServed, ImageStreamTagMissing, ImageStreamTagSkipped, ImageStreamTagRetired, ImageStreamTagNotImported, ImageStreamTagUnusable, NoImageForNodeArchitectures). The operator keeps the sample, hidden from the catalog unless the Config keeps it offered, and names the cause in its samples.operator.openshift.io/unusable annotation."
	helpRetired         = "1 for each sample an upgrade retired (its inventory no longer has it): kind imagestream, imagestreamtag (name STREAM:TAG) or template, and the version that retired it. The operator keeps it, hidden from the catalog, for the builds and deployments that still use it."
	helpRevertBudget    = "Reverts of a sample the operator held back because it had reverted the sample too often in the last 10 minutes: something keeps rewriting it."
	helpNormalized      = "Fields the operator sets on a sample that the API server changed as it wrote them; the operator takes the server's version as in sync instead of rewriting them."
)

// Inputs are the caches the collector reads. Each is read only at scrape time.
type Inputs struct {
	// Configs lists the samples Config (cluster-scoped).
	Configs samplesv1listers.ConfigLister
	// ConfigMaps lists ConfigMaps; the collector reads the import error ConfigMaps of the operator
	// namespace.
	ConfigMaps corev1listers.ConfigMapLister
	// Secrets lists Secrets; the collector reads openshift-config/pull-secret.
	Secrets corev1listers.SecretLister
	// ImageStreams returns the inventory's imagestream names for a spec.architectures value. The
	// operator passes a wrapper of its inventories' For(arch).
	ImageStreams func(arch string) ([]string, error)
	// Degraded reports whether the ClusterOperator is Degraded. Nil means never.
	Degraded func() bool
	// Blocked maps the sample imagestreams the import allow-list keeps out to their registry.
	Blocked func() map[string]string
	// Refused lists the samples ("ImageStream", "python") whose last write the API server refused.
	Refused func() []RefusedSample
	// Retired lists the samples an upgrade retired.
	Retired func() []desired.Retired
	// Unusable lists the samples that cannot work on this cluster, with their causes.
	Unusable func() []usability.Verdict
}

// RefusedSample is a sample whose last write was refused.
type RefusedSample struct{ Kind, Name string }

// Collector computes the samples gauges from Inputs on every scrape and owns the retry counter.
type Collector struct {
	in Inputs

	failedImport    *prometheus.Desc
	invalidSecret   *prometheus.Desc
	invalidConfig   *prometheus.Desc
	degraded        *prometheus.Desc
	tbrInaccessible *prometheus.Desc
	blocked         *prometheus.Desc
	refusedWrite    *prometheus.Desc
	retired         *prometheus.Desc
	unusable        *prometheus.Desc
	retries         *prometheus.CounterVec
	normalized      *prometheus.CounterVec
	revertBudget    *prometheus.CounterVec
}

var _ prometheus.Collector = (*Collector)(nil)

// NewCollector returns a collector over the given caches.
func NewCollector(in Inputs) *Collector {
	return &Collector{
		in: in,
		failedImport: prometheus.NewDesc(FailedImportName,
			helpFailedImport,
			[]string{"name"}, nil),
		invalidSecret: prometheus.NewDesc(InvalidSecretName,
			helpInvalidSecret,
			[]string{"reason"}, nil),
		invalidConfig: prometheus.NewDesc(InvalidConfigName,
			helpInvalidConfig,
			nil, nil),
		degraded: prometheus.NewDesc(DegradedName,
			helpDegraded,
			nil, nil),
		tbrInaccessible: prometheus.NewDesc(TBRInaccessibleName,
			helpTBRInaccessible,
			nil, nil),
		blocked: prometheus.NewDesc(BlockedName,
			helpBlocked,
			[]string{"name", "registry"}, nil),
		refusedWrite: prometheus.NewDesc(RefusedWriteName,
			helpRefusedWrite,
			[]string{"kind", "name"}, nil),
		unusable: prometheus.NewDesc(UnusableName, helpUnusable, []string{"kind", "name", "reason"}, nil),
		retired: prometheus.NewDesc(RetiredName,
			helpRetired,
			[]string{"kind", "name", "retired_in"}, nil),
		retries: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: RetryImportName,
			Help: helpRetries,
		}, []string{"imagestreamname"}),
		normalized: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: NormalizedName,
			Help: helpNormalized,
		}, []string{"kind", "name", "field"}),
		revertBudget: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: RevertBudgetName,
			Help: helpRevertBudget,
		}, []string{"kind", "name"}),
	}
}

// NewRegistry returns a registry holding the collector and the Go runtime and process collectors.
func NewRegistry(c *Collector) *prometheus.Registry {
	reg := prometheus.NewRegistry()
	reg.MustRegister(c,
		collectors.NewGoCollector(),
		collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	return reg
}

// RetryCounter returns the function the imports controller calls after each retry it issues.
func (c *Collector) RetryCounter() func(stream string) {
	return func(stream string) { c.retries.WithLabelValues(stream).Inc() }
}

// NormalizedCounter returns the function the samples controller calls for each owned field it
// finds the server normalizing.
func (c *Collector) NormalizedCounter() func(kind, name, field string) {
	return func(kind, name, field string) { c.normalized.WithLabelValues(kind, name, field).Inc() }
}

// RevertBudgetCounter returns the function the samples controller calls each time it holds back
// a revert of a sample it reverted too often.
func (c *Collector) RevertBudgetCounter() func(kind, name string) {
	return func(kind, name string) { c.revertBudget.WithLabelValues(kind, name).Inc() }
}

// Describe implements prometheus.Collector.
func (c *Collector) Describe(ch chan<- *prometheus.Desc) {
	ch <- c.failedImport
	ch <- c.invalidSecret
	ch <- c.invalidConfig
	ch <- c.degraded
	ch <- c.tbrInaccessible
	ch <- c.blocked
	ch <- c.refusedWrite
	ch <- c.retired
	ch <- c.unusable
	c.retries.Describe(ch)
	c.normalized.Describe(ch)
	c.revertBudget.Describe(ch)
}

// Collect implements prometheus.Collector.
//
// The degraded, tbr-inaccessible and invalid-config gauges are always emitted; without a Config
// they are 0 (the operator is about to create one). The per-imagestream and secret series are
// emitted only while the Config is Managed: in Removed or Unmanaged no imports are made, so
// neither failed imports nor missing credentials mean anything, and their series are absent.
//
// Unlike upstream, the invalid-config gauge is also computed in Removed and Unmanaged: upstream
// skipped its refresh there and so kept whatever value it had last, which could keep
// SamplesInvalidConfig firing for a Config that had since been fixed and removed.
func (c *Collector) Collect(ch chan<- prometheus.Metric) {
	c.retries.Collect(ch)
	c.normalized.Collect(ch)
	c.revertBudget.Collect(ch)
	ch <- gauge(c.degraded, c.in.Degraded != nil && c.in.Degraded())
	if c.in.Refused != nil {
		// In every state: Removed's deletes can be refused too.
		for _, r := range c.in.Refused() {
			ch <- prometheus.MustNewConstMetric(c.refusedWrite, prometheus.GaugeValue, 1, r.Kind, r.Name)
		}
	}

	cfg, err := c.in.Configs.Get(names.ConfigName)
	if err != nil {
		if !apierrors.IsNotFound(err) {
			klog.ErrorS(err, "Metrics: reading the samples Config from the cache")
		}
		ch <- gauge(c.tbrInaccessible, false)
		ch <- gauge(c.invalidConfig, false)
		return
	}
	reason, _, removedAtBootstrap := bootstrapstate.Of(cfg).Removal()
	ch <- gauge(c.tbrInaccessible, removedAtBootstrap && reason == configspec.ReasonRegistryUnreachable)
	ch <- gauge(c.invalidConfig, !conditionTrue(cfg, samplesv1.ConfigurationValid))

	if state := cfg.Spec.ManagementState; state == operatorv1.Removed || state == operatorv1.Unmanaged {
		return
	}

	c.collectInvalidSecret(ch, cfg)
	c.collectFailedImports(ch, cfg)
	if c.in.Unusable != nil {
		for _, v := range c.in.Unusable() {
			told := map[string]bool{} // two kinds not served are one series
			for _, r := range v.Reasons {
				if !told[r.Code] {
					told[r.Code] = true
					ch <- prometheus.MustNewConstMetric(c.unusable, prometheus.GaugeValue, 1, strings.ToLower(v.Kind), v.Name, r.Code)
				}
			}
		}
	}
	if c.in.Retired != nil {
		for _, r := range c.in.Retired() {
			ch <- prometheus.MustNewConstMetric(c.retired, prometheus.GaugeValue, 1, r.Kind, r.Name, r.Version)
		}
	}
	if c.in.Blocked != nil {
		for name, registry := range c.in.Blocked() {
			ch <- prometheus.MustNewConstMetric(c.blocked, prometheus.GaugeValue, 1, name, registry)
		}
	}
}

// collectInvalidSecret emits one invalid-secret series per cause, so that one alert fires for
// one fix: missing_secret is 1 when there is no pull secret at all, missing_tbr_credential when
// the pull secret exists but holds no usable credentials for registry.redhat.io (no
// .dockerconfigjson, no docker config with auths, no entry for the registry). Both are 0 while
// spec.samplesRegistry points elsewhere. ImportCredentialsExist is False for either cause, so
// the series do not follow it; they follow the pull secret in the cache. While the operator may
// not read the pull secret (ImportCredentialsExist has reason MissingAccess) the empty cache
// says nothing about it: neither series is emitted, and SamplesDegraded (the ClusterOperator is
// Degraded with the same reason) is the alert for that cause.
func (c *Collector) collectInvalidSecret(ch chan<- prometheus.Metric, cfg *samplesv1.Config) {
	if cond := configstatus.Condition(&cfg.Status, samplesv1.ImportCredentialsExist); cond != nil && cond.Reason == configstatus.ReasonMissingAccess {
		return
	}
	secret, err := c.in.Secrets.Secrets(imports.PullSecretNamespace).Get(imports.PullSecretName)
	if err != nil {
		if !apierrors.IsNotFound(err) {
			klog.ErrorS(err, "Metrics: reading the pull secret from the cache")
		}
		secret = nil
	}
	credentialsOK, _ := imports.Credentials(secret, cfg.Spec.SamplesRegistry)
	noSecret := !credentialsOK && secret == nil
	ch <- prometheus.MustNewConstMetric(c.invalidSecret, prometheus.GaugeValue, value(noSecret), ReasonMissingSecret)
	ch <- prometheus.MustNewConstMetric(c.invalidSecret, prometheus.GaugeValue, value(!credentialsOK && !noSecret), ReasonMissingTBRCredential)
}

func (c *Collector) collectFailedImports(ch chan<- prometheus.Metric, cfg *samplesv1.Config) {
	if c.in.ImageStreams == nil {
		return
	}
	streams, err := c.in.ImageStreams(configspec.Architecture(&cfg.Spec))
	if err != nil {
		// No inventory for this architecture: the Config is invalid, and the invalid-config gauge
		// says so; there are no streams to report on.
		return
	}
	errorMaps, err := c.in.ConfigMaps.ConfigMaps(names.OperatorNamespace).List(labels.SelectorFromSet(labels.Set{imports.ErrorLabel: "true"}))
	if err != nil {
		klog.ErrorS(err, "Metrics: listing the import error ConfigMaps from the cache")
		return
	}
	failing := make(map[string]bool, len(errorMaps))
	for _, cm := range errorMaps {
		failing[cm.Name] = true
	}
	for _, name := range streams {
		failed := failing[name] && !slices.Contains(cfg.Spec.SkippedImagestreams, name)
		ch <- prometheus.MustNewConstMetric(c.failedImport, prometheus.GaugeValue, value(failed), name)
	}
}

func conditionTrue(cfg *samplesv1.Config, t samplesv1.ConfigConditionType) bool {
	for _, cond := range cfg.Status.Conditions {
		if cond.Type == t {
			return cond.Status == corev1.ConditionTrue
		}
	}
	return false
}

func gauge(desc *prometheus.Desc, on bool) prometheus.Metric {
	return prometheus.MustNewConstMetric(desc, prometheus.GaugeValue, value(on))
}

func value(on bool) float64 {
	if on {
		return 1
	}
	return 0
}
