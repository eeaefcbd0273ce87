package pin

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"testing/fstest"
)

// The tests read inventories with encoding/json, not pkg/inventory: importing it (and the API
// types it decodes into) made each of make mutation's 57 builds of this package's test binary
// take 28 s instead of 10 on a loaded pair of cores, and a whole run more than 9 minutes.
// cmd/cluster-samples-operator's TestPinThenBundle reads a pinned tree with pkg/inventory.

// imageStreamFile is the part of an imagestream file the tests read.
type imageStreamFile struct {
	Metadata struct {
		Annotations map[string]string `json:"annotations"`
	} `json:"metadata"`
	Spec struct {
		Tags []struct {
			From         struct{ Kind, Name string } `json:"from"`
			ImportPolicy struct {
				ImportMode string `json:"importMode"`
			} `json:"importPolicy"`
		} `json:"tags"`
	} `json:"spec"`
}

// dockerImages returns the DockerImage references of the imagestream files of archDir in fsys,
// sorted and once each, and the names of all its files.
func dockerImages(t *testing.T, fsys fs.FS, archDir string) (refs, files []string) {
	t.Helper()
	seen := map[string]bool{}
	err := fs.WalkDir(fsys, archDir, func(p string, de fs.DirEntry, err error) error {
		if err != nil || de.IsDir() {
			return err
		}
		files = append(files, p)
		if path.Base(path.Dir(p)) != "imagestreams" || path.Ext(p) != ".json" {
			return nil
		}
		data, err := fs.ReadFile(fsys, p)
		if err != nil {
			return err
		}
		var is imageStreamFile
		if err := json.Unmarshal(data, &is); err != nil {
			return fmt.Errorf("%s: %w", p, err)
		}
		for _, tag := range is.Spec.Tags {
			if tag.From.Kind == "DockerImage" {
				seen[tag.From.Name] = true
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return sortedKeys(seen), files
}

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
	want := []string{
		"mirror.example:5000/ubi8/ruby-31@" + digestB,
		"registry.redhat.io/ubi9/httpd-24@" + digestC,
		"registry.redhat.io/ubi9/ruby-30@" + digestC,
		"registry.redhat.io/ubi9/ruby-33@" + digestA,
	}
	if got, _ := dockerImages(t, os.DirFS(dir), "ocp-x86_64"); !slices.Equal(got, want) {
		t.Errorf("images of the pinned inventory:\n%v\nwant\n%v", got, want)
	}
	data, err := os.ReadFile(filepath.Join(dir, "ocp-x86_64", "ruby", "imagestreams", "ruby.json"))
	if err != nil {
		t.Fatal(err)
	}
	var ruby imageStreamFile
	if err := json.Unmarshal(data, &ruby); err != nil {
		t.Fatal(err)
	}
	if ruby.Metadata.Annotations["openshift.io/display-name"] != "Ruby <3 & friends" || ruby.Spec.Tags[0].ImportPolicy.ImportMode != "PreserveOriginal" {
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

// A digest file's lines may be long (a generated comment, say): up to 1 MiB a line is read, more
// is an error rather than a file cut short.
func TestParseDigestsReadsLinesUpToOneMiB(t *testing.T) {
	entry := "a.example/x:1 " + digestA
	d, err := ParseDigests([]byte("# " + strings.Repeat("x", 200<<10) + "\n" + entry + "\n"))
	if err != nil {
		t.Fatalf("a 200 KiB comment line: %v", err)
	}
	if d["a.example/x:1"] != digestA {
		t.Errorf("after a 200 KiB comment line, parsed %v", d)
	}
	if _, err := ParseDigests([]byte("# " + strings.Repeat("x", 1<<20) + "\n" + entry + "\n")); err == nil {
		t.Error("a comment line over 1 MiB: no error")
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
	const arch = "ocp-x86_64"
	refs, files := dockerImages(t, src, arch)
	if len(refs) == 0 {
		t.Fatal("the embedded inventory has no DockerImage reference")
	}
	// Pinning the real inventory with a map that covers it leaves no tag behind.
	d := Digests{}
	for _, ref := range refs {
		d[ref] = digestA
	}
	r, err := Tree(src, arch, d, false)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	if err := WriteTree(dir, r.Files); err != nil {
		t.Fatal(err)
	}
	pinnedRefs, pinnedFiles := dockerImages(t, os.DirFS(dir), arch)
	if !slices.Equal(pinnedFiles, files) {
		t.Error("the pinned inventory does not hold the same files")
	}
	for _, ref := range pinnedRefs {
		if !IsPinned(ref) {
			t.Errorf("%s is not pinned", ref)
		}
	}
	if _, err := Source(filepath.Join(dir, "missing")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("Source of a missing directory: %v", err)
	}
}

// Each malformed digest gets its own reason: upper case only for what would be a sha256 digest
// had it been printed in lower case.
func TestValidateDigestSaysWhatIsWrong(t *testing.T) {
	for _, tc := range []struct{ digest, want string }{
		{digestA, ""},
		{strings.ToUpper(digestA), "upper-case"},
		{"sha256:" + strings.ToUpper(digestA[7:]), "upper-case"},
		{"sha256:abc", "malformed"},
		{"sha256:ABC", "malformed"},
		{"MD5:" + strings.ToUpper(digestA[7:]), "malformed"},
		{digestA + "A", "malformed"},
	} {
		err := ValidateDigest(tc.digest)
		if (err == nil) != (tc.want == "") || err != nil && !strings.Contains(err.Error(), tc.want) {
			t.Errorf("ValidateDigest(%q) = %v, want %q", tc.digest, err, tc.want)
		}
	}
}

// Tree takes one architecture directory by name: not the root, not a path into one, even when
// what they hold would pin cleanly.
func TestTreeTakesOneArchitectureDirectory(t *testing.T) {
	src := fstest.MapFS{"ocp-x86_64/httpd/imagestreams/httpd-rhel.json": {Data: []byte(httpdStream)}}
	for _, dir := range []string{".", "ocp-x86_64/httpd", "../ocp-x86_64", ""} {
		if _, err := Tree(src, dir, fullMap(), true); err == nil || !strings.Contains(err.Error(), "not a single directory name") {
			t.Errorf("Tree(%q): %v", dir, err)
		}
	}
}

// A DockerImage tag without a reference is an error, not a reference "" to pin.
func TestTreeRefusesADockerImageTagWithoutAName(t *testing.T) {
	for name, from := range map[string]string{"empty": `""`, "not a string": `7`} {
		stream := `{"kind":"ImageStream","metadata":{"name":"x"},"spec":{"tags":[{"name":"1","from":{"kind":"DockerImage","name":` + from + `}}]}}`
		src := fstest.MapFS{"ocp-x86_64/x/imagestreams/x.json": {Data: []byte(stream)}}
		if _, err := Tree(src, "ocp-x86_64", fullMap(), true); err == nil || !strings.Contains(err.Error(), "from.name is not a non-empty string") {
			t.Errorf("%s: %v", name, err)
		}
	}
}

// Only imagestreams/*.json files are imagestreams: a template that looks like one, another file
// beside them and a hidden one are copied as they are.
func TestTreeCopiesWhatIsNoImagestreamFile(t *testing.T) {
	asIfAStream := strings.Replace(httpdStream, `"ImageStream"`, `"Template"`, 1)
	src := fstest.MapFS{
		"ocp-x86_64/httpd/templates/httpd-example.json": {Data: []byte(asIfAStream)},
		"ocp-x86_64/httpd/imagestreams/notes.txt":       {Data: []byte("not JSON")},
		"ocp-x86_64/httpd/imagestreams/.httpd.json":     {Data: []byte("not JSON either")},
	}
	r, err := Tree(src, "ocp-x86_64", fullMap(), false)
	if err != nil {
		t.Fatal(err)
	}
	for p, f := range src {
		if string(r.Files[p]) != string(f.Data) {
			t.Errorf("%s was changed: %s", p, r.Files[p])
		}
	}
}
