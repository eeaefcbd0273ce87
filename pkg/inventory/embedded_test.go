package inventory

import (
	"slices"
	"strings"
	"testing"

	imagev1 "github.com/openshift/api/image/v1"
)

// What the upstream operator ships per directory (imagestreams, templates): a cluster that moves
// from it to this operator must find every one of its samples still managed, so these are floors.
var upstreamCounts = map[string]struct{ imageStreams, templates int }{
	ArchDirOCPX86_64:  {50, 50},
	ArchDirOCPAarch64: {27, 26},
	ArchDirOCPPpc64le: {40, 44},
	ArchDirOCPS390x:   {40, 44},
	ArchDirOKDX86_64:  {26, 26},
}

// The upstream operator's sample groups for ocp-x86_64.
var upstreamX86Groups = strings.Fields(`cakephp dancer datagrid django dotnet eap fis golang httpd java jenkins
	mariadb mysql nginx nodejs perl php postgresql python rails redis ruby sso webserver`)

func TestEmbeddedArchDirsLoadCleanly(t *testing.T) {
	for _, dir := range ArchDirs() {
		t.Run(dir, func(t *testing.T) {
			inv, err := Embedded(dir)
			if err != nil {
				t.Fatalf("Embedded(%q): %v", dir, err)
			}
			min := upstreamCounts[dir]
			if n := len(inv.ImageStreamNames()); n < min.imageStreams {
				t.Errorf("%d imagestreams, the upstream operator ships %d", n, min.imageStreams)
			}
			if n := len(inv.TemplateNames()); n < min.templates {
				t.Errorf("%d templates, the upstream operator ships %d", n, min.templates)
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
				wantHosts = []string{"icr.io", "quay.io", "registry.access.redhat.com"}
			}
			if got := inv.SourceRegistries(); !slices.Equal(got, wantHosts) {
				t.Errorf("SourceRegistries() = %v, want %v", got, wantHosts)
			}
			// The documented Jenkins upgrade strategies are tags of the jenkins stream.
			jenkins, _ := inv.ImageStream("jenkins")
			for _, want := range []string{"ocp-upgrade-redeploy", "user-maintained-upgrade-redeploy", "scheduled-upgrade-redeploy"} {
				if !slices.ContainsFunc(jenkins.Spec.Tags, func(tag imagev1.TagReference) bool { return tag.Name == want }) {
					t.Errorf("jenkins has no %s tag", want)
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
	t.Run("upstream groups", func(t *testing.T) {
		inv, err := Embedded(ArchDirOCPX86_64)
		if err != nil {
			t.Fatal(err)
		}
		groups := map[string]bool{}
		for _, name := range inv.ImageStreamNames() {
			f, _ := inv.ImageStreamFile(name)
			groups[strings.Split(f, "/")[2]] = true
		}
		for _, name := range inv.TemplateNames() {
			f, _ := inv.TemplateFile(name)
			groups[strings.Split(f, "/")[2]] = true
		}
		for _, g := range upstreamX86Groups {
			if !groups[g] {
				t.Errorf("group %s of the upstream operator is missing", g)
			}
		}
	})
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
