package integration

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	configv1 "github.com/openshift/api/config/v1"
	operatorv1 "github.com/openshift/api/operator/v1"
	operatorv1alpha1 "github.com/openshift/api/operator/v1alpha1"
	samplesv1 "github.com/openshift/api/samples/v1"
	operatorclient "github.com/openshift/client-go/operator/clientset/versioned"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/samples-operator-dev/cluster-samples-operator/pkg/bootstrapstate"
	"github.com/samples-operator-dev/cluster-samples-operator/pkg/configspec"
	"github.com/samples-operator-dev/cluster-samples-operator/pkg/inventory"
	"github.com/samples-operator-dev/cluster-samples-operator/pkg/operator"
	"github.com/samples-operator-dev/cluster-samples-operator/pkg/pin"
	"github.com/samples-operator-dev/cluster-samples-operator/pkg/registryprobe"
)

// The inventory's two source registries (x86_64).
const (
	redHatRegistry = "registry.redhat.io"
	accessRegistry = "registry.access.redhat.com"
)

// tagMirrorSet mirrors each source registry to mirror/<source>: several registries on one
// mirror, each under a namespace of its name.
func tagMirrorSet(name, mirror string, sources ...string) *configv1.ImageTagMirrorSet {
	s := &configv1.ImageTagMirrorSet{ObjectMeta: metav1.ObjectMeta{Name: name}}
	for _, source := range sources {
		s.Spec.ImageTagMirrors = append(s.Spec.ImageTagMirrors, configv1.ImageTagMirrors{
			Source: source, Mirrors: []configv1.ImageMirror{configv1.ImageMirror(mirrorOf(source, mirror))},
		})
	}
	return s
}

// mirrorOf is where tagMirrorSet mirrors source (a registry, or an image on it).
func mirrorOf(source, mirror string) string {
	return mirror + "/" + source
}

// answeringMirror is a loopback TLS listener that completes handshakes: a mirror that answers.
func answeringMirror(t *testing.T) string {
	t.Helper()
	srv := httptest.NewTLSServer(http.NotFoundHandler())
	t.Cleanup(srv.Close)
	return srv.Listener.Addr().String()
}

// silentMirror is a loopback address nothing listens on: a mirror that does not answer.
func silentMirror(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	return addr
}

// mirrorProbes is the operator's mirror probe for these tests: it dials loopback addresses (the
// test's mirrors) with the shipped probe, refuses every other one without dialing (the registries
// of a disconnected cluster), and records what it was asked.
type mirrorProbes struct {
	mu    sync.Mutex
	asked []string
}

func (p *mirrorProbes) probe(ctx context.Context, address string) error {
	p.mu.Lock()
	p.asked = append(p.asked, address)
	p.mu.Unlock()
	if !strings.HasPrefix(address, "127.0.0.1:") {
		return fmt.Errorf("dial tcp %s: no route to host (disconnected)", address)
	}
	return registryprobe.ProbeMirror(ctx, address)
}

// assertOnly checks that the operator probed address and nothing else.
func (p *mirrorProbes) assertOnly(t *testing.T, address string) {
	t.Helper()
	got := p.addresses()
	if len(got) == 0 || slices.ContainsFunc(got, func(a string) bool { return a != address }) {
		t.Errorf("probed %v, want the mirror %s alone", got, address)
	}
}

func (p *mirrorProbes) addresses() []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]string(nil), p.asked...)
}

// disconnectedOptions are the operator's options on a disconnected cluster: the samples registry
// never answers (and the test fails if it is dialed when mirror sets serve every image), the
// mirrors are probed by probes.
func disconnectedOptions(t *testing.T, probes *mirrorProbes, registryMayBeProbed bool) operator.Options {
	opts := defaultOptions()
	opts.RegistryProbe = func(context.Context) error {
		if !registryMayBeProbed {
			t.Errorf("the samples registry was probed although mirror sets serve every image")
		}
		return fmt.Errorf("dial tcp %s: no route to host (disconnected)", opts.ProbeTarget)
	}
	opts.MirrorProbe = probes.probe
	return opts
}

