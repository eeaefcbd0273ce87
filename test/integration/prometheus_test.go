package integration

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"

	"github.com/samples-operator-dev/cluster-samples-operator/test/controlplane"
	"github.com/samples-operator-dev/cluster-samples-operator/test/testpki"
)

// The alert tests hand promtool series built from two scrapes; this one has a real Prometheus
// scrape the running operator as manifests/06-servicemonitor.yaml describes (HTTPS, a service
// account's bearer token, the service CA, the Service's DNS name) and evaluate
// manifests/010-prometheus-rules.yaml on what it scraped. What only a real scrape can break shows
// here: the token Prometheus presents being refused, the certificate not matching the
// ServiceMonitor's serverName, or the annotations' queries finding other series than the rule
// tests assumed.
//
// Everything stays on the loopback: Prometheus listens on 127.0.0.1, its one target is the
// operator on 127.0.0.1, from a static list, and it has no remote write and no Alertmanager.

// prometheusScrapeInterval stands for the ServiceMonitor's minute, so that an evaluation sees the
// scrapes of a few seconds of test time.
const prometheusScrapeInterval = time.Second

func TestPrometheusScrapesTheOperatorAndSeesImportsFailing(t *testing.T) {
	parallel(t, 0)
	prometheus := prometheusPath(t)
	const alert = "SamplesImagestreamImportFailing"
	rules, _ := prometheusRuleFile(t)
	monitor := readServiceMonitorEndpoint(t)
	dir := t.TempDir()

	// The imports-fail-and-are-retried scenario of the alert tests.
	e := newEnv(t)
	opts := defaultOptions()
	failImports(t, e)
	opts.ImportRetryInterval = 200 * time.Millisecond

	caFile, certFile, keyFile := serviceCASignedCert(t, dir, monitor.serviceDNSName)
	metricsAddr := freeLoopbackAddr(t)
	opts.MetricsBindAddress, opts.TLSCertFile, opts.TLSKeyFile = metricsAddr, certFile, keyFile
	e.startOperator(opts)
	waitImportsFailing(true)(t, e)

	// Prometheus presents its own service account's token, which 09-prometheus-rbac.yaml (applied
	// with manifests/) lets GET /metrics, not the admin's.
	token := serviceAccountToken(context.Background(), t, e.kube, "openshift-monitoring", "prometheus-k8s")
	tokenFile := filepath.Join(dir, "token")
	if err := os.WriteFile(tokenFile, []byte(token), 0o600); err != nil {
		t.Fatal(err)
	}

	targetLabels := maps.Clone(scrapeTargetLabels)
	// Prometheus sets these two itself, from the job and the target's address.
	delete(targetLabels, "job")
	delete(targetLabels, "instance")
	config := map[string]any{
		"global": map[string]any{
			"scrape_interval":     promDuration(prometheusScrapeInterval),
			"evaluation_interval": promDuration(prometheusScrapeInterval),
		},
		"rule_files": []string{filepath.Join(dir, "rules.yaml")},
		"scrape_configs": []any{map[string]any{
			"job_name":      scrapeTargetLabels["job"],
			"scheme":        monitor.scheme,
			"metrics_path":  monitor.path,
			"authorization": map[string]any{"credentials_file": tokenFile},
			"tls_config":    map[string]any{"ca_file": caFile, "server_name": monitor.serverName},
			"static_configs": []any{map[string]any{
				"targets": []string{metricsAddr},
				"labels":  targetLabels,
			}},
		}},
	}
	configData, err := yaml.Marshal(config)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "prometheus.yaml"), configData, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "rules.yaml"), rules, 0o644); err != nil {
		t.Fatal(err)
	}

	prom := startPrometheus(t, prometheus, dir)

	var targets struct {
		ActiveTargets []struct {
			Labels    map[string]string `json:"labels"`
			ScrapeURL string            `json:"scrapeUrl"`
			Health    string            `json:"health"`
			LastError string            `json:"lastError"`
		} `json:"activeTargets"`
	}
	wantURL := monitor.scheme + "://" + metricsAddr + monitor.path
	// Until the API server has picked up the operator's auth-delegator binding, the operator
	// answers 500 and the target is down.
	eventually(t, 30*time.Second, func() (bool, string) {
		if err := prom.get("/api/v1/targets?state=active", &targets); err != nil {
			return false, err.Error()
		}
		if len(targets.ActiveTargets) != 1 {
			return false, fmt.Sprintf("active targets: %+v", targets.ActiveTargets)
		}
		tg := targets.ActiveTargets[0]
		return tg.ScrapeURL == wantURL && tg.Health == "up",
			fmt.Sprintf("target %s: health %q, last error %q (want %s up)", tg.ScrapeURL, tg.Health, tg.LastError, wantURL)
	})
	if got := targets.ActiveTargets[0].Labels; got["job"] != scrapeTargetLabels["job"] || got["instance"] != metricsAddr {
		t.Errorf("target labels %v: want job %q and instance %q", got, scrapeTargetLabels["job"], metricsAddr)
	}

	type activeAlert struct {
		Labels      map[string]string `json:"labels"`
		Annotations map[string]string `json:"annotations"`
		State       string            `json:"state"`
		Value       string            `json:"value"`
	}
	var alerts struct {
		Alerts []activeAlert `json:"alerts"`
	}
	var seen activeAlert
	// A `for` of two hours keeps the alert pending for the whole test.
	eventually(t, 20*time.Second, func() (bool, string) {
		if err := prom.get("/api/v1/alerts", &alerts); err != nil {
			return false, err.Error()
		}
		for _, a := range alerts.Alerts {
			if a.Labels["alertname"] == alert {
				seen = a
				return a.State == "pending", fmt.Sprintf("%s is %s", alert, a.State)
			}
		}
		return false, fmt.Sprintf("%s is not active; active alerts: %+v", alert, alerts.Alerts)
	})
	t.Logf("Prometheus scraped the operator at %s and has %s pending, value %s", wantURL, alert, seen.Value)

	want := alertsAsSeen[alert]
	wantLabels := maps.Clone(want.ExpLabels)
	wantLabels["alertname"] = alert
	if !maps.Equal(seen.Labels, wantLabels) {
		t.Errorf("%s labels:\n%v\nwant:\n%v", alert, seen.Labels, wantLabels)
	}
	// The annotations' templates query Prometheus, here over series that carry the target's labels.
	for k, v := range want.ExpAnnotations {
		if seen.Annotations[k] != v {
			t.Errorf("%s annotation %s:\n%q\nwant:\n%q", alert, k, seen.Annotations[k], v)
		}
	}
	// The retries outnumber the failing imagestreams, so the opposite alert cannot hold at the same
	// evaluation, and nothing else is wrong with the cluster.
	for _, a := range alerts.Alerts {
		if a.Labels["alertname"] != alert {
			t.Errorf("%s is %s as well; in this scenario only %s may be active", a.Labels["alertname"], a.State, alert)
		}
	}
}

