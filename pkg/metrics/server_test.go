package metrics

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"errors"
	"io"
	"math/big"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	operatorv1 "github.com/openshift/api/operator/v1"
	authenticationv1 "k8s.io/api/authentication/v1"
	authorizationv1 "k8s.io/api/authorization/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes/fake"
	authenticationclient "k8s.io/client-go/kubernetes/typed/authentication/v1"
	k8stesting "k8s.io/client-go/testing"
	clocktesting "k8s.io/utils/clock/testing"
)

// writeCert writes a fresh self-signed serving certificate for 127.0.0.1 and returns it.
func writeCert(t *testing.T, certFile, keyFile, commonName string) *x509.Certificate {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	serial, err := rand.Int(rand.Reader, big.NewInt(1<<62))
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber:          serial,
		Subject:               pkix.Name{CommonName: commonName},
		NotBefore:             time.Now().Add(-time.Minute),
		NotAfter:              time.Now().Add(time.Hour),
		KeyUsage:              x509.KeyUsageDigitalSignature | x509.KeyUsageCertSign,
		ExtKeyUsage:           []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		IPAddresses:           []net.IP{net.ParseIP("127.0.0.1")},
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
	// Write both to temporary names and rename, as the kubelet swaps a secret volume's files.
	for path, block := range map[string]*pem.Block{certFile: {Type: "CERTIFICATE", Bytes: der}, keyFile: {Type: "EC PRIVATE KEY", Bytes: keyDER}} {
		if err := os.WriteFile(path+".tmp", pem.EncodeToMemory(block), 0o600); err != nil {
			t.Fatal(err)
		}
		if err := os.Rename(path+".tmp", path); err != nil {
			t.Fatal(err)
		}
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		t.Fatal(err)
	}
	return cert
}

// fakeAPI answers TokenReviews for known tokens and SubjectAccessReviews for GET /metrics by
// users in allowed, counting the reviews it is asked for.
type fakeAPI struct {
	*fake.Clientset
	users   map[string]string // token -> username
	allowed map[string]bool   // username -> may get /metrics
	fail    atomic.Bool

	mu           sync.Mutex
	tokenReviews int
	sars         int
}

func newFakeAPI() *fakeAPI {
	f := &fakeAPI{
		Clientset: fake.NewClientset(),
		users:     map[string]string{"scraper-token": "system:serviceaccount:openshift-monitoring:prometheus-k8s", "nobody-token": "system:serviceaccount:default:nobody"},
		allowed:   map[string]bool{"system:serviceaccount:openshift-monitoring:prometheus-k8s": true},
	}
	f.PrependReactor("create", "tokenreviews", func(action k8stesting.Action) (bool, runtime.Object, error) {
		f.mu.Lock()
		f.tokenReviews++
		f.mu.Unlock()
		if f.fail.Load() {
			return true, nil, errors.New("the API server is away")
		}
		tr := action.(k8stesting.CreateAction).GetObject().(*authenticationv1.TokenReview).DeepCopy()
		if user, ok := f.users[tr.Spec.Token]; ok {
			tr.Status = authenticationv1.TokenReviewStatus{Authenticated: true, User: authenticationv1.UserInfo{
				Username: user, Groups: []string{"system:authenticated"}, Extra: map[string]authenticationv1.ExtraValue{"scope": {"x"}},
			}}
		}
		return true, tr, nil
	})
	f.PrependReactor("create", "subjectaccessreviews", func(action k8stesting.Action) (bool, runtime.Object, error) {
		f.mu.Lock()
		f.sars++
		f.mu.Unlock()
		sar := action.(k8stesting.CreateAction).GetObject().(*authorizationv1.SubjectAccessReview).DeepCopy()
		attrs := sar.Spec.NonResourceAttributes
		sar.Status.Allowed = attrs != nil && attrs.Path == "/metrics" && attrs.Verb == "get" &&
			f.allowed[sar.Spec.User] && len(sar.Spec.Extra["scope"]) == 1 && sar.Spec.ResourceAttributes == nil
		return true, sar, nil
	})
	return f
}

func (f *fakeAPI) calls() (tokenReviews, sars int) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.tokenReviews, f.sars
}

type testServer struct {
	url      string
	health   string // http://host:port of the health listener
	pool     *x509.CertPool
	api      *fakeAPI
	clock    *clocktesting.FakePassiveClock
	ready    *atomic.Bool
	certFile string
	keyFile  string
	done     chan error
	cancel   context.CancelFunc
}

func startServer(t *testing.T) *testServer {
	t.Helper()
	api := newFakeAPI()
	return startServerWith(t, api, api.AuthenticationV1().TokenReviews())
}

