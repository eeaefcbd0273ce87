package configspec

import (
	"fmt"
	"net"
	"strings"

	configv1 "github.com/openshift/api/config/v1"
	operatorv1 "github.com/openshift/api/operator/v1"
	samplesv1 "github.com/openshift/api/samples/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Why a default Config is created Removed. The reason and its message are stored as annotations on
// the Config the operator creates, so they survive restarts and show in status and in the
// ClusterOperator for as long as the Config stays Removed.
const (
	BootstrapReasonAnnotation  = "samples.operator.openshift.io/bootstrap-reason"
	BootstrapMessageAnnotation = "samples.operator.openshift.io/bootstrap-message"

	ReasonNoInventory         = "NoSamplesForArchitecture"
	ReasonIPv6Only            = "IPv6OnlyCluster"
	ReasonImageConfigBlocks   = "ImageConfigBlocksRegistry"
	ReasonRegistryUnreachable = "RegistryUnreachable"
)

// BootstrapFacts is what the operator knows about the cluster when it creates the default Config.
type BootstrapFacts struct {
	GOARCH       string
	HasInventory func(arch string) bool
	Network      *configv1.Network
	Image        *configv1.Image
	Proxy        *configv1.Proxy
	// SourceRegistries are the registries the architecture's inventory pulls from.
	SourceRegistries []string
}

// BootstrapDecision is the management state of the default Config, and why.
type BootstrapDecision struct {
	State   operatorv1.ManagementState
	Reason  string
	Message string
	// ProbeRegistry is set when only a registry probe can decide: Managed if it answers, Removed
	// (ReasonRegistryUnreachable) if not.
	ProbeRegistry bool
}

// DecideBootstrap chooses the default Config's state from the facts, leaving the network probe to
// the caller: it is the only slow step, and it is needed only when nothing else decides.
func DecideBootstrap(f BootstrapFacts) BootstrapDecision {
	arch := ArchitectureForGOARCH(f.GOARCH)
	if arch == "" || (f.HasInventory != nil && !f.HasInventory(arch)) {
		return removed(ReasonNoInventory, fmt.Sprintf("this operator ships no samples for the cluster's architecture %q", f.GOARCH))
	}
	if ipv6Only(f.Network) {
		return removed(ReasonIPv6Only, "the cluster network is IPv6-only and the sample images are served over IPv4: mirror them, set spec.samplesRegistry, then set managementState Managed")
	}
	if blocked, why := RegistryBlocked(f.Image, "", f.SourceRegistries); blocked {
		return removed(ReasonImageConfigBlocks, why)
	}
	if f.Proxy != nil && (f.Proxy.Status.HTTPSProxy != "" || f.Proxy.Status.HTTPProxy != "") {
		// The probe dials directly; through a proxy its answer means nothing. Image imports go
		// through the proxy, so assume they work.
		return BootstrapDecision{State: operatorv1.Managed}
	}
	return BootstrapDecision{State: operatorv1.Managed, ProbeRegistry: true}
}

// AfterProbe turns a decision that needed the probe into a final one.
func (d BootstrapDecision) AfterProbe(target string, probeErr error) BootstrapDecision {
	if !d.ProbeRegistry {
		return d
	}
	if probeErr == nil {
		return BootstrapDecision{State: operatorv1.Managed}
	}
	return removed(ReasonRegistryUnreachable, fmt.Sprintf("the samples registry %s could not be reached (%v): mirror the sample images, set spec.samplesRegistry to the mirror, then set managementState Managed", target, probeErr))
}

func removed(reason, message string) BootstrapDecision {
	return BootstrapDecision{State: operatorv1.Removed, Reason: reason, Message: message}
}

// DefaultConfig is the Config the operator creates when none exists.
func DefaultConfig(goarch string, d BootstrapDecision) *samplesv1.Config {
	cfg := &samplesv1.Config{
		ObjectMeta: metav1.ObjectMeta{
			Name:       ConfigName,
			Finalizers: []string{samplesv1.ConfigFinalizer},
		},
		Spec: samplesv1.ConfigSpec{
			ManagementState:     d.State,
			SkippedImagestreams: []string{},
			SkippedTemplates:    []string{},
		},
	}
	if arch := ArchitectureForGOARCH(goarch); arch != "" {
		cfg.Spec.Architectures = []string{arch}
	}
	if d.Reason != "" {
		cfg.Annotations = map[string]string{
			BootstrapReasonAnnotation:  d.Reason,
			BootstrapMessageAnnotation: d.Message,
		}
	}
	return cfg
}

// BootstrapRemoval returns why the operator created this Config Removed, while it still is.
func BootstrapRemoval(cfg *samplesv1.Config) (reason, message string, ok bool) {
	reason = cfg.Annotations[BootstrapReasonAnnotation]
	if reason == "" || cfg.Spec.ManagementState != operatorv1.Removed {
		return "", "", false
	}
	return reason, cfg.Annotations[BootstrapMessageAnnotation], true
}

func ipv6Only(n *configv1.Network) bool {
	if n == nil {
		return false
	}
	var cidrs []string
	for _, c := range n.Status.ClusterNetwork {
		cidrs = append(cidrs, c.CIDR)
	}
	cidrs = append(cidrs, n.Status.ServiceNetwork...)
	if len(cidrs) == 0 {
		for _, c := range n.Spec.ClusterNetwork {
			cidrs = append(cidrs, c.CIDR)
		}
		cidrs = append(cidrs, n.Spec.ServiceNetwork...)
	}
	if len(cidrs) == 0 {
		return false
	}
	for _, c := range cidrs {
		ip, _, err := net.ParseCIDR(strings.TrimSpace(c))
		if err != nil || ip.To4() != nil {
			return false
		}
	}
	return true
}
