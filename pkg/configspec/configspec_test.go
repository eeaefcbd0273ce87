package configspec

import (
	"slices"
	"strings"
	"testing"
	"time"

	configv1 "github.com/openshift/api/config/v1"
	operatorv1 "github.com/openshift/api/operator/v1"
	samplesv1 "github.com/openshift/api/samples/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/samples-operator-dev/cluster-samples-operator/pkg/desired"
	"github.com/samples-operator-dev/cluster-samples-operator/pkg/inventory"
	"github.com/samples-operator-dev/cluster-samples-operator/pkg/names"
)

// shipped is the set of architectures the test environment has an inventory for.
var shipped = []string{"x86_64", "arm64", "ppc64le", "s390x"}

var (
	testStreams   = []string{"nodejs", "python", "ruby"}
	testTemplates = []string{"django-psql-example", "rails-postgresql-example"}
)

// testEnv is a realistic environment: every architecture has an inventory, the registry is
// checked by the inventory package, no image config exists and the inventory names are known.
func testEnv() Environment {
	return Environment{
		HasInventory:          func(arch string) bool { return slices.Contains(shipped, arch) },
		ValidateRegistry:      inventory.ValidateRegistry,
		InventoryImageStreams: testStreams,
		InventoryTemplates:    testTemplates,
	}
}

func imageConfig(spec configv1.ImageSpec) *configv1.Image {
	return &configv1.Image{ObjectMeta: metav1.ObjectMeta{Name: "cluster"}, Spec: spec}
}

func allowForImport(domains ...string) *configv1.Image {
	var locs []configv1.RegistryLocation
	for _, d := range domains {
		locs = append(locs, configv1.RegistryLocation{DomainName: d})
	}
	return imageConfig(configv1.ImageSpec{AllowedRegistriesForImport: locs})
}

func allowSources(registries ...string) *configv1.Image {
	return imageConfig(configv1.ImageSpec{RegistrySources: configv1.RegistrySources{AllowedRegistries: registries}})
}

func blockSources(registries ...string) *configv1.Image {
	return imageConfig(configv1.ImageSpec{RegistrySources: configv1.RegistrySources{BlockedRegistries: registries}})
}

const supportedList = "x86_64, amd64, arm64, ppc64le, s390x"

