package integration

import (
	"context"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/samples-operator-dev/cluster-samples-operator/assets"
	"github.com/samples-operator-dev/cluster-samples-operator/pkg/imports"
	"github.com/samples-operator-dev/cluster-samples-operator/pkg/inventory"
	"github.com/samples-operator-dev/cluster-samples-operator/pkg/pin"
)

// A disconnected install without network at build time: two imagestreams of the shipped
// inventory are pinned from a digest map file (as `inventory pin` does), and the operator,
// given the pinned tree as its inventory directory, installs the digest references.
func TestBundlePinnedInventoryInstallsDigests(t *testing.T) {
	parallel(t, 0)
	const archDir = inventory.ArchDirOCPX86_64
	streams := []string{"ruby", "nodejs"}

	// The small source inventory: the two streams' files, in the usual layout.
	embedded := fullX86Inventory(t)
	srcDir := t.TempDir()
	for _, name := range streams {
		file, ok := embedded.ImageStreamFile(name)
		if !ok {
			t.Fatalf("no imagestream %s in the embedded inventory", name)
		}
		data, err := fs.ReadFile(assets.Operator, file)
		if err != nil {
			t.Fatal(err)
		}
		dst := filepath.Join(srcDir, strings.TrimPrefix(file, "operator/"))
		if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(dst, data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	small, err := inventory.LoadDir(srcDir, archDir)
	if err != nil {
		t.Fatal(err)
	}

	// The map file, in the format docs/admin-guide.md shows how to produce with skopeo or oc, and what
	// the pinned streams must pull: written out by hand from openshift/library's ruby and nodejs
	// files at the locked commit, so that neither ImagesToMirror nor PinnedReference judges
	// itself. (A library sync that changes these tags changes this table.)
	digest := func(n int) string { return fmt.Sprintf("sha256:%064x", n) }
	mapFile := ""
	for n, ref := range []string{ // the nth reference has digest(n+1)
		"registry.redhat.io/ubi8/nodejs-22:latest",
		"registry.redhat.io/ubi8/nodejs-22-minimal:latest",
		"registry.redhat.io/ubi9/nodejs-22:latest",
		"registry.redhat.io/ubi9/nodejs-22-minimal:latest",
		"registry.redhat.io/ubi10/nodejs-22:latest",
		"registry.redhat.io/ubi10/nodejs-22-minimal:latest",
		"registry.redhat.io/ubi8/ruby-25:latest",
		"registry.redhat.io/ubi8/ruby-33:latest",
		"registry.redhat.io/ubi9/ruby-30:latest",
		"registry.redhat.io/ubi9/ruby-33:latest",
		"registry.redhat.io/ubi9/ruby-40:latest",
		"registry.redhat.io/ubi10/ruby-33:latest",
		"registry.redhat.io/ubi10/ruby-40:latest",
	} {
		mapFile += ref + " " + digest(n+1) + "\n"
	}
	want := map[string]string{ // "<imagestream>_<tag>" -> the digest reference
		"nodejs_22-ubi8":          "registry.redhat.io/ubi8/nodejs-22@" + digest(1),
		"nodejs_22-minimal-ubi8":  "registry.redhat.io/ubi8/nodejs-22-minimal@" + digest(2),
		"nodejs_22-ubi9":          "registry.redhat.io/ubi9/nodejs-22@" + digest(3),
		"nodejs_22-minimal-ubi9":  "registry.redhat.io/ubi9/nodejs-22-minimal@" + digest(4),
		"nodejs_22-ubi10":         "registry.redhat.io/ubi10/nodejs-22@" + digest(5),
		"nodejs_22-minimal-ubi10": "registry.redhat.io/ubi10/nodejs-22-minimal@" + digest(6),
		"nodejs_22-ubi8-minimal":  "registry.redhat.io/ubi8/nodejs-22-minimal@" + digest(2),
		"nodejs_22-ubi9-minimal":  "registry.redhat.io/ubi9/nodejs-22-minimal@" + digest(4),
		"nodejs_22-ubi10-minimal": "registry.redhat.io/ubi10/nodejs-22-minimal@" + digest(6),
		"ruby_2.5-ubi8":           "registry.redhat.io/ubi8/ruby-25@" + digest(7),
		"ruby_3.3-ubi8":           "registry.redhat.io/ubi8/ruby-33@" + digest(8),
		"ruby_3.0-ubi9":           "registry.redhat.io/ubi9/ruby-30@" + digest(9),
		"ruby_3.3-ubi9":           "registry.redhat.io/ubi9/ruby-33@" + digest(10),
		"ruby_4.0-ubi9":           "registry.redhat.io/ubi9/ruby-40@" + digest(11),
		"ruby_3.3-ubi10":          "registry.redhat.io/ubi10/ruby-33@" + digest(12),
		"ruby_4.0-ubi10":          "registry.redhat.io/ubi10/ruby-40@" + digest(13),
	}
	if mirror := small.ImagesToMirror(); len(mirror) != 13 {
		t.Errorf("the inventory of ruby and nodejs lists %d images to mirror, want the 13 of the map file: %v", len(mirror), mirror)
	}
	digests, err := pin.ParseDigests([]byte(mapFile))
	if err != nil {
		t.Fatal(err)
	}
	src, err := pin.Source(srcDir)
	if err != nil {
		t.Fatal(err)
	}
	result, err := pin.Tree(src, archDir, digests, false)
	if err != nil {
		t.Fatal(err)
	}
	if len(result.Pinned) != 13 || len(result.Unpinned) != 0 {
		t.Fatalf("pinned %d of 13 references, %d left as tags", len(result.Pinned), len(result.Unpinned))
	}
	pinnedDir := t.TempDir()
	if err := pin.WriteTree(pinnedDir, result.Files); err != nil {
		t.Fatal(err)
	}
	pinned, err := inventory.LoadDir(pinnedDir, archDir)
	if err != nil {
		t.Fatal(err)
	}
	if got := pinned.TagToImage(); !maps.Equal(got, want) {
		t.Fatalf("pinned inventory tags:\n%v\nwant\n%v", got, want)
	}

	e := newEnv(t)
	opts := defaultOptions()
	opts.InventoryDir = pinnedDir
	e.startOperator(opts)
	e.waitManaged(t, pinned, opts.Version)

	// Every DockerImage tag of the installed streams is the digest reference.
	for _, name := range streams {
		is := e.imageStream(name)
		seen := 0
		for _, tag := range is.Spec.Tags {
			if tag.From == nil || tag.From.Kind != "DockerImage" {
				continue
			}
			seen++
			if w := want[name+"_"+tag.Name]; tag.From.Name != w || !strings.Contains(w, "@sha256:") {
				t.Errorf("imagestream %s tag %s pulls %s, want %s", name, tag.Name, tag.From.Name, w)
			}
		}
		if seen == 0 {
			t.Errorf("imagestream %s has no DockerImage tag", name)
		}
	}
	// No other sample was installed: the operator read the pinned tree, not the binary.
	list, err := e.images.ImageV1().ImageStreams("openshift").List(context.Background(), metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for _, is := range list.Items {
		if is.Name != "ruby" && is.Name != "nodejs" && is.Labels["samples.operator.openshift.io/managed"] == "true" {
			t.Errorf("imagestream %s installed from outside the pinned inventory", is.Name)
		}
	}
	// What to mirror, as the cluster reports it, is the digests too.
	eventually(t, 30*time.Second, func() (bool, string) {
		cm, err := e.kube.CoreV1().ConfigMaps("openshift-cluster-samples-operator").Get(context.Background(), imports.TagToImageName, metav1.GetOptions{})
		if err != nil {
			return false, err.Error()
		}
		if !maps.Equal(cm.Data, want) {
			return false, fmt.Sprintf("%s holds %v, want %v", imports.TagToImageName, cm.Data, want)
		}
		return true, ""
	})
}
