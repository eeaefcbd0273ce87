package configspec

import (
	"errors"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	configv1 "github.com/openshift/api/config/v1"
	operatorv1 "github.com/openshift/api/operator/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/samples-operator-dev/cluster-samples-operator/pkg/mirrorsets"
)

func network(statusCIDRs, specCIDRs []string, statusServices, specServices []string) *configv1.Network {
	n := &configv1.Network{ObjectMeta: metav1.ObjectMeta{Name: "cluster"}}
	for _, c := range statusCIDRs {
		n.Status.ClusterNetwork = append(n.Status.ClusterNetwork, configv1.ClusterNetworkEntry{CIDR: c, HostPrefix: 23})
	}
	for _, c := range specCIDRs {
		n.Spec.ClusterNetwork = append(n.Spec.ClusterNetwork, configv1.ClusterNetworkEntry{CIDR: c, HostPrefix: 23})
	}
	n.Status.ServiceNetwork = statusServices
	n.Spec.ServiceNetwork = specServices
	return n
}

func proxy(https, http, noProxy string) *configv1.Proxy {
	return &configv1.Proxy{
		ObjectMeta: metav1.ObjectMeta{Name: "cluster"},
		Status:     configv1.ProxyStatus{HTTPSProxy: https, HTTPProxy: http, NoProxy: noProxy},
	}
}

