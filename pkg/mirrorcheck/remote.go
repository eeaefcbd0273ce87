package mirrorcheck

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"strings"

	"github.com/google/go-containerregistry/pkg/authn"
	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/v1/remote/transport"
	"github.com/google/go-containerregistry/pkg/v1/types"
)

// RemoteOptions says how Remote reaches a mirror.
type RemoteOptions struct {
	// Keychain gives the credentials for each registry (AuthFileKeychain, authn.DefaultKeychain).
	Keychain authn.Keychain
	// CAFile names PEM certificates to trust besides the system's: the mirror's CA.
	CAFile string
	// Insecure allows plain HTTP and skips certificate verification, as for a registry in the
	// cluster's insecureRegistries.
	Insecure bool
	// Parallel is how many lookups the caller runs at once (Check's parallel): as many
	// connections to a registry are kept open between them.
	Parallel int
}

// Remote is the Lookup of a real registry: a HEAD of the manifest, with the credentials of
// opts.Keychain. It contacts only the registries of the references it is asked about.
func Remote(opts RemoteOptions) (Lookup, error) {
	t := http.DefaultTransport.(*http.Transport).Clone()
	t.TLSClientConfig = &tls.Config{MinVersion: tls.VersionTLS12}
	// The lookups that run at once share the registry's connections. Go keeps two idle ones per
	// host by default, so a batch of eight closed six and the next batch shook hands again: a
	// TLS handshake for most images instead of one per lookup that runs at once.
	t.MaxIdleConnsPerHost = max(opts.Parallel, 1)
	if opts.CAFile != "" {
		pem, err := os.ReadFile(opts.CAFile)
		if err != nil {
			return nil, err
		}
		pool, err := x509.SystemCertPool()
		if err != nil {
			pool = x509.NewCertPool()
		}
		if !pool.AppendCertsFromPEM(pem) {
			return nil, fmt.Errorf("%s holds no PEM certificate", opts.CAFile)
		}
		t.TLSClientConfig.RootCAs = pool
	}
	var nameOpts []name.Option
	if opts.Insecure {
		t.TLSClientConfig.InsecureSkipVerify = true
		nameOpts = append(nameOpts, name.Insecure)
	}
	keychain := opts.Keychain
	if keychain == nil {
		keychain = authn.NewMultiKeychain() // anonymous
	}
	return func(ctx context.Context, ref string) error {
		r, err := name.ParseReference(ref, nameOpts...)
		if err != nil {
			return err
		}
		return headManifest(ctx, r, keychain, t)
	}, nil
}

// manifestTypes are the manifests a mirror may hold an image as: the importer accepts each.
var manifestTypes = []types.MediaType{types.OCIImageIndex, types.OCIManifestSchema1, types.DockerManifestList, types.DockerManifestSchema2}

// headManifest asks r's registry for r's manifest with a HEAD request, authenticated as the
// registry asks (basic, or a bearer token for pull scope) through go-containerregistry's
// transport. It does without package remote, whose image writing would bring layer compression
// (and the testing package, through estargz) into the operator's binary.
func headManifest(ctx context.Context, r name.Reference, keychain authn.Keychain, t http.RoundTripper) error {
	repo := r.Context()
	auth, err := keychain.Resolve(repo)
	if err != nil {
		return err
	}
	rt, err := transport.NewWithContext(ctx, repo.Registry, auth, t, []string{repo.Scope(transport.PullScope)})
	if err != nil {
		return err
	}
	u := url.URL{Scheme: repo.Scheme(), Host: repo.RegistryStr(), Path: "/v2/" + repo.RepositoryStr() + "/manifests/" + r.Identifier()}
	req, err := http.NewRequestWithContext(ctx, http.MethodHead, u.String(), nil)
	if err != nil {
		return err
	}
	accept := make([]string, len(manifestTypes))
	for i, mt := range manifestTypes {
		accept[i] = string(mt)
	}
	req.Header.Set("Accept", strings.Join(accept, ","))
	resp, err := (&http.Client{Transport: rt}).Do(req)
	if err != nil {
		return err
	}
	resp.Body.Close()
	err = transport.CheckError(resp, http.StatusOK)
	var terr *transport.Error
	if errors.As(err, &terr) && isNotFound(terr) {
		return fmt.Errorf("%w (HTTP %d)", ErrNotFound, terr.StatusCode)
	}
	return err
}