func TestValidate(t *testing.T) {
	cases := []struct {
		name string
		spec samplesv1.ConfigSpec
		// statusArchs is status.architectures: what samples were last installed for.
		statusArchs []string
		env         func(*Environment)
		// wantErr lists substrings of the error, in the order they must appear; nil means valid.
		wantErr []string
		// notErr are substrings the error must not contain.
		notErr       []string
		wantWarnings []string
	}{
		// Architectures.
		{name: "x86_64 is valid", spec: samplesv1.ConfigSpec{Architectures: []string{"x86_64"}}},
		{name: "amd64 is valid", spec: samplesv1.ConfigSpec{Architectures: []string{"amd64"}}},
		{name: "arm64 is valid", spec: samplesv1.ConfigSpec{Architectures: []string{"arm64"}}},
		{name: "ppc64le is valid", spec: samplesv1.ConfigSpec{Architectures: []string{"ppc64le"}}},
		{name: "s390x is valid", spec: samplesv1.ConfigSpec{Architectures: []string{"s390x"}}},
		{
			name:    "nil architectures",
			spec:    samplesv1.ConfigSpec{},
			wantErr: []string{"spec.architectures is empty: set it to one of " + supportedList},
		},
		{
			name:    "empty architectures",
			spec:    samplesv1.ConfigSpec{Architectures: []string{}},
			wantErr: []string{"spec.architectures is empty"},
		},
		{
			name:        "empty architectures do not also report an architecture change",
			spec:        samplesv1.ConfigSpec{Architectures: []string{}},
			statusArchs: []string{"x86_64"},
			wantErr:     []string{"spec.architectures is empty"},
			notErr:      []string{"cannot change"},
		},
		{
			name:    "unsupported architecture",
			spec:    samplesv1.ConfigSpec{Architectures: []string{"i386"}},
			wantErr: []string{`architecture "i386" is unsupported: use one of ` + supportedList},
			notErr:  []string{"ships no samples"},
		},
		{
			name:    "aarch64 is an inventory directory name, not an accepted value",
			spec:    samplesv1.ConfigSpec{Architectures: []string{"aarch64"}},
			wantErr: []string{`architecture "aarch64" is unsupported`},
		},
		{
			name:    "architectures are case-sensitive",
			spec:    samplesv1.ConfigSpec{Architectures: []string{"X86_64"}},
			wantErr: []string{`architecture "X86_64" is unsupported`},
		},
		{
			name:    "empty string architecture",
			spec:    samplesv1.ConfigSpec{Architectures: []string{""}},
			wantErr: []string{`architecture "" is unsupported`},
		},
		{
			name:    "amd64 and x86_64 are the same architecture listed twice",
			spec:    samplesv1.ConfigSpec{Architectures: []string{"amd64", "x86_64"}},
			wantErr: []string{`spec.architectures lists "amd64" more than once: list it once`},
			notErr:  []string{"architectures (", "unsupported"},
		},
		{
			name:    "x86_64 and amd64 are the same architecture listed twice",
			spec:    samplesv1.ConfigSpec{Architectures: []string{"x86_64", "amd64"}},
			wantErr: []string{`spec.architectures lists "x86_64" more than once`},
		},
		{
			name:    "duplicate architecture",
			spec:    samplesv1.ConfigSpec{Architectures: []string{"arm64", "arm64"}},
			wantErr: []string{`spec.architectures lists "arm64" more than once`},
		},
		{
			name:    "two distinct architectures",
			spec:    samplesv1.ConfigSpec{Architectures: []string{"x86_64", "arm64"}},
			wantErr: []string{"spec.architectures names 2 architectures (x86_64, arm64): a cluster's samples are for one architecture, list exactly one"},
			notErr:  []string{"more than once"},
		},
		{
			name:    "distinct architectures are counted after amd64 becomes x86_64",
			spec:    samplesv1.ConfigSpec{Architectures: []string{"amd64", "arm64", "x86_64"}},
			wantErr: []string{"names 2 architectures (x86_64, arm64)"},
		},
		{
			name:    "unsupported and supported together",
			spec:    samplesv1.ConfigSpec{Architectures: []string{"foo", "x86_64"}},
			wantErr: []string{`architecture "foo" is unsupported`, "names 2 architectures (foo, x86_64)"},
			notErr:  []string{"ships no samples"},
		},
		{
			name:    "no inventory for the architecture",
			spec:    samplesv1.ConfigSpec{Architectures: []string{"s390x"}},
			env:     func(e *Environment) { e.HasInventory = func(a string) bool { return a == "x86_64" } },
			wantErr: []string{`this operator ships no samples for architecture "s390x"`},
		},
		{
			name: "the inventory is looked up under the normalised name",
			spec: samplesv1.ConfigSpec{Architectures: []string{"amd64"}},
			env:  func(e *Environment) { e.HasInventory = func(a string) bool { return a == "x86_64" } },
		},
		{
			name: "no HasInventory accepts any supported architecture",
			spec: samplesv1.ConfigSpec{Architectures: []string{"ppc64le"}},
			env:  func(e *Environment) { e.HasInventory = nil },
		},

		// Architecture change against status.architectures.
		{
			name:        "architecture change while samples are installed",
			spec:        samplesv1.ConfigSpec{Architectures: []string{"arm64"}},
			statusArchs: []string{"x86_64"},
			wantErr:     []string{"spec.architectures cannot change from [x86_64] to [arm64] while samples are installed: set it back, or set managementState Removed first"},
		},
		{
			name:        "amd64 in spec equals x86_64 in status",
			spec:        samplesv1.ConfigSpec{Architectures: []string{"amd64"}},
			statusArchs: []string{"x86_64"},
		},
		{
			name:        "x86_64 in spec equals amd64 in status",
			spec:        samplesv1.ConfigSpec{Architectures: []string{"x86_64"}},
			statusArchs: []string{"amd64"},
		},
		{
			name:        "same architecture as status",
			spec:        samplesv1.ConfigSpec{Architectures: []string{"s390x"}},
			statusArchs: []string{"s390x"},
		},
		{
			name:        "Removed cleared status.architectures: any architecture may be chosen",
			spec:        samplesv1.ConfigSpec{Architectures: []string{"arm64"}},
			statusArchs: []string{},
		},
		{
			name: "nil status.architectures: nothing installed yet",
			spec: samplesv1.ConfigSpec{Architectures: []string{"ppc64le"}},
		},
		{
			name:        "an unsupported new architecture is reported as unsupported and as a change",
			spec:        samplesv1.ConfigSpec{Architectures: []string{"foo"}},
			statusArchs: []string{"x86_64"},
			wantErr:     []string{`architecture "foo" is unsupported`, "cannot change from [x86_64] to [foo]"},
		},
		{
			name:        "a different length is a change",
			spec:        samplesv1.ConfigSpec{Architectures: []string{"x86_64"}},
			statusArchs: []string{"x86_64", "x86_64"},
			wantErr:     []string{"cannot change from [x86_64 x86_64] to [x86_64]"},
		},

		// spec.samplesRegistry through inventory.ValidateRegistry.
		{name: "registry host", spec: samplesv1.ConfigSpec{Architectures: []string{"x86_64"}, SamplesRegistry: "mirror.example.com"}},
		{name: "registry host:port/path", spec: samplesv1.ConfigSpec{Architectures: []string{"x86_64"}, SamplesRegistry: "mirror.example.com:5000/samples"}},
		{name: "registry localhost:port", spec: samplesv1.ConfigSpec{Architectures: []string{"x86_64"}, SamplesRegistry: "localhost:5000"}},
		{
			name:    "registry with a scheme",
			spec:    samplesv1.ConfigSpec{Architectures: []string{"x86_64"}, SamplesRegistry: "https://mirror.example.com"},
			wantErr: []string{`spec.samplesRegistry "https://mirror.example.com" is invalid: `, "must not start with a scheme"},
		},
		{
			name:    "registry with a space",
			spec:    samplesv1.ConfigSpec{Architectures: []string{"x86_64"}, SamplesRegistry: "mirror.example.com/my samples"},
			wantErr: []string{`spec.samplesRegistry "mirror.example.com/my samples" is invalid`, "contains white space"},
		},
		{
			name:    "registry with a trailing space",
			spec:    samplesv1.ConfigSpec{Architectures: []string{"x86_64"}, SamplesRegistry: "mirror.example.com "},
			wantErr: []string{"contains white space"},
		},
		{
			name:    "registry with an empty host",
			spec:    samplesv1.ConfigSpec{Architectures: []string{"x86_64"}, SamplesRegistry: "/samples"},
			wantErr: []string{`spec.samplesRegistry "/samples" is invalid`, "the registry host is empty"},
		},
		{
			name:    "registry with an empty host before the port",
			spec:    samplesv1.ConfigSpec{Architectures: []string{"x86_64"}, SamplesRegistry: ":5000/samples"},
			wantErr: []string{"the registry host name before the port is empty"},
		},
		{
			name:    "registry that pulls would read as a Docker Hub namespace",
			spec:    samplesv1.ConfigSpec{Architectures: []string{"x86_64"}, SamplesRegistry: "mirror"},
			wantErr: []string{`host "mirror" has neither a '.' nor a port`},
		},
		{
			name:    "registry with a trailing slash",
			spec:    samplesv1.ConfigSpec{Architectures: []string{"x86_64"}, SamplesRegistry: "mirror.example.com/"},
			wantErr: []string{"must not end with '/'"},
		},
		{
			name: "no ValidateRegistry accepts any registry",
			spec: samplesv1.ConfigSpec{Architectures: []string{"x86_64"}, SamplesRegistry: "https://mirror.example.com"},
			env:  func(e *Environment) { e.ValidateRegistry = nil },
		},
		{
			name: "an empty registry is not passed to ValidateRegistry",
			spec: samplesv1.ConfigSpec{Architectures: []string{"x86_64"}},
			env: func(e *Environment) {
				e.ValidateRegistry = func(s string) error { panic("ValidateRegistry called with " + s) }
			},
		},

		// Skip lists.
		{
			name: "known skip entries",
			spec: samplesv1.ConfigSpec{Architectures: []string{"x86_64"}, SkippedImagestreams: []string{"ruby", "python"}, SkippedTemplates: []string{"rails-postgresql-example"}},
		},
		{
			name:    "duplicate skipped imagestream",
			spec:    samplesv1.ConfigSpec{Architectures: []string{"x86_64"}, SkippedImagestreams: []string{"ruby", "python", "ruby"}},
			wantErr: []string{`spec.skippedImagestreams lists "ruby" more than once: list it once`},
		},
		{
			name:    "duplicate skipped template",
			spec:    samplesv1.ConfigSpec{Architectures: []string{"x86_64"}, SkippedTemplates: []string{"rails-postgresql-example", "rails-postgresql-example"}},
			wantErr: []string{`spec.skippedTemplates lists "rails-postgresql-example" more than once`},
		},
		{
			name:    "a name listed three times is reported twice",
			spec:    samplesv1.ConfigSpec{Architectures: []string{"x86_64"}, SkippedImagestreams: []string{"ruby", "ruby", "ruby"}},
			wantErr: []string{`lists "ruby" more than once`, `lists "ruby" more than once`},
		},
		{
			name:         "unknown skipped imagestreams are a warning, sorted",
			spec:         samplesv1.ConfigSpec{Architectures: []string{"x86_64"}, SkippedImagestreams: []string{"zzz", "ruby", "aaa"}},
			wantWarnings: []string{"spec.skippedImagestreams names samples this operator does not ship: aaa, zzz"},
		},
		{
			name:         "unknown skipped templates are a warning",
			spec:         samplesv1.ConfigSpec{Architectures: []string{"x86_64"}, SkippedTemplates: []string{"nope"}},
			wantWarnings: []string{"spec.skippedTemplates names samples this operator does not ship: nope"},
		},
		{
			name:         "a template name in the imagestream list is unknown there",
			spec:         samplesv1.ConfigSpec{Architectures: []string{"x86_64"}, SkippedImagestreams: []string{"rails-postgresql-example"}, SkippedTemplates: []string{"ruby"}},
			wantWarnings: []string{"spec.skippedImagestreams names samples this operator does not ship: rails-postgresql-example", "spec.skippedTemplates names samples this operator does not ship: ruby"},
		},
		{
			name:         "a duplicate unknown name is an error and is warned about once",
			spec:         samplesv1.ConfigSpec{Architectures: []string{"x86_64"}, SkippedImagestreams: []string{"nope", "nope"}},
			wantErr:      []string{`spec.skippedImagestreams lists "nope" more than once`},
			wantWarnings: []string{"spec.skippedImagestreams names samples this operator does not ship: nope"},
		},
		{
			name: "without inventory names no skip entry is unknown",
			spec: samplesv1.ConfigSpec{Architectures: []string{"x86_64"}, SkippedImagestreams: []string{"nope"}, SkippedTemplates: []string{"nope"}},
			env:  func(e *Environment) { e.InventoryImageStreams, e.InventoryTemplates = nil, nil },
		},
		{
			name:         "an empty inventory makes every skip entry unknown",
			spec:         samplesv1.ConfigSpec{Architectures: []string{"x86_64"}, SkippedTemplates: []string{"a"}},
			env:          func(e *Environment) { e.InventoryTemplates = []string{} },
			wantWarnings: []string{"spec.skippedTemplates names samples this operator does not ship: a"},
		},
		{
			name:         "warnings do not hide errors",
			spec:         samplesv1.ConfigSpec{Architectures: []string{"i386"}, SkippedImagestreams: []string{"nope"}},
			wantErr:      []string{`architecture "i386" is unsupported`},
			wantWarnings: []string{"spec.skippedImagestreams names samples this operator does not ship: nope"},
		},

		// spec.skippedHelmCharts: in the API, meaningless to this operator.
		{
			name: "skippedHelmCharts is said to be ignored, and the Config stays valid",
			spec: samplesv1.ConfigSpec{Architectures: []string{"x86_64"}, SkippedHelmCharts: []samplesv1.HelmChartName{"redhat-nginx-imagestreams", "redhat-httpd-imagestreams"}},
			wantWarnings: []string{
				"spec.skippedHelmCharts is ignored: this operator installs no Helm charts, only imagestreams and templates (it lists redhat-nginx-imagestreams, redhat-httpd-imagestreams)",
			},
		},
		{
			name: "an empty skippedHelmCharts says nothing",
			spec: samplesv1.ConfigSpec{Architectures: []string{"x86_64"}, SkippedHelmCharts: []samplesv1.HelmChartName{}},
		},
		{
			name: "skippedHelmCharts comes after the skip lists' warnings",
			spec: samplesv1.ConfigSpec{Architectures: []string{"x86_64"}, SkippedTemplates: []string{"nope"}, SkippedHelmCharts: []samplesv1.HelmChartName{"redhat-ruby-imagestreams"}},
			wantWarnings: []string{
				"spec.skippedTemplates names samples this operator does not ship: nope",
				"spec.skippedHelmCharts is ignored: this operator installs no Helm charts, only imagestreams and templates (it lists redhat-ruby-imagestreams)",
			},
		},

		// Several problems at once, in the order the checks run.
		{
			name: "every kind of problem is reported together",
			spec: samplesv1.ConfigSpec{
				Architectures:       []string{"x86_64", "arm64"},
				SamplesRegistry:     "https://mirror.example.com",
				SkippedImagestreams: []string{"ruby", "ruby", "unknown"},
				SkippedTemplates:    []string{"t", "t"},
			},
			statusArchs: []string{"s390x"},
			wantErr: []string{
				"names 2 architectures (x86_64, arm64)",
				"cannot change from [s390x] to [x86_64 arm64]",
				`spec.samplesRegistry "https://mirror.example.com" is invalid`,
				`spec.skippedImagestreams lists "ruby" more than once`,
				`spec.skippedTemplates lists "t" more than once`,
			},
			wantWarnings: []string{
				"spec.skippedImagestreams names samples this operator does not ship: unknown",
				"spec.skippedTemplates names samples this operator does not ship: t",
			},
		},
		{
			name:        "no inventory and architecture change together",
			spec:        samplesv1.ConfigSpec{Architectures: []string{"s390x"}},
			statusArchs: []string{"x86_64"},
			env:         func(e *Environment) { e.HasInventory = func(string) bool { return false } },
			wantErr: []string{
				`ships no samples for architecture "s390x"`,
				"cannot change from [x86_64] to [s390x]",
			},
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			env := testEnv()
			if tc.env != nil {
				tc.env(&env)
			}
			cfg := &samplesv1.Config{
				ObjectMeta: metav1.ObjectMeta{Name: names.ConfigName},
				Spec:       tc.spec,
				Status:     samplesv1.ConfigStatus{Architectures: tc.statusArchs},
			}
			before := cfg.DeepCopy()
			v := Validate(cfg, env)

			if tc.wantErr == nil {
				if v.Err != nil {
					t.Errorf("Err = %q, want nil", v.Err)
				}
			} else if v.Err == nil {
				t.Errorf("Err = nil, want one containing %q", tc.wantErr)
			} else {
				msg := v.Err.Error()
				rest := msg
				for _, want := range tc.wantErr {
					i := strings.Index(rest, want)
					if i < 0 {
						t.Errorf("Err = %q\nwant it to contain, in order, %q (missing or out of order: %q)", msg, tc.wantErr, want)
						break
					}
					rest = rest[i+len(want):]
				}
				for _, not := range tc.notErr {
					if strings.Contains(msg, not) {
						t.Errorf("Err = %q, want it not to contain %q", msg, not)
					}
				}
			}
			if !slices.Equal(v.Warnings, tc.wantWarnings) {
				t.Errorf("Warnings = %q, want %q", v.Warnings, tc.wantWarnings)
			}
			if !equalConfig(before, cfg) {
				t.Errorf("Validate modified the Config: %+v, was %+v", cfg, before)
			}
		})
	}
}

