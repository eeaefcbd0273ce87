package metrics

import (
	"crypto/tls"
	"crypto/x509"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"
)

func TestCertFilesAbsent(t *testing.T) {
	dir := t.TempDir()
	cert, key := filepath.Join(dir, "tls.crt"), filepath.Join(dir, "tls.key")
	if !CertFilesAbsent(cert, key) {
		t.Error("neither file exists: want absent")
	}
	if err := os.WriteFile(cert, []byte("x"), 0o600); err != nil {
		t.Fatal(err)
	}
	if CertFilesAbsent(cert, key) {
		t.Error("only the certificate exists: a broken mount is not an absent certificate")
	}
	if CertFilesAbsent(key, cert) {
		t.Error("only the key exists: a broken mount is not an absent certificate")
	}
	if err := os.WriteFile(key, []byte("x"), 0o600); err != nil {
		t.Fatal(err)
	}
	if CertFilesAbsent(cert, key) {
		t.Error("both files exist: want present")
	}
	// A file where a directory should be is not "absent" either (stat says ENOTDIR).
	if CertFilesAbsent(filepath.Join(cert, "tls.crt"), filepath.Join(dir, "missing")) {
		t.Error("a path through a regular file: want not absent")
	}
}

func TestSelfSignedHosts(t *testing.T) {
	for _, tc := range []struct {
		hostname string
		want     []string
	}{
		{"", []string{"localhost", "127.0.0.1", "::1"}},
		{"localhost", []string{"localhost", "127.0.0.1", "::1"}},
		{"laptop", []string{"localhost", "127.0.0.1", "::1", "laptop"}},
	} {
		if got := selfSignedHosts(tc.hostname); !slices.Equal(got, tc.want) {
			t.Errorf("selfSignedHosts(%q) = %v, want %v", tc.hostname, got, tc.want)
		}
	}
}

func TestSelfSignedCertificate(t *testing.T) {
	if _, err := selfSignedCertificate(nil, time.Hour); err == nil {
		t.Error("a certificate for no host was made")
	}
	cert, err := selfSignedCertificate([]string{"localhost", "127.0.0.1", "::1", "laptop"}, time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	if len(cert.Certificate) != 2 {
		t.Fatalf("%d certificates in the chain, want the serving certificate and its CA", len(cert.Certificate))
	}
	ca, err := x509.ParseCertificate(cert.Certificate[1])
	if err != nil {
		t.Fatal(err)
	}
	if !ca.IsCA || ca.CheckSignatureFrom(ca) != nil {
		t.Fatalf("the second certificate is not a self-signed CA: %v", ca.Subject)
	}
	leaf := cert.Leaf
	if leaf.IsCA {
		t.Error("the serving certificate is a CA")
	}
	if d := time.Until(leaf.NotAfter); d > time.Hour || d < 50*time.Minute {
		t.Errorf("the serving certificate expires in %s, want about an hour", d)
	}
	roots := x509.NewCertPool()
	roots.AddCert(ca)
	for _, host := range []string{"localhost", "127.0.0.1", "::1", "laptop"} {
		if _, err := leaf.Verify(x509.VerifyOptions{DNSName: host, Roots: roots, KeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}}); err != nil {
			t.Errorf("not valid for %s: %v", host, err)
		}
	}
	if _, err := leaf.Verify(x509.VerifyOptions{DNSName: "metrics.example", Roots: roots}); err == nil {
		t.Error("valid for a host it was not made for")
	}

	// Two runs get two CAs: trusting one run's certificate does not trust the next one's.
	other, err := selfSignedCertificate([]string{"localhost"}, time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := other.Leaf.Verify(x509.VerifyOptions{DNSName: "localhost", Roots: roots}); err == nil {
		t.Error("a second self-signed certificate chains to the first one's CA")
	}
}

func TestServerWithSelfSignedCertificate(t *testing.T) {
	api := newFakeAPI()
	dir := t.TempDir()
	srv, err := NewServer(ServerOptions{
		BindAddress: "127.0.0.1:0",
		SelfSigned:  true,
		// Ignored: a missing file does not stop a self-signed server.
		CertFile: filepath.Join(dir, "tls.crt"), KeyFile: filepath.Join(dir, "tls.key"),
		Gatherer: NewRegistry(NewCollector(Inputs{})), TokenReviews: api.AuthenticationV1().TokenReviews(),
		SubjectAccessReviews: api.AuthorizationV1().SubjectAccessReviews(),
	})
	if err != nil {
		t.Fatal(err)
	}
	addr, err := srv.Listen()
	if err != nil {
		t.Fatal(err)
	}
	ctx := t.Context()
	done := make(chan error, 1)
	go func() { done <- srv.Run(ctx) }()
	t.Cleanup(func() {
		// t.Context is cancelled just before the cleanups run.
		if err := <-done; err != nil {
			t.Errorf("Run: %v", err)
		}
	})

	// Pin the CA the handshake carries, as a user told to trust this run's certificate would.
	conn, err := tls.Dial("tcp", addr.String(), &tls.Config{InsecureSkipVerify: true}) //nolint:gosec // reads the chain to pin
	if err != nil {
		t.Fatal(err)
	}
	chain := conn.ConnectionState().PeerCertificates
	conn.Close()
	roots := x509.NewCertPool()
	roots.AddCert(chain[len(chain)-1])
	for _, name := range []string{"127.0.0.1", "localhost"} {
		client := &http.Client{Timeout: 5 * time.Second, Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: roots, ServerName: name}}}
		resp, err := client.Get("https://" + addr.String() + "/metrics")
		if err != nil {
			t.Fatalf("as %s: %v", name, err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusUnauthorized {
			t.Errorf("as %s without a token: %d, want 401", name, resp.StatusCode)
		}
	}
}