func TestDecideBootstrap(t *testing.T) {
	hasAll := func(string) bool { return true }
	v4 := network([]string{"10.128.0.0/14"}, nil, []string{"172.30.0.0/16"}, nil)
	v6 := network([]string{"fd01::/48"}, nil, []string{"fd02::/112"}, nil)
	cases := []struct {
		name  string
		facts BootstrapFacts
		want  BootstrapDecision
		// wantMsg are substrings of the message.
		wantMsg []string
	}{
		{
			name:  "plain cluster needs the probe",
			facts: BootstrapFacts{GOARCH: "amd64", HasInventory: hasAll, Network: v4},
			want:  BootstrapDecision{State: operatorv1.Managed, ProbeRegistry: true},
		},
		{
			name:  "no facts beyond GOARCH needs the probe",
			facts: BootstrapFacts{GOARCH: "arm64"},
			want:  BootstrapDecision{State: operatorv1.Managed, ProbeRegistry: true},
		},
		{
			name:    "unknown GOARCH",
			facts:   BootstrapFacts{GOARCH: "riscv64", HasInventory: hasAll},
			want:    BootstrapDecision{State: operatorv1.Removed, Reason: ReasonNoInventory},
			wantMsg: []string{`this operator ships no samples for the cluster's architecture "riscv64"`},
		},
		{
			name:    "unknown GOARCH without HasInventory",
			facts:   BootstrapFacts{GOARCH: "386"},
			want:    BootstrapDecision{State: operatorv1.Removed, Reason: ReasonNoInventory},
			wantMsg: []string{`"386"`},
		},
		{
			name:    "no inventory for a known architecture",
			facts:   BootstrapFacts{GOARCH: "s390x", HasInventory: func(a string) bool { return a == "x86_64" }},
			want:    BootstrapDecision{State: operatorv1.Removed, Reason: ReasonNoInventory},
			wantMsg: []string{`"s390x"`},
		},
		{
			name:  "inventory is looked up under the Config's architecture name",
			facts: BootstrapFacts{GOARCH: "amd64", HasInventory: func(a string) bool { return a == "x86_64" }},
			want:  BootstrapDecision{State: operatorv1.Managed, ProbeRegistry: true},
		},
		{
			name:    "no inventory wins over every other fact",
			facts:   BootstrapFacts{GOARCH: "arm64", HasInventory: func(string) bool { return false }, Network: v6, Image: blockSources("registry.redhat.io"), Proxy: proxy("http://proxy:3128", "", "")},
			want:    BootstrapDecision{State: operatorv1.Removed, Reason: ReasonNoInventory},
			wantMsg: []string{"ships no samples"},
		},

		// IPv6.
		{
			name:    "IPv6-only from status",
			facts:   BootstrapFacts{GOARCH: "amd64", HasInventory: hasAll, Network: v6},
			want:    BootstrapDecision{State: operatorv1.Removed, Reason: ReasonIPv6Only},
			wantMsg: []string{"IPv6-only", "spec.samplesRegistry", "managementState Managed"},
		},
		{
			name:    "IPv6-only from spec when status is empty",
			facts:   BootstrapFacts{GOARCH: "amd64", HasInventory: hasAll, Network: network(nil, []string{"fd01::/48"}, nil, []string{"fd02::/112"})},
			want:    BootstrapDecision{State: operatorv1.Removed, Reason: ReasonIPv6Only},
			wantMsg: []string{"IPv6-only"},
		},
		{
			name:  "status wins over spec",
			facts: BootstrapFacts{GOARCH: "amd64", HasInventory: hasAll, Network: network([]string{"10.128.0.0/14"}, []string{"fd01::/48"}, nil, []string{"fd02::/112"})},
			want:  BootstrapDecision{State: operatorv1.Managed, ProbeRegistry: true},
		},
		{
			name:    "IPv6-only cluster network, no service network",
			facts:   BootstrapFacts{GOARCH: "amd64", HasInventory: hasAll, Network: network([]string{"fd01::/48"}, nil, nil, nil)},
			want:    BootstrapDecision{State: operatorv1.Removed, Reason: ReasonIPv6Only},
			wantMsg: []string{"IPv6-only"},
		},
		{
			name:  "dual-stack cluster network is not IPv6-only",
			facts: BootstrapFacts{GOARCH: "amd64", HasInventory: hasAll, Network: network([]string{"10.128.0.0/14", "fd01::/48"}, nil, []string{"172.30.0.0/16", "fd02::/112"}, nil)},
			want:  BootstrapDecision{State: operatorv1.Managed, ProbeRegistry: true},
		},
		{
			name:  "dual-stack with IPv6 first is not IPv6-only",
			facts: BootstrapFacts{GOARCH: "amd64", HasInventory: hasAll, Network: network([]string{"fd01::/48", "10.128.0.0/14"}, nil, []string{"fd02::/112", "172.30.0.0/16"}, nil)},
			want:  BootstrapDecision{State: operatorv1.Managed, ProbeRegistry: true},
		},
		{
			name:  "IPv6 pods with an IPv4 service network is not IPv6-only",
			facts: BootstrapFacts{GOARCH: "amd64", HasInventory: hasAll, Network: network([]string{"fd01::/48"}, nil, []string{"172.30.0.0/16"}, nil)},
			want:  BootstrapDecision{State: operatorv1.Managed, ProbeRegistry: true},
		},
		{
			name:  "an unparsable CIDR is not IPv6-only",
			facts: BootstrapFacts{GOARCH: "amd64", HasInventory: hasAll, Network: network([]string{"fd01::/48", "garbage"}, nil, nil, nil)},
			want:  BootstrapDecision{State: operatorv1.Managed, ProbeRegistry: true},
		},
		{
			name:  "an empty network config is not IPv6-only",
			facts: BootstrapFacts{GOARCH: "amd64", HasInventory: hasAll, Network: network(nil, nil, nil, nil)},
			want:  BootstrapDecision{State: operatorv1.Managed, ProbeRegistry: true},
		},
		{
			name:  "IPv4-mapped IPv6 is IPv4",
			facts: BootstrapFacts{GOARCH: "amd64", HasInventory: hasAll, Network: network([]string{"::ffff:10.0.0.0/104"}, nil, nil, nil)},
			want:  BootstrapDecision{State: operatorv1.Managed, ProbeRegistry: true},
		},
		{
			name:    "IPv6-only wins over image config and proxy",
			facts:   BootstrapFacts{GOARCH: "amd64", HasInventory: hasAll, Network: v6, Image: blockSources("registry.redhat.io"), Proxy: proxy("http://proxy:3128", "", "")},
			want:    BootstrapDecision{State: operatorv1.Removed, Reason: ReasonIPv6Only},
			wantMsg: []string{"IPv6-only"},
		},

		// Image config.
		{
			name:    "the import allow-list allows none of the inventory's registries",
			facts:   BootstrapFacts{GOARCH: "amd64", HasInventory: hasAll, Network: v4, Image: allowForImport("quay.io"), SourceRegistries: []string{"registry.access.redhat.com", "registry.redhat.io"}},
			want:    BootstrapDecision{State: operatorv1.Removed, Reason: ReasonImageConfigBlocks},
			wantMsg: []string{"allowedRegistriesForImport allows none of the registries the samples use (registry.access.redhat.com, registry.redhat.io)"},
		},
		{
			// The samples from registry.redhat.io install; those from registry.access.redhat.com are named.
			name:  "the import allow-list allows one of the inventory's registries",
			facts: BootstrapFacts{GOARCH: "amd64", HasInventory: hasAll, Network: v4, Image: allowForImport("registry.redhat.io", "quay.io"), SourceRegistries: []string{"registry.access.redhat.com", "registry.redhat.io"}},
			want:  BootstrapDecision{State: operatorv1.Managed, ProbeRegistry: true},
		},
		{
			// The server matches whole hosts: redhat.io allows neither.
			name:  "a parent domain is no match",
			facts: BootstrapFacts{GOARCH: "amd64", HasInventory: hasAll, Network: v4, Image: allowForImport("redhat.io"), SourceRegistries: []string{"registry.access.redhat.com", "registry.redhat.io"}},
			want:  BootstrapDecision{State: operatorv1.Removed, Reason: ReasonImageConfigBlocks},
		},
		{
			name:    "blockedRegistries blocks the default registry",
			facts:   BootstrapFacts{GOARCH: "amd64", HasInventory: hasAll, Image: blockSources("registry.redhat.io")},
			want:    BootstrapDecision{State: operatorv1.Removed, Reason: ReasonImageConfigBlocks},
			wantMsg: []string{"blockedRegistries blocks registry.redhat.io"},
		},
		{
			name:    "image config wins over the proxy",
			facts:   BootstrapFacts{GOARCH: "amd64", HasInventory: hasAll, Image: allowSources("quay.io"), Proxy: proxy("http://proxy:3128", "", "")},
			want:    BootstrapDecision{State: operatorv1.Removed, Reason: ReasonImageConfigBlocks},
			wantMsg: []string{"allowedRegistries does not include registry.redhat.io"},
		},
		{
			name:  "image config that allows the default registry",
			facts: BootstrapFacts{GOARCH: "amd64", HasInventory: hasAll, Image: allowForImport("redhat.io")},
			want:  BootstrapDecision{State: operatorv1.Managed, ProbeRegistry: true},
		},

		// Proxy.
		{
			name:  "httpsProxy skips the probe",
			facts: BootstrapFacts{GOARCH: "amd64", HasInventory: hasAll, Network: v4, Proxy: proxy("http://proxy.example.com:3128", "", "")},
			want:  BootstrapDecision{State: operatorv1.Managed},
		},
		{
			name:  "httpProxy skips the probe",
			facts: BootstrapFacts{GOARCH: "amd64", HasInventory: hasAll, Network: v4, Proxy: proxy("", "http://proxy.example.com:3128", "")},
			want:  BootstrapDecision{State: operatorv1.Managed},
		},
		{
			name:  "noProxy alone needs the probe",
			facts: BootstrapFacts{GOARCH: "amd64", HasInventory: hasAll, Proxy: proxy("", "", ".cluster.local")},
			want:  BootstrapDecision{State: operatorv1.Managed, ProbeRegistry: true},
		},
		{
			name: "a proxy only in spec (not yet applied) needs the probe",
			facts: BootstrapFacts{GOARCH: "amd64", HasInventory: hasAll, Proxy: &configv1.Proxy{
				Spec: configv1.ProxySpec{HTTPSProxy: "http://proxy.example.com:3128"},
			}},
			want: BootstrapDecision{State: operatorv1.Managed, ProbeRegistry: true},
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got := DecideBootstrap(tc.facts)
			msg := got.Message
			got.Message = ""
			if !reflect.DeepEqual(got, tc.want) {
				t.Errorf("DecideBootstrap = %+v, want %+v", got, tc.want)
			}
			if tc.want.State == operatorv1.Managed && msg != "" {
				t.Errorf("Managed decision with message %q", msg)
			}
			if tc.want.State == operatorv1.Removed && msg == "" {
				t.Errorf("Removed decision without a message")
			}
			for _, want := range tc.wantMsg {
				if !strings.Contains(msg, want) {
					t.Errorf("message %q, want it to contain %q", msg, want)
				}
			}
		})
	}
}