// TestClusterArchitectures: a Config that names no architectures (as a GitOps tool applies it)
// stands for the cluster's architecture, the operator's GOARCH as the default Config names it;
// one that names any is left as it is, and so is one being deleted.
func TestClusterArchitectures(t *testing.T) {
	deleting := metav1.Now()
	cases := []struct {
		name      string
		archs     []string
		deleting  bool
		goarch    string
		wantArchs []string
		wantOK    bool
	}{
		{name: "nil on amd64 is x86_64", goarch: "amd64", wantArchs: []string{"x86_64"}, wantOK: true},
		{name: "empty on amd64 is x86_64", archs: []string{}, goarch: "amd64", wantArchs: []string{"x86_64"}, wantOK: true},
		{name: "nil on arm64", goarch: "arm64", wantArchs: []string{"arm64"}, wantOK: true},
		{name: "nil on ppc64le", goarch: "ppc64le", wantArchs: []string{"ppc64le"}, wantOK: true},
		{name: "nil on s390x", goarch: "s390x", wantArchs: []string{"s390x"}, wantOK: true},
		{name: "a GOARCH without a spec value fills nothing", goarch: "riscv64"},
		{name: "no GOARCH fills nothing", goarch: ""},
		{name: "a named architecture is kept, even another than the cluster's", archs: []string{"s390x"}, goarch: "amd64"},
		{name: "an invalid named architecture is kept for validation to report", archs: []string{""}, goarch: "amd64"},
		{name: "a Config being deleted is not filled", deleting: true, goarch: "amd64"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			cfg := &samplesv1.Config{ObjectMeta: metav1.ObjectMeta{Name: names.ConfigName}, Spec: samplesv1.ConfigSpec{Architectures: tc.archs}}
			if tc.deleting {
				cfg.DeletionTimestamp = &deleting
			}
			archs, ok := ClusterArchitectures(cfg, tc.goarch)
			if ok != tc.wantOK || !slices.Equal(archs, tc.wantArchs) {
				t.Errorf("ClusterArchitectures = %q, %v; want %q, %v", archs, ok, tc.wantArchs, tc.wantOK)
			}

			before := cfg.DeepCopy()
			read := WithClusterArchitecture(cfg, tc.goarch)
			if !equalConfig(cfg, before) {
				t.Errorf("WithClusterArchitecture modified its argument: %+v", cfg.Spec)
			}
			if !tc.wantOK {
				if read != cfg {
					t.Errorf("WithClusterArchitecture returned a copy (%q) when nothing is filled in", read.Spec.Architectures)
				}
				return
			}
			if !slices.Equal(read.Spec.Architectures, tc.wantArchs) {
				t.Errorf("WithClusterArchitecture reads architectures %q, want %q", read.Spec.Architectures, tc.wantArchs)
			}
			// Read so, the Config is valid: not "spec.architectures is empty".
			if v := Validate(read, testEnv()); v.Err != nil {
				t.Errorf("Validate(WithClusterArchitecture) = %v, want valid", v.Err)
			}
		})
	}
}

