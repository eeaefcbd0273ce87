package pin

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/samples-operator-dev/cluster-samples-operator/pkg/inventory"
)

const (
	digestA = "sha256:aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"
	digestB = "sha256:bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb"
	digestC = "sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"
)

// rubyStream has two tag references, one already pinned reference, an alias, and an
// annotation with characters that JSON encoders like to escape.
const rubyStream = `{
  "kind": "ImageStream",
  "apiVersion": "image.openshift.io/v1",
  "metadata": {"name": "ruby", "annotations": {"openshift.io/display-name": "Ruby <3 & friends"}},
  "spec": {
    "lookupPolicy": {"local": false},
    "tags": [
      {"name": "3.3-ubi9", "from": {"kind": "DockerImage", "name": "registry.redhat.io/ubi9/ruby-33:latest"}, "referencePolicy": {"type": "Local"}, "importPolicy": {"importMode": "PreserveOriginal"}},
      {"name": "3.1-ubi8", "from": {"kind": "DockerImage", "name": "mirror.example:5000/ubi8/ruby-31:1-42"}},
      {"name": "3.0-ubi9", "from": {"kind": "DockerImage", "name": "registry.redhat.io/ubi9/ruby-30@` + digestC + `"}},
      {"name": "latest", "from": {"kind": "ImageStreamTag", "name": "3.3-ubi9"}}
    ]
  }
}`

const httpdStream = `{"kind":"ImageStream","apiVersion":"image.openshift.io/v1","metadata":{"name":"httpd"},
"spec":{"tags":[{"name":"2.4","from":{"kind":"DockerImage","name":"registry.redhat.io/ubi9/httpd-24:latest"}}]}}`

const rubyTemplate = `{"kind":"Template","apiVersion":"template.openshift.io/v1","metadata":{"name":"rails-example"},
"objects":[{"apiVersion":"v1","kind":"Service","metadata":{"name":"x"}}]}`

func smallFS() fstest.MapFS {
	return fstest.MapFS{
		"ocp-x86_64/ruby/imagestreams/ruby.json":        {Data: []byte(rubyStream)},
		"ocp-x86_64/ruby/templates/rails-example.json":  {Data: []byte(rubyTemplate)},
		"ocp-x86_64/httpd/imagestreams/httpd-rhel.json": {Data: []byte(httpdStream)},
		"ocp-x86_64/README.md":                          {Data: []byte("kept as is")},
		"ocp-aarch64/ruby/imagestreams/ruby.json":       {Data: []byte(`not even JSON`)},
	}
}

func fullMap() Digests {
	return Digests{
		"registry.redhat.io/ubi9/ruby-33:latest":  digestA,
		"mirror.example:5000/ubi8/ruby-31:1-42":   digestB,
		"registry.redhat.io/ubi9/httpd-24:latest": digestC,
		"registry.redhat.io/unused/other:1":       digestA, // for another architecture
	}
}

