// Package names holds the namespaces and object names that every part of the operator, its
// manifests and its plugin must agree on, so that each is written once.
package names

import samplesv1 "github.com/openshift/api/samples/v1"

const (
	// OperatorNamespace is the operator's own namespace: its Deployment, its lease, and the
	// per-imagestream import ConfigMaps.
	OperatorNamespace = "openshift-cluster-samples-operator"
	// SamplesNamespace is where the samples live.
	SamplesNamespace = "openshift"
	// ConfigName is the samples Config singleton's name; Configs with any other name are ignored.
	ConfigName = samplesv1.ConfigName
	// ClusterConfigName is the name of the cluster-wide config.openshift.io singletons (Image,
	// Proxy, Network, Infrastructure, ClusterVersion).
	ClusterConfigName = "cluster"
)
