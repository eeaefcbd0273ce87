package configspec

import (
	"fmt"
	"slices"
	"testing"
	"testing/fstest"

	configv1 "github.com/openshift/api/config/v1"
	operatorv1 "github.com/openshift/api/operator/v1"
	samplesv1 "github.com/openshift/api/samples/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/samples-operator-dev/cluster-samples-operator/pkg/configspec/configspectest"
	"github.com/samples-operator-dev/cluster-samples-operator/pkg/desired"
	"github.com/samples-operator-dev/cluster-samples-operator/pkg/inventory"
)

// sourceTagged is an inventory of seven imagestreams s1 ... s7 whose one tag has referencePolicy
// Source (nodes pull it from the registry itself) on registry.access.redhat.com, and local, whose
// tag is Local on the same registry.
func sourceTagged(t *testing.T) configspectest.X86Only {
	stream := func(name, policy string) *fstest.MapFile {
		return &fstest.MapFile{Data: fmt.Appendf(nil, `{"kind":"ImageStream","apiVersion":"image.openshift.io/v1","metadata":{"name":%q},"spec":{"tags":[
			{"name":"1","from":{"kind":"DockerImage","name":"registry.access.redhat.com/ubi8/%s:1"},"referencePolicy":{"type":%q}}]}}`, name, name, policy)}
	}
	fsys := fstest.MapFS{"x/local/imagestreams/local.json": stream("local", "Local")}
	for i := 1; i <= 7; i++ {
		name := fmt.Sprintf("s%d", i)
		fsys["x/"+name+"/imagestreams/"+name+".json"] = stream(name, "Source")
	}
	inv, err := inventory.Load(fsys, "x")
	if err != nil {
		t.Fatal(err)
	}
	return configspectest.X86Only{Inventory: inv}
}

// twoRegistries is an inventory of two imagestreams whose Source tags are on two registries: a
// on docker.io, b on registry.access.redhat.com.
func twoRegistries(t *testing.T) configspectest.X86Only {
	stream := func(name, image string) *fstest.MapFile {
		return &fstest.MapFile{Data: fmt.Appendf(nil, `{"kind":"ImageStream","apiVersion":"image.openshift.io/v1","metadata":{"name":%q},"spec":{"tags":[
			{"name":"1","from":{"kind":"DockerImage","name":%q},"referencePolicy":{"type":"Source"}}]}}`, name, image)}
	}
	inv, err := inventory.Load(fstest.MapFS{
		"x/b/imagestreams/b.json": stream("b", "registry.access.redhat.com/ubi8/b:1"),
		"x/a/imagestreams/a.json": stream("a", "docker.io/library/a:1"),
	}, "x")
	if err != nil {
		t.Fatal(err)
	}
	return configspectest.X86Only{Inventory: inv}
}

func registrySources(allowed, blocked []string) *configv1.Image {
	return &configv1.Image{
		ObjectMeta: metav1.ObjectMeta{Name: "cluster"},
		Spec:       configv1.ImageSpec{RegistrySources: configv1.RegistrySources{AllowedRegistries: allowed, BlockedRegistries: blocked}},
	}
}

