package integration

import (
	"context"
	"net"
	"strings"
	"testing"
	"time"

	configv1 "github.com/openshift/api/config/v1"
	imagev1 "github.com/openshift/api/image/v1"
	samplesv1 "github.com/openshift/api/samples/v1"
	templatev1 "github.com/openshift/api/template/v1"
	configclient "github.com/openshift/client-go/config/clientset/versioned"
	imageclient "github.com/openshift/client-go/image/clientset/versioned"
	samplesclient "github.com/openshift/client-go/samples/clientset/versioned"
	templateclient "github.com/openshift/client-go/template/clientset/versioned"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes"

	"github.com/samples-operator-dev/cluster-samples-operator/test/controlplane"
)

func TestControlPlaneServesVersionAndEnforcesRBAC(t *testing.T) {
	cp := sharedControlPlane(t)
	admin := kubernetes.NewForConfigOrDie(cp.AdminConfig)
	version, err := admin.Discovery().ServerVersion()
	if err != nil {
		t.Fatal(err)
	}
	if version.GitVersion != controlplane.KubernetesVersion || version.Major != "1" || version.Minor != "35" {
		t.Fatalf("server version = %+v, want %s", version, controlplane.KubernetesVersion)
	}
	if !strings.HasPrefix(cp.Host, "https://127.0.0.1:") {
		t.Fatalf("control plane listens on %s, want loopback", cp.Host)
	}
	host := strings.TrimPrefix(cp.Host, "https://")
	if ip := net.ParseIP(strings.Split(host, ":")[0]); ip == nil || !ip.IsLoopback() {
		t.Fatalf("API server address %s is not loopback", host)
	}

	// The operator identity has no grant yet: RBAC must deny it.
	operator := kubernetes.NewForConfigOrDie(cp.OperatorConfig)
	_, err = operator.CoreV1().Secrets("openshift-config").List(context.Background(), metav1.ListOptions{})
	if !apierrors.IsForbidden(err) {
		t.Fatalf("listing secrets as the operator without a grant: err = %v, want Forbidden", err)
	}
	if !strings.Contains(err.Error(), controlplane.OperatorUser) {
		t.Fatalf("forbidden error does not name the operator identity: %v", err)
	}
	// The admin identity may.
	if _, err := admin.CoreV1().Secrets("openshift-config").List(context.Background(), metav1.ListOptions{}); err != nil {
		t.Fatalf("admin list secrets: %v", err)
	}
	for _, ns := range controlplane.Namespaces {
		if _, err := admin.CoreV1().Namespaces().Get(context.Background(), ns, metav1.GetOptions{}); err != nil {
			t.Fatalf("namespace %s: %v", ns, err)
		}
	}
}

