package imports

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"maps"
	"slices"
	"strings"

	imagev1 "github.com/openshift/api/image/v1"
	"github.com/openshift/library-go/pkg/image/reference"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/sets"
)

// UnreadableCredentials keys, in the digests of a docker config secret that cannot be read as
// one, the digest of its whole data: what it serves is unknown, so it counts for every registry.
const UnreadableCredentials = "?"

// CredentialDigests reads a secret of the two types openshift-apiserver takes import credentials
// from (kubernetes.io/dockercfg, kubernetes.io/dockerconfigjson) and returns, per registry its
// entries serve, a digest of those entries: enough to tell which registry's credentials changed,
// never what they are. A secret of another type gives false; one of these types that does not
// parse gives its whole data's digest under UnreadableCredentials.
//
// On OpenShift 4.16 and later openshift-controller-manager refreshes the internal registry's
// token in a dockercfg secret of every service account of every namespace, openshift included,
// about every 36 minutes; the digests per registry let those refreshes be told apart from a
// change of the credentials the samples' imports use.
func CredentialDigests(secretType corev1.SecretType, data map[string][]byte) (map[string]string, bool) {
	var key string
	switch secretType {
	case corev1.SecretTypeDockercfg:
		key = corev1.DockerConfigKey
	case corev1.SecretTypeDockerConfigJson:
		key = corev1.DockerConfigJsonKey
	default:
		return nil, false
	}
	entries, ok := authEntries(secretType, data[key])
	if !ok {
		return map[string]string{UnreadableCredentials: DataDigest(data)}, true
	}
	byRegistry := map[string]map[string][]byte{}
	for authKey, entry := range entries {
		registry := credentialRegistry(authKey)
		if byRegistry[registry] == nil {
			byRegistry[registry] = map[string][]byte{}
		}
		byRegistry[registry][authKey] = entry
	}
	digests := make(map[string]string, len(byRegistry))
	for registry, of := range byRegistry {
		digests[registry] = DataDigest(of)
	}
	return digests, true
}

// authEntries are a docker config's entries by their keys: a .dockercfg is the map itself, a
// .dockerconfigjson holds it under "auths".
func authEntries(secretType corev1.SecretType, raw []byte) (map[string][]byte, bool) {
	var entries map[string]json.RawMessage
	if secretType == corev1.SecretTypeDockerConfigJson {
		var cfg struct {
			Auths map[string]json.RawMessage `json:"auths"`
		}
		if err := json.Unmarshal(raw, &cfg); err != nil {
			return nil, false
		}
		entries = cfg.Auths
	} else if err := json.Unmarshal(raw, &entries); err != nil {
		return nil, false
	}
	out := make(map[string][]byte, len(entries))
	for k, v := range entries {
		out[k] = v
	}
	return out, true
}

// credentialRegistry is the registry host a docker config key serves: keys may carry a scheme,
// a path (a repository scope, or docker's /v1/) and any of Docker Hub's three names.
func credentialRegistry(authKey string) string {
	key := strings.ToLower(strings.TrimSpace(authKey))
	key = strings.TrimPrefix(strings.TrimPrefix(key, "https://"), "http://")
	host, _, _ := strings.Cut(key, "/")
	if reference.IsRegistryDockerHub(host) {
		return reference.DockerDefaultRegistry
	}
	return host
}

// DataDigest is a digest of a secret's data, keys and values, that no one can read them from.
func DataDigest(data map[string][]byte) string {
	h := sha256.New()
	for _, k := range slices.Sorted(maps.Keys(data)) {
		h.Write([]byte(k))
		h.Write([]byte{0})
		h.Write(data[k])
		h.Write([]byte{0})
	}
	return hex.EncodeToString(h.Sum(nil))
}

// CredentialsFor keeps, of the digests CredentialDigests made, those of the registries an import
// can reach: an entry whose host is one of registries, or a wildcard (*.example.com) covering
// one, and an unreadable secret's. A change of anything else cannot fix a failed import.
func CredentialsFor(digests map[string]string, registries sets.Set[string]) map[string]string {
	out := map[string]string{}
	for host, digest := range digests {
		if host == UnreadableCredentials || registries.Has(host) || wildcardCovers(host, registries) {
			out[host] = digest
		}
	}
	return out
}

func wildcardCovers(host string, registries sets.Set[string]) bool {
	suffix, ok := strings.CutPrefix(host, "*")
	if !ok || !strings.HasPrefix(suffix, ".") {
		return false
	}
	for r := range registries {
		if strings.HasSuffix(r, suffix) {
			return true
		}
	}
	return false
}

// ImportRegistries are the registries the samples' imports reach: those of the streams'
// DockerImage references, of samplesRegistry (the streams may not be rewritten to it yet), and
// of the mirrors, which the imports try first (mirrors are the mirror sets' locations). Docker
// Hub is docker.io, however named.
func ImportRegistries(streams []*imagev1.ImageStream, samplesRegistry string, mirrors []string) sets.Set[string] {
	out := sets.New[string]()
	add := func(pullSpec string) {
		if ref, err := reference.Parse(pullSpec); err == nil {
			if host := ref.DockerClientDefaults().Registry; host != "" {
				out.Insert(credentialRegistry(host))
			}
		}
	}
	for _, is := range streams {
		if is.Spec.DockerImageRepository != "" {
			add(is.Spec.DockerImageRepository)
		}
		for _, tag := range is.Spec.Tags {
			if tag.From != nil && tag.From.Kind == "DockerImage" {
				add(tag.From.Name)
			}
		}
	}
	if samplesRegistry != "" {
		out.Insert(credentialRegistry(samplesRegistry))
	}
	for _, m := range mirrors {
		out.Insert(credentialRegistry(m))
	}
	return out
}