func TestAfterProbe(t *testing.T) {
	probeErr := errors.New("dial tcp: i/o timeout")
	needsProbe := BootstrapDecision{State: operatorv1.Managed, ProbeRegistry: true}
	proxied := BootstrapDecision{State: operatorv1.Managed}
	ipv6 := BootstrapDecision{State: operatorv1.Removed, Reason: ReasonIPv6Only, Message: "ipv6"}
	cases := []struct {
		name     string
		decision BootstrapDecision
		err      error
		want     BootstrapDecision
		wantMsg  []string
	}{
		{name: "probe answered", decision: needsProbe, err: nil, want: BootstrapDecision{State: operatorv1.Managed}},
		{
			name: "probe failed", decision: needsProbe, err: probeErr,
			want:    BootstrapDecision{State: operatorv1.Removed, Reason: ReasonRegistryUnreachable},
			wantMsg: []string{"the samples registry registry.redhat.io:443 could not be reached (dial tcp: i/o timeout)", "spec.samplesRegistry", "managementState Managed"},
		},
		{name: "no probe needed, success ignored", decision: proxied, err: nil, want: proxied},
		{name: "no probe needed, failure ignored", decision: proxied, err: probeErr, want: proxied},
		{name: "a Removed decision stays", decision: ipv6, err: nil, want: ipv6, wantMsg: []string{"ipv6"}},
		{name: "a Removed decision keeps its reason", decision: ipv6, err: probeErr, want: ipv6, wantMsg: []string{"ipv6"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got := tc.decision.AfterProbe("registry.redhat.io:443", tc.err)
			msg := got.Message
			got.Message, tc.want.Message = "", ""
			if !reflect.DeepEqual(got, tc.want) {
				t.Errorf("AfterProbe = %+v, want %+v", got, tc.want)
			}
			if got.ProbeRegistry {
				t.Errorf("AfterProbe left ProbeRegistry set")
			}
			for _, want := range tc.wantMsg {
				if !strings.Contains(msg, want) {
					t.Errorf("message %q, want it to contain %q", msg, want)
				}
			}
			if tc.want.State == operatorv1.Managed && msg != "" {
				t.Errorf("Managed with message %q", msg)
			}
		})
	}
}