// TestArchitecturesClearedWhileInstalled: a tool that replaces the spec of an installed Config
// without architectures does not change the samples' architecture, nor make the Config invalid;
// an operator of another architecture than the installed samples' does not switch them silently.
func TestArchitecturesClearedWhileInstalled(t *testing.T) {
	cfg := &samplesv1.Config{
		ObjectMeta: metav1.ObjectMeta{Name: names.ConfigName},
		Spec:       samplesv1.ConfigSpec{ManagementState: operatorv1.Managed},
		Status:     samplesv1.ConfigStatus{Architectures: []string{"x86_64"}},
	}
	if v := Validate(WithClusterArchitecture(cfg, "amd64"), testEnv()); v.Err != nil {
		t.Errorf("on amd64: %v, want valid", v.Err)
	}
	v := Validate(WithClusterArchitecture(cfg, "arm64"), testEnv())
	if v.Err == nil || v.Err.Error() != "spec.architectures cannot change from [x86_64] to [arm64] while samples are installed: set it back, or set managementState Removed first" {
		t.Errorf("on arm64: %v, want the architecture change refused", v.Err)
	}
}

func equalConfig(a, b *samplesv1.Config) bool {
	return slices.Equal(a.Spec.Architectures, b.Spec.Architectures) &&
		slices.Equal(a.Status.Architectures, b.Status.Architectures) &&
		slices.Equal(a.Spec.SkippedImagestreams, b.Spec.SkippedImagestreams) &&
		slices.Equal(a.Spec.SkippedTemplates, b.Spec.SkippedTemplates) &&
		a.Spec.SamplesRegistry == b.Spec.SamplesRegistry
}

