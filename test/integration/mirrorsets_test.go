package integration

import (
	"context"
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/v1/random"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	configv1 "github.com/openshift/api/config/v1"
	imagev1 "github.com/openshift/api/image/v1"
	configclient "github.com/openshift/client-go/config/clientset/versioned"
	imageclient "github.com/openshift/client-go/image/clientset/versioned"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/samples-operator-dev/cluster-samples-operator/test/controlplane"
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
	requireReal(t, "openshift-apiserver", os.Getenv(controlplane.OpenShiftBinDirEnv) != "", "set "+controlplane.OpenShiftBinDirEnv+" to import through a mirror")
	cp := controlplane.StartForTest(t)
	ok, why := cp.CanServeRegistry()
	requireReal(t, "test registry", ok, why)
	ctx := context.Background()
	mirror, err := cp.StartTLSRegistry(ctx)
	if err != nil {
		t.Fatal(err)
	}
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