func TestRegistryRecheckDelay(t *testing.T) {
	// 1, 2, 4 ... minutes, at most 30.
	want := []time.Duration{time.Minute, 2 * time.Minute, 4 * time.Minute, 8 * time.Minute, 16 * time.Minute, 30 * time.Minute, 30 * time.Minute}
	for failures, w := range want {
		if got := RegistryRecheckDelay(time.Minute, failures); got != w {
			t.Errorf("after %d failures: %s, want %s", failures, got, w)
		}
	}
	if got := RegistryRecheckDelay(time.Minute, 1000); got != 30*time.Minute {
		t.Errorf("after 1000 failures: %s", got)
	}
}

// mirrored is a coverage of two imagestreams: python on registry.redhat.io, mirrored to
// 127.0.0.1:5000 when rh is set, and ruby on quay.io, mirrored to 127.0.0.1:6000 when quay is.
func mirrored(rh, quay bool) *mirrorsets.Coverage {
	var sets mirrorsets.Sets
	if rh {
		sets.Tag = append(sets.Tag, &configv1.ImageTagMirrorSet{ObjectMeta: metav1.ObjectMeta{Name: "rh"}, Spec: configv1.ImageTagMirrorSetSpec{
			ImageTagMirrors: []configv1.ImageTagMirrors{{Source: "registry.redhat.io", Mirrors: []configv1.ImageMirror{"127.0.0.1:5000/rh"}}}}})
	}
	if quay {
		sets.Tag = append(sets.Tag, &configv1.ImageTagMirrorSet{ObjectMeta: metav1.ObjectMeta{Name: "quay"}, Spec: configv1.ImageTagMirrorSetSpec{
			ImageTagMirrors: []configv1.ImageTagMirrors{{Source: "quay.io", Mirrors: []configv1.ImageMirror{"127.0.0.1:6000/q"}}}}})
	}
	c := mirrorsets.Cover(sets, map[string][]string{
		"python": {"registry.redhat.io/ubi9/python-311:1"},
		"ruby":   {"quay.io/fedora/ruby-33:1"},
	})
	return &c
}