// TestValidateHasInventoryArgument checks that the inventory is asked about the normalised
// architecture, and not asked at all when the architectures are already wrong.
func TestValidateHasInventoryArgument(t *testing.T) {
	cases := []struct {
		archs []string
		want  []string
	}{
		{[]string{"amd64"}, []string{"x86_64"}},
		{[]string{"x86_64"}, []string{"x86_64"}},
		{[]string{"arm64"}, []string{"arm64"}},
		{[]string{"i386"}, nil},
		{[]string{"x86_64", "arm64"}, nil},
		{[]string{"x86_64", "x86_64"}, nil},
		{nil, nil},
	}
	for _, tc := range cases {
		var asked []string
		env := testEnv()
		env.HasInventory = func(a string) bool { asked = append(asked, a); return true }
		Validate(&samplesv1.Config{Spec: samplesv1.ConfigSpec{Architectures: tc.archs}}, env)
		if !slices.Equal(asked, tc.want) {
			t.Errorf("architectures %q: HasInventory asked about %q, want %q", tc.archs, asked, tc.want)
		}
	}
}

func TestRegistryBlocked(t *testing.T) {
	cases := []struct {
		name     string
		image    *configv1.Image
		registry string
		want     bool
		// wantMsg is a substring of the message when blocked.
		wantMsg string
	}{
		{name: "no image config", image: nil},
		{name: "no image config, samples registry", image: nil, registry: "mirror.example.com"},
		{name: "empty image config", image: imageConfig(configv1.ImageSpec{})},

		// spec.allowedRegistriesForImport is applied per sample (pkg/importallow), not here.
		{name: "import: an allow-list without the registry blocks nothing here", image: allowForImport("quay.io")},
		{name: "import: nor one that allows nothing", image: allowForImport(""), registry: "mirror.example.com"},

		// spec.registrySources.allowedRegistries: exact host match after trimming.
		{name: "sources: default registry allowed", image: allowSources("registry.redhat.io")},
		{name: "sources: entries are trimmed", image: allowSources("  registry.redhat.io\t")},
		{
			name: "sources: default registry not allowed", image: allowSources("quay.io"), want: true,
			wantMsg: "images.config.openshift.io/cluster spec.registrySources.allowedRegistries does not include registry.redhat.io: add it there, or point spec.samplesRegistry at an allowed mirror",
		},
		{
			name: "sources: no suffix match", image: allowSources("redhat.io"), want: true,
			wantMsg: "allowedRegistries does not include registry.redhat.io",
		},
		{name: "sources: samples registry host allowed", image: allowSources("mirror.example.com:5000"), registry: "mirror.example.com:5000/samples"},
		{
			name: "sources: the samples registry replaces the default", image: allowSources("registry.redhat.io"),
			registry: "mirror.example.com", want: true, wantMsg: "allowedRegistries does not include mirror.example.com",
		},

		// spec.registrySources.blockedRegistries.
		{
			name: "blocked: default registry", image: blockSources("registry.redhat.io"), want: true,
			wantMsg: "images.config.openshift.io/cluster spec.registrySources.blockedRegistries blocks registry.redhat.io: remove it there, or point spec.samplesRegistry at another mirror",
		},
		{name: "blocked: trimmed", image: blockSources(" registry.redhat.io "), want: true, wantMsg: "blocks registry.redhat.io"},
		{name: "blocked: other registries only", image: blockSources("quay.io", "docker.io")},
		{name: "blocked: the samples registry replaces the blocked default", image: blockSources("registry.redhat.io"), registry: "mirror.example.com/samples"},
		{
			name: "blocked: samples registry host", image: blockSources("mirror.example.com"), registry: "mirror.example.com/samples",
			want: true, wantMsg: "blockedRegistries blocks mirror.example.com",
		},
		{name: "blocked: no suffix match", image: blockSources("redhat.io")},

		// Order: the first check that blocks names itself.
		{
			name: "allowed for import but not an allowed source",
			image: imageConfig(configv1.ImageSpec{
				AllowedRegistriesForImport: []configv1.RegistryLocation{{DomainName: "registry.redhat.io"}},
				RegistrySources:            configv1.RegistrySources{AllowedRegistries: []string{"quay.io"}},
			}),
			want: true, wantMsg: "registrySources.allowedRegistries",
		},
		{
			name: "allowed everywhere",
			image: imageConfig(configv1.ImageSpec{
				AllowedRegistriesForImport: []configv1.RegistryLocation{{DomainName: "redhat.io"}},
				RegistrySources:            configv1.RegistrySources{AllowedRegistries: []string{"registry.redhat.io"}},
			}),
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got, msg := RegistryBlocked(tc.image, tc.registry, []string{"registry.redhat.io"})
			if got != tc.want {
				t.Fatalf("RegistryBlocked(%q) = %v, %q; want %v", tc.registry, got, msg, tc.want)
			}
			if !got && msg != "" {
				t.Errorf("not blocked, but message %q", msg)
			}
			if got && !strings.Contains(msg, tc.wantMsg) {
				t.Errorf("message %q, want it to contain %q", msg, tc.wantMsg)
			}
		})
	}
}

