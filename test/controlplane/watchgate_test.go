package controlplane

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"io"
	"log"
	"net"
	"net/http"
	"net/http/httputil"
	"net/url"
	"os"
	"path/filepath"
	"sync"
	"testing"
)

// watchGate stands between openshift-apiserver's own clients and kube-apiserver, and holds back
// what the server's watches receive while it is closed; every other request passes. Closed, it
// keeps the server's informers' caches as they were, the way a watch lost in a backoff does, for
// exactly as long as the test says, where a backoff lasts as long as chance makes it.
type watchGate struct {
	url string
	mu  sync.Mutex
	// opened is closed while the gate is open.
	opened chan struct{}
}

// startWatchGate serves the gate on a loopback port with kube-apiserver's own certificate, open,
// until the test ends.
func startWatchGate(t *testing.T, cp *ControlPlane) *watchGate {
	t.Helper()
	upstream, err := url.Parse(cp.Host)
	if err != nil {
		t.Fatal(err)
	}
	caPEM, err := os.ReadFile(cp.CAFile)
	if err != nil {
		t.Fatal(err)
	}
	roots := x509.NewCertPool()
	roots.AppendCertsFromPEM(caPEM)
	cert, err := tls.LoadX509KeyPair(cp.ServingCertFile, cp.ServingKeyFile)
	if err != nil {
		t.Fatal(err)
	}
	g := &watchGate{opened: make(chan struct{})}
	close(g.opened)
	proxy := &httputil.ReverseProxy{
		Rewrite: func(r *httputil.ProxyRequest) { r.SetURL(upstream) },
		// HTTP/1.1 upstream: a held watch holds its own connection, never another request's.
		Transport:     &http.Transport{TLSClientConfig: &tls.Config{RootCAs: roots, MinVersion: tls.VersionTLS12}},
		FlushInterval: -1, // a watch's events go on as they come
		// The watches the server's stop cuts off say so, and say nothing.
		ErrorLog: log.New(io.Discard, "", 0),
		ModifyResponse: func(res *http.Response) error {
			if watch := res.Request.URL.Query().Get("watch"); watch == "true" || watch == "1" {
				res.Body = &heldBody{ReadCloser: res.Body, gate: g, done: res.Request.Context().Done()}
			}
			return nil
		},
	}
	listener, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	server := &http.Server{Handler: proxy, ErrorLog: log.New(io.Discard, "", 0),
		TLSConfig: &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12}}
	go func() { _ = server.ServeTLS(listener, "", "") }()
	t.Cleanup(func() {
		g.release()
		_ = server.Close()
	})
	g.url = "https://" + listener.Addr().String()
	return g
}

// kubeconfig writes a kubeconfig of the admin's that reaches kube-apiserver through the gate.
func (g *watchGate) kubeconfig(t *testing.T, cp *ControlPlane) string {
	t.Helper()
	caPEM, err := os.ReadFile(cp.CAFile)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(cp.Dir, "through-the-watch-gate.kubeconfig")
	if err := writeKubeconfig(path, g.url, caPEM, AdminUser, cp.adminToken); err != nil {
		t.Fatal(err)
	}
	return path
}

// hold closes the gate: whatever a watch receives from now on waits for release.
func (g *watchGate) hold() {
	g.mu.Lock()
	defer g.mu.Unlock()
	select {
	case <-g.opened:
		g.opened = make(chan struct{})
	default:
	}
}

// release opens the gate: what it held goes on, in the order it came.
func (g *watchGate) release() {
	g.mu.Lock()
	defer g.mu.Unlock()
	select {
	case <-g.opened:
	default:
		close(g.opened)
	}
}

func (g *watchGate) open() <-chan struct{} {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.opened
}

// heldBody is a watch's answer. It waits at the gate after reading, not before: a read already
// waiting on kube-apiserver when the gate closed must not let through what comes after.
type heldBody struct {
	io.ReadCloser
	gate *watchGate
	done <-chan struct{} // the watch's request is over
}

func (b *heldBody) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	select {
	case <-b.gate.open():
		return n, err
	case <-b.done:
		return 0, context.Canceled
	}
}

// probeCounter passes on its requests, and signals each ImageStreamImport create, the probe by
// which a reset asks openshift-apiserver what its caches hold (caches.go).
type probeCounter struct {
	next   http.RoundTripper
	probes chan struct{}
}

func (c *probeCounter) RoundTrip(req *http.Request) (*http.Response, error) {
	if req.Method == http.MethodPost && filepath.Base(req.URL.Path) == isiResource.Resource {
		select {
		case c.probes <- struct{}{}:
		default: // the test has seen enough of them
		}
	}
	return c.next.RoundTrip(req)
}
