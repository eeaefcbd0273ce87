package operator

import (
	"crypto/sha256"
	"maps"
	"slices"
	"time"

	configv1 "github.com/openshift/api/config/v1"
	operatorv1alpha1 "github.com/openshift/api/operator/v1alpha1"
	samplesv1 "github.com/openshift/api/samples/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/tools/cache"

	"github.com/samples-operator-dev/cluster-samples-operator/pkg/controller/trigger"
	"github.com/samples-operator-dev/cluster-samples-operator/pkg/mirrorsets"
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
	samplesSecret     cache.SharedIndexInformer // the secrets of openshift, which the imports read
	mirrorSets        mirrorsets.Informers
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
		{Kind: "Secret", Informer: i.samplesSecret, Part: secretContent, Matters: isDockerConfig, Again: ServerCacheLag},
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

// isDockerConfig: openshift-apiserver's imports use the secrets of these two types.
func isDockerConfig(o interface{}) bool {
	s, ok := o.(*corev1.Secret)
	return ok && (s.Type == corev1.SecretTypeDockerConfigJson || s.Type == corev1.SecretTypeDockercfg)
}

// digestSecretData keeps, of a secret of openshift in the cache, only a digest of its data: the
// operator needs to know that the credentials changed, never what they are.
func digestSecretData(obj interface{}) (interface{}, error) {
	if s, ok := obj.(*corev1.Secret); ok && s.Data != nil {
		h := sha256.New()
		for _, key := range slices.Sorted(maps.Keys(s.Data)) {
			h.Write([]byte(key))
			h.Write([]byte{0})
			h.Write(s.Data[key])
			h.Write([]byte{0})
		}
		s.Data = map[string][]byte{"sha256": h.Sum(nil)}
		s.StringData = nil
	}
	return dropManagedFields(obj)
}
