package integration

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"fmt"
	"io"
	"math/big"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	operatorv1 "github.com/openshift/api/operator/v1"
	samplesv1 "github.com/openshift/api/samples/v1"
	samplesclient "github.com/openshift/client-go/samples/clientset/versioned"
	samplesinformers "github.com/openshift/client-go/samples/informers/externalversions"
	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"

	"github.com/samples-operator-dev/cluster-samples-operator/pkg/imports"
	"github.com/samples-operator-dev/cluster-samples-operator/pkg/inventory"
	"github.com/samples-operator-dev/cluster-samples-operator/pkg/metrics"
	"github.com/samples-operator-dev/cluster-samples-operator/test/controlplane"
)

// metricsManifests are the monitoring manifests; the ServiceMonitor and the PrometheusRule are
// not served by a bare control plane, so Apply skips them.
var metricsManifests = []string{
	"03-rbac-auth-delegator.yaml", "06-metrics-service.yaml", "06-servicemonitor.yaml",
	"09-prometheus-rbac.yaml", "010-prometheus-rules.yaml",
}

// TestMetricsServerAuthorisesScrapersAgainstTheAPIServer runs the metrics server as the operator
// identity against a real API server: it asks TokenReviews and SubjectAccessReviews as the
// manifests allow it to, and a scraper gets the metrics only with a token RBAC lets GET /metrics.
func TestMetricsServerAuthorisesScrapersAgainstTheAPIServer(t *testing.T) {
	t.Parallel()
	cp := controlplane.StartForTest(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	admin := kubernetes.NewForConfigOrDie(cp.AdminConfig)
	operatorKube := kubernetes.NewForConfigOrDie(cp.OperatorConfig)
	samples := samplesclient.NewForConfigOrDie(cp.AdminConfig)

	// What the collector reads: a Managed Config and one import error ConfigMap. No operator
	// runs, so the Config has no status conditions.
	inv, err := inventory.Embedded(inventory.ArchDirOCPX86_64)
	if err != nil {
		t.Fatal(err)
	}
	failing := inv.ImageStreamNames()[0]
	if _, err := samples.SamplesV1().Configs().Create(ctx, &samplesv1.Config{
		ObjectMeta: metav1.ObjectMeta{Name: samplesv1.ConfigName},
		Spec:       samplesv1.ConfigSpec{ManagementState: operatorv1.Managed, Architectures: []string{"x86_64"}},
	}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := admin.CoreV1().ConfigMaps(controlplane.OperatorNamespace).Create(ctx, &corev1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{Name: failing, Labels: map[string]string{imports.ErrorLabel: "true"}},
		Data:       map[string]string{"latest": "unauthorized: authentication required"},
	}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}

	// The caches, scoped as the operator scopes them (read here as the admin: the operator's own
	// read grants are other manifests' business).
	samplesInf := samplesinformers.NewSharedInformerFactory(samples, 0)
	operatorNSInf := informers.NewSharedInformerFactoryWithOptions(admin, 0, informers.WithNamespace(controlplane.OperatorNamespace))
	pullSecretInf := informers.NewSharedInformerFactoryWithOptions(admin, 0, informers.WithNamespace(imports.PullSecretNamespace))
	collector := metrics.NewCollector(metrics.Inputs{
		Configs:    samplesInf.Samples().V1().Configs().Lister(),
		ConfigMaps: operatorNSInf.Core().V1().ConfigMaps().Lister(),
		Secrets:    pullSecretInf.Core().V1().Secrets().Lister(),
		ImageStreams: func(arch string) ([]string, error) {
			if arch != "x86_64" {
				return nil, fmt.Errorf("no inventory for %s", arch)
			}
			return inv.ImageStreamNames(), nil
		},
	})
	for _, f := range []interface {
		Start(<-chan struct{})
		Shutdown()
	}{samplesInf, operatorNSInf, pullSecretInf} {
		f.Start(ctx.Done())
		defer f.Shutdown()
	}
	samplesInf.WaitForCacheSync(ctx.Done())
	operatorNSInf.WaitForCacheSync(ctx.Done())
	pullSecretInf.WaitForCacheSync(ctx.Done())
	collector.RetryCounter()(failing)

	certFile, keyFile, pool := selfSignedServingCert(t)
	srv, err := metrics.NewServer(metrics.ServerOptions{
		BindAddress:          "127.0.0.1:0",
		CertFile:             certFile,
		KeyFile:              keyFile,
		Gatherer:             metrics.NewRegistry(collector),
		TokenReviews:         operatorKube.AuthenticationV1().TokenReviews(),
		SubjectAccessReviews: operatorKube.AuthorizationV1().SubjectAccessReviews(),
	})
	if err != nil {
		t.Fatal(err)
	}
	addr, err := srv.Listen()
	if err != nil {
		t.Fatal(err)
	}
	served := make(chan error, 1)
	go func() { served <- srv.Run(ctx) }()
	defer func() {
		cancel()
		if err := <-served; err != nil {
			t.Errorf("metrics server: %v", err)
		}
	}()
	scrape := func(token string) (int, string) {
		t.Helper()
		client := &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool}}}
		req, err := http.NewRequest(http.MethodGet, "https://"+addr.String()+"/metrics", nil)
		if err != nil {
			t.Fatal(err)
		}
		if token != "" {
			req.Header.Set("Authorization", "Bearer "+token)
		}
		resp, err := client.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		body, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(body)
	}

	// Without the auth-delegator grant the operator may not ask the API server, and nobody is
	// let in.
	if code, body := scrape(cp.AdminConfig.BearerToken); code != http.StatusInternalServerError {
		t.Fatalf("before the operator may review tokens: %d, want 500: %s", code, body)
	}

	var objs []*unstructured.Unstructured
	for _, name := range metricsManifests {
		fileObjs, err := controlplane.ReadManifests(filepath.Join(controlplane.RepoRoot(), "manifests", name))
		if err != nil {
			t.Fatal(err)
		}
		objs = append(objs, fileObjs...)
	}
	result, err := controlplane.Apply(ctx, cp.AdminConfig, objs)
	if err != nil {
		t.Fatal(err)
	}
	slices.Sort(result.Skipped)
	if want := []string{"PrometheusRule " + controlplane.OperatorNamespace + "/samples-operator-alerts", "ServiceMonitor " + controlplane.OperatorNamespace + "/cluster-samples-operator"}; !slices.Equal(result.Skipped, want) {
		t.Fatalf("skipped %v, want %v", result.Skipped, want)
	}
	svc, err := admin.CoreV1().Services(controlplane.OperatorNamespace).Get(ctx, "metrics", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if svc.Spec.ClusterIP != corev1.ClusterIPNone || svc.Spec.Ports[0].Port != 60000 {
		t.Fatalf("metrics Service: clusterIP %q, ports %v", svc.Spec.ClusterIP, svc.Spec.Ports)
	}

	// The cluster admin (system:masters) may get /metrics. RBAC picks up new bindings within
	// moments; until then the operator is still refused its reviews (500, never cached).
	var code int
	var body string
	if err := wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, 30*time.Second, true, func(context.Context) (bool, error) {
		code, body = scrape(cp.AdminConfig.BearerToken)
		return code != http.StatusInternalServerError, nil
	}); err != nil || code != http.StatusOK {
		t.Fatalf("admin scrape: %d (%v): %s", code, err, body)
	}
	for _, want := range []string{
		metrics.DegradedName + " 0",
		metrics.InvalidConfigName + " 1",
		metrics.TBRInaccessibleName + " 0",
		fmt.Sprintf(`%s{name=%q} 1`, metrics.FailedImportName, failing),
		fmt.Sprintf(`%s{reason="missing_tbr_credential"} 1`, metrics.InvalidSecretName),
		fmt.Sprintf(`%s{reason="missing_secret"} 1`, metrics.InvalidSecretName),
		fmt.Sprintf(`%s{imagestreamname=%q} 1`, metrics.RetryImportName, failing),
		"go_goroutines ",
	} {
		if !strings.Contains(body, want) {
			t.Errorf("the scrape lacks %q", want)
		}
	}
	if n := strings.Count(body, metrics.FailedImportName+"{"); n != len(inv.ImageStreamNames()) {
		t.Errorf("%d failed-import series, want one per inventory imagestream (%d)", n, len(inv.ImageStreamNames()))
	}

	if code, _ := scrape(""); code != http.StatusUnauthorized {
		t.Errorf("no token: %d, want 401", code)
	}
	if code, _ := scrape("not-a-token"); code != http.StatusUnauthorized {
		t.Errorf("an invalid token: %d, want 401", code)
	}

	// A service account without the grant is authenticated but forbidden; Prometheus's service
	// account, bound by 09-prometheus-rbac.yaml, is let in.
	nobody := serviceAccountToken(ctx, t, admin, controlplane.OperatorNamespace, "nobody")
	if code, body := scrape(nobody); code != http.StatusForbidden {
		t.Errorf("a service account without the grant: %d, want 403: %s", code, body)
	}
	prometheusToken := serviceAccountToken(ctx, t, admin, "openshift-monitoring", "prometheus-k8s")
	before := reviewsBy(t, cp, controlplane.OperatorUser)
	for i := 0; i < 5; i++ {
		if code, body := scrape(prometheusToken); code != http.StatusOK || !strings.Contains(body, metrics.FailedImportName) {
			t.Fatalf("prometheus-k8s scrape %d: %d: %s", i, code, body)
		}
	}
	// Five scrapes in quick succession cost one TokenReview and one SubjectAccessReview.
	if got := reviewsBy(t, cp, controlplane.OperatorUser) - before; got != 2 {
		t.Errorf("five scrapes by one scraper made %d reviews, want 2", got)
	}
}