func TestDecideBootstrapWithMirrorSets(t *testing.T) {
	hasAll := func(string) bool { return true }
	for _, tc := range []struct {
		name    string
		mirrors *mirrorsets.Coverage
		proxy   *configv1.Proxy
		want    BootstrapDecision
	}{
		{name: "mirror sets that serve no image: the registry is probed", mirrors: mirrored(false, false),
			want: BootstrapDecision{State: operatorv1.Managed, ProbeRegistry: true, Mirrors: mirrored(false, false)}},
		{name: "every registry mirrored: the mirrors are probed", mirrors: mirrored(true, true),
			want: BootstrapDecision{State: operatorv1.Managed, ProbeMirrors: []string{"127.0.0.1:5000", "127.0.0.1:6000"}, Mirrors: mirrored(true, true)}},
		{name: "some registries mirrored: their mirrors and the other registries are probed", mirrors: mirrored(true, false),
			want: BootstrapDecision{State: operatorv1.Managed, ProbeMirrors: []string{"127.0.0.1:5000", "quay.io:443"}, Mirrors: mirrored(true, false)}},
		{name: "a cluster proxy still decides without a probe", mirrors: mirrored(true, true), proxy: proxy("http://proxy:3128", "", ""),
			want: BootstrapDecision{State: operatorv1.Managed}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := DecideBootstrap(BootstrapFacts{GOARCH: "amd64", HasInventory: hasAll, Mirrors: tc.mirrors, Proxy: tc.proxy})
			if !reflect.DeepEqual(got, tc.want) {
				t.Errorf("DecideBootstrap = %+v, want %+v", got, tc.want)
			}
		})
	}
}