// TestRegistryBlockedScopedAllowedSource documents spec 10.2 step 2: an allowedRegistries entry is
// compared with the whole samples registry, and OpenShift accepts repository scopes there.
func TestRegistryBlockedScopedAllowedSource(t *testing.T) {
	if blocked, msg := RegistryBlocked(allowSources("mirror.example.com/samples"), "mirror.example.com/samples", nil); blocked {
		t.Errorf("blocked (%s), want allowed: the entry equals spec.samplesRegistry", msg)
	}
}

// TestEveryInventoryRegistryIsChecked: with samplesRegistry empty, registrySources must allow every
// registry the shipped imagestreams import from, not only registry.redhat.io.
func TestEveryInventoryRegistryIsChecked(t *testing.T) {
	for _, dir := range inventory.ArchDirs() {
		inv, err := inventory.Embedded(dir)
		if err != nil {
			t.Fatalf("%s: %v", dir, err)
		}
		sources := inv.SourceRegistries()
		if blocked, msg := RegistryBlocked(allowSources(sources...), "", sources); blocked {
			t.Errorf("%s: allowing all its registries is blocked: %s", dir, msg)
		}
		for _, missing := range sources {
			var others []string
			for _, s := range sources {
				if s != missing {
					others = append(others, s)
				}
			}
			if blocked, msg := RegistryBlocked(allowSources(others...), "", sources); !blocked || !strings.Contains(msg, missing) {
				t.Errorf("%s: allowing all but %s is not reported blocked for it: %v %q", dir, missing, blocked, msg)
			}
		}
	}
}