// reviewsBy counts the TokenReviews and SubjectAccessReviews a user created.
func reviewsBy(t *testing.T, cp *controlplane.ControlPlane, user string) int {
	t.Helper()
	events, err := cp.AuditEvents(user)
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, e := range events {
		if e.Verb == "create" && (e.Resource == "tokenreviews" || e.Resource == "subjectaccessreviews") {
			n++
		}
	}
	return n
}

// serviceAccountToken creates a service account (and its namespace) and returns a token for it
// from the TokenRequest API, once the API server authenticates it.
func serviceAccountToken(ctx context.Context, t *testing.T, admin kubernetes.Interface, namespace, name string) string {
	t.Helper()
	if _, err := admin.CoreV1().Namespaces().Get(ctx, namespace, metav1.GetOptions{}); err != nil {
		if _, err := admin.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: namespace}}, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := admin.CoreV1().ServiceAccounts(namespace).Create(ctx, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: name}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	tr, err := admin.CoreV1().ServiceAccounts(namespace).CreateToken(ctx, name, &authenticationv1.TokenRequest{}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	// The server caches verdicts; wait until the token authenticates so that an early "no" is not
	// what it remembers.
	if err := wait.PollUntilContextTimeout(ctx, 50*time.Millisecond, 10*time.Second, true, func(ctx context.Context) (bool, error) {
		review, err := admin.AuthenticationV1().TokenReviews().Create(ctx, &authenticationv1.TokenReview{Spec: authenticationv1.TokenReviewSpec{Token: tr.Status.Token}}, metav1.CreateOptions{})
		return err == nil && review.Status.Authenticated, nil
	}); err != nil {
		t.Fatalf("the token of %s/%s does not authenticate: %v", namespace, name, err)
	}
	return tr.Status.Token
}

// selfSignedServingCert writes a certificate and key for 127.0.0.1 and returns their files and a
// pool that trusts the certificate.
func selfSignedServingCert(t *testing.T) (certFile, keyFile string, pool *x509.CertPool) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber:          big.NewInt(1),
		Subject:               pkix.Name{CommonName: "metrics.openshift-cluster-samples-operator.svc"},
		NotBefore:             time.Now().Add(-time.Minute),
		NotAfter:              time.Now().Add(time.Hour),
		KeyUsage:              x509.KeyUsageDigitalSignature | x509.KeyUsageCertSign,
		ExtKeyUsage:           []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		IPAddresses:           []net.IP{net.IPv4(127, 0, 0, 1)},
		IsCA:                  true,
		BasicConstraintsValid: true,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	keyDER, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	certFile, keyFile = filepath.Join(dir, "tls.crt"), filepath.Join(dir, "tls.key")
	if err := os.WriteFile(certFile, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(keyFile, pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: keyDER}), 0o600); err != nil {
		t.Fatal(err)
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		t.Fatal(err)
	}
	pool = x509.NewCertPool()
	pool.AddCert(cert)
	return certFile, keyFile, pool
}