// serviceMonitorEndpoint is what the test takes from the ServiceMonitor and the metrics Service.
type serviceMonitorEndpoint struct {
	scheme, path, serverName string
	// serviceDNSName is the name the service CA issues the serving certificate for.
	serviceDNSName string
}

func readServiceMonitorEndpoint(t *testing.T) serviceMonitorEndpoint {
	t.Helper()
	read := func(name, kind string) *unstructured.Unstructured {
		t.Helper()
		objs, err := controlplane.ReadManifests(filepath.Join(controlplane.RepoRoot(), "manifests", name))
		if err != nil {
			t.Fatal(err)
		}
		if len(objs) != 1 || objs[0].GetKind() != kind {
			t.Fatalf("manifests/%s: want one %s", name, kind)
		}
		return objs[0]
	}
	monitor := read("06-servicemonitor.yaml", "ServiceMonitor")
	service := read("06-metrics-service.yaml", "Service")
	endpoints, _, _ := unstructured.NestedSlice(monitor.Object, "spec", "endpoints")
	if len(endpoints) != 1 {
		t.Fatalf("the ServiceMonitor has %d endpoints, want 1", len(endpoints))
	}
	ep, _ := endpoints[0].(map[string]any)
	str := func(fields ...string) string {
		s, _, _ := unstructured.NestedString(ep, fields...)
		if s == "" {
			t.Fatalf("the ServiceMonitor's endpoint has no %s", strings.Join(fields, "."))
		}
		return s
	}
	// Checked only for being there: the test supplies its own token and CA files.
	str("bearerTokenFile")
	str("tlsConfig", "caFile")
	return serviceMonitorEndpoint{
		scheme:         str("scheme"),
		path:           str("path"),
		serverName:     str("tlsConfig", "serverName"),
		serviceDNSName: service.GetName() + "." + service.GetNamespace() + ".svc",
	}
}

