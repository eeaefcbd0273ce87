package imports

import (
	"testing"

	imagev1 "github.com/openshift/api/image/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/sets"
)

func TestCredentialDigestsArePerRegistry(t *testing.T) {
	internal := `{"image-registry.openshift-image-registry.svc:5000":{"auth":"dG9rZW46MQ=="},` +
		`"image-registry.openshift-image-registry.svc.cluster.local:5000":{"auth":"dG9rZW46MQ=="}}`
	refreshed := `{"image-registry.openshift-image-registry.svc:5000":{"auth":"dG9rZW46Mg=="},` +
		`"image-registry.openshift-image-registry.svc.cluster.local:5000":{"auth":"dG9rZW46Mg=="}}`
	dockercfg := func(cfg string) map[string][]byte { return map[string][]byte{corev1.DockerConfigKey: []byte(cfg)} }
	before, ok := CredentialDigests(corev1.SecretTypeDockercfg, dockercfg(internal))
	after, _ := CredentialDigests(corev1.SecretTypeDockercfg, dockercfg(refreshed))
	if !ok || len(before) != 2 {
		t.Fatalf("digests %v (%t), want one per registry", before, ok)
	}
	if before["image-registry.openshift-image-registry.svc:5000"] == after["image-registry.openshift-image-registry.svc:5000"] {
		t.Error("a refreshed token left its registry's digest as it was")
	}

	json := func(auths string) map[string][]byte {
		return map[string][]byte{corev1.DockerConfigJsonKey: []byte(`{"auths":{` + auths + `}}`)}
	}
	for _, tc := range []struct {
		name  string
		typ   corev1.SecretType
		data  map[string][]byte
		hosts []string
	}{
		{"a dockerconfigjson", corev1.SecretTypeDockerConfigJson, json(`"registry.redhat.io":{"auth":"YTpi"},"quay.io":{"auth":"Yzpk"}`), []string{"quay.io", "registry.redhat.io"}},
		{"Docker Hub's names, a scheme and a path", corev1.SecretTypeDockerConfigJson,
			json(`"https://index.docker.io/v1/":{"auth":"YTpi"},"registry-1.docker.io":{"auth":"YTpi"},"HTTPS://Quay.io/org/repo":{"auth":"YTpi"}`),
			[]string{"docker.io", "quay.io"}},
		{"a dockerconfigjson that does not parse", corev1.SecretTypeDockerConfigJson, map[string][]byte{corev1.DockerConfigJsonKey: []byte("{")}, []string{UnreadableCredentials}},
		{"a dockercfg under the wrong key", corev1.SecretTypeDockercfg, json(`"quay.io":{}`), []string{UnreadableCredentials}},
		{"an opaque secret", corev1.SecretTypeOpaque, json(`"quay.io":{}`), nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			digests, isDockerConfig := CredentialDigests(tc.typ, tc.data)
			if isDockerConfig != (tc.hosts != nil) {
				t.Errorf("read as a docker config: %t, want %t", isDockerConfig, tc.hosts != nil)
			}
			if got := sets.KeySet(digests); !got.Equal(sets.New(tc.hosts...)) {
				t.Errorf("registries %v, want %v", sets.List(got), tc.hosts)
			}
		})
	}
}

func TestOnlyTheImportsRegistriesCredentialsCount(t *testing.T) {
	digests := map[string]string{
		"image-registry.openshift-image-registry.svc:5000": "a",
		"registry.redhat.io":   "b",
		"127.0.0.1:5000":       "c",
		"*.example.com":        "d",
		"*example.org":         "e",
		UnreadableCredentials:  "f",
		"mirror.example.co.uk": "g",
	}
	registries := sets.New("registry.redhat.io", "127.0.0.1:5000", "mirror.example.com")
	got := CredentialsFor(digests, registries)
	want := sets.New("registry.redhat.io", "127.0.0.1:5000", "*.example.com", UnreadableCredentials)
	if !sets.KeySet(got).Equal(want) {
		t.Errorf("credentials that count: %v, want %v", sets.List(sets.KeySet(got)), sets.List(want))
	}
	if len(CredentialsFor(map[string]string{"image-registry.openshift-image-registry.svc:5000": "a"}, registries)) != 0 {
		t.Error("the internal registry's credentials count for imports from elsewhere")
	}
	// Only "*." makes a wildcard: neither "*example.org" nor ".example.org" covers a host of example.org.
	if got := CredentialsFor(map[string]string{"*example.org": "e", ".example.org": "h"}, sets.New("registry.example.org")); len(got) != 0 {
		t.Errorf("credentials that count for registry.example.org: %v, want none", got)
	}
}

func TestImportRegistries(t *testing.T) {
	stream := &imagev1.ImageStream{Spec: imagev1.ImageStreamSpec{
		DockerImageRepository: "quay.io/org/repo",
		Tags: []imagev1.TagReference{
			{Name: "a", From: &corev1.ObjectReference{Kind: "DockerImage", Name: "registry.redhat.io/ubi9/ruby-33:latest"}},
			{Name: "b", From: &corev1.ObjectReference{Kind: "DockerImage", Name: "jenkins/jenkins:lts"}},
			{Name: "c", From: &corev1.ObjectReference{Kind: "ImageStreamTag", Name: "a"}},
			{Name: "d", From: &corev1.ObjectReference{Kind: "DockerImage", Name: "Registry.Access.RedHat.com:443/x/y:1"}},
		},
	}}
	got := ImportRegistries([]*imagev1.ImageStream{stream}, "mirror.example.com:5000/samples", []string{"127.0.0.1:5000/rh", "mirror.local"})
	want := sets.New("quay.io", "registry.redhat.io", "docker.io", "registry.access.redhat.com:443",
		"mirror.example.com:5000", "127.0.0.1:5000", "mirror.local")
	if !got.Equal(want) {
		t.Errorf("registries %v, want %v", sets.List(got), sets.List(want))
	}
	// A tag following another, or with no source, reaches no registry of its own.
	following := &imagev1.ImageStream{Spec: imagev1.ImageStreamSpec{Tags: []imagev1.TagReference{
		{Name: "c", From: &corev1.ObjectReference{Kind: "ImageStreamTag", Name: "a"}}, {Name: "e"},
	}}}
	if got := ImportRegistries([]*imagev1.ImageStream{following}, "", nil); got.Len() != 0 {
		t.Errorf("registries of tags that only follow others: %v, want none", sets.List(got))
	}
	if empty := ImportRegistries(nil, "", nil); empty.Len() != 0 {
		t.Errorf("no streams, no mirrors: %v", sets.List(empty))
	}
}
