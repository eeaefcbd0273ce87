package bundle

import (
	_ "embed"
	"encoding/base64"
	"fmt"
	"strings"
	"time"

	"github.com/samples-operator-dev/cluster-samples-operator/pkg/pin"
)

// What an OpenShift catalog and its console show about the operator besides the install
// strategy: provider, icon, links, capability level, categories, subscriptions, and the
// infrastructure features OperatorHub filters on.

const (
	// Repository is the operator's source, linked from the CSV.
	Repository = "https://github.com/samples-operator-dev/cluster-samples-operator"

	providerName = "samples-operator-dev"
	providerURL  = "https://github.com/samples-operator-dev"

	// DefaultCreatedAt is the CSV's createdAt when the caller gives none. The committed
	// development bundle must come out byte for byte the same on every run, so the date
	// cannot be the clock's; nor can it be the last commit's, since the commit that updates
	// bundle/ would itself make that date stale. A release passes the date it is cut
	// (make bundle BUNDLE_CREATED_AT=...), which is as fixed an input as its version.
	DefaultCreatedAt = "2026-11-23T00:00:00Z"

	// MinKubeVersion is the oldest Kubernetes the bundle is for: the Config CRD validates
	// spec.skippedImagestreams and spec.skippedTemplates with CEL rules
	// (x-kubernetes-validations), which are GA, and so enforced on every cluster, from 1.29.
	// On an older API server the rules may be off and a malformed name would reach the operator.
	MinKubeVersion = "1.29.0"

	// FeatureAnnotationPrefix is the group of OpenShift's infrastructure feature annotations.
	FeatureAnnotationPrefix = "features.operators.openshift.io/"
)

// iconSVG is the operator's own icon: a stack of sample entries.
//
//go:embed icon.svg
var iconSVG []byte

// capabilityLevel is the operator's level on the Operator Capability scale. It installs
// the samples (Basic Install) and upgrades itself and them without an administrator: a new
// version updates every sample to its inventory, the outgoing leader releases its lease so
// the new pod takes over at once, and the ClusterOperator reports the version it has
// reached (Seamless Upgrades). It stops short of Full Lifecycle: that level is about the
// operand's data (backup, restore, failover), and the samples have none; re-creating a
// deleted sample from the inventory is the install being kept, not recovery.
const capabilityLevel = "Seamless Upgrades"

// categories are from OperatorHub's standard list: the samples are starting points for
// developers, and the operator is an optional OpenShift component (capability
// openshift-samples).
const categories = "Developer Tools,OpenShift Optional"

// validSubscription is what a cluster must be entitled to for support: the samples are
// part of OpenShift Container Platform.
const validSubscription = `["OpenShift Container Platform", "OpenShift Platform Plus"]`

// infrastructureFeatures returns every features.operators.openshift.io annotation, "true"
// only where the operator supports the feature, so that OperatorHub's filters neither
// hide it nor show it where it does not work.
func infrastructureFeatures(disconnected bool) map[string]string {
	features := map[string]bool{
		// OpenShift's meaning: every related image, the operator's included, is referred to
		// by digest. The mirror configuration that oc-mirror writes (ImageDigestMirrorSet)
		// redirects pulls by digest only, and a tag may name other content in the mirror than
		// at the source. Decided from the images, never from a flag, so that a bundle with a
		// tag left cannot claim it.
		"disconnected": disconnected,
		// The binary is built with CGO_ENABLED=0 and without GOFIPS140: its TLS uses Go's
		// standard cryptography, not the platform's FIPS-validated libraries (OpenSSL), so it
		// cannot claim to run in FIPS mode.
		"fips-compliant": false,
		// The operator needs no direct internet access. Its only outbound connection, the
		// bootstrap probe of registry.redhat.io, is skipped when the cluster Proxy
		// (proxies.config.openshift.io/cluster) sets an HTTP(S) proxy, because a direct
		// dial says nothing there; image imports go through the cluster's importer, which
		// uses the proxy. It runs as designed behind a proxy.
		"proxy-aware": true,
		// The metrics endpoint, its only server, takes its TLS versions and ciphers from the
		// cluster's profile (apiservers.config.openshift.io/cluster) and follows changes
		// (pkg/tlsprofile, TestMetricsServerFollowsTheClusterTLSProfile).
		"tls-profiles": true,
		// The operator calls no cloud API and requests no cloud credentials, so there is no
		// short-lived token flow (AWS STS, Azure workload identity, GCP workload identity)
		// to support; "true" would make the console ask for cloud roles it never uses.
		"token-auth-aws":   false,
		"token-auth-azure": false,
		"token-auth-gcp":   false,
		// Not a network function, network plugin or storage driver.
		"cnf": false,
		"cni": false,
		"csi": false,
	}
	out := make(map[string]string, len(features))
	for k, v := range features {
		out[FeatureAnnotationPrefix+k] = fmt.Sprint(v)
	}
	return out
}

// ByDigest reports whether ref names its image by a well-formed sha256 digest, the only
// reference a disconnected bundle may hold.
func ByDigest(ref string) bool {
	i := strings.LastIndex(ref, "@")
	return i > 0 && pin.ValidateDigest(ref[i+1:]) == nil
}

func allByDigest(refs []string) bool {
	for _, r := range refs {
		if !ByDigest(r) {
			return false
		}
	}
	return true
}

// createdAt normalizes the CSV's createdAt: an RFC 3339 time, or a date, in UTC.
func createdAt(s string) (string, error) {
	if s == "" {
		s = DefaultCreatedAt
	}
	t, err := time.Parse(time.RFC3339, s)
	if err != nil {
		if t, err = time.Parse(time.DateOnly, s); err != nil {
			return "", fmt.Errorf("created-at %q is neither an RFC 3339 time (2026-01-31T12:00:00Z) nor a date (2026-01-31)", s)
		}
	}
	return t.UTC().Format(time.RFC3339), nil
}

// skipRange lets OLM upgrade to this version from any earlier one directly: each version
// converges the samples from whatever state it finds, the upstream payload's included, so
// no intermediate version is needed.
func skipRange(version string) string {
	return ">=0.0.0 <" + version
}

func icons() []icon {
	return []icon{{Data: base64.StdEncoding.EncodeToString(iconSVG), MediaType: "image/svg+xml"}}
}