func TestTypedOpenShiftClientsRoundTrip(t *testing.T) {
	cp := sharedControlPlane(t)
	ctx := context.Background()

	samples := samplesclient.NewForConfigOrDie(cp.AdminConfig)
	cfg := &samplesv1.Config{
		ObjectMeta: metav1.ObjectMeta{Name: "roundtrip"},
		Spec: samplesv1.ConfigSpec{
			ManagementState:     "Managed",
			SamplesRegistry:     "mirror.example:5000",
			Architectures:       []string{"x86_64"},
			SkippedImagestreams: []string{"jenkins"},
		},
	}
	if _, err := samples.SamplesV1().Configs().Create(ctx, cfg, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	gotCfg, err := samples.SamplesV1().Configs().Get(ctx, "roundtrip", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if gotCfg.Spec.SamplesRegistry != "mirror.example:5000" || gotCfg.Spec.SkippedImagestreams[0] != "jenkins" {
		t.Fatalf("config spec did not round-trip: %+v", gotCfg.Spec)
	}
	// The CRD from openshift/api validates: an unknown management state is refused.
	bad := cfg.DeepCopy()
	bad.Name = "bad-state"
	bad.Spec.ManagementState = "Sometimes"
	if _, err := samples.SamplesV1().Configs().Create(ctx, bad, metav1.CreateOptions{}); !apierrors.IsInvalid(err) {
		t.Fatalf("creating a Config with managementState Sometimes: err = %v, want Invalid", err)
	}

	config := configclient.NewForConfigOrDie(cp.AdminConfig)
	co := &configv1.ClusterOperator{ObjectMeta: metav1.ObjectMeta{Name: "roundtrip-operator"}}
	created, err := config.ConfigV1().ClusterOperators().Create(ctx, co, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	created.Status.Versions = []configv1.OperandVersion{{Name: "operator", Version: "1.2.3"}}
	if _, err := config.ConfigV1().ClusterOperators().UpdateStatus(ctx, created, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	gotCO, err := config.ConfigV1().ClusterOperators().Get(ctx, "roundtrip-operator", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(gotCO.Status.Versions) != 1 || gotCO.Status.Versions[0].Version != "1.2.3" {
		t.Fatalf("clusteroperator status did not round-trip: %+v", gotCO.Status)
	}

	images := imageclient.NewForConfigOrDie(cp.AdminConfig)
	is := &imagev1.ImageStream{
		ObjectMeta: metav1.ObjectMeta{Name: "roundtrip", Namespace: "openshift", Labels: map[string]string{"a": "b"}},
		Spec: imagev1.ImageStreamSpec{Tags: []imagev1.TagReference{{
			Name:            "1.0",
			From:            &corev1.ObjectReference{Kind: "DockerImage", Name: "registry.example/ns/img:1.0"},
			ReferencePolicy: imagev1.TagReferencePolicy{Type: imagev1.LocalTagReferencePolicy},
		}}},
	}
	if _, err := images.ImageV1().ImageStreams("openshift").Create(ctx, is, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	gotIS, err := images.ImageV1().ImageStreams("openshift").Get(ctx, "roundtrip", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(gotIS.Spec.Tags) != 1 || gotIS.Spec.Tags[0].From.Name != "registry.example/ns/img:1.0" {
		t.Fatalf("imagestream spec did not round-trip: %+v", gotIS.Spec)
	}

	templates := templateclient.NewForConfigOrDie(cp.AdminConfig)
	tmpl := &templatev1.Template{
		ObjectMeta:   metav1.ObjectMeta{Name: "roundtrip", Namespace: "openshift"},
		Parameters:   []templatev1.Parameter{{Name: "NAME", Value: "demo", Required: true}},
		Objects:      []runtime.RawExtension{{Raw: []byte(`{"apiVersion":"v1","kind":"Service","metadata":{"name":"${NAME}"}}`)}},
		ObjectLabels: map[string]string{"template": "roundtrip"},
	}
	if _, err := templates.TemplateV1().Templates("openshift").Create(ctx, tmpl, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	gotT, err := templates.TemplateV1().Templates("openshift").Get(ctx, "roundtrip", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(gotT.Objects) != 1 || !strings.Contains(string(gotT.Objects[0].Raw), "${NAME}") || gotT.Parameters[0].Name != "NAME" || gotT.ObjectLabels["template"] != "roundtrip" {
		t.Fatalf("template did not round-trip: %+v", gotT)
	}
}

// TestControlPlaneStartStopLeavesNoProcess: a control plane's processes run while it does and
// none outlives Stop, twice in a row. It looks at its own processes only, so it runs beside
// other tests.
func TestControlPlaneStartStopLeavesNoProcess(t *testing.T) {
	parallel(t, 0)
	for round := 1; round <= 2; round++ {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
		cp, err := controlplane.Start(ctx, controlplane.Options{})
		cancel()
		if err != nil {
			t.Fatalf("round %d: %v", round, err)
		}
		pids := cp.PIDs()
		want := 2 // etcd, kube-apiserver
		if cp.RealOpenShiftAPIServer() {
			want++
		}
		if len(pids) != want {
			t.Fatalf("round %d: want %d processes, got %v", round, want, pids)
		}
		for _, pid := range pids {
			if !controlplane.ProcessAlive(pid) {
				t.Fatalf("round %d: process %d is not running", round, pid)
			}
		}
		cp.Stop()
		for _, pid := range pids {
			if controlplane.ProcessAlive(pid) {
				t.Fatalf("round %d: process %d survived Stop", round, pid)
			}
		}
	}
}
