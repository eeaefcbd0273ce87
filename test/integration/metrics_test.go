package integration

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"io"
	"net/http"
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
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"

	"github.com/samples-operator-dev/cluster-samples-operator/pkg/imports"
	"github.com/samples-operator-dev/cluster-samples-operator/pkg/inventory"
	"github.com/samples-operator-dev/cluster-samples-operator/pkg/metrics"
	"github.com/samples-operator-dev/cluster-samples-operator/test/controlplane"
	"github.com/samples-operator-dev/cluster-samples-operator/test/testpki"
)

// metricsManifests are the monitoring manifests; the PrometheusRule is not served by a bare
// control plane, so Apply skips it (every plane serves ServiceMonitors, as the samples'
// templates create them).
var metricsManifests = []string{
	"03-rbac-auth-delegator.yaml", "06-metrics-service.yaml", "06-servicemonitor.yaml",
	"09-prometheus-rbac.yaml", "010-prometheus-rules.yaml",
}

// TestMetricsServerAuthorisesScrapersAgainstTheAPIServer runs the metrics server as the operator
// identity against a real API server: it asks TokenReviews and SubjectAccessReviews as the
// manifests allow it to, and a scraper gets the metrics only with a token RBAC lets GET /metrics.
func TestMetricsServerAuthorisesScrapersAgainstTheAPIServer(t *testing.T) {
	parallel(t, 0)
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

	certFile, keyFile, pool := servingCert(t)
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
		// Each scrape's connection goes with it, as a scraper that closes or reuses its connection
		// does: the metrics listener holds only a few, and one address's idle ones younger than a
		// second make no room for its next (pkg/metrics/conns.go).
		defer client.CloseIdleConnections()
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
	if want := []string{"PrometheusRule " + controlplane.OperatorNamespace + "/samples-operator-alerts"}; !slices.Equal(result.Skipped, want) {
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
	eventually(t, 30*time.Second, func() (bool, string) {
		code, body = scrape(cp.AdminConfig.BearerToken)
		return code != http.StatusInternalServerError, fmt.Sprintf("admin scrape: %d: %s", code, body)
	})
	if code != http.StatusOK {
		t.Fatalf("admin scrape: %d: %s", code, body)
	}
	for _, want := range []string{
		metrics.DegradedName + " 0",
		metrics.InvalidConfigName + " 1",
		metrics.TBRInaccessibleName + " 0",
		fmt.Sprintf(`%s{name=%q} 1`, metrics.FailedImportName, failing),
		fmt.Sprintf(`%s{reason="missing_tbr_credential"} 0`, metrics.InvalidSecretName), // no pull secret: missing_secret's cause alone
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
	before := len(operatorRequestsOn(t, cp, verb("create"), on("tokenreviews", "subjectaccessreviews")))
	for i := 0; i < 5; i++ {
		if code, body := scrape(prometheusToken); code != http.StatusOK || !strings.Contains(body, metrics.FailedImportName) {
			t.Fatalf("prometheus-k8s scrape %d: %d: %s", i, code, body)
		}
	}
	// Five scrapes in quick succession cost one TokenReview and one SubjectAccessReview.
	if got := len(operatorRequestsOn(t, cp, verb("create"), on("tokenreviews", "subjectaccessreviews"))) - before; got != 2 {
		t.Errorf("five scrapes by one scraper made %d reviews, want 2", got)
	}
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
	eventually(t, 10*time.Second, func() (bool, string) {
		review, err := admin.AuthenticationV1().TokenReviews().Create(ctx, &authenticationv1.TokenReview{Spec: authenticationv1.TokenReviewSpec{Token: tr.Status.Token}}, metav1.CreateOptions{})
		return err == nil && review.Status.Authenticated, fmt.Sprintf("the token of %s/%s does not authenticate: %v", namespace, name, err)
	})
	return tr.Status.Token
}

// servingCert writes a certificate and key for 127.0.0.1 and returns their files and a pool that
// trusts them.
func servingCert(t *testing.T) (certFile, keyFile string, pool *x509.CertPool) {
	t.Helper()
	ca, err := testpki.NewCA("metrics-test-ca")
	if err != nil {
		t.Fatal(err)
	}
	serving, err := ca.Issue(testpki.ServerCert("metrics.openshift-cluster-samples-operator.svc", "127.0.0.1"))
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	certFile, keyFile = filepath.Join(dir, "tls.crt"), filepath.Join(dir, "tls.key")
	if err := serving.WriteFiles(certFile, keyFile); err != nil {
		t.Fatal(err)
	}
	return certFile, keyFile, ca.Pool()
}
