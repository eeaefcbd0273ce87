package operator

import (
	"time"

	configv1 "github.com/openshift/api/config/v1"
	operatorv1alpha1 "github.com/openshift/api/operator/v1alpha1"
	samplesv1 "github.com/openshift/api/samples/v1"
	imagelisters "github.com/openshift/client-go/image/listers/image/v1"
	sampleslisters "github.com/openshift/client-go/samples/listers/samples/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/client-go/tools/cache"

	"github.com/samples-operator-dev/cluster-samples-operator/pkg/controller/mirrorsetinformers"
	"github.com/samples-operator-dev/cluster-samples-operator/pkg/controller/trigger"
	"github.com/samples-operator-dev/cluster-samples-operator/pkg/imports"
	"github.com/samples-operator-dev/cluster-samples-operator/pkg/names"
)

// PullSecretRolloutWait is how long after a change of openshift-config/pull-secret the failing
// imports are retried a second time. openshift-apiserver does not read that secret: its imports
// use the nodes' /var/lib/kubelet/config.json, which the machine-config operator rewrites from
// the secret on every control-plane node, one node after another, without a drain or a reboot;
// the first retry, at the change, is for the nodes already done.
const PullSecretRolloutWait = 5 * time.Minute

// ServerCacheLag is how long after a change that openshift-apiserver reads through an informer
// of its own (the secrets of openshift, the mirror sets) the failing imports are retried a
// second time. The operator may see the change before that server does: on the real server a
// retry 0.3 s after a secret's create still failed for want of it
// (TestRealImportsHealAsSoonAsTheirCauseGoes), and the next scheduled retry was 30 s away.
const ServerCacheLag = 3 * time.Second

// APIServerOperatorName is the ClusterOperator of openshift-apiserver, whose operator carries the
// image configuration's allowedRegistriesForImport and the cluster Proxy to that server: it
// rewrites the server's configuration (the proxy as its pods' environment) and rolls its pods,
// so a retry at such a change, or seconds after it, still meets the pods of before. The failing
// imports are retried again when the rollout is done, when this ClusterOperator's Progressing
// turns False. No fixed wait would do: a rollout takes minutes, more on a cluster under load.
const APIServerOperatorName = "openshift-apiserver"

// importFixInformers are the informers of what can make a failed import succeed.
type importFixInformers struct {
	config      cache.SharedIndexInformer // samples Config: samplesRegistry
	imageConfig cache.SharedIndexInformer // images.config.openshift.io/cluster
	proxy       cache.SharedIndexInformer // proxies.config.openshift.io/cluster
	pullSecret  cache.SharedIndexInformer // openshift-config/pull-secret
	// apiServerOperator: clusteroperators.config.openshift.io/openshift-apiserver.
	apiServerOperator cache.SharedIndexInformer
	samplesSecret     trigger.Informer // the secrets of openshift, which the imports read
	// importRegistries are the registries the samples' imports reach now (imports.ImportRegistries):
	// only their credentials in the secrets of openshift can fix an import.
	importRegistries func() sets.Set[string]
	mirrorSets       mirrorsetinformers.Informers
	// rolloutWait: the pull secret's change is acted on again that long after.
	rolloutWait time.Duration
}