func TestAfterMirrorProbe(t *testing.T) {
	answering := func(addrs ...string) func(string) bool {
		return func(a string) bool { return slices.Contains(addrs, a) }
	}
	for _, tc := range []struct {
		name         string
		mirrors      *mirrorsets.Coverage
		answered     func(string) bool
		want         operatorv1.ManagementState
		reason       string
		unimportable map[string][]string
		msg          []string
	}{
		{name: "every mirror answers", mirrors: mirrored(true, true), answered: answering("127.0.0.1:5000", "127.0.0.1:6000"),
			want: operatorv1.Managed, reason: ReasonThroughMirrorSets,
			msg: []string{"imported through the cluster's mirror sets (ImageTagMirrorSet/quay, ImageTagMirrorSet/rh)"}},
		{name: "nothing answers", mirrors: mirrored(true, true), answered: answering(),
			want: operatorv1.Removed, reason: ReasonRegistryUnreachable,
			msg: []string{"(ImageTagMirrorSet/quay, ImageTagMirrorSet/rh)", "none of the mirrors and registries", "(127.0.0.1:5000, 127.0.0.1:6000)", "spec.samplesRegistry"}},
		{name: "one mirror answers: the samples of the other will not import", mirrors: mirrored(true, true), answered: answering("127.0.0.1:5000"),
			want: operatorv1.Managed, reason: ReasonThroughMirrorSets, unimportable: map[string][]string{"ruby": {"quay.io"}},
			msg: []string{"1 imagestreams (registry quay.io): ruby will not import", "(127.0.0.1:6000)"}},
		{name: "partly mirrored, the other registry does not answer", mirrors: mirrored(true, false), answered: answering("127.0.0.1:5000"),
			want: operatorv1.Managed, reason: ReasonThroughMirrorSets, unimportable: map[string][]string{"ruby": {"quay.io"}},
			msg: []string{"(ImageTagMirrorSet/rh)", "ruby will not import", "(quay.io:443)", "spec.skippedImagestreams"}},
		{name: "partly mirrored, the other registry answers", mirrors: mirrored(true, false), answered: answering("127.0.0.1:5000", "quay.io:443"),
			want: operatorv1.Managed, reason: ReasonThroughMirrorSets},
	} {
		t.Run(tc.name, func(t *testing.T) {
			d := DecideBootstrap(BootstrapFacts{GOARCH: "amd64", Mirrors: tc.mirrors}).AfterMirrorProbe(tc.answered)
			if d.State != tc.want || d.Reason != tc.reason || !reflect.DeepEqual(d.Unimportable, tc.unimportable) || d.ProbeRegistry {
				t.Errorf("got %s %s %v (probe %t), want %s %s %v", d.State, d.Reason, d.Unimportable, d.ProbeRegistry, tc.want, tc.reason, tc.unimportable)
			}
			for _, m := range tc.msg {
				if !strings.Contains(d.Message, m) {
					t.Errorf("message %q lacks %q", d.Message, m)
				}
			}
		})
	}
	plain := BootstrapDecision{State: operatorv1.Managed, ProbeRegistry: true}
	if got := plain.AfterMirrorProbe(func(string) bool { return false }); !reflect.DeepEqual(got, plain) {
		t.Errorf("a decision without mirrors changed: %+v", got)
	}
	// Mirror sets that serve no image leave the decision to the registry's probe: no mirror answer
	// changes it.
	servingNone := DecideBootstrap(BootstrapFacts{GOARCH: "amd64", Mirrors: mirrored(false, false)})
	if got := servingNone.AfterMirrorProbe(func(string) bool { return false }); !reflect.DeepEqual(got, servingNone) {
		t.Errorf("a decision whose mirror sets serve no image changed: %+v", got)
	}
	unserved := servingNone.AfterProbe("registry.redhat.io:443", errors.New("timeout"))
	for _, part := range []string{"the samples registry registry.redhat.io:443 could not be reached (timeout)", "; the cluster's mirror sets serve none of the samples' images"} {
		if !strings.Contains(unserved.Message, part) {
			t.Errorf("a registry that does not answer on a cluster whose mirror sets serve no image: %q lacks %q", unserved.Message, part)
		}
	}
	if noSets := plain.AfterProbe("registry.redhat.io:443", errors.New("timeout")); strings.Contains(noSets.Message, "mirror sets") {
		t.Errorf("a cluster without mirror sets is told of them: %q", noSets.Message)
	}
}
