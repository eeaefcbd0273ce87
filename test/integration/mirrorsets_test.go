package integration

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/v1/random"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	configv1 "github.com/openshift/api/config/v1"
	imagev1 "github.com/openshift/api/image/v1"
	operatorv1alpha1 "github.com/openshift/api/operator/v1alpha1"
	configclient "github.com/openshift/client-go/config/clientset/versioned"
	imageclient "github.com/openshift/client-go/image/clientset/versioned"
	operatorclient "github.com/openshift/client-go/operator/clientset/versioned"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/samples-operator-dev/cluster-samples-operator/pkg/mirrorcheck"
	"github.com/samples-operator-dev/cluster-samples-operator/test/controlplane"
	"github.com/samples-operator-dev/cluster-samples-operator/test/emulator"
)

// pushToTrustedRegistry pushes a new single-layer image under ref, on a registry of cp started
// with TLS (StartTLSRegistry), and returns its manifest digest.
func pushToTrustedRegistry(t *testing.T, cp *controlplane.ControlPlane, ref string) string {
	t.Helper()
	r, err := name.ParseReference(ref)
	if err != nil {
		t.Fatal(err)
	}
	if host := r.Context().RegistryStr(); !strings.HasPrefix(host, "127.0.0.1:") {
		t.Fatalf("refusing to push %s: the tests never reach beyond loopback", ref)
	}
	img, err := random.Image(256, 1)
	if err != nil {
		t.Fatal(err)
	}
	if err := remote.Write(r, img, remote.WithTransport(cp.RegistryTransport())); err != nil {
		t.Fatalf("pushing %s: %v", ref, err)
	}
	d, err := img.Digest()
	if err != nil {
		t.Fatal(err)
	}
	return d.String()
}

