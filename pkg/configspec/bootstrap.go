package configspec

import (
	"fmt"
	"net"
	"strings"
	"time"

	configv1 "github.com/openshift/api/config/v1"
	operatorv1 "github.com/openshift/api/operator/v1"

	"github.com/samples-operator-dev/cluster-samples-operator/pkg/importallow"
	"github.com/samples-operator-dev/cluster-samples-operator/pkg/mirrorsets"
)

// Why a default Config is created Removed. pkg/bootstrapstate records the reason and its message on
// the Config the operator creates, so they survive restarts and show in status and in the
// ClusterOperator for as long as the Config stays the operator's Removed.
const (
	ReasonNoInventory         = "NoSamplesForArchitecture"
	ReasonIPv6Only            = "IPv6OnlyCluster"
	ReasonImageConfigBlocks   = "ImageConfigBlocksRegistry"
	ReasonRegistryUnreachable = "RegistryUnreachable"
	// ReasonRegistryReachable is on a Config the operator switched to Managed because the registry
	// answered after it had been unreachable at install.
	ReasonRegistryReachable = "RegistryReachable"
	// ReasonThroughMirrorSets is on a Config the operator created Managed (or switched to
	// Managed) because the mirrors of the cluster's mirror sets answered for the samples' images.
	ReasonThroughMirrorSets = "ImagesThroughMirrorSets"
)

// RegistryRecheckMax caps the backoff between probes of a registry that did not answer at install.
const RegistryRecheckMax = 30 * time.Minute

// BootstrapFacts is what the operator knows about the cluster when it creates the default Config.
type BootstrapFacts struct {
	GOARCH       string
	HasInventory func(arch string) bool
	Network      *configv1.Network
	Image        *configv1.Image
	Proxy        *configv1.Proxy
	// SourceRegistries are the registries the architecture's inventory pulls from.
	SourceRegistries []string
	// Mirrors is what the cluster's mirror sets do for the inventory's images (nil: nothing), and
	// MirrorsFingerprint the mirror sets it was judged on (mirrorsets.Sets.Fingerprint).
	Mirrors            *mirrorsets.Coverage
	MirrorsFingerprint string
}

// BootstrapDecision is the management state of the default Config, and why.
type BootstrapDecision struct {
	State   operatorv1.ManagementState
	Reason  string
	Message string
	// ProbeRegistry is set when only a registry probe can decide: Managed if it answers, Removed
	// (ReasonRegistryUnreachable) if not.
	ProbeRegistry bool
	// ProbeMirrors is set instead when the cluster's mirror sets serve some of the samples'
	// images: the addresses to probe (the mirrors of those images, the registries of the others);
	// AfterMirrorProbe decides.
	ProbeMirrors []string
	// Mirrors is the coverage ProbeMirrors came from.
	Mirrors *mirrorsets.Coverage
	// Unimportable maps, on a Managed decision through mirror sets, each imagestream that will not
	// import to the registries of its images that neither a mirror nor the registry serves.
	Unimportable map[string][]string
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
	if why, all := importallow.BlocksAll(f.Image, f.SourceRegistries); all {
		return removed(ReasonImageConfigBlocks, why)
	}
	if f.Proxy != nil && (f.Proxy.Status.HTTPSProxy != "" || f.Proxy.Status.HTTPProxy != "") {
		// The probe dials directly; through a proxy its answer means nothing. Image imports go
		// through the proxy, so assume they work.
		return BootstrapDecision{State: operatorv1.Managed}
	}
	if f.Mirrors != nil && f.Mirrors.Any() {
		// openshift-apiserver imports the samples' images from the mirrors: those are what must
		// answer, not the registries they mirror.
		return BootstrapDecision{State: operatorv1.Managed, ProbeMirrors: f.Mirrors.ProbeTargets(), Mirrors: f.Mirrors}
	}
	// Mirror sets that serve none of the images (tag mirrors for a pinned inventory, say) are
	// named should the registry not answer.
	return BootstrapDecision{State: operatorv1.Managed, ProbeRegistry: true, Mirrors: f.Mirrors}
}

// AfterMirrorProbe turns a decision that needed the mirrors probed into a final one, answered
// telling which of d.ProbeMirrors answered: Managed when any image can import, with the mirror
// sets and the imagestreams that will not import recorded; Removed (ReasonRegistryUnreachable)
// when none can.
func (d BootstrapDecision) AfterMirrorProbe(answered func(address string) bool) BootstrapDecision {
	if len(d.ProbeMirrors) == 0 || d.Mirrors == nil {
		return d
	}
	var silent []string
	for _, a := range d.ProbeMirrors {
		if !answered(a) {
			silent = append(silent, a)
		}
	}
	sets := strings.Join(d.Mirrors.By(), ", ")
	if len(silent) == len(d.ProbeMirrors) {
		return removed(ReasonRegistryUnreachable, fmt.Sprintf("the cluster's mirror sets (%s) serve the samples' images, but none of the mirrors and registries they are imported from answered (%s): check the mirrors, or set spec.samplesRegistry to a mirror that answers, then set managementState Managed", sets, strings.Join(silent, ", ")))
	}
	out := BootstrapDecision{State: operatorv1.Managed, Reason: ReasonThroughMirrorSets, Mirrors: d.Mirrors}
	out.Message = fmt.Sprintf("the samples' images are imported through the cluster's mirror sets (%s), whose mirrors answered instead of the registries", sets)
	if unimportable := d.Mirrors.Unimportable(answered); len(unimportable) > 0 {
		out.Unimportable = unimportable
		out.Message += fmt.Sprintf("; %s will not import: none of the places their images are imported from answered (%s): mirror those images in a mirror set whose mirror answers, or skip them in spec.skippedImagestreams",
			mirrorsets.StreamsPhrase(unimportable), strings.Join(silent, ", "))
	}
	return out
}

// AfterProbe turns a decision that needed the probe into a final one.
func (d BootstrapDecision) AfterProbe(target string, probeErr error) BootstrapDecision {
	if !d.ProbeRegistry {
		return d
	}
	if probeErr == nil {
		return BootstrapDecision{State: operatorv1.Managed}
	}
	out := removed(ReasonRegistryUnreachable, fmt.Sprintf("the samples registry %s could not be reached (%v): mirror the sample images, set spec.samplesRegistry to the mirror, then set managementState Managed", target, probeErr))
	if d.Mirrors != nil {
		out.Message += "; the cluster's mirror sets serve none of the samples' images (ImageTagMirrorSets serve references by tag, ImageDigestMirrorSets and ImageContentSourcePolicies references by digest, as a pinned inventory has them): a mirror set for their registries also brings them in"
	}
	return out
}

func removed(reason, message string) BootstrapDecision {
	return BootstrapDecision{State: operatorv1.Removed, Reason: reason, Message: message}
}

// RegistryRecheckDelay is the wait before probe number failures+1 of a registry that did not
// answer: base, 2 base, 4 base ... up to RegistryRecheckMax.
func RegistryRecheckDelay(base time.Duration, failures int) time.Duration {
	d := base
	for i := 0; i < failures && d < RegistryRecheckMax; i++ {
		d *= 2
	}
	return min(d, RegistryRecheckMax)
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