// serviceCASignedCert writes a CA and a serving certificate it signs for dnsName, as the service
// CA issues them: for the Service's DNS names only, not for the address the test listens on, so
// that a scrape verifies only with the ServiceMonitor's serverName.
func serviceCASignedCert(t *testing.T, dir, dnsName string) (caFile, certFile, keyFile string) {
	t.Helper()
	ca, err := testpki.NewCA("openshift-service-serving-signer")
	if err != nil {
		t.Fatal(err)
	}
	serving, err := ca.Issue(testpki.ServerCert(dnsName, dnsName, dnsName+".cluster.local"))
	if err != nil {
		t.Fatal(err)
	}
	caFile, certFile, keyFile = filepath.Join(dir, "service-ca.crt"), filepath.Join(dir, "tls.crt"), filepath.Join(dir, "tls.key")
	if err := ca.WriteCert(caFile); err != nil {
		t.Fatal(err)
	}
	if err := serving.WriteFiles(certFile, keyFile); err != nil {
		t.Fatal(err)
	}
	return caFile, certFile, keyFile
}

// prometheusPath is _output/bin/prometheus (or $PROMETHEUS), which `make test` builds first.
func prometheusPath(t *testing.T) string {
	t.Helper()
	path := os.Getenv("PROMETHEUS")
	if path == "" {
		path = filepath.Join(controlplane.RepoRoot(), "_output", "bin", "prometheus")
	}
	if _, err := os.Stat(path); err != nil {
		t.Fatalf("Prometheus is not built at %s: run `make _output/bin/prometheus` first", path)
	}
	return path
}

// prometheusProcess is a Prometheus server started by a test, and its HTTP API.
type prometheusProcess struct {
	t      *testing.T
	base   string
	client *http.Client
	exited chan struct{}
	err    error
}

// startPrometheus runs Prometheus on dir/prometheus.yaml with its storage in dir, waits until it
// is ready, and stops it when the test ends; its log is shown when the test fails.
func startPrometheus(t *testing.T, path, dir string) *prometheusProcess {
	t.Helper()
	addr := freeLoopbackAddr(t)
	logFile, err := os.Create(filepath.Join(dir, "prometheus.log"))
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(path,
		"--config.file="+filepath.Join(dir, "prometheus.yaml"),
		"--storage.tsdb.path="+filepath.Join(dir, "data"),
		"--web.listen-address="+addr,
		// The default names the machine's hostname; nothing here should.
		"--web.external-url=http://"+addr+"/",
	)
	cmd.Dir = dir
	cmd.Stdout, cmd.Stderr = logFile, logFile
	if err := cmd.Start(); err != nil {
		t.Fatalf("starting Prometheus: %v", err)
	}
	p := &prometheusProcess{
		t:      t,
		base:   "http://" + addr,
		client: &http.Client{Timeout: 5 * time.Second, Transport: &http.Transport{}},
		exited: make(chan struct{}),
	}
	go func() {
		p.err = cmd.Wait()
		logFile.Close()
		close(p.exited)
	}()
	t.Cleanup(func() {
		_ = cmd.Process.Signal(os.Interrupt)
		select {
		case <-p.exited:
		case <-time.After(10 * time.Second):
			_ = cmd.Process.Kill()
			<-p.exited
		}
		if t.Failed() {
			log, _ := os.ReadFile(logFile.Name())
			t.Logf("Prometheus's log:\n%s", lastLines(string(log), 60))
		}
	})
	eventually(t, 30*time.Second, func() (bool, string) {
		p.checkRunning()
		resp, err := p.client.Get(p.base + "/-/ready")
		if err != nil {
			return false, "GET /-/ready: " + err.Error()
		}
		resp.Body.Close()
		return resp.StatusCode == http.StatusOK, fmt.Sprintf("GET /-/ready: %s", resp.Status)
	})
	return p
}

// checkRunning ends the test when Prometheus has exited, rather than let a poll wait it out.
func (p *prometheusProcess) checkRunning() {
	p.t.Helper()
	select {
	case <-p.exited:
		p.t.Fatalf("Prometheus exited: %v", p.err)
	default:
	}
}

// get reads the data of a successful API response into out.
func (p *prometheusProcess) get(path string, out any) error {
	p.t.Helper()
	p.checkRunning()
	resp, err := p.client.Get(p.base + path)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		return err
	}
	var envelope struct {
		Status string          `json:"status"`
		Data   json.RawMessage `json:"data"`
		Error  string          `json:"error"`
	}
	if err := json.Unmarshal(body, &envelope); err != nil || envelope.Status != "success" {
		return fmt.Errorf("GET %s: %s: %.300s", path, resp.Status, body)
	}
	return json.Unmarshal(envelope.Data, out)
}

func lastLines(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	return strings.Join(lines[max(0, len(lines)-n):], "\n")
}