// importFixes are the changes that retry every failing import at once
// (pkg/controller/importscontrol).
//
// The image configuration and the Proxy are acted on at once, which serves a server run without
// its operator (as in the tests) and a change openshift-apiserver reads without a rollout, and
// again when its rollout ends (the ClusterOperator source), which is when a cluster's server has
// them.
func importFixes(i importFixInformers) []trigger.Source {
	sources := []trigger.Source{
		{Kind: "Config", Informer: i.config, Part: func(o interface{}) interface{} { return o.(*samplesv1.Config).Spec.SamplesRegistry }},
		{Kind: "Image", Informer: i.imageConfig, Part: func(o interface{}) interface{} { return o.(*configv1.Image).Spec }},
		// Its status is what the cluster's components are given, the spec once validated.
		{Kind: "Proxy", Informer: i.proxy, Part: func(o interface{}) interface{} {
			p := o.(*configv1.Proxy)
			return []interface{}{p.Spec, p.Status}
		}},
		{Kind: "ClusterOperator", Informer: i.apiServerOperator, Settled: rolledOut},
		{Kind: "Secret", Informer: i.pullSecret, Part: secretContent, Again: i.rolloutWait},
		{Kind: "Secret", Informer: i.samplesSecret, Part: i.importCredentials, Matters: i.holdsImportCredentials, Again: ServerCacheLag},
		{Kind: "ImageTagMirrorSet", Informer: i.mirrorSets.Tag.Informer(), Part: func(o interface{}) interface{} {
			return o.(*configv1.ImageTagMirrorSet).Spec
		}, Again: ServerCacheLag},
	}
	// Digest mirror sets and ImageContentSourcePolicies serve only references by digest: they
	// are watched only for an inventory pinned to digests, and only then can they fix an import.
	if i.mirrorSets.Digest != nil {
		sources = append(sources, trigger.Source{Kind: "ImageDigestMirrorSet", Informer: i.mirrorSets.Digest.Informer(),
			Part: func(o interface{}) interface{} { return o.(*configv1.ImageDigestMirrorSet).Spec }, Again: ServerCacheLag})
	}
	if i.mirrorSets.ContentPolicy != nil {
		sources = append(sources, trigger.Source{Kind: "ImageContentSourcePolicy", Informer: i.mirrorSets.ContentPolicy.Informer(),
			Part: func(o interface{}) interface{} { return o.(*operatorv1alpha1.ImageContentSourcePolicy).Spec }, Again: ServerCacheLag})
	}
	return sources
}

// rolledOut: a ClusterOperator whose Progressing is False has no rollout under way.
func rolledOut(o interface{}) bool {
	co, ok := o.(*configv1.ClusterOperator)
	if !ok {
		return false
	}
	for _, c := range co.Status.Conditions {
		if c.Type == configv1.OperatorProgressing {
			return c.Status == configv1.ConditionFalse
		}
	}
	return false
}

func secretContent(o interface{}) interface{} {
	s := o.(*corev1.Secret)
	return []interface{}{s.Type, s.Data}
}

// importCredentials is, of a secret of openshift as digestSecretData cached it, the digests of
// the credentials for the registries the samples' imports reach. The secrets openshift-apiserver
// takes import credentials from are of the two docker config types; of these, the internal
// registry's (refreshed by openshift-controller-manager every half hour or so) serve no sample.
func (i importFixInformers) importCredentials(o interface{}) interface{} {
	s, ok := o.(*corev1.Secret)
	if !ok || s.Type != corev1.SecretTypeDockerConfigJson && s.Type != corev1.SecretTypeDockercfg {
		return nil
	}
	digests := make(map[string]string, len(s.Data))
	for host, digest := range s.Data {
		digests[host] = string(digest)
	}
	return imports.CredentialsFor(digests, i.importRegistries())
}

// holdsImportCredentials: a secret whose create or delete can fix or break an import.
func (i importFixInformers) holdsImportCredentials(o interface{}) bool {
	creds, _ := i.importCredentials(o).(map[string]string)
	return len(creds) > 0
}

// digestSecretData keeps, of a secret of openshift in the cache, only digests of its data: the
// operator needs to know which registry's credentials changed, never what they are. A docker
// config secret keeps one digest per registry (imports.CredentialDigests), any other one digest.
func digestSecretData(obj interface{}) (interface{}, error) {
	if s, ok := obj.(*corev1.Secret); ok && s.Data != nil {
		digests, isDockerConfig := imports.CredentialDigests(s.Type, s.Data)
		if !isDockerConfig {
			digests = map[string]string{"sha256": imports.DataDigest(s.Data)}
		}
		s.Data = make(map[string][]byte, len(digests))
		for key, digest := range digests {
			s.Data[key] = []byte(digest)
		}
		s.StringData = nil
	}
	return dropManagedFields(obj)
}

// importRegistries reads from the caches what imports.ImportRegistries needs. A cache that
// cannot be read counts for nothing: a secret's change then goes unnoticed as before the
// caches synced, and the failing imports keep their schedule.
func importRegistries(configs sampleslisters.ConfigLister, streams imagelisters.ImageStreamNamespaceLister, mirrors mirrorsetinformers.Informers) sets.Set[string] {
	var samplesRegistry string
	if cfg, err := configs.Get(names.ConfigName); err == nil {
		samplesRegistry = cfg.Spec.SamplesRegistry
	}
	live, _ := streams.List(labels.Everything())
	mirrorSets, _ := mirrors.Sets()
	return imports.ImportRegistries(live, samplesRegistry, mirrorSets.MirrorLocations())
}