// startServerWith is startServer with the TokenReviews sent to tokens (api answers them).
func startServerWith(t *testing.T, api *fakeAPI, tokens authenticationclient.TokenReviewInterface) *testServer {
	t.Helper()
	dir := t.TempDir()
	ts := &testServer{
		api:      api,
		clock:    clocktesting.NewFakePassiveClock(time.Now()),
		ready:    &atomic.Bool{},
		certFile: filepath.Join(dir, "tls.crt"),
		keyFile:  filepath.Join(dir, "tls.key"),
		done:     make(chan error, 1),
		pool:     x509.NewCertPool(),
	}
	ts.pool.AddCert(writeCert(t, ts.certFile, ts.keyFile, "first"))
	c := fixture{config: healthy(operatorv1.Managed), degraded: true}.collector(t)
	srv, err := NewServer(ServerOptions{
		BindAddress:          "127.0.0.1:0",
		HealthBindAddress:    "127.0.0.1:0",
		CertFile:             ts.certFile,
		KeyFile:              ts.keyFile,
		Gatherer:             NewRegistry(c),
		TokenReviews:         tokens,
		SubjectAccessReviews: ts.api.AuthorizationV1().SubjectAccessReviews(),
		Ready:                ts.ready.Load,
		Clock:                ts.clock,
	})
	if err != nil {
		t.Fatal(err)
	}
	addr, err := srv.Listen()
	if err != nil {
		t.Fatal(err)
	}
	ts.url = "https://" + addr.String()
	ts.health = "http://" + srv.HealthAddr().String()
	ctx, cancel := context.WithCancel(context.Background())
	ts.cancel = cancel
	go func() { ts.done <- srv.Run(ctx) }()
	t.Cleanup(func() {
		cancel()
		<-ts.done
	})
	return ts
}

// get makes one request on a new connection, so that each sees the certificate served now.
func (ts *testServer) get(t *testing.T, path, token string) (*http.Response, string) {
	t.Helper()
	client := &http.Client{Timeout: 5 * time.Second, Transport: &http.Transport{
		TLSClientConfig:   &tls.Config{RootCAs: ts.pool},
		DisableKeepAlives: true,
	}}
	return fetch(t, client, ts.url+path, token)
}

// getHealth makes one request to the health listener on a new connection.
func (ts *testServer) getHealth(t *testing.T, path string) (int, string) {
	t.Helper()
	resp, body := fetch(t, &http.Client{Timeout: 5 * time.Second}, ts.health+path, "")
	return resp.StatusCode, body
}

// fetch GETs url, with the bearer token if any, and reads the whole answer.
func fetch(t *testing.T, client *http.Client, url, token string) (*http.Response, string) {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, url, nil)
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
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp, string(body)
}

func TestMetricsNeedAnAuthorisedBearerToken(t *testing.T) {
	ts := startServer(t)
	for _, tc := range []struct {
		name, token string
		want        int
	}{
		{"no token", "", http.StatusUnauthorized},
		{"unknown token", "stolen-token", http.StatusUnauthorized},
		{"authenticated but not allowed", "nobody-token", http.StatusForbidden},
		{"allowed", "scraper-token", http.StatusOK},
	} {
		resp, body := ts.get(t, "/metrics", tc.token)
		if resp.StatusCode != tc.want {
			t.Errorf("%s: status %d, want %d (%s)", tc.name, resp.StatusCode, tc.want, body)
		}
		if tc.want == http.StatusUnauthorized && resp.Header.Get("WWW-Authenticate") == "" {
			t.Errorf("%s: no WWW-Authenticate header", tc.name)
		}
		if tc.want == http.StatusOK {
			for _, want := range []string{"openshift_samples_degraded_info 1", "openshift_samples_invalidconfig_info 0", "go_goroutines"} {
				if !strings.Contains(body, want) {
					t.Errorf("the scrape lacks %q", want)
				}
			}
		} else if strings.Contains(body, "openshift_samples") {
			t.Errorf("%s: metrics leaked: %s", tc.name, body)
		}
	}
	// Basic auth or another scheme is not a bearer token.
	client := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: ts.pool}}}
	req, _ := http.NewRequest(http.MethodGet, ts.url+"/metrics", nil)
	req.SetBasicAuth("scraper-token", "scraper-token")
	resp, err := client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusUnauthorized {
		t.Errorf("basic auth: status %d, want 401", resp.StatusCode)
	}
}