func isNotFound(err *transport.Error) bool {
	if err.StatusCode == http.StatusNotFound {
		return true
	}
	for _, d := range err.Errors {
		if d.Code == transport.ManifestUnknownErrorCode || d.Code == transport.NameUnknownErrorCode {
			return true
		}
	}
	return false
}

// AuthFileKeychain reads registry credentials from path: a docker config or containers auth file
// ({"auths": {...}}), or the cluster's pull secret as `oc get secret pull-secret -n
// openshift-config -o json` prints it (its .dockerconfigjson). An entry's key is a registry host
// (with its port), optionally with a repository path; the longest key that covers a repository
// gives its credentials.
func AuthFileKeychain(path string) (authn.Keychain, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var file struct {
		Auths map[string]authEntry `json:"auths"`
		Kind  string               `json:"kind"`
		Data  map[string][]byte    `json:"data"`
	}
	if err := json.Unmarshal(data, &file); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if file.Kind == "Secret" {
		inner, ok := file.Data[".dockerconfigjson"]
		if !ok {
			return nil, fmt.Errorf("%s: the Secret has no .dockerconfigjson", path)
		}
		file.Auths = nil
		if err := json.Unmarshal(inner, &file); err != nil {
			return nil, fmt.Errorf("%s: .dockerconfigjson: %w", path, err)
		}
	}
	if file.Auths == nil {
		return nil, fmt.Errorf("%s holds no \"auths\"", path)
	}
	k := authKeychain{}
	for key, e := range file.Auths {
		cfg := authn.AuthConfig{Username: e.Username, Password: e.Password, IdentityToken: e.IdentityToken}
		if e.Auth != "" {
			raw, err := base64.StdEncoding.DecodeString(e.Auth)
			if err != nil {
				return nil, fmt.Errorf("%s: the auth of %s is not base64", path, key)
			}
			user, pass, ok := strings.Cut(string(raw), ":")
			if !ok {
				return nil, fmt.Errorf("%s: the auth of %s is not user:password", path, key)
			}
			cfg.Username, cfg.Password = user, pass
		}
		k[normalizeAuthKey(key)] = cfg
	}
	return k, nil
}

type authEntry struct {
	Auth          string `json:"auth"`
	Username      string `json:"username"`
	Password      string `json:"password"`
	IdentityToken string `json:"identitytoken"`
}

// authKeychain maps registry[/path] to credentials.
type authKeychain map[string]authn.AuthConfig

func normalizeAuthKey(key string) string {
	key = strings.TrimPrefix(strings.TrimPrefix(key, "https://"), "http://")
	key = strings.TrimSuffix(strings.TrimSuffix(key, "/v1/"), "/v2/")
	key = strings.TrimSuffix(key, "/")
	if key == "docker.io" || key == "registry-1.docker.io" {
		key = name.DefaultRegistry
	}
	return key
}

// Resolve gives the credentials of the longest key covering target, or anonymous access.
func (k authKeychain) Resolve(target authn.Resource) (authn.Authenticator, error) {
	best, found := "", false
	for key := range k {
		if repo := target.String(); repo == key || strings.HasPrefix(repo, key+"/") || key == target.RegistryStr() {
			if !found || len(key) > len(best) {
				best, found = key, true
			}
		}
	}
	if !found {
		return authn.Anonymous, nil
	}
	return authn.FromConfig(k[best]), nil
}