func (e *env) createTagMirrorSet(t *testing.T, s *configv1.ImageTagMirrorSet) {
	t.Helper()
	if _, err := e.config.ConfigV1().ImageTagMirrorSets().Create(context.Background(), s, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
}

// waitSamplesExistSays waits for SamplesExist's message to hold every part.
func (e *env) waitSamplesExistSays(t *testing.T, timeout time.Duration, parts ...string) *samplesv1.ConfigCondition {
	t.Helper()
	var cond *samplesv1.ConfigCondition
	eventually(t, timeout, func() (bool, string) {
		cond = configCondition(e.getConfig(), samplesv1.SamplesExist)
		if cond == nil {
			return false, "no SamplesExist"
		}
		for _, p := range parts {
			if !strings.Contains(cond.Message, p) {
				return false, fmt.Sprintf("SamplesExist %s %s: %q lacks %q", cond.Status, cond.Reason, cond.Message, p)
			}
		}
		return true, ""
	})
	return cond
}

// TestFirstStartOnAMirroredClusterInstallsThroughTheMirrorSets: on a disconnected cluster whose
// ImageTagMirrorSet mirrors both registries of the inventory, the first start probes the mirror
// (never the registries), creates the Config Managed and installs every sample with the
// inventory's own references; SamplesExist names the mirror set. Once the mirror set is deleted,
// SamplesExist and a warning event say which samples can no longer import.
func TestFirstStartOnAMirroredClusterInstallsThroughTheMirrorSets(t *testing.T) {
	parallel(t, aboutTwentySecond)
	e := newEnv(t)
	mirror := answeringMirror(t)
	e.createTagMirrorSet(t, tagMirrorSet("samples-mirror", mirror, redHatRegistry, accessRegistry))
	probes := &mirrorProbes{}
	e.startOperator(disconnectedOptions(t, probes, false))
	e.waitBootstrappedManaged(t)

	cfg := e.getConfig()
	if cfg.Spec.SamplesRegistry != "" {
		t.Errorf("spec.samplesRegistry = %q, want none: the mirror sets redirect the imports", cfg.Spec.SamplesRegistry)
	}
	if got := cfg.Annotations[bootstrapstate.ReasonAnnotation]; got != configspec.ReasonThroughMirrorSets {
		t.Errorf("bootstrap reason %q, want %s", got, configspec.ReasonThroughMirrorSets)
	}
	probes.assertOnly(t, mirror)
	cond := e.waitSamplesExistSays(t, 10*time.Second, "their images are imported through the cluster's mirror sets (ImageTagMirrorSet/samples-mirror)")
	if strings.Contains(cond.Message, "will not import") {
		t.Errorf("SamplesExist names samples that will not import: %q", cond.Message)
	}
	t.Logf("SamplesExist: %s", cond.Message)
	for stream, tags := range e.dockerImageTags(t) {
		for tag, ref := range tags {
			if !strings.HasPrefix(ref, redHatRegistry+"/") && !strings.HasPrefix(ref, accessRegistry+"/") {
				t.Errorf("%s:%s imports %s, want the inventory's own reference", stream, tag, ref)
			}
		}
	}
	e.waitEvent(t, "ConfigCreated", "ImageTagMirrorSet/samples-mirror")

	if err := e.config.ConfigV1().ImageTagMirrorSets().Delete(context.Background(), "samples-mirror", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	cond = e.waitSamplesExistSays(t, 10*time.Second, "no mirror set serves their images any more", "can no longer import unless the cluster reaches those registries",
		fmt.Sprintf("%d imagestreams (registries %s, %s)", len(x86Inventory(t).ImageStreamNames()), accessRegistry, redHatRegistry))
	if cond.Status != corev1.ConditionTrue {
		t.Errorf("SamplesExist is %s once the mirror set is gone; the samples are still there", cond.Status)
	}
	t.Logf("SamplesExist without the mirror set: %s", cond.Message)
	e.waitEvent(t, "SamplesWithoutMirror", "can no longer import")
}

// TestAMirrorSetForSomeRegistriesInstallsTheRestAndNamesTheOthers: the ImageTagMirrorSet
// mirrors registry.redhat.io only, and registry.access.redhat.com does not answer: the Config is
// created Managed, and SamplesExist and an event name the imagestreams that will not import.
func TestAMirrorSetForSomeRegistriesInstallsTheRestAndNamesTheOthers(t *testing.T) {
	parallel(t, aboutTwentySecond)
	e := newEnv(t)
	mirror := answeringMirror(t)
	e.createTagMirrorSet(t, tagMirrorSet("redhat-io", mirror, redHatRegistry))
	probes := &mirrorProbes{}
	e.startOperator(disconnectedOptions(t, probes, false))
	e.waitBootstrappedManaged(t)

	cond := e.waitSamplesExistSays(t, 10*time.Second, "(ImageTagMirrorSet/redhat-io)", "no mirror set serves the images of", "(registry "+accessRegistry+")", "which will not import")
	t.Logf("SamplesExist: %s", cond.Message)
	if msg := e.getConfig().Annotations[bootstrapstate.MessageAnnotation]; !strings.Contains(msg, "will not import") || !strings.Contains(msg, accessRegistry+":443") {
		t.Errorf("the install decision does not say which samples will not import, and why: %q", msg)
	}
	e.waitEvent(t, "SamplesWithoutMirror", accessRegistry)
	asked := strings.Join(probes.addresses(), " ")
	if !strings.Contains(asked, mirror) || !strings.Contains(asked, accessRegistry+":443") || strings.Contains(asked, redHatRegistry+":443") {
		t.Errorf("probed %s, want the mirror and %s (which no mirror serves), never %s", asked, accessRegistry, redHatRegistry)
	}
}

// TestMirrorSetsAddedAfterInstallArePickedUpByTheReprobe: at install the mirror set's mirror
// does not answer, so the Config is created Removed (RegistryUnreachable) and names the mirror
// set; an admin then points the mirror set at a mirror that answers, and the operator, which
// would otherwise probe again only minutes later, switches the Config to Managed at once.
func TestMirrorSetsAddedAfterInstallArePickedUpByTheReprobe(t *testing.T) {
	parallel(t, aboutTwentySecond)
	e := newEnv(t)
	e.createTagMirrorSet(t, tagMirrorSet("samples-mirror", silentMirror(t), redHatRegistry, accessRegistry))
	probes := &mirrorProbes{}
	opts := disconnectedOptions(t, probes, true)
	opts.RegistryRecheckInterval = 10 * time.Minute
	e.startOperator(opts)
	cfg := e.waitBootstrappedRemoved(t, 40*time.Second, configspec.ReasonRegistryUnreachable)
	if msg := configCondition(cfg, samplesv1.SamplesExist).Message; !strings.Contains(msg, "ImageTagMirrorSet/samples-mirror") {
		t.Errorf("SamplesExist does not name the mirror set whose mirrors did not answer: %q", msg)
	}

	mirror := answeringMirror(t)
	current, err := e.config.ConfigV1().ImageTagMirrorSets().Get(context.Background(), "samples-mirror", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	current.Spec = tagMirrorSet("samples-mirror", mirror, redHatRegistry, accessRegistry).Spec
	changed := time.Now()
	if _, err := e.config.ConfigV1().ImageTagMirrorSets().Update(context.Background(), current, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	eventually(t, 30*time.Second, func() (bool, string) {
		c := e.getConfig()
		return c.Spec.ManagementState == operatorv1.Managed, fmt.Sprintf("spec.managementState %s", c.Spec.ManagementState)
	})
	t.Logf("switched to Managed %s after the mirror set changed", time.Since(changed).Round(time.Millisecond))
	e.waitManaged(t, x86Inventory(t), "v1")
	if got := e.getConfig().Annotations[bootstrapstate.ReasonAnnotation]; got != configspec.ReasonThroughMirrorSets {
		t.Errorf("bootstrap reason %q, want %s", got, configspec.ReasonThroughMirrorSets)
	}
	e.waitEvent(t, "ConfigManagedThroughMirrorSets", "ImageTagMirrorSet/samples-mirror")
	e.waitSamplesExistSays(t, 10*time.Second, "(ImageTagMirrorSet/samples-mirror)")
}

// TestPinnedInventoryFollowsImageDigestMirrorSets: an inventory pinned to digests imports through
// ImageDigestMirrorSets, not ImageTagMirrorSets. With a tag mirror set alone no mirror serves
// its images: the registries are probed, do not answer, and the Config is created Removed without
// the mirror probed; an ImageDigestMirrorSet added later serves them, and the re-probe switches
// the Config to Managed with the pinned references.
func TestPinnedInventoryFollowsImageDigestMirrorSets(t *testing.T) {
	parallel(t, aboutTwentySecond)
	pinnedInventoryFollowsDigestMirrors(t, "ImageDigestMirrorSet/digests", func(e *env, mirror string) {
		idms := &configv1.ImageDigestMirrorSet{ObjectMeta: metav1.ObjectMeta{Name: "digests"}}
		for _, source := range []string{redHatRegistry, accessRegistry} {
			idms.Spec.ImageDigestMirrors = append(idms.Spec.ImageDigestMirrors, configv1.ImageDigestMirrors{
				Source: source, Mirrors: []configv1.ImageMirror{configv1.ImageMirror(mirrorOf(source, mirror))},
			})
		}
		if _, err := e.config.ConfigV1().ImageDigestMirrorSets().Create(context.Background(), idms, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	})
}

// TestPinnedInventoryFollowsImageContentSourcePolicies: the same with the older
// ImageContentSourcePolicy, which openshift-apiserver also applies to digests (and which the
// operator watches through client-go's generated informer).
func TestPinnedInventoryFollowsImageContentSourcePolicies(t *testing.T) {
	parallel(t, aboutTwentySecond)
	pinnedInventoryFollowsDigestMirrors(t, "ImageContentSourcePolicy/digests", func(e *env, mirror string) {
		icsp := &operatorv1alpha1.ImageContentSourcePolicy{ObjectMeta: metav1.ObjectMeta{Name: "digests"}}
		for _, source := range []string{redHatRegistry, accessRegistry} {
			icsp.Spec.RepositoryDigestMirrors = append(icsp.Spec.RepositoryDigestMirrors, operatorv1alpha1.RepositoryDigestMirrors{
				Source: source, Mirrors: []string{mirrorOf(source, mirror)},
			})
		}
		if _, err := operatorclient.NewForConfigOrDie(e.cp.AdminConfig).OperatorV1alpha1().ImageContentSourcePolicies().Create(context.Background(), icsp, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	})
}

// pinnedInventoryFollowsDigestMirrors runs the pinned inventory's install, first with a tag mirror
// set alone, then with the digest mirrors createDigestMirrors makes (named so in SamplesExist).
func pinnedInventoryFollowsDigestMirrors(t *testing.T, named string, createDigestMirrors func(e *env, mirror string)) {
	const archDir = "ocp-x86_64"
	digests := pin.Digests{}
	for _, ref := range x86Inventory(t).ImagesToMirror() {
		sum := sha256.Sum256([]byte(ref))
		digests[ref] = "sha256:" + hex.EncodeToString(sum[:])
	}
	src, err := pin.Source(testInventoryDir())
	if err != nil {
		t.Fatal(err)
	}
	result, err := pin.Tree(src, archDir, digests, false)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	if err := pin.WriteTree(dir, result.Files); err != nil {
		t.Fatal(err)
	}
	pinned, err := inventory.LoadDir(dir, archDir)
	if err != nil {
		t.Fatal(err)
	}

	e := newEnv(t)
	mirror := answeringMirror(t)
	e.createTagMirrorSet(t, tagMirrorSet("tags", mirror, redHatRegistry, accessRegistry))
	probes := &mirrorProbes{}
	opts := disconnectedOptions(t, probes, true)
	opts.InventoryDir = dir
	opts.RegistryRecheckInterval = 10 * time.Minute
	e.startOperator(opts)
	cfg := e.waitBootstrappedRemoved(t, 40*time.Second, configspec.ReasonRegistryUnreachable)
	if got := probes.addresses(); len(got) != 0 {
		t.Errorf("probed %v: no mirror serves the pinned images", got)
	}
	if msg := configCondition(cfg, samplesv1.SamplesExist).Message; !strings.Contains(msg, "the cluster's mirror sets serve none of the samples' images") {
		t.Errorf("SamplesExist does not say the mirror sets serve none of the pinned images: %q", msg)
	}

	createDigestMirrors(e, mirror)
	eventually(t, 30*time.Second, func() (bool, string) {
		c := e.getConfig()
		return c.Spec.ManagementState == operatorv1.Managed, fmt.Sprintf("spec.managementState %s", c.Spec.ManagementState)
	})
	e.waitManaged(t, pinned, "v1")
	probes.assertOnly(t, mirror)
	cond := e.waitSamplesExistSays(t, 10*time.Second, "imported through the cluster's mirror sets ("+named+")")
	if strings.Contains(cond.Message, "ImageTagMirrorSet") {
		t.Errorf("SamplesExist names the tag mirror set, which serves no pinned image: %q", cond.Message)
	}
	for stream, tags := range e.dockerImageTags(t) {
		for tag, ref := range tags {
			if !strings.Contains(ref, "@sha256:") {
				t.Errorf("%s:%s names %s, want the pinned reference", stream, tag, ref)
			}
		}
	}
}
