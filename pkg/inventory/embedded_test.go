package inventory

import (
	"slices"
	"strings"
	"testing"
)

// minimum counts per shipped directory; the content may grow, never silently shrink.
var embeddedMinimums = map[string]struct{ imageStreams, templates int }{
	ArchDirOCPX86_64:  {22, 12},
	ArchDirOCPAarch64: {14, 10},
	ArchDirOCPPpc64le: {16, 12},
	ArchDirOCPS390x:   {16, 12},
	ArchDirOKDX86_64:  {14, 12},
}

func TestEmbeddedArchDirsLoadCleanly(t *testing.T) {
	for _, dir := range ArchDirs() {
		t.Run(dir, func(t *testing.T) {
			inv, err := Embedded(dir)
			if err != nil {
				t.Fatalf("Embedded(%q): %v", dir, err)
			}
			min := embeddedMinimums[dir]
			if n := len(inv.ImageStreamNames()); n < min.imageStreams {
				t.Errorf("%d imagestreams, want at least %d", n, min.imageStreams)
			}
			if n := len(inv.TemplateNames()); n < min.templates {
				t.Errorf("%d templates, want at least %d", n, min.templates)
			}
			// The e2e tests of the operator depend on these two in every directory.
			if _, ok := inv.ImageStream("jenkins"); !ok {
				t.Errorf("imagestream jenkins missing")
			}
			if _, ok := inv.Template("jenkins-ephemeral"); !ok {
				t.Errorf("template jenkins-ephemeral missing")
			}
			wantHosts := []string{"registry.access.redhat.com", "registry.redhat.io"}
			if dir == ArchDirOKDX86_64 {
				wantHosts = []string{"quay.io", "registry.access.redhat.com"}
			}
			if got := inv.SourceRegistries(); !slices.Equal(got, wantHosts) {
				t.Errorf("SourceRegistries() = %v, want %v", got, wantHosts)
			}
			for _, name := range inv.ImageStreamNames() {
				is, _ := inv.ImageStream(name)
				hasLatest := false
				for _, tag := range is.Spec.Tags {
					if tag.Name == "latest" && tag.From.Kind == "ImageStreamTag" {
						hasLatest = true
					}
					if tag.ReferencePolicy.Type != "Local" {
						t.Errorf("%s:%s referencePolicy %q, want Local", name, tag.Name, tag.ReferencePolicy.Type)
					}
					for _, key := range []string{"openshift.io/display-name", "description", "iconClass", "tags"} {
						if tag.Annotations[key] == "" {
							t.Errorf("%s:%s lacks annotation %s", name, tag.Name, key)
						}
					}
					// Shipped pull specs are all registry/repo/image:tag.
					if tag.From.Kind == "DockerImage" && strings.Count(tag.From.Name, "/") != 2 {
						t.Errorf("%s:%s pull spec %q is not registry/repo/image:tag", name, tag.Name, tag.From.Name)
					}
				}
				if !hasLatest {
					t.Errorf("imagestream %s has no latest tag of kind ImageStreamTag", name)
				}
				if is.Annotations["openshift.io/display-name"] == "" || is.Annotations["openshift.io/provider-display-name"] == "" {
					t.Errorf("imagestream %s lacks stream-level display annotations", name)
				}
			}
			for _, name := range inv.TemplateNames() {
				tmpl, _ := inv.Template(name)
				for _, key := range []string{"openshift.io/display-name", "description", "iconClass", "tags"} {
					if tmpl.Annotations[key] == "" {
						t.Errorf("template %s lacks annotation %s", name, key)
					}
				}
				if tmpl.Message == "" || len(tmpl.Parameters) == 0 || len(tmpl.ObjectLabels) == 0 {
					t.Errorf("template %s lacks message, parameters or labels", name)
				}
			}
			tags := 0
			for _, name := range inv.ImageStreamNames() {
				is, _ := inv.ImageStream(name)
				tags += len(is.Spec.Tags)
			}
			t.Logf("%s: %d imagestreams, %d tags (%d DockerImage), %d templates, %d images to mirror",
				dir, len(inv.ImageStreamNames()), tags, len(inv.TagToImage()), len(inv.TemplateNames()), len(inv.ImagesToMirror()))
		})
	}
}

func TestEmbeddedUnknownArchDir(t *testing.T) {
	if _, err := Embedded("ocp-mips"); err == nil || !strings.Contains(err.Error(), "ocp-x86_64") {
		t.Fatalf("Embedded(ocp-mips) error = %v, want one listing the known directories", err)
	}
}

func TestAccessorsReturnCopies(t *testing.T) {
	inv, err := Embedded(ArchDirOCPX86_64)
	if err != nil {
		t.Fatal(err)
	}
	is, _ := inv.ImageStream("jenkins")
	is.Spec.Tags[0].From.Name = "changed"
	is.Annotations["x"] = "y"
	again, _ := inv.ImageStream("jenkins")
	if again.Spec.Tags[0].From.Name == "changed" || again.Annotations["x"] == "y" {
		t.Fatal("ImageStream returned shared state; changes leaked into the inventory")
	}
	tmpl, _ := inv.Template("jenkins-ephemeral")
	tmpl.Objects[0].Raw[0] = 'X'
	again2, _ := inv.Template("jenkins-ephemeral")
	if again2.Objects[0].Raw[0] == 'X' {
		t.Fatal("Template returned shared state")
	}
	names := inv.ImageStreamNames()
	names[0] = "zzz"
	if inv.ImageStreamNames()[0] == "zzz" {
		t.Fatal("ImageStreamNames returned the internal slice")
	}
	if p, ok := inv.ImageStreamFile("jenkins"); !ok || p != "operator/ocp-x86_64/jenkins/imagestreams/jenkins-rhel.json" {
		t.Errorf("ImageStreamFile(jenkins) = %q, %v", p, ok)
	}
	if p, ok := inv.TemplateFile("jenkins-ephemeral"); !ok || !strings.HasSuffix(p, "jenkins/templates/jenkins-ephemeral.json") {
		t.Errorf("TemplateFile(jenkins-ephemeral) = %q, %v", p, ok)
	}
	if _, ok := inv.ImageStream("nope"); ok {
		t.Error("ImageStream(nope) found")
	}
	if _, ok := inv.Template("nope"); ok {
		t.Error("Template(nope) found")
	}
}