// TestRealServerImportsThroughMirrorSetsFromAMirrorItTrusts: the real openshift-apiserver
// imports a registry.redhat.io tag through an ImageTagMirrorSet from a loopback mirror that
// serves TLS with a certificate of the registries' CA, which the server trusts as a cluster does
// through additionalTrustedCA (SSL_CERT_FILE), the mirror being in no insecureRegistries; a tag
// the mirror lacks fails.
func TestRealServerImportsThroughMirrorSetsFromAMirrorItTrusts(t *testing.T) {
	parallel(t, 0)
	cp, mirror := startTrustedMirror(t, "import through a mirror")
	ctx := context.Background()
	present := pushToTrustedRegistry(t, cp, mirror+"/rh/ubi9/python-311:latest")
	configs := configclient.NewForConfigOrDie(cp.AdminConfig)
	itms := &configv1.ImageTagMirrorSet{ObjectMeta: metav1.ObjectMeta{Name: "samples"}, Spec: configv1.ImageTagMirrorSetSpec{
		ImageTagMirrors: []configv1.ImageTagMirrors{{Source: "registry.redhat.io", Mirrors: []configv1.ImageMirror{configv1.ImageMirror(mirror + "/rh")}}},
	}}
	if _, err := configs.ConfigV1().ImageTagMirrorSets().Create(ctx, itms, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	const ns = "mirror-imports"
	if _, err := kubernetes.NewForConfigOrDie(cp.AdminConfig).CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	images := imageclient.NewForConfigOrDie(cp.AdminConfig)
	isi := &imagev1.ImageStreamImport{ObjectMeta: metav1.ObjectMeta{Name: "python"}, Spec: imagev1.ImageStreamImportSpec{Import: true, Images: []imagev1.ImageImportSpec{
		{From: corev1.ObjectReference{Kind: "DockerImage", Name: "registry.redhat.io/ubi9/python-311:latest"}, To: &corev1.LocalObjectReference{Name: "mirrored"}},
		{From: corev1.ObjectReference{Kind: "DockerImage", Name: "registry.redhat.io/ubi9/python-312:latest"}, To: &corev1.LocalObjectReference{Name: "missing"}},
	}}}
	got, err := images.ImageV1().ImageStreamImports(ns).Create(ctx, isi, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(got.Status.Images) != 2 {
		t.Fatalf("the import answered %d images, want 2: %+v", len(got.Status.Images), got.Status.Images)
	}
	mirrored, missing := got.Status.Images[0], got.Status.Images[1]
	// The image is the mirror's, recorded under the repository the tag names.
	if mirrored.Status.Status != metav1.StatusSuccess || mirrored.Image == nil || mirrored.Image.Name != present ||
		mirrored.Image.DockerImageReference != "registry.redhat.io/ubi9/python-311@"+present {
		t.Errorf("the mirrored tag did not import %s from the mirror: %+v", present, mirrored.Status)
	}
	// Both places tried are named: the mirror's NotFound first, then the source's (a closed
	// loopback proxy here).
	wantMissing := fmt.Sprintf(`dockerimage.image.openshift.io "%s/rh/ubi9/python-312:latest" not found`, mirror)
	if missing.Status.Status != metav1.StatusFailure || missing.Status.Reason != metav1.StatusReasonInternalError ||
		!strings.HasPrefix(missing.Status.Message, "Internal error occurred: ["+wantMissing+", registry.redhat.io/ubi9/python-312:latest: ") {
		t.Errorf("the tag the mirror lacks: %s %s %q, want InternalError naming %s and the source", missing.Status.Status, missing.Status.Reason, missing.Status.Message, wantMissing)
	}
	if strings.Contains(missing.Status.Message, "x509") {
		t.Errorf("the server does not trust the mirror's CA: %s", missing.Status.Message)
	}
}

// mirroredImport is what one backend made of one tag of a mirrored import: where the image was
// recorded from (its repository: the digest is the mirror's content on the real server, made up
// on the stand-ins), or the failure's reason and message.
type mirroredImport struct {
	repository, reason, message string
}

// mirroredImports waits until every tag of want has an image or a failure in stream name of
// namespace, and returns them.
func mirroredImports(t *testing.T, images imageclient.Interface, namespace, name string, tags []string) map[string]mirroredImport {
	t.Helper()
	got := map[string]mirroredImport{}
	eventually(t, 30*time.Second, func() (bool, string) {
		is, err := images.ImageV1().ImageStreams(namespace).Get(context.Background(), name, metav1.GetOptions{})
		if err != nil {
			return false, err.Error()
		}
		for _, tag := range is.Status.Tags {
			for _, c := range tag.Conditions {
				if c.Type == imagev1.ImportSuccess && c.Status == corev1.ConditionFalse {
					got[tag.Tag] = mirroredImport{reason: c.Reason, message: c.Message}
				}
			}
			if _, failed := got[tag.Tag]; !failed && len(tag.Items) > 0 {
				repo, _, _ := strings.Cut(tag.Items[0].DockerImageReference, "@")
				got[tag.Tag] = mirroredImport{repository: repo}
			}
		}
		return len(got) == len(tags), fmt.Sprintf("%d of %d tags imported or failed: %v", len(got), len(tags), got)
	})
	return got
}

// TestStandInsImportThroughMirrorSetsAsOpenShiftAPIServer compares an ImageStreamImport through
// the three kinds of mirror set on the stand-ins (the import emulator, ResolveMirrorSets) and on
// the real openshift-apiserver importing from a loopback mirror it trusts: which tags import,
// from which repository, and the reason and message of each failure. The emulator's failure
// rules play the mirror's content (what is pushed to the real one) and the unreachable source
// registries (the real server's proxy is a closed loopback port); which places are tried, in
// which order, and how their failures add up is the emulator's own, and must be the server's.
func TestStandInsImportThroughMirrorSetsAsOpenShiftAPIServer(t *testing.T) {
	parallel(t, aboutHalfAMinute)
	requireReal(t, "openshift-apiserver", os.Getenv(controlplane.OpenShiftBinDirEnv) != "", "set "+controlplane.OpenShiftBinDirEnv+" to compare the stand-ins with it")
	ctx := context.Background()
	standIn := newBackend(t, "stand-ins", controlplane.Options{StandIns: true})
	real := newBackend(t, "openshift-apiserver", controlplane.Options{})
	ok, why := real.cp.CanServeRegistry()
	requireReal(t, "test registry", ok, why)
	mirror, err := real.cp.StartTLSRegistry(ctx)
	if err != nil {
		t.Fatal(err)
	}
	// The mirror holds three images; "rh-first", the first tag mirror, holds nothing.
	held := map[string]string{} // repository on the mirror -> digest
	for _, ref := range []string{mirror + "/rh/ubi9/python-311:latest", mirror + "/rhel9-digests/nodejs-20:latest", mirror + "/access/ubi8/ruby-30:1"} {
		repo, _, _ := strings.Cut(ref[len(mirror):], ":")
		held[mirror+repo] = pushToTrustedRegistry(t, real.cp, ref)
	}
	d2, d3 := held[mirror+"/rhel9-digests/nodejs-20"], held[mirror+"/access/ubi8/ruby-30"]
	absent := held[mirror+"/rh/ubi9/python-311"] // on the mirror, but not in the digest mirror's repository
	tags := map[string]string{
		"tag-mirrored":            "registry.redhat.io/ubi9/python-311:latest", // on the second tag mirror
		"tag-missing":             "registry.redhat.io/ubi9/python-312:latest", // on neither
		"digest-mirrored":         "registry.redhat.io/rhel9/nodejs-20@" + d2,  // an ImageDigestMirrorSet
		"digest-missing":          "registry.redhat.io/rhel9/nodejs-20@" + absent,
		"tag-under-digest-source": "registry.redhat.io/rhel9/nodejs-20:latest",     // the longest source mirrors digests only
		"policy-digest":           "registry.access.redhat.com/ubi8/ruby-30@" + d3, // an ImageContentSourcePolicy
		"policy-tag":              "registry.access.redhat.com/ubi8/ruby-30:1",     // which mirrors no tag
		"never-contact-source":    "registry.redhat.io/ubi8/ruby-33:latest",        // tried at the source all the same
		"wildcard-source":         "registry.example.org/team/app:1",               // a *.example.org source mirrors no import
	}
	const ns = "mirror-diff"
	results := map[string]map[string]mirroredImport{}
	for _, b := range []*backend{standIn, real} {
		kube := kubernetes.NewForConfigOrDie(b.cp.AdminConfig)
		if _, err := kube.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		createMirrorSets(t, b.cp, mirror)
		run := func() {
			isi := &imagev1.ImageStreamImport{ObjectMeta: metav1.ObjectMeta{Name: "mirrored"}, Spec: imagev1.ImageStreamImportSpec{Import: true}}
			for _, tag := range slices.Sorted(maps.Keys(tags)) {
				isi.Spec.Images = append(isi.Spec.Images, imagev1.ImageImportSpec{
					From: corev1.ObjectReference{Kind: "DockerImage", Name: tags[tag]}, To: &corev1.LocalObjectReference{Name: tag}})
			}
			if _, err := b.images.ImageV1().ImageStreamImports(ns).Create(ctx, isi, metav1.CreateOptions{}); err != nil {
				t.Fatal(err)
			}
			results[b.name] = mirroredImports(t, b.images, ns, "mirrored", slices.Collect(maps.Keys(tags)))
		}
		if b.cp.RealOpenShiftAPIServer() {
			run()
			continue
		}
		importer := emulator.New(b.images, ns)
		if err := importer.ResolveMirrorSets(b.cp.AdminConfig); err != nil {
			t.Fatal(err)
		}
		importer.FailMatching(func(ref string) (string, bool) {
			if !strings.HasPrefix(ref, mirror+"/") {
				return "", false
			}
			repo, digest, byDigest := strings.Cut(ref, "@")
			if !byDigest {
				repo, _, _ = strings.Cut(ref[len(mirror):], ":")
				repo = mirror + repo
			}
			if have, ok := held[repo]; ok && (!byDigest || digest == have) {
				return "", false
			}
			return fmt.Sprintf("dockerimage.image.openshift.io %q not found", ref), true
		})
		for _, ref := range tags {
			host, _, _ := strings.Cut(ref, "/")
			importer.FailReferenceWithReason(ref, "InternalError",
				fmt.Sprintf(`Internal error occurred: %s: Get "https://%s/v2/": proxyconnect tcp: dial tcp 127.0.0.1:9: connect: connection refused`, ref, host))
		}
		runCtx, cancel := context.WithCancel(ctx)
		done := make(chan struct{})
		go func() { defer close(done); _ = importer.Run(runCtx) }()
		run()
		cancel()
		<-done
	}
	for _, tag := range slices.Sorted(maps.Keys(tags)) {
		s, r := results[standIn.name][tag], results[real.name][tag]
		t.Logf("%s (%s): %+v", tag, tags[tag], r)
		if s != r {
			t.Errorf("%s (%s):\n  stand-ins           %+v\n  openshift-apiserver %+v", tag, tags[tag], s, r)
		}
	}
}

// createMirrorSets creates one mirror set of each kind, all pointing at mirror: tags of
// registry.redhat.io on two mirrors in order (and of registry.redhat.io/ubi8 on a third, never
// to contact the source, and of the subdomains of example.org on a fourth), digests of
// registry.redhat.io/rhel9, and (the older kind) digests of registry.access.redhat.com.
func createMirrorSets(t *testing.T, cp *controlplane.ControlPlane, mirror string) {
	t.Helper()
	ctx := context.Background()
	configs := configclient.NewForConfigOrDie(cp.AdminConfig)
	itms := &configv1.ImageTagMirrorSet{ObjectMeta: metav1.ObjectMeta{Name: "samples-tags"}, Spec: configv1.ImageTagMirrorSetSpec{ImageTagMirrors: []configv1.ImageTagMirrors{
		{Source: "registry.redhat.io", Mirrors: []configv1.ImageMirror{configv1.ImageMirror(mirror + "/rh-first"), configv1.ImageMirror(mirror + "/rh")}},
		{Source: "registry.redhat.io/ubi8", Mirrors: []configv1.ImageMirror{configv1.ImageMirror(mirror + "/ubi8-only")}, MirrorSourcePolicy: configv1.NeverContactSource},
		{Source: "*.example.org", Mirrors: []configv1.ImageMirror{configv1.ImageMirror(mirror + "/wildcard")}},
	}}}
	if _, err := configs.ConfigV1().ImageTagMirrorSets().Create(ctx, itms, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	idms := &configv1.ImageDigestMirrorSet{ObjectMeta: metav1.ObjectMeta{Name: "samples-digests"}, Spec: configv1.ImageDigestMirrorSetSpec{ImageDigestMirrors: []configv1.ImageDigestMirrors{
		{Source: "registry.redhat.io/rhel9", Mirrors: []configv1.ImageMirror{configv1.ImageMirror(mirror + "/rhel9-digests")}},
	}}}
	if _, err := configs.ConfigV1().ImageDigestMirrorSets().Create(ctx, idms, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	icsp := &operatorv1alpha1.ImageContentSourcePolicy{ObjectMeta: metav1.ObjectMeta{Name: "samples-legacy"}, Spec: operatorv1alpha1.ImageContentSourcePolicySpec{
		RepositoryDigestMirrors: []operatorv1alpha1.RepositoryDigestMirrors{{Source: "registry.access.redhat.com", Mirrors: []string{mirror + "/access"}}},
	}}
	if _, err := operatorclient.NewForConfigOrDie(cp.AdminConfig).OperatorV1alpha1().ImageContentSourcePolicies().Create(ctx, icsp, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
}

// TestCheckMirrorAgreesWithTheRealServer: every image of the x86_64 inventory is mirrored to a
// loopback mirror the real openshift-apiserver trusts by CA, through an ImageTagMirrorSet, but
// one. `inventory check-mirror` of the shipped binary, given the same mirror set as a file,
// names that image and only it, and exits 1; the server imports a mirrored image and fails the
// missing one, naming the mirror.
func TestCheckMirrorAgreesWithTheRealServer(t *testing.T) {
	parallel(t, aboutHalfAMinute)
	cp, mirror := startTrustedMirror(t, "check a mirror the real server imports from")
	ctx := context.Background()
	inv := fullX86Inventory(t)
	var doc strings.Builder
	doc.WriteString("apiVersion: config.openshift.io/v1\nkind: ImageTagMirrorSet\nmetadata:\n  name: itms-generic-0\nspec:\n  imageTagMirrors:\n")
	for _, source := range inv.SourceRegistries() {
		fmt.Fprintf(&doc, "  - source: %s\n    mirrors:\n    - %s/%s\n", source, mirror, strings.ReplaceAll(source, ".", "-"))
	}
	dir := t.TempDir()
	setsFile := filepath.Join(dir, "itms-oc-mirror.yaml")
	if err := os.WriteFile(setsFile, []byte(doc.String()), 0o600); err != nil {
		t.Fatal(err)
	}
	sets, err := mirrorcheck.LoadSets([]string{setsFile})
	if err != nil {
		t.Fatal(err)
	}
	for _, o := range sets.Tag {
		if _, err := configclient.NewForConfigOrDie(cp.AdminConfig).ConfigV1().ImageTagMirrorSets().Create(ctx, o, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	const missing, present = "registry.redhat.io/ubi9/python-312:latest", "registry.redhat.io/ubi9/python-39:latest"
	onMirror := mirrorcheck.MirrorSets(sets)
	var wg sync.WaitGroup
	sem := make(chan struct{}, 8)
	images := inv.ImagesToMirror()
	if !slices.Contains(images, missing) || !slices.Contains(images, present) {
		t.Fatalf("the inventory no longer has %s and %s: pick others", missing, present)
	}
	for _, image := range images {
		if image == missing {
			continue
		}
		wg.Go(func() {
			sem <- struct{}{}
			defer func() { <-sem }()
			pushToTrustedRegistry(t, cp, onMirror(image)[0])
		})
	}
	wg.Wait()

	authFile := filepath.Join(dir, "auth.json")
	if err := os.WriteFile(authFile, []byte(`{"auths":{}}`), 0o600); err != nil {
		t.Fatal(err)
	}
	checkMirror := func(args ...string) (string, int) {
		cmd := exec.Command(operatorBinary(t), append([]string{"inventory", "--arch", "x86_64", "check-mirror", "--mirror-sets", setsFile, "--ca-file", cp.RegistryCAFile, "--authfile", authFile}, args...)...)
		var stderr strings.Builder
		cmd.Stderr = &stderr
		out, err := cmd.Output()
		code := 0
		if exit, ok := err.(*exec.ExitError); ok {
			code = exit.ExitCode()
		} else if err != nil {
			t.Fatal(err)
		}
		t.Logf("check-mirror %v: exit %d, stderr %q", args, code, stderr.String())
		return string(out), code
	}
	out, code := checkMirror()
	lines := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
	var rowsMissing []string
	for _, l := range lines {
		if f := strings.Fields(l); len(f) >= 3 && f[2] == string(mirrorcheck.Missing) {
			rowsMissing = append(rowsMissing, l)
		}
	}
	wantRow := fmt.Sprintf("%s %s missing not found (HTTP 404)", missing, onMirror(missing)[0])
	if code != 1 || len(rowsMissing) != 1 || strings.Join(strings.Fields(rowsMissing[0]), " ") != wantRow ||
		lines[len(lines)-1] != fmt.Sprintf("%d images: %d present, 1 missing", len(images), len(images)-1) {
		t.Errorf("check-mirror exited %d; rows missing %q, want %q; last line %q", code, rowsMissing, wantRow, lines[len(lines)-1])
	}
	out, code = checkMirror("-o", "json")
	var report mirrorcheck.Report
	if err := json.Unmarshal([]byte(out), &report); err != nil || code != 1 || report.Summary.Missing != 1 {
		t.Errorf("-o json: exit %d, %v, summary %+v", code, err, report.Summary)
	}

	// The server agrees: the mirrored image imports, the missing one fails at the mirror.
	const ns = "check-mirror"
	if _, err := kubernetes.NewForConfigOrDie(cp.AdminConfig).CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	isi := &imagev1.ImageStreamImport{ObjectMeta: metav1.ObjectMeta{Name: "python"}, Spec: imagev1.ImageStreamImportSpec{Import: true, Images: []imagev1.ImageImportSpec{
		{From: corev1.ObjectReference{Kind: "DockerImage", Name: present}, To: &corev1.LocalObjectReference{Name: "present"}},
		{From: corev1.ObjectReference{Kind: "DockerImage", Name: missing}, To: &corev1.LocalObjectReference{Name: "missing"}},
	}}}
	got, err := imageclient.NewForConfigOrDie(cp.AdminConfig).ImageV1().ImageStreamImports(ns).Create(ctx, isi, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if st := got.Status.Images; len(st) != 2 || st[0].Status.Status != metav1.StatusSuccess || st[1].Status.Status != metav1.StatusFailure ||
		!strings.Contains(st[1].Status.Message, fmt.Sprintf("dockerimage.image.openshift.io %q not found", onMirror(missing)[0])) {
		t.Errorf("the server's import: %+v", st)
	}
}

// startTrustedMirror starts the real openshift-apiserver and a TLS loopback registry it trusts
// by CA, and returns them; the test needs them for what (requireReal).
func startTrustedMirror(t *testing.T, what string) (*controlplane.ControlPlane, string) {
	t.Helper()
	requireReal(t, "openshift-apiserver", os.Getenv(controlplane.OpenShiftBinDirEnv) != "", "set "+controlplane.OpenShiftBinDirEnv+" to "+what)
	cp := controlplane.StartForTest(t)
	ok, why := cp.CanServeRegistry()
	requireReal(t, "test registry", ok, why)
	mirror, err := cp.StartTLSRegistry(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return cp, mirror
}