func TestVerdictsAreCachedForTheTTL(t *testing.T) {
	ts := startServer(t)
	for i := 0; i < 5; i++ {
		if resp, _ := ts.get(t, "/metrics", "scraper-token"); resp.StatusCode != http.StatusOK {
			t.Fatalf("scrape %d: %d", i, resp.StatusCode)
		}
		if resp, _ := ts.get(t, "/metrics", "nobody-token"); resp.StatusCode != http.StatusForbidden {
			t.Fatalf("forbidden scrape %d: %d", i, resp.StatusCode)
		}
		if resp, _ := ts.get(t, "/metrics", "stolen-token"); resp.StatusCode != http.StatusUnauthorized {
			t.Fatalf("unauthenticated scrape %d: %d", i, resp.StatusCode)
		}
	}
	if trs, sars := ts.api.calls(); trs != 3 || sars != 2 {
		t.Fatalf("%d TokenReviews and %d SubjectAccessReviews for 3 tokens within the TTL, want 3 and 2", trs, sars)
	}
	ts.clock.SetTime(ts.clock.Now().Add(defaultVerdictTTL))
	ts.get(t, "/metrics", "scraper-token")
	if trs, sars := ts.api.calls(); trs != 4 || sars != 3 {
		t.Fatalf("after the TTL: %d TokenReviews and %d SubjectAccessReviews, want 4 and 3", trs, sars)
	}
	// A failed review answers 500 and is not remembered.
	ts.api.fail.Store(true)
	ts.clock.SetTime(ts.clock.Now().Add(defaultVerdictTTL))
	if resp, _ := ts.get(t, "/metrics", "scraper-token"); resp.StatusCode != http.StatusInternalServerError {
		t.Fatalf("with the API server away: %d, want 500", resp.StatusCode)
	}
	ts.api.fail.Store(false)
	if resp, _ := ts.get(t, "/metrics", "scraper-token"); resp.StatusCode != http.StatusOK {
		t.Fatalf("after the API server is back: %d, want 200", resp.StatusCode)
	}
}

func TestVerdictCacheIsBounded(t *testing.T) {
	api := newFakeAPI()
	clk := clocktesting.NewFakePassiveClock(time.Now())
	r := newReviewer(api.AuthenticationV1().TokenReviews(), api.AuthorizationV1().SubjectAccessReviews(), "/metrics", time.Minute, 1, clk)
	for i := 0; i < 3*maxCachedVerdicts; i++ {
		if _, err := r.review(context.Background(), "token-"+big.NewInt(int64(i)).String()); err != nil {
			t.Fatal(err)
		}
		if len(r.cache) > maxCachedVerdicts {
			t.Fatalf("%d cached verdicts, want at most %d", len(r.cache), maxCachedVerdicts)
		}
	}
}

// TestHealthAndReadiness: the probes answer on the metrics port and, in plain HTTP, on the
// health listener; the health listener serves nothing else.
func TestHealthAndReadiness(t *testing.T) {
	ts := startServer(t)
	for _, get := range []func(string) (int, string){
		func(path string) (int, string) { resp, body := ts.get(t, path, ""); return resp.StatusCode, body },
		func(path string) (int, string) { return ts.getHealth(t, path) },
	} {
		ts.ready.Store(false)
		if code, body := get("/healthz"); code != http.StatusOK || body != "ok" {
			t.Errorf("/healthz: %d %q", code, body)
		}
		if code, _ := get("/readyz"); code != http.StatusServiceUnavailable {
			t.Errorf("/readyz before ready: %d, want 503", code)
		}
		ts.ready.Store(true)
		if code, _ := get("/readyz"); code != http.StatusOK {
			t.Errorf("/readyz when ready: %d, want 200", code)
		}
	}
	if code, _ := ts.getHealth(t, "/metrics"); code != http.StatusNotFound {
		t.Errorf("/metrics on the health listener: %d, want 404", code)
	}
	if resp, _ := ts.get(t, "/debug/pprof/", "scraper-token"); resp.StatusCode != http.StatusNotFound {
		t.Errorf("/debug/pprof/: %d, want 404", resp.StatusCode)
	}
	if trs, _ := ts.api.calls(); trs != 0 {
		t.Errorf("health checks and unknown paths made %d TokenReviews", trs)
	}
}

