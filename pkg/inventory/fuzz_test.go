package inventory

import (
	"errors"
	"strings"
	"testing"
	"testing/fstest"
)

// FuzzLoad feeds arbitrary bytes to the loader as an imagestream file and as a template
// file. Load must never panic; a failure must be a *FileError naming the file; a success
// must satisfy the invariants the rest of the operator relies on. Seeds live in
// testdata/fuzz/FuzzLoad.
func FuzzLoad(f *testing.F) {
	f.Fuzz(func(t *testing.T, data []byte) {
		for _, p := range []string{"a/g/imagestreams/f.json", "a/g/templates/f.json"} {
			inv, err := Load(fstest.MapFS{p: {Data: data}}, "a")
			if err != nil {
				var fe *FileError
				if !errors.As(err, &fe) || fe.Path != p {
					t.Fatalf("error %v is not a *FileError for %s", err, p)
				}
				continue
			}
			checkInvariants(t, inv)
		}
	})
}

func checkInvariants(t *testing.T, inv *Inventory) {
	t.Helper()
	dockerTags := 0
	for _, name := range inv.ImageStreamNames() {
		is, ok := inv.ImageStream(name)
		if !ok || is.Name != name || is.Namespace != "" {
			t.Fatalf("imagestream %q: lookup %v, name %q, namespace %q", name, ok, is.Name, is.Namespace)
		}
		tags := map[string]string{}
		for _, tag := range is.Spec.Tags {
			if tag.From == nil {
				t.Fatalf("%s:%s has no from after validation", name, tag.Name)
			}
			tags[tag.Name] = tag.From.Kind + "\x00" + tag.From.Name
			if tag.From.Kind == kindDockerImage {
				dockerTags++
				if tag.From.Name == "" {
					t.Fatalf("%s:%s has an empty DockerImage reference", name, tag.Name)
				}
			}
		}
		// Every ImageStreamTag chain ends at a DockerImage tag of the same stream.
		for start := range tags {
			cur := start
			for steps := 0; ; steps++ {
				kind, ref, _ := strings.Cut(tags[cur], "\x00")
				if kind == kindDockerImage {
					break
				}
				if steps > len(tags) {
					t.Fatalf("%s:%s: cycle survived validation", name, start)
				}
				if _, after, ok := strings.Cut(ref, ":"); ok {
					ref = after
				}
				if _, ok := tags[ref]; !ok {
					t.Fatalf("%s:%s: dangling reference %q survived validation", name, start, ref)
				}
				cur = ref
			}
		}
	}
	if got := len(inv.TagToImage()); got != dockerTags {
		t.Fatalf("TagToImage has %d entries, want %d", got, dockerTags)
	}
	for _, name := range inv.TemplateNames() {
		if tmpl, ok := inv.Template(name); !ok || tmpl.Name != name || len(tmpl.Objects) == 0 {
			t.Fatalf("template %q broken after validation", name)
		}
	}
}

// FuzzRewriteRegistry checks the rewrite for any reference and any valid override: it
// never panics, is idempotent, and either leaves the reference alone or puts it under the
// override while keeping everything after the registry host (path, tag, digest). Seeds
// live in testdata/fuzz/FuzzRewriteRegistry.
func FuzzRewriteRegistry(f *testing.F) {
	sources := []string{"registry.redhat.io", "registry.access.redhat.com", "quay.io"}
	f.Fuzz(func(t *testing.T, ref, registry string) {
		verr := ValidateRegistry(registry)
		if verr != nil {
			if registry == "" {
				t.Fatalf("empty registry rejected: %v", verr)
			}
			return
		}
		out := RewriteRegistry(ref, registry, sources)
		if again := RewriteRegistry(out, registry, sources); again != out {
			t.Fatalf("not idempotent: %q -> %q -> %q (registry %q)", ref, out, again, registry)
		}
		if out == ref {
			return
		}
		if !strings.HasPrefix(out, registry+"/") {
			t.Fatalf("%q rewritten to %q, which is not under %q", ref, out, registry)
		}
		_, rest := splitRegistryHost(ref)
		if !strings.HasSuffix(out, "/"+rest) {
			t.Fatalf("%q rewritten to %q lost its repository, tag or digest %q", ref, out, rest)
		}
	})
}