func TestTreePinsEveryTagReference(t *testing.T) {
	r, err := Tree(smallFS(), "ocp-x86_64", fullMap(), false)
	if err != nil {
		t.Fatal(err)
	}
	wantPinned := []string{"mirror.example:5000/ubi8/ruby-31:1-42", "registry.redhat.io/ubi9/httpd-24:latest", "registry.redhat.io/ubi9/ruby-33:latest"}
	if !slices.Equal(r.Pinned, wantPinned) || len(r.Unpinned) != 0 {
		t.Errorf("pinned %v unpinned %v, want %v and none", r.Pinned, r.Unpinned, wantPinned)
	}
	if want := []string{"registry.redhat.io/ubi9/ruby-30@" + digestC}; !slices.Equal(r.AlreadyPinned, want) {
		t.Errorf("already pinned %v, want %v", r.AlreadyPinned, want)
	}
	// Same layout, only the chosen architecture, non-imagestream files untouched.
	wantFiles := []string{"ocp-x86_64/README.md", "ocp-x86_64/httpd/imagestreams/httpd-rhel.json", "ocp-x86_64/ruby/imagestreams/ruby.json", "ocp-x86_64/ruby/templates/rails-example.json"}
	if got := sortedKeys(r.Files); !slices.Equal(got, wantFiles) {
		t.Errorf("files %v, want %v", got, wantFiles)
	}
	if string(r.Files["ocp-x86_64/ruby/templates/rails-example.json"]) != rubyTemplate {
		t.Error("template was changed")
	}

	// The pinned tree is a valid inventory whose images are all digests.
	dir := t.TempDir()
	if err := WriteTree(dir, r.Files); err != nil {
		t.Fatal(err)
	}
	inv, err := inventory.LoadDir(dir, "ocp-x86_64")
	if err != nil {
		t.Fatal(err)
	}
	want := []string{
		"mirror.example:5000/ubi8/ruby-31@" + digestB,
		"registry.redhat.io/ubi9/httpd-24@" + digestC,
		"registry.redhat.io/ubi9/ruby-30@" + digestC,
		"registry.redhat.io/ubi9/ruby-33@" + digestA,
	}
	if got := inv.ImagesToMirror(); !slices.Equal(got, want) {
		t.Errorf("images of the pinned inventory:\n%v\nwant\n%v", got, want)
	}
	ruby, _ := inv.ImageStream("ruby")
	if ruby.Annotations["openshift.io/display-name"] != "Ruby <3 & friends" || ruby.Spec.Tags[0].ImportPolicy.ImportMode != "PreserveOriginal" {
		t.Errorf("fields other than from.name changed: %+v", ruby)
	}
	if latest := ruby.Spec.Tags[3].From; latest.Kind != "ImageStreamTag" || latest.Name != "3.3-ubi9" {
		t.Errorf("alias tag changed: %+v", latest)
	}
	if strings.Contains(string(r.Files["ocp-x86_64/ruby/imagestreams/ruby.json"]), `\u0026`) {
		t.Error("the rewritten file escapes '&'")
	}

	// A second run into the same directory refuses to mix trees.
	if err := WriteTree(dir, r.Files); err == nil || !strings.Contains(err.Error(), "already exists") {
		t.Errorf("writing over an existing tree: %v", err)
	}
}

func TestTreeReportsEveryMissingReference(t *testing.T) {
	d := fullMap()
	delete(d, "registry.redhat.io/ubi9/ruby-33:latest")
	delete(d, "mirror.example:5000/ubi8/ruby-31:1-42")
	_, err := Tree(smallFS(), "ocp-x86_64", d, false)
	var missing *MissingError
	if !errors.As(err, &missing) {
		t.Fatalf("error %v, want a *MissingError", err)
	}
	want := []string{"mirror.example:5000/ubi8/ruby-31:1-42", "registry.redhat.io/ubi9/ruby-33:latest"}
	if !slices.Equal(missing.Refs, want) {
		t.Errorf("missing %v, want %v", missing.Refs, want)
	}
	for _, ref := range want {
		if !strings.Contains(err.Error(), ref) || !strings.Contains(err.Error(), "--allow-unpinned") {
			t.Errorf("message does not name %s and the way out: %v", ref, err)
		}
	}
}

func TestTreeAllowUnpinnedKeepsTags(t *testing.T) {
	d := fullMap()
	delete(d, "registry.redhat.io/ubi9/ruby-33:latest")
	r, err := Tree(smallFS(), "ocp-x86_64", d, true)
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"registry.redhat.io/ubi9/ruby-33:latest"}; !slices.Equal(r.Unpinned, want) {
		t.Errorf("unpinned %v, want %v", r.Unpinned, want)
	}
	ruby := string(r.Files["ocp-x86_64/ruby/imagestreams/ruby.json"])
	if !strings.Contains(ruby, `"registry.redhat.io/ubi9/ruby-33:latest"`) || !strings.Contains(ruby, "mirror.example:5000/ubi8/ruby-31@"+digestB) {
		t.Errorf("want the unmapped tag kept and the mapped one pinned:\n%s", ruby)
	}
	// Nothing in the map for httpd's stream either: the file is copied byte for byte.
	r, err = Tree(smallFS(), "ocp-x86_64", Digests{}, true)
	if err != nil {
		t.Fatal(err)
	}
	if string(r.Files["ocp-x86_64/httpd/imagestreams/httpd-rhel.json"]) != httpdStream {
		t.Error("an imagestream without pinned references was re-encoded")
	}
}

func TestTreeErrors(t *testing.T) {
	if _, err := Tree(smallFS(), "ocp-aarch64", fullMap(), true); err == nil || !strings.Contains(err.Error(), "ocp-aarch64/ruby/imagestreams/ruby.json") {
		t.Errorf("broken file: %v", err)
	}
	if _, err := Tree(smallFS(), "ocp-s390x", fullMap(), true); err == nil {
		t.Error("missing architecture directory: no error")
	}
	if _, err := Tree(smallFS(), "../x", fullMap(), true); err == nil {
		t.Error("path outside the tree: no error")
	}
}