// TestRegistrySourcesNeverInvalidateTheConfig: images.config.openshift.io/cluster
// spec.registrySources is the nodes' pull policy, not openshift-apiserver's import policy. The
// Config stays valid and Managed whatever it allows or blocks, with or without samplesRegistry;
// ConfigurationValid's message warns of the samples whose images nodes would pull directly
// (referencePolicy Source) from a registry it refuses, naming the first five and counting the rest.
func TestRegistrySourcesNeverInvalidateTheConfig(t *testing.T) {
	const (
		accessAllowed      = "images.config.openshift.io/cluster spec.registrySources.allowedRegistries does not include registry.access.redhat.com, from which nodes would pull the images of 7 imagestreams: s1, s2, s3, s4, s5 and 2 more directly (tags with referencePolicy Source): they are installed, but pods and builds that use them cannot pull; add it there, point spec.samplesRegistry at a mirror it allows, or skip them"
		accessBlocked      = "images.config.openshift.io/cluster spec.registrySources.blockedRegistries blocks registry.access.redhat.com, from which nodes would pull the images of 6 imagestreams: s1, s2, s3, s4, s6 and 1 more directly (tags with referencePolicy Source): they are installed, but pods and builds that use them cannot pull; remove it there, point spec.samplesRegistry at another mirror, or skip them"
		mirrorAllowed      = "images.config.openshift.io/cluster spec.registrySources.allowedRegistries does not include mirror.example.com:5000, from which nodes would pull the images of 7 imagestreams: s1, s2, s3, s4, s5 and 2 more directly (tags with referencePolicy Source): they are installed, but pods and builds that use them cannot pull; add it there, point spec.samplesRegistry at a mirror it allows, or skip them"
		accessAllowedFive  = "images.config.openshift.io/cluster spec.registrySources.allowedRegistries does not include registry.access.redhat.com, from which nodes would pull the images of 5 imagestreams: s1, s2, s3, s4, s5 directly (tags with referencePolicy Source): they are installed, but pods and builds that use them cannot pull; add it there, point spec.samplesRegistry at a mirror it allows, or skip them"
		mirrorAllowedButS3 = "images.config.openshift.io/cluster spec.registrySources.allowedRegistries does not include mirror.example.com:5000, from which nodes would pull the images of 6 imagestreams: s1, s2, s4, s5, s6 and 1 more directly (tags with referencePolicy Source): they are installed, but pods and builds that use them cannot pull; add it there, point spec.samplesRegistry at a mirror it allows, or skip them"
		accessAllowedB     = "images.config.openshift.io/cluster spec.registrySources.allowedRegistries does not include registry.access.redhat.com, from which nodes would pull the images of imagestream b directly (tags with referencePolicy Source): they are installed, but pods and builds that use them cannot pull; add it there, point spec.samplesRegistry at a mirror it allows, or skip them"
		quayAllowed        = "images.config.openshift.io/cluster spec.registrySources.allowedRegistries does not include docker.io, from which nodes would pull the images of imagestream a directly (tags with referencePolicy Source): they are installed, but pods and builds that use them cannot pull; add it there, point spec.samplesRegistry at a mirror it allows, or skip them"
		mirrorBlocked      = "images.config.openshift.io/cluster spec.registrySources.blockedRegistries blocks mirror.example.com:5000, from which nodes would pull the images of imagestream s3 directly (tags with referencePolicy Source): they are installed, but pods and builds that use them cannot pull; remove it there, point spec.samplesRegistry at another mirror, or skip them"
		// The shipped x86_64 inventory: every DockerImage tag is Local; the latest tags of the two
		// SSO streams are Source and point at Local tags on registry.redhat.io.
		ssoBlocked = "images.config.openshift.io/cluster spec.registrySources.blockedRegistries blocks registry.redhat.io, from which nodes would pull the images of 2 imagestreams: sso75-openshift-rhel8, sso76-openshift-rhel8 directly (tags with referencePolicy Source): they are installed, but pods and builds that use them cannot pull; remove it there, point spec.samplesRegistry at another mirror, or skip them"
		ssoAllowed = "images.config.openshift.io/cluster spec.registrySources.allowedRegistries does not include registry.redhat.io, from which nodes would pull the images of 2 imagestreams: sso75-openshift-rhel8, sso76-openshift-rhel8 directly (tags with referencePolicy Source): they are installed, but pods and builds that use them cannot pull; add it there, point spec.samplesRegistry at a mirror it allows, or skip them"
		ssoMirror  = "images.config.openshift.io/cluster spec.registrySources.allowedRegistries does not include mirror.example.com, from which nodes would pull the images of 2 imagestreams: sso75-openshift-rhel8, sso76-openshift-rhel8 directly (tags with referencePolicy Source): they are installed, but pods and builds that use them cannot pull; add it there, point spec.samplesRegistry at a mirror it allows, or skip them"
	)
	redHat := []string{"registry.redhat.io", "quay.io"}
	embedded, err := inventory.Embedded(inventory.ArchDirOCPX86_64)
	if err != nil {
		t.Fatal(err)
	}
	shipped, source := configspectest.X86Only{Inventory: embedded}, sourceTagged(t)
	cases := []struct {
		name         string
		inventories  Inventories
		spec         samplesv1.ConfigSpec
		image        *configv1.Image
		wantWarnings []string
	}{
		// The shipped inventory, as the issue has it: upstream stays valid and installs everything.
		{name: "shipped: allowed registry.redhat.io and quay.io", inventories: shipped, image: registrySources(redHat, nil)},
		{name: "shipped: blocked registry.access.redhat.com", inventories: shipped, image: registrySources(nil, []string{"registry.access.redhat.com"})},
		{name: "shipped: blocked registry.redhat.io", inventories: shipped, image: registrySources(nil, []string{"registry.redhat.io"}), wantWarnings: []string{ssoBlocked}},
		{name: "shipped: allowed nothing the samples use", inventories: shipped, image: registrySources([]string{"quay.io"}, nil), wantWarnings: []string{ssoAllowed}},
		{
			name: "shipped: samplesRegistry the list leaves out", inventories: shipped,
			spec:  samplesv1.ConfigSpec{SamplesRegistry: "mirror.example.com"},
			image: registrySources(redHat, nil), wantWarnings: []string{ssoMirror},
		},
		{
			name: "shipped: samplesRegistry the list allows", inventories: shipped,
			spec:  samplesv1.ConfigSpec{SamplesRegistry: "mirror.example.com"},
			image: registrySources([]string{"mirror.example.com"}, nil),
		},

		// Source tags.
		{name: "source: no image config", inventories: source},
		{name: "source: empty registrySources", inventories: source, image: registrySources(nil, nil)},
		{name: "source: allowed", inventories: source, image: registrySources([]string{"registry.access.redhat.com"}, nil)},
		{name: "source: allowed list leaves the registry out", inventories: source, image: registrySources(redHat, nil), wantWarnings: []string{accessAllowed}},
		{
			name: "source: five streams are named, none counted", inventories: source,
			spec:  samplesv1.ConfigSpec{SkippedImagestreams: []string{"s6", "s7"}},
			image: registrySources(redHat, nil), wantWarnings: []string{accessAllowedFive},
		},
		{
			// One registry refused twice: blocked for s3's repository, left out of the allowed
			// list for the others. Blocked sorts first, whatever order the streams came in.
			name: "source: samplesRegistry blocked for one repository and not allowed", inventories: source,
			spec:         samplesv1.ConfigSpec{SamplesRegistry: "mirror.example.com:5000/samples"},
			image:        registrySources(redHat, []string{"mirror.example.com:5000/samples/ubi8/s3"}),
			wantWarnings: []string{mirrorBlocked, mirrorAllowedButS3},
		},
		{
			name: "source: two registries refused, by name", inventories: twoRegistries(t),
			image: registrySources(redHat, nil), wantWarnings: []string{quayAllowed, accessAllowedB},
		},
		{
			name: "source: blocked, one stream skipped", inventories: source,
			spec:  samplesv1.ConfigSpec{SkippedImagestreams: []string{"s5"}},
			image: registrySources(nil, []string{"registry.access.redhat.com"}), wantWarnings: []string{accessBlocked},
		},
		{
			name: "source: samplesRegistry replaces a registry the list leaves out", inventories: source,
			spec:  samplesv1.ConfigSpec{SamplesRegistry: "mirror.example.com:5000/samples"},
			image: registrySources([]string{"mirror.example.com:5000/samples"}, nil),
		},
		{
			name: "source: samplesRegistry the list leaves out", inventories: source,
			spec:  samplesv1.ConfigSpec{SamplesRegistry: "mirror.example.com:5000/samples"},
			image: registrySources(append(redHat, "registry.access.redhat.com"), nil), wantWarnings: []string{mirrorAllowed},
		},
		{
			name: "source: samplesRegistry partly blocked", inventories: source,
			spec:  samplesv1.ConfigSpec{SamplesRegistry: "mirror.example.com:5000/samples"},
			image: registrySources(nil, []string{"mirror.example.com:5000/samples/ubi8/s3"}), wantWarnings: []string{mirrorBlocked},
		},
		{
			name: "source: samplesRegistry replaces a blocked registry", inventories: source,
			spec:  samplesv1.ConfigSpec{SamplesRegistry: "mirror.example.com:5000/samples"},
			image: registrySources(nil, []string{"registry.access.redhat.com"}),
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			cfg := &samplesv1.Config{ObjectMeta: metav1.ObjectMeta{Name: "cluster"}, Spec: tc.spec}
			cfg.Spec.ManagementState, cfg.Spec.Architectures = operatorv1.Managed, []string{"x86_64"}
			eval := Evaluate(cfg, tc.inventories, tc.image)
			if eval.Validation.Err != nil || eval.Mode != desired.Managed {
				t.Fatalf("evaluation: err %v, mode %v; want valid and Managed", eval.Validation.Err, eval.Mode)
			}
			if !slices.Equal(eval.Validation.Warnings, tc.wantWarnings) {
				t.Errorf("warnings:\n%q\nwant\n%q", eval.Validation.Warnings, tc.wantWarnings)
			}
		})
	}
}
