// Package mirrortest serves a mirror for tests of `inventory check-mirror`: an in-memory registry
// (go-containerregistry's pkg/registry) over TLS on 127.0.0.1, wanting basic-auth credentials,
// with its certificate in a CA file and a pull secret that holds the credentials.
package mirrortest

import (
	"encoding/base64"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/google/go-containerregistry/pkg/authn"
	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/registry"
	"github.com/google/go-containerregistry/pkg/v1/random"
	"github.com/google/go-containerregistry/pkg/v1/remote"
)

// The credentials the mirror wants.
const (
	User     = "mirror-user"
	Password = "mirror-password"
)

// Mirror is a running loopback registry.
type Mirror struct {
	// Host is 127.0.0.1:PORT.
	Host string
	// CAFile holds the certificate the mirror serves, to trust it.
	CAFile      string
	srv         *httptest.Server
	connections atomic.Int64
}

// pushParallel is how many images Push writes at a time.
const pushParallel = 8

// Connections is how many connections clients have opened to the mirror so far.
func (m *Mirror) Connections() int { return int(m.connections.Load()) }

// Start serves an empty mirror until the test ends.
func Start(t testing.TB) *Mirror {
	t.Helper()
	reg := registry.New(registry.Logger(log.New(io.Discard, "", 0)))
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if u, p, ok := r.BasicAuth(); !ok || u != User || p != Password {
			w.Header().Set("WWW-Authenticate", `Basic realm="mirror"`)
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusUnauthorized)
			_, _ = io.WriteString(w, `{"errors":[{"code":"UNAUTHORIZED","message":"authentication required"}]}`)
			return
		}
		reg.ServeHTTP(w, r)
	}))
	// A client that does not trust the mirror is refused at the handshake; that is expected.
	srv.Config.ErrorLog = log.New(io.Discard, "", 0)
	m := &Mirror{srv: srv}
	srv.Config.ConnState = func(_ net.Conn, state http.ConnState) {
		if state == http.StateNew {
			m.connections.Add(1)
		}
	}
	srv.StartTLS()
	// Push's eight at a time keep their connections: with Go's two idle ones per host, most
	// pushes shook hands anew, and the handshakes were most of the CPU a check-mirror test spent.
	srv.Client().Transport.(*http.Transport).MaxIdleConnsPerHost = pushParallel
	t.Cleanup(srv.Close)
	m.Host = strings.TrimPrefix(srv.URL, "https://")
	if !strings.HasPrefix(m.Host, "127.0.0.1:") {
		t.Fatalf("the test mirror listens on %s, not on loopback", m.Host)
	}
	m.CAFile = filepath.Join(t.TempDir(), "mirror-ca.crt")
	if err := os.WriteFile(m.CAFile, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: srv.Certificate().Raw}), 0o600); err != nil {
		t.Fatal(err)
	}
	return m
}

// Push stores a new small image under each ref (on this mirror), eight at a time, and returns
// each ref's manifest digest.
func (m *Mirror) Push(t testing.TB, refs ...string) map[string]string {
	t.Helper()
	return PushEach(t, refs, pushParallel, m.push)
}

// PushEach calls push for each ref, at most parallel at a time, and returns each ref's digest; the
// test fails on the first error.
func PushEach(t testing.TB, refs []string, parallel int, push func(ref string) (digest string, err error)) map[string]string {
	t.Helper()
	var wg sync.WaitGroup
	var mu sync.Mutex
	sem := make(chan struct{}, parallel)
	digests := map[string]string{}
	var firstErr error
	for _, ref := range refs {
		wg.Go(func() {
			sem <- struct{}{}
			defer func() { <-sem }()
			d, err := push(ref)
			mu.Lock()
			defer mu.Unlock()
			if err != nil && firstErr == nil {
				firstErr = err
			}
			digests[ref] = d
		})
	}
	wg.Wait()
	if firstErr != nil {
		t.Fatal(firstErr)
	}
	return digests
}

func (m *Mirror) push(ref string) (string, error) {
	r, err := name.ParseReference(ref)
	if err != nil {
		return "", err
	}
	if r.Context().RegistryStr() != m.Host {
		return "", fmt.Errorf("refusing to push %s: not on the test mirror %s", ref, m.Host)
	}
	img, err := random.Image(64, 1)
	if err != nil {
		return "", err
	}
	if err := remote.Write(r, img, remote.WithTransport(m.srv.Client().Transport), remote.WithAuth(&authn.Basic{Username: User, Password: Password})); err != nil {
		return "", err
	}
	d, err := img.Digest()
	return d.String(), err
}

// PullSecret writes the cluster's pull secret as `oc get secret pull-secret -n openshift-config
// -o json` prints it, with the mirror's credentials (user, password) and another registry's, and
// returns its path.
func (m *Mirror) PullSecret(t testing.TB, user, password string) string {
	t.Helper()
	auth := func(u, p string) map[string]string {
		return map[string]string{"auth": base64.StdEncoding.EncodeToString([]byte(u + ":" + p))}
	}
	inner, err := json.Marshal(map[string]any{"auths": map[string]any{m.Host: auth(user, password), "registry.redhat.io": auth("rh", "rh")}})
	if err != nil {
		t.Fatal(err)
	}
	secret, err := json.Marshal(map[string]any{"apiVersion": "v1", "kind": "Secret", "type": "kubernetes.io/dockerconfigjson",
		"metadata": map[string]string{"name": "pull-secret", "namespace": "openshift-config"},
		"data":     map[string][]byte{".dockerconfigjson": inner}})
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "pull-secret.json")
	if err := os.WriteFile(path, secret, 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}
