package mirrorcheck

import (
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-containerregistry/pkg/authn"
	"github.com/google/go-containerregistry/pkg/name"

	"github.com/samples-operator-dev/cluster-samples-operator/test/mirrortest"
	"github.com/samples-operator-dev/cluster-samples-operator/test/testpki"
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
	// A keychain that kept the first covering key it met would still pick right now and then:
	// each ref is resolved often enough that the map's order cannot hide it.
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
		for range 16 {
			if user := resolveUser(t, k, r); user != wantUser {
				t.Errorf("%s: user %q, want %q", ref, user, wantUser)
				break
			}
		}
	}
	if err := os.WriteFile(path, []byte(`{"kind":"Secret","data":{}}`), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := AuthFileKeychain(path); err == nil {
		t.Error("a Secret without .dockerconfigjson was accepted")
	}
}

// resolveUser is the user name k gives for r's repository, "" when anonymous.
func resolveUser(t *testing.T, k authn.Keychain, r name.Reference) string {
	t.Helper()
	a, err := k.Resolve(r.Context())
	if err != nil {
		t.Fatal(err)
	}
	if cfg, _ := a.Authorization(); cfg != nil {
		return cfg.Username
	}
	return ""
}

// Docker Hub goes by several names in auth files (docker login writes its v1 URL, others the bare
// host or the registry's own): each gives the credentials of images named docker.io/....
func TestAuthFileKeychainKnowsDockerHubByEachOfItsNames(t *testing.T) {
	path := filepath.Join(t.TempDir(), "auth.json")
	r, err := name.ParseReference("docker.io/library/python:3.12")
	if err != nil {
		t.Fatal(err)
	}
	for _, key := range []string{"docker.io", "registry-1.docker.io", "https://index.docker.io/v1/"} {
		data := `{"auths":{"` + key + `":{"username":"hub","password":"p"},"quay.io":{"username":"q","password":"qp"}}}`
		if err := os.WriteFile(path, []byte(data), 0o600); err != nil {
			t.Fatal(err)
		}
		k, err := AuthFileKeychain(path)
		if err != nil {
			t.Fatal(err)
		}
		if user := resolveUser(t, k, r); user != "hub" {
			t.Errorf("key %s: user %q for %s, want hub", key, user, r)
		}
	}
}

// A mirror set may list a mirror of a private CA next to one whose certificate the system
// trusts: the CA file is trusted besides the system's roots, not instead of them. The system's
// roots are read once a process, so a test binary of its own reads them from SSL_CERT_FILE: the
// mirror's certificate there, another CA's in the CA file.
func TestACAFileIsTrustedBesidesTheSystemsRoots(t *testing.T) {
	const childEnv = "MIRRORCHECK_TEST_SYSTEM_ROOTS_CHILD"
	if ref := os.Getenv(childEnv); ref != "" {
		keychain, err := AuthFileKeychain(os.Getenv(childEnv + "_AUTH"))
		if err != nil {
			t.Fatal(err)
		}
		lookup, err := Remote(RemoteOptions{Keychain: keychain, CAFile: os.Getenv(childEnv + "_CA")})
		if err != nil {
			t.Fatal(err)
		}
		if err := lookup(context.Background(), ref); err != nil {
			t.Errorf("%s: %v", ref, err)
		}
		return
	}
	m := mirrortest.Start(t)
	ref := m.Host + "/ubi9/python-311:latest"
	m.Push(t, ref)
	other, err := testpki.NewCA("another mirror's CA")
	if err != nil {
		t.Fatal(err)
	}
	otherFile := filepath.Join(t.TempDir(), "other-ca.crt")
	if err := other.WriteCert(otherFile); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(os.Args[0], "-test.run=^"+t.Name()+"$", "-test.count=1", "-test.v")
	cmd.Env = append(os.Environ(), childEnv+"="+ref, childEnv+"_AUTH="+m.PullSecret(t, mirrortest.User, mirrortest.Password),
		childEnv+"_CA="+otherFile, "SSL_CERT_FILE="+m.CAFile, "SSL_CERT_DIR="+t.TempDir())
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Errorf("a mirror the system trusts, looked up with another CA's file: %v\n%s", err, out)
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