func TestMode(t *testing.T) {
	now := metav1.NewTime(time.Date(2024, 1, 2, 3, 4, 5, 0, time.UTC))
	cases := []struct {
		state    operatorv1.ManagementState
		deleting bool
		valid    bool
		want     desired.Mode
	}{
		{operatorv1.Managed, false, true, desired.Managed},
		{"", false, true, desired.Managed},
		{operatorv1.Force, false, true, desired.Managed},
		{operatorv1.Managed, false, false, desired.Frozen},
		{"", false, false, desired.Frozen},
		{operatorv1.Force, false, false, desired.Frozen},
		{operatorv1.Unmanaged, false, true, desired.Frozen},
		{operatorv1.Unmanaged, false, false, desired.Frozen},
		{operatorv1.Removed, false, true, desired.Removing},
		{operatorv1.Removed, false, false, desired.Removing},
		{operatorv1.Managed, true, true, desired.Removing},
		{operatorv1.Managed, true, false, desired.Removing},
		{operatorv1.Unmanaged, true, true, desired.Removing},
		{operatorv1.Removed, true, true, desired.Removing},
		{"", true, false, desired.Removing},
	}
	for _, tc := range cases {
		cfg := &samplesv1.Config{Spec: samplesv1.ConfigSpec{ManagementState: tc.state}}
		if tc.deleting {
			cfg.DeletionTimestamp = &now
		}
		if got := Mode(cfg, tc.valid); got != tc.want {
			t.Errorf("Mode(state %q, deleting %v, valid %v) = %v, want %v", tc.state, tc.deleting, tc.valid, got, tc.want)
		}
	}
}

