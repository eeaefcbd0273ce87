package mirrorcheck

import (
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-containerregistry/pkg/name"

	"github.com/samples-operator-dev/cluster-samples-operator/test/mirrortest"
)

func TestRemoteAsksTheMirrorWithThePullSecret(t *testing.T) {
	m := mirrortest.Start(t)
	host := m.Host
	m.Push(t, host+"/ubi9/python-311:latest")
	keychain, err := AuthFileKeychain(m.PullSecret(t, mirrortest.User, mirrortest.Password))
	if err != nil {
		t.Fatal(err)
	}
	lookup, err := Remote(RemoteOptions{Keychain: keychain, CAFile: m.CAFile})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	if err := lookup(ctx, host+"/ubi9/python-311:latest"); err != nil {
		t.Errorf("a present image: %v", err)
	}
	for _, missing := range []string{host + "/ubi9/python-311:other", host + "/ubi9/python-312:latest"} {
		if err := lookup(ctx, missing); !errors.Is(err, ErrNotFound) {
			t.Errorf("%s: %v, want not found", missing, err)
		}
	}

	wrong, err := AuthFileKeychain(m.PullSecret(t, mirrortest.User, "wrong"))
	if err != nil {
		t.Fatal(err)
	}
	lookup, err = Remote(RemoteOptions{Keychain: wrong, CAFile: m.CAFile})
	if err != nil {
		t.Fatal(err)
	}
	if err := lookup(ctx, host+"/ubi9/python-311:latest"); err == nil || errors.Is(err, ErrNotFound) {
		t.Errorf("refused credentials: %v, want an error that is not not-found", err)
	}

	untrusted, err := Remote(RemoteOptions{Keychain: keychain})
	if err != nil {
		t.Fatal(err)
	}
	if err := untrusted(ctx, host+"/ubi9/python-311:latest"); err == nil || !strings.Contains(err.Error(), "certificate") {
		t.Errorf("a mirror whose CA is not given: %v, want a certificate error", err)
	}
}

func TestAuthFileKeychainPicksTheLongestKey(t *testing.T) {
	path := filepath.Join(t.TempDir(), "auth.json")
	enc := func(s string) string { return base64.StdEncoding.EncodeToString([]byte(s)) }
	data := `{"auths":{"https://mirror.example:5000/v2/":{"auth":"` + enc("host:h") + `"},"mirror.example:5000/team":{"auth":"` + enc("team:t") + `"},` +
		`"quay.io":{"username":"q","password":"qp"}}}`
	if err := os.WriteFile(path, []byte(data), 0o600); err != nil {
		t.Fatal(err)
	}
	k, err := AuthFileKeychain(path)
	if err != nil {
		t.Fatal(err)
	}
	for ref, wantUser := range map[string]string{
		"mirror.example:5000/team/app:1":  "team",
		"mirror.example:5000/teams/app:1": "host",
		"mirror.example:5000/other/app:1": "host",
		"quay.io/org/app:1":               "q",
		"registry.example/app:1":          "",
	} {
		r, err := name.ParseReference(ref)
		if err != nil {
			t.Fatal(err)
		}
		a, err := k.Resolve(r.Context())
		if err != nil {
			t.Fatal(err)
		}
		user := ""
		if cfg, _ := a.Authorization(); cfg != nil {
			user = cfg.Username
		}
		if user != wantUser {
			t.Errorf("%s: user %q, want %q", ref, user, wantUser)
		}
	}
	if err := os.WriteFile(path, []byte(`{"kind":"Secret","data":{}}`), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := AuthFileKeychain(path); err == nil {
		t.Error("a Secret without .dockerconfigjson was accepted")
	}
}

// A check of a whole inventory runs its lookups a few at a time against one mirror: each of
// them keeps its connection for the next image rather than shaking hands again.
func TestLookupsThatRunAtOnceKeepTheirConnections(t *testing.T) {
	const parallel, images = 4, 40
	m := mirrortest.Start(t)
	var refs []string
	for i := range images {
		refs = append(refs, fmt.Sprintf("%s/ubi9/image-%d:latest", m.Host, i))
	}
	m.Push(t, refs...)
	keychain, err := AuthFileKeychain(m.PullSecret(t, mirrortest.User, mirrortest.Password))
	if err != nil {
		t.Fatal(err)
	}
	lookup, err := Remote(RemoteOptions{Keychain: keychain, CAFile: m.CAFile, Parallel: parallel})
	if err != nil {
		t.Fatal(err)
	}
	before := m.Connections()
	r := Check(context.Background(), refs, func(image string) []string { return []string{image} }, lookup, parallel)
	if r.Summary.Present != images {
		t.Fatalf("%+v, want every image present", r.Summary)
	}
	// A lookup may dial while another is handing its connection back: twice as many as run at
	// once is the bound (with Go's two idle connections per host, about one lookup in two
	// opened its own).
	if opened := m.Connections() - before; opened > 2*parallel {
		t.Errorf("%d lookups, %d at a time, opened %d connections to the mirror, want at most %d", images, parallel, opened, 2*parallel)
	}
}
