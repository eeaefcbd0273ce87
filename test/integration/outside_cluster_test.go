package integration

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	operatorv1 "github.com/openshift/api/operator/v1"
	samplesv1 "github.com/openshift/api/samples/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/samples-operator-dev/cluster-samples-operator/pkg/bootstrapstate"
	"github.com/samples-operator-dev/cluster-samples-operator/pkg/metrics"
)

// TestStartsOutsideAClusterWithOnlyAKubeconfig runs the binary as someone would from a laptop:
// `operator --kubeconfig` and the Deployment's environment, no certificate flags and nothing
// mounted at /etc/secrets. It converges, and serves /metrics on the default port with a
// self-signed certificate, to authorised scrapers only.
//
// It binds the default :60000 on every interface, so it does not run in parallel with others
// (the other tests bind ports of their own). That port lies in the kernel's range for outgoing
// connections, and the tests open thousands: TestMain holds it from the start
// (defaultMetricsPort), and this test lets it go just before the operator binds it.
func TestStartsOutsideAClusterWithOnlyAKubeconfig(t *testing.T) {
	e := newEnv(t)
	inv := x86Inventory(t)
	ctx := context.Background()

	// With no --registry-probe-address the bootstrap probe would dial registry.redhat.io:443. It
	// runs only when there is no Config to find, so the admin creates one first.
	if _, err := e.samples.SamplesV1().Configs().Create(ctx, &samplesv1.Config{
		ObjectMeta: metav1.ObjectMeta{Name: samplesv1.ConfigName},
		Spec:       samplesv1.ConfigSpec{ManagementState: operatorv1.Managed, Architectures: []string{"x86_64"}},
	}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	defaultMetricsPort.release()
	if ln, err := net.Listen("tcp", metrics.DefaultBindAddress); err != nil {
		t.Fatalf("the default metrics port is taken by another process, so this test cannot check it: %v", err)
	} else {
		ln.Close()
	}

	p := startBinary(t, []string{"RELEASE_VERSION=v1"}, "operator", "--kubeconfig", e.cp.OperatorKubeconfig)
	e.waitManaged(t, inv, "v1")

	port := metrics.DefaultBindAddress[strings.LastIndex(metrics.DefaultBindAddress, ":"):]
	// Take the CA from the handshake and trust only it from then on, as a user told to trust
	// this run's certificate would.
	var chain []*x509.Certificate
	eventually(t, 10*time.Second, func() (bool, string) {
		conn, err := tls.Dial("tcp", "127.0.0.1"+port, &tls.Config{InsecureSkipVerify: true}) //nolint:gosec // reads the chain to pin its CA
		if err != nil {
			return false, err.Error()
		}
		defer conn.Close()
		chain = conn.ConnectionState().PeerCertificates
		return true, ""
	})
	if len(chain) != 2 {
		t.Fatalf("the metrics port serves %d certificates, want a serving certificate and its CA", len(chain))
	}
	ca := chain[1]
	if !strings.HasPrefix(ca.Subject.CommonName, "cluster-samples-operator-metrics-signer@") || ca.CheckSignatureFrom(ca) != nil {
		t.Fatalf("the metrics port's certificate is issued by %q, want the operator's self-signed CA", ca.Subject.CommonName)
	}
	roots := x509.NewCertPool()
	roots.AddCert(ca)

	scrape := func(serverName, token string) (int, string) {
		t.Helper()
		client := &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{
			TLSClientConfig: &tls.Config{RootCAs: roots, ServerName: serverName},
		}}
		defer client.CloseIdleConnections() // the metrics listener holds only a few connections
		req, err := http.NewRequest(http.MethodGet, "https://127.0.0.1"+port+"/metrics", nil)
		if err != nil {
			t.Fatal(err)
		}
		if token != "" {
			req.Header.Set("Authorization", "Bearer "+token)
		}
		resp, err := client.Do(req)
		if err != nil {
			t.Fatalf("scraping as %s: %v", serverName, err)
		}
		defer resp.Body.Close()
		body, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(body)
	}
	for _, name := range []string{"localhost", "127.0.0.1"} {
		if code, body := scrape(name, ""); code != http.StatusUnauthorized {
			t.Errorf("as %s without a token: %d, want 401: %s", name, code, body)
		}
	}
	// The cluster admin may get /metrics (manifests/ grant the operator its token reviews).
	var code int
	var body string
	eventually(t, 30*time.Second, func() (bool, string) {
		code, body = scrape("localhost", e.cp.AdminConfig.BearerToken)
		return code == http.StatusOK, fmt.Sprintf("admin scrape: %d: %s", code, tail(body, 300))
	})
	if !strings.Contains(body, metrics.DegradedName+" 0") {
		t.Errorf("the admin scrape lacks %q", metrics.DegradedName+" 0")
	}

	out := p.output.String()
	for _, want := range []string{"No serving certificate was given", "made a self-signed serving certificate"} {
		if !strings.Contains(out, want) {
			t.Errorf("the log does not say %q", want)
		}
	}
	// The Config was the admin's: the operator created none, so it never had a reason to probe.
	if strings.Contains(out, "Created the default samples Config") {
		t.Error("the operator created a default Config, after probing the registry")
	}
	if cfg := e.getConfig(); cfg.Annotations[bootstrapstate.ReasonAnnotation] != "" {
		t.Errorf("the Config carries a bootstrap reason: %v", cfg.Annotations)
	}
	if code := p.wait(0); code != -1 {
		t.Fatalf("the operator exited with %d", code)
	}
}

// defaultMetricsPort keeps the operator's default metrics port from being handed to an outgoing
// connection before TestStartsOutsideAClusterWithOnlyAKubeconfig binds it: a port something
// listens on is never chosen as a connection's source port.
var defaultMetricsPort portHold

type portHold struct {
	mu sync.Mutex
	ln net.Listener
}

// hold listens on addr; a port already taken is left to the test that needs it to report.
func (h *portHold) hold(addr string) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if ln, err := net.Listen("tcp", addr); err == nil {
		h.ln = ln
	}
}

func (h *portHold) release() {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.ln != nil {
		h.ln.Close()
		h.ln = nil
	}
}