func TestArchitectureForGOARCH(t *testing.T) {
	cases := map[string]string{
		"amd64":    "x86_64",
		"arm64":    "arm64",
		"ppc64le":  "ppc64le",
		"s390x":    "s390x",
		"386":      "",
		"arm":      "",
		"ppc64":    "",
		"riscv64":  "",
		"mips64le": "",
		"wasm":     "",
		"":         "",
		"x86_64":   "", // not a GOARCH
		"AMD64":    "",
	}
	for goarch, want := range cases {
		got := ArchitectureForGOARCH(goarch)
		if got != want {
			t.Errorf("ArchitectureForGOARCH(%q) = %q, want %q", goarch, got, want)
		}
		if got != "" && !slices.Contains(SupportedArchitectures, got) {
			t.Errorf("ArchitectureForGOARCH(%q) = %q, which spec.architectures does not accept", goarch, got)
		}
		if got != "" && got != NormalizeArchitecture(got) {
			t.Errorf("ArchitectureForGOARCH(%q) = %q is not normalised", goarch, got)
		}
	}
}

func TestNormalizeAndArchitecture(t *testing.T) {
	for in, want := range map[string]string{"amd64": "x86_64", "x86_64": "x86_64", "arm64": "arm64", "s390x": "s390x", "ppc64le": "ppc64le", "": "", "foo": "foo"} {
		if got := NormalizeArchitecture(in); got != want {
			t.Errorf("NormalizeArchitecture(%q) = %q, want %q", in, got, want)
		}
	}
	cases := []struct {
		archs []string
		want  string
	}{
		{nil, ""},
		{[]string{}, ""},
		{[]string{"amd64"}, "x86_64"},
		{[]string{"arm64", "x86_64"}, "arm64"},
		{[]string{"amd64", "arm64"}, "x86_64"},
	}
	for _, tc := range cases {
		if got := Architecture(&samplesv1.ConfigSpec{Architectures: tc.archs}); got != tc.want {
			t.Errorf("Architecture(%q) = %q, want %q", tc.archs, got, tc.want)
		}
	}
}

// TestSupportedArchitecturesMatchInventory keeps the two lists of accepted values in step.
func TestSupportedArchitecturesMatchInventory(t *testing.T) {
	if !slices.Equal(SupportedArchitectures, inventory.ConfigArchitectures()) {
		t.Errorf("SupportedArchitectures = %q, inventory.ConfigArchitectures() = %q", SupportedArchitectures, inventory.ConfigArchitectures())
	}
	for _, a := range SupportedArchitectures {
		if _, err := inventory.ArchDir(a, false); err != nil {
			t.Errorf("supported architecture %q has no inventory directory: %v", a, err)
		}
	}
}