func TestParseDigests(t *testing.T) {
	d, err := ParseDigests([]byte(`# produced by skopeo
registry.redhat.io/ubi9/ruby-33:latest ` + digestA + `

  mirror.example:5000/ubi8/ruby-31:1-42	` + digestB + `  
registry.redhat.io/ubi9/ruby-33:latest ` + digestA + `
`))
	if err != nil {
		t.Fatal(err)
	}
	if len(d) != 2 || d["registry.redhat.io/ubi9/ruby-33:latest"] != digestA || d["mirror.example:5000/ubi8/ruby-31:1-42"] != digestB {
		t.Errorf("parsed %v", d)
	}
}

func TestParseDigestsRejectsMalformedLines(t *testing.T) {
	_, err := ParseDigests([]byte(strings.Join([]string{
		"a.example/x:1 sha256:abc",                     // 1: too short
		"a.example/x:2 " + strings.ToUpper(digestA),    // 2: upper case
		"a.example/x:3 md5:0123456789abcdef",           // 3: not sha256
		"a.example/x:4",                                // 4: one field
		"a.example/x@" + digestA + " " + digestB,       // 5: already a digest
		"a.example/x:5 " + digestA,                     // 6: fine
		"a.example/x:5 " + digestB,                     // 7: conflicts with 6
		"a.example/x:6 " + digestA + "x",               // 8: too long
		"a.example/x:7 " + digestA + " trailing-field", // 9: three fields
	}, "\n")))
	if err == nil {
		t.Fatal("no error")
	}
	for _, want := range []string{"line 1:", "line 2:", "line 3:", "line 4:", "line 5:", "line 7:", "line 8:", "line 9:", "upper-case", "malformed", "already names a digest", "on line 6"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error does not contain %q:\n%v", want, err)
		}
	}
	if strings.Contains(err.Error(), "line 6:") {
		t.Errorf("the valid line 6 is reported:\n%v", err)
	}
}

func TestReferences(t *testing.T) {
	for _, tc := range []struct{ ref, repo string }{
		{"registry.redhat.io/ubi9/ruby-33:latest", "registry.redhat.io/ubi9/ruby-33"},
		{"mirror.example:5000/ruby", "mirror.example:5000/ruby"},
		{"mirror.example:5000/ruby:1", "mirror.example:5000/ruby"},
		{"centos/ruby-25-centos7", "centos/ruby-25-centos7"},
		{"ruby", "ruby"},
		{"ruby:3.3", "ruby"},
		{"@" + digestA, ""},
		{"quay.io/a/b@" + digestA, "quay.io/a/b"},
		{"quay.io/a/b:1@" + digestA, "quay.io/a/b"},
	} {
		if got := Repository(tc.ref); got != tc.repo {
			t.Errorf("Repository(%q) = %q, want %q", tc.ref, got, tc.repo)
		}
	}
	if got := PinnedReference("mirror.example:5000/ruby:1", digestB); got != "mirror.example:5000/ruby@"+digestB {
		t.Errorf("PinnedReference = %q", got)
	}
}

func TestSourceEmbedded(t *testing.T) {
	src, err := Source("")
	if err != nil {
		t.Fatal(err)
	}
	inv, err := inventory.Embedded(inventory.ArchDirOCPX86_64)
	if err != nil {
		t.Fatal(err)
	}
	// Pinning the real inventory with a map that covers it leaves no tag behind.
	d := Digests{}
	for _, ref := range inv.ImagesToMirror() {
		d[ref] = digestA
	}
	r, err := Tree(src, inventory.ArchDirOCPX86_64, d, false)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	if err := WriteTree(dir, r.Files); err != nil {
		t.Fatal(err)
	}
	pinned, err := inventory.LoadDir(dir, inventory.ArchDirOCPX86_64)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(pinned.ImageStreamNames(), inv.ImageStreamNames()) || !slices.Equal(pinned.TemplateNames(), inv.TemplateNames()) {
		t.Error("the pinned inventory does not hold the same samples")
	}
	for _, ref := range pinned.ImagesToMirror() {
		if !IsPinned(ref) {
			t.Errorf("%s is not pinned", ref)
		}
	}
	if _, err := Source(filepath.Join(dir, "missing")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("Source of a missing directory: %v", err)
	}
}