func TestOnlyTLS12AndNewer(t *testing.T) {
	ts := startServer(t)
	conn, err := tls.Dial("tcp", strings.TrimPrefix(ts.url, "https://"), &tls.Config{RootCAs: ts.pool, MaxVersion: tls.VersionTLS11})
	if err == nil {
		conn.Close()
		t.Fatal("a TLS 1.1 handshake succeeded")
	}
	conn, err = tls.Dial("tcp", strings.TrimPrefix(ts.url, "https://"), &tls.Config{RootCAs: ts.pool, MaxVersion: tls.VersionTLS12})
	if err != nil {
		t.Fatalf("TLS 1.2: %v", err)
	}
	conn.Close()
	// Plain HTTP gets no metrics.
	resp, err := http.Get(strings.Replace(ts.url, "https://", "http://", 1) + "/metrics")
	if err == nil {
		resp.Body.Close()
		if resp.StatusCode != http.StatusBadRequest {
			t.Fatalf("plain HTTP: %d, want 400", resp.StatusCode)
		}
	}
}

func TestServingCertificateIsReloaded(t *testing.T) {
	ts := startServer(t)
	served := func() string {
		resp, _ := ts.get(t, "/healthz", "")
		return resp.TLS.PeerCertificates[0].Subject.CommonName
	}
	if got := served(); got != "first" {
		t.Fatalf("serving %q, want the first certificate", got)
	}
	ts.pool.AddCert(writeCert(t, ts.certFile, ts.keyFile, "second"))
	if got := served(); got != "second" {
		t.Fatalf("after rotation serving %q, want the second certificate", got)
	}
	// A broken pair does not take the server down: the last good certificate stays.
	if err := os.WriteFile(ts.keyFile, []byte("not a key"), 0o600); err != nil {
		t.Fatal(err)
	}
	if got := served(); got != "second" {
		t.Fatalf("with a broken key serving %q, want the second certificate", got)
	}
	ts.pool.AddCert(writeCert(t, ts.certFile, ts.keyFile, "third"))
	if got := served(); got != "third" {
		t.Fatalf("after repair serving %q, want the third certificate", got)
	}
}

func TestNewServerRefusesMissingCertificate(t *testing.T) {
	api := newFakeAPI()
	dir := t.TempDir()
	_, err := NewServer(ServerOptions{CertFile: filepath.Join(dir, "tls.crt"), KeyFile: filepath.Join(dir, "tls.key"),
		Gatherer: NewRegistry(NewCollector(Inputs{})), TokenReviews: api.AuthenticationV1().TokenReviews(),
		SubjectAccessReviews: api.AuthorizationV1().SubjectAccessReviews()})
	if err == nil {
		t.Fatal("NewServer started without a certificate")
	}
}

func TestRunStopsWhenTheContextEnds(t *testing.T) {
	ts := startServer(t)
	ts.get(t, "/healthz", "")
	start := time.Now()
	ts.cancel()
	select {
	case err := <-ts.done:
		if err != nil {
			t.Fatalf("Run: %v", err)
		}
		ts.done <- nil // for the cleanup
	case <-time.After(shutdownGrace + time.Second):
		t.Fatal("Run did not return after the context ended")
	}
	if d := time.Since(start); d > time.Second {
		t.Errorf("an idle server took %v to stop", d)
	}
	if _, err := net.DialTimeout("tcp", strings.TrimPrefix(ts.url, "https://"), time.Second); err == nil {
		t.Error("the port still accepts connections after Run returned")
	}
}

// TestMismatchedCertificatePairIsReportedOnce: a key that does not match the certificate (a
// rotation caught halfway, say) keeps the last good pair in use and is reported once, not on
// every handshake, until the files change again.
func TestMismatchedCertificatePairIsReportedOnce(t *testing.T) {
	dir := t.TempDir()
	certFile, keyFile := filepath.Join(dir, "tls.crt"), filepath.Join(dir, "tls.key")
	writeCert(t, certFile, keyFile, "first")
	c, err := newCertFiles(certFile, keyFile)
	if err != nil {
		t.Fatal(err)
	}
	first, _ := c.get()
	otherDir := t.TempDir()
	writeCert(t, filepath.Join(otherDir, "tls.crt"), filepath.Join(otherDir, "tls.key"), "other")
	otherKey, err := os.ReadFile(filepath.Join(otherDir, "tls.key"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(keyFile, otherKey, 0o600); err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 50; i++ {
		if got, err := c.get(); err != nil || got != first {
			t.Fatalf("handshake %d with a mismatched pair: %v, want the last good certificate", i, err)
		}
	}
	if c.warnings != 1 {
		t.Errorf("the mismatched pair was reported %d times over 50 handshakes, want once", c.warnings)
	}
	writeCert(t, certFile, keyFile, "second")
	if got, _ := c.get(); got == first {
		t.Error("a good pair written after the bad one was not loaded")
	}
}

// HealthAddr is the health listener's address once Listen has bound it; nil without one.
func (s *Server) HealthAddr() net.Addr {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.healthListener == nil {
		return nil
	}
	return s.healthListener.Addr()
}
