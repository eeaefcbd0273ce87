package inventory

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"testing/fstest"
)

const okImageStream = `{
  "kind": "ImageStream",
  "apiVersion": "image.openshift.io/v1",
  "metadata": {"name": "ruby", "annotations": {"openshift.io/display-name": "Ruby"}},
  "spec": {"tags": [
    {"name": "3.3-ubi9", "from": {"kind": "DockerImage", "name": "registry.redhat.io/ubi9/ruby-33:latest"}, "referencePolicy": {"type": "Local"}},
    {"name": "3.1-ubi8", "from": {"kind": "DockerImage", "name": "registry.access.redhat.com/ubi8/ruby-31@sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"}},
    {"name": "latest", "from": {"kind": "ImageStreamTag", "name": "3.3-ubi9"}}
  ]}
}`

const okTemplate = `{
  "kind": "Template",
  "apiVersion": "template.openshift.io/v1",
  "metadata": {"name": "ruby-example", "annotations": {"tags": "quickstart,ruby"}},
  "message": "created",
  "parameters": [{"name": "NAME", "value": "ruby-example", "required": true}, {"name": "SECRET", "generate": "expression", "from": "[a-z]{8}"}],
  "objects": [
    {"apiVersion": "v1", "kind": "Service", "metadata": {"name": "${NAME}"}},
    {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "${NAME}"}}
  ],
  "labels": {"template": "ruby-example"}
}`

// imageStreamJSON returns a one-stream file with the given tags JSON.
func imageStreamJSON(name, tags string) string {
	return fmt.Sprintf(`{"kind":"ImageStream","apiVersion":"image.openshift.io/v1","metadata":{"name":%q},"spec":{"tags":[%s]}}`, name, tags)
}

func templateJSON(name, objects string) string {
	return fmt.Sprintf(`{"kind":"Template","apiVersion":"template.openshift.io/v1","metadata":{"name":%q},"objects":[%s]}`, name, objects)
}

// baseFS is a small valid arch directory "a" that tests add broken files to.
func baseFS() fstest.MapFS {
	return fstest.MapFS{
		"a/ruby/imagestreams/ruby.json":      {Data: []byte(okImageStream)},
		"a/ruby/templates/ruby-example.json": {Data: []byte(okTemplate)},
		"a/README.md":                        {Data: []byte("not a sample")},
		"a/ruby/imagestreams/.keep":          {Data: nil},
		"a/ruby/notes/anything.txt":          {Data: []byte("ignored")},
	}
}

func TestLoadValid(t *testing.T) {
	inv, err := Load(baseFS(), "a")
	if err != nil {
		t.Fatalf("Load: %v", err)
	}
	if got := inv.ImageStreamNames(); !slices.Equal(got, []string{"ruby"}) {
		t.Errorf("ImageStreamNames = %v", got)
	}
	if got := inv.TemplateNames(); !slices.Equal(got, []string{"ruby-example"}) {
		t.Errorf("TemplateNames = %v", got)
	}
	is, _ := inv.ImageStream("ruby")
	if is.APIVersion != "image.openshift.io/v1" || is.Kind != "ImageStream" || len(is.Spec.Tags) != 3 {
		t.Errorf("imagestream parsed wrongly: %+v", is.TypeMeta)
	}
	if got := inv.TagNames("ruby"); !slices.Equal(got, []string{"3.3-ubi9", "3.1-ubi8", "latest"}) {
		t.Errorf("TagNames(ruby) = %v", got)
	}
	if got := inv.TagNames("python"); got != nil {
		t.Errorf("TagNames of a stream not in the inventory = %v, want nil", got)
	}
	tmpl, _ := inv.Template("ruby-example")
	if len(tmpl.Objects) != 2 || len(tmpl.Parameters) != 2 || tmpl.ObjectLabels["template"] != "ruby-example" {
		t.Errorf("template parsed wrongly: %d objects %d params", len(tmpl.Objects), len(tmpl.Parameters))
	}
	wantMirror := []string{
		"registry.access.redhat.com/ubi8/ruby-31@sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef",
		"registry.redhat.io/ubi9/ruby-33:latest",
	}
	if got := inv.ImagesToMirror(); !slices.Equal(got, wantMirror) {
		t.Errorf("ImagesToMirror = %v, want %v", got, wantMirror)
	}
	wantMap := map[string]string{"ruby_3.3-ubi9": wantMirror[1], "ruby_3.1-ubi8": wantMirror[0]}
	if got := inv.TagToImage(); fmt.Sprint(got) != fmt.Sprint(wantMap) {
		t.Errorf("TagToImage = %v, want %v", got, wantMap)
	}
}

func TestLoadLegacyAPIVersionIsNormalised(t *testing.T) {
	fsys := fstest.MapFS{
		"a/x/imagestreams/x.json": {Data: []byte(strings.Replace(imageStreamJSON("x", `{"name":"1","from":{"kind":"DockerImage","name":"quay.io/a/b:1"}}`), `"image.openshift.io/v1"`, `"v1"`, 1))},
	}
	inv, err := Load(fsys, "a")
	if err != nil {
		t.Fatal(err)
	}
	is, _ := inv.ImageStream("x")
	if is.APIVersion != "image.openshift.io/v1" {
		t.Errorf("apiVersion = %q", is.APIVersion)
	}
}

func TestLoadRejectsBadFiles(t *testing.T) {
	dockerTag := `{"name":"1","from":{"kind":"DockerImage","name":"quay.io/a/b:1"}}`
	genTag := `{"name":"1","generation":2,"from":{"kind":"DockerImage","name":"quay.io/a/b:1"}}`
	cases := []struct {
		name string
		path string // relative to a/
		data string
		want []string // substrings of the error
	}{
		{"invalid JSON", "g/imagestreams/bad.json", `{"kind": "ImageStream",`, []string{"a/g/imagestreams/bad.json", "invalid JSON", "line 1"}},
		{"invalid JSON on a later line", "g/imagestreams/bad.json", "{\"kind\": \"ImageStream\",\n  \"apiVersion\": x}", []string{"invalid JSON: line 2, column 17: invalid character 'x'"}},
		{"a header field of the wrong type", "g/imagestreams/bad.json", "{\"kind\":\"ImageStream\",\n\"apiVersion\":1}", []string{"apiVersion, kind or metadata has the wrong type: line 2, column 14:"}},
		{"cut short", "g/imagestreams/bad.json", "{\n\"kind\": \"ImageStream\",", []string{"the file ends inside a JSON value (line 2)"}},
		{"empty file", "g/imagestreams/empty.json", ``, []string{"a/g/imagestreams/empty.json", "file is empty"}},
		{"two objects", "g/imagestreams/two.json", imageStreamJSON("two", dockerTag) + imageStreamJSON("three", dockerTag), []string{"two.json", "more than one JSON value"}},
		{"array", "g/imagestreams/arr.json", `[]`, []string{"arr.json", "must hold a JSON object"}},
		{"list kind", "g/imagestreams/list.json", `{"kind":"ImageStreamList","apiVersion":"image.openshift.io/v1","items":[]}`, []string{"list.json", `kind is "ImageStreamList"`, "one file per object"}},
		{"wrong kind in imagestreams", "g/imagestreams/t.json", templateJSON("t", `{"apiVersion":"v1","kind":"Service"}`), []string{"a/g/imagestreams/t.json", `kind is "Template", but files in imagestreams/ must be kind ImageStream`}},
		{"wrong kind in templates", "g/templates/is.json", imageStreamJSON("is", dockerTag), []string{"a/g/templates/is.json", `kind is "ImageStream", but files in templates/ must be kind Template`}},
		{"missing kind", "g/templates/nokind.json", `{"apiVersion":"template.openshift.io/v1","metadata":{"name":"n"}}`, []string{"nokind.json", "kind is missing"}},
		{"wrong apiVersion", "g/imagestreams/api.json", strings.Replace(imageStreamJSON("api", dockerTag), "image.openshift.io/v1", "apps/v1", 1), []string{"api.json", `apiVersion is "apps/v1"`}},
		{"namespace set", "g/imagestreams/ns.json", `{"kind":"ImageStream","apiVersion":"image.openshift.io/v1","metadata":{"name":"ns","namespace":"openshift"},"spec":{"tags":[` + dockerTag + `]}}`, []string{"ns.json", `metadata.namespace is set to "openshift"`}},
		{"missing name", "g/templates/noname.json", templateJSON("", `{"apiVersion":"v1","kind":"Service"}`), []string{"noname.json", "metadata.name is missing"}},
		{"bad name", "g/imagestreams/upper.json", imageStreamJSON("Ruby_Bad", dockerTag), []string{"upper.json", `metadata.name "Ruby_Bad" is not a valid name`}},
		{"schema mismatch", "g/imagestreams/schema.json", `{"kind":"ImageStream","apiVersion":"image.openshift.io/v1","metadata":{"name":"s"},"spec":{"tags":"oops"}}`, []string{"schema.json", "does not match the ImageStream schema"}},
		{"unresolved ImageStreamTag", "g/imagestreams/unres.json", imageStreamJSON("unres", dockerTag+`,{"name":"latest","from":{"kind":"ImageStreamTag","name":"2"}}`), []string{"unres.json", `tag "latest": from.name "2" names a tag that does not exist`}},
		{"ImageStreamTag to other stream", "g/imagestreams/other.json", imageStreamJSON("other", dockerTag+`,{"name":"latest","from":{"kind":"ImageStreamTag","name":"ruby:3.3-ubi9"}}`), []string{"other.json", "points at another imagestream"}},
		{"ImageStreamTag with namespace", "g/imagestreams/istns.json", imageStreamJSON("istns", dockerTag+`,{"name":"latest","from":{"kind":"ImageStreamTag","name":"1","namespace":"openshift"}}`), []string{"istns.json", `from.namespace "openshift"`}},
		{"ImageStreamTag cycle", "g/imagestreams/cycle.json", imageStreamJSON("cycle", `{"name":"a","from":{"kind":"ImageStreamTag","name":"b"}},{"name":"b","from":{"kind":"ImageStreamTag","name":"cycle:a"}}`), []string{"cycle.json", "form a cycle: a -> b -> a"}},
		{"self reference", "g/imagestreams/self.json", imageStreamJSON("self", `{"name":"a","from":{"kind":"ImageStreamTag","name":"a"}}`), []string{"self.json", "cycle: a -> a"}},
		{"DockerImage without name", "g/imagestreams/noimg.json", imageStreamJSON("noimg", `{"name":"1","from":{"kind":"DockerImage","name":""}}`), []string{"noimg.json", `tag "1": from.name is empty`}},
		{"DockerImage with URL", "g/imagestreams/url.json", imageStreamJSON("url", `{"name":"1","from":{"kind":"DockerImage","name":"https://quay.io/a/b:1"}}`), []string{"url.json", "is not a pull spec"}},
		{"unparsable DockerImage", "g/imagestreams/upperref.json", imageStreamJSON("upperref", `{"name":"1","from":{"kind":"DockerImage","name":"quay.io/UPPER/b:1"}}`), []string{"upperref.json", `tag "1": from.name "quay.io/UPPER/b:1" is not a pull spec`}},
		{"DockerImage with an empty tag", "g/imagestreams/emptytag.json", imageStreamJSON("emptytag", `{"name":"1","from":{"kind":"DockerImage","name":"quay.io/a/b:"}}`), []string{"emptytag.json", `from.name "quay.io/a/b:" is not a pull spec`}},
		{"tag sets generation", "g/imagestreams/gen.json", imageStreamJSON("gen", `{"name":"1","generation":2,"from":{"kind":"DockerImage","name":"quay.io/a/b:1"}}`), []string{"gen.json", `tag "1" sets generation`}},
		{"bad reference policy", "g/imagestreams/refpol.json", imageStreamJSON("refpol", `{"name":"1","from":{"kind":"DockerImage","name":"quay.io/a/b:1"},"referencePolicy":{"type":"Remote"}}`), []string{"refpol.json", `referencePolicy.type "Remote" is not valid`}},
		{"bad import mode", "g/imagestreams/mode.json", imageStreamJSON("mode", `{"name":"1","from":{"kind":"DockerImage","name":"quay.io/a/b:1"},"importPolicy":{"importMode":"Both"}}`), []string{"mode.json", `importPolicy.importMode "Both" is not valid`}},
		{"scheduled ImageStreamTag", "g/imagestreams/sched.json", imageStreamJSON("sched", dockerTag+`,{"name":"latest","from":{"kind":"ImageStreamTag","name":"1"},"importPolicy":{"scheduled":true}}`), []string{"sched.json", `tag "latest": importPolicy.scheduled is set on an ImageStreamTag`}},
		{"imagestream name the server refuses", "g/imagestreams/dash.json", imageStreamJSON("ru--by", dockerTag), []string{"dash.json", `metadata.name "ru--by" is not a valid imagestream name`}},
		{"imagestream name too long for the registry", "g/imagestreams/long.json", imageStreamJSON(strings.Repeat(strings.Repeat("a", 60)+".", 4)+"abcde", dockerTag), []string{"long.json", "an imagestream's <namespace>/<name> may have at most 255"}},
		{"tagged dockerImageRepository", "g/imagestreams/repo.json", `{"kind":"ImageStream","apiVersion":"image.openshift.io/v1","metadata":{"name":"repo"},"spec":{"dockerImageRepository":"quay.io/a/b:1","tags":[` + dockerTag + `]}}`, []string{"repo.json", `spec.dockerImageRepository "quay.io/a/b:1" names a tag or digest`}},
		{"digested dockerImageRepository", "g/imagestreams/repo.json", `{"kind":"ImageStream","apiVersion":"image.openshift.io/v1","metadata":{"name":"repo"},"spec":{"dockerImageRepository":"quay.io/a/b@sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef","tags":[` + dockerTag + `]}}`, []string{"repo.json", "names a tag or digest"}},
		{"tag without from", "g/imagestreams/nofrom.json", imageStreamJSON("nofrom", `{"name":"1"}`), []string{"nofrom.json", `tag "1" has no from`}},
		{"unsupported from kind", "g/imagestreams/kind.json", imageStreamJSON("kind", `{"name":"1","from":{"kind":"ImageStreamImage","name":"x@sha256:1"}}`), []string{"kind.json", "from.kind ImageStreamImage is not supported"}},
		{"duplicate tag", "g/imagestreams/duptag.json", imageStreamJSON("duptag", dockerTag+","+dockerTag), []string{"duptag.json", `tag "1" appears more than once`}},
		// The first of two tags of one name is the one checked further, once.
		{"duplicate tag, the first setting generation", "g/imagestreams/dupgen.json", imageStreamJSON("dupgen", genTag+","+dockerTag), []string{"dupgen.json", `tag "1" appears more than once`, `tag "1" sets generation`}},
		{"duplicate tag, both setting generation", "g/imagestreams/dupgen2.json", imageStreamJSON("dupgen2", genTag+","+genTag), []string{"dupgen2.json", `tag "1" appears more than once`, `tag "1" sets generation`}},
		{"an unnamed tag, then one setting generation", "g/imagestreams/noname.json", imageStreamJSON("noname", `{"from":{"kind":"DockerImage","name":"quay.io/a/b:1"}},`+genTag), []string{"noname.json", "spec.tags[0] has no name", `tag "1" sets generation`}},
		{"bad tag name", "g/imagestreams/tagname.json", imageStreamJSON("tagname", `{"name":"a b","from":{"kind":"DockerImage","name":"quay.io/a/b:1"}}`), []string{"tagname.json", `tag "a b": not a valid tag name`}},
		{"template object without kind", "g/templates/objkind.json", templateJSON("objkind", `{"apiVersion":"v1","metadata":{"name":"x"}}`), []string{"objkind.json", `objects[0] (name "x") has no kind`}},
		{"template object without apiVersion", "g/templates/objapi.json", templateJSON("objapi", `{"kind":"Service"}`), []string{"objapi.json", `objects[0] (kind "Service", name "") has no apiVersion`}},
		{"template object with namespace", "g/templates/objns.json", templateJSON("objns", `{"apiVersion":"v1","kind":"Service","metadata":{"name":"s","namespace":"default"}}`), []string{"objns.json", `sets metadata.namespace "default"`}},
		{"template object not an object", "g/templates/objstr.json", templateJSON("objstr", `"just a string"`), []string{"objstr.json", "objects[0] is not a JSON object"}},
		{"template objects after one that is not an object", "g/templates/objstr2.json", templateJSON("objstr2", `"just a string",{"kind":"Service"}`), []string{"objstr2.json", "objects[0] is not a JSON object", `objects[1] (kind "Service", name "") has no apiVersion`}},
		{"template without objects", "g/templates/noobj.json", templateJSON("noobj", ``), []string{"noobj.json", "objects is empty"}},
		{"duplicate parameter", "g/templates/dupparam.json", `{"kind":"Template","apiVersion":"template.openshift.io/v1","metadata":{"name":"dp"},"parameters":[{"name":"A"},{"name":"A"}],"objects":[{"apiVersion":"v1","kind":"Service"}]}`, []string{"dupparam.json", `parameter "A" is declared more than once`}},
		{"yaml file", "g/templates/t.yaml", "kind: Template", []string{"a/g/templates/t.yaml", "only .json files", "YAML is not supported"}},
		{"duplicate imagestream name", "h/imagestreams/ruby-again.json", imageStreamJSON("ruby", dockerTag), []string{"a/h/imagestreams/ruby-again.json", `imagestream "ruby" is already defined in a/g/imagestreams/`}},
		{"duplicate template name", "z/templates/copy.json", okTemplate, []string{"a/z/templates/copy.json", `template "ruby-example" is already defined in a/ruby/templates/ruby-example.json`}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			fsys := baseFS()
			// Put the base imagestream under g/ for the duplicate case so that it sorts first.
			if strings.HasPrefix(tc.name, "duplicate imagestream") {
				fsys["a/g/imagestreams/ruby.json"] = fsys["a/ruby/imagestreams/ruby.json"]
				delete(fsys, "a/ruby/imagestreams/ruby.json")
			}
			fsys["a/"+tc.path] = &fstest.MapFile{Data: []byte(tc.data)}
			inv, err := Load(fsys, "a")
			if err == nil {
				t.Fatalf("Load succeeded, want an error (%d imagestreams)", len(inv.ImageStreamNames()))
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q\ndoes not contain %q", err, w)
				}
			}
			// Each case has one problem, reported once (the cycle once for each of its two tags), or two:
			// errors.Join puts each on a line of its own.
			want := map[string]int{"ImageStreamTag cycle": 2, "duplicate tag, the first setting generation": 2, "duplicate tag, both setting generation": 2,
				"an unnamed tag, then one setting generation": 2, "template objects after one that is not an object": 2}[tc.name]
			if want == 0 {
				want = 1
			}
			if lines := strings.Count(err.Error(), "\n") + 1; lines != want {
				t.Errorf("error %q has %d lines, want %d", err, lines, want)
			}
			var fe *FileError
			if !errors.As(err, &fe) || !strings.HasPrefix(fe.Path, "a/") {
				t.Errorf("error is not a *FileError naming the file: %#v", err)
			}
		})
	}
}

func TestLoadReportsAllErrors(t *testing.T) {
	fsys := baseFS()
	fsys["a/x/imagestreams/one.json"] = &fstest.MapFile{Data: []byte(`{`)}
	fsys["a/x/imagestreams/two.json"] = &fstest.MapFile{Data: []byte(imageStreamJSON("two", `{"name":"latest","from":{"kind":"ImageStreamTag","name":"missing"}},{"name":"x"}`))}
	fsys["a/x/templates/three.json"] = &fstest.MapFile{Data: []byte(`{"kind":"Template","apiVersion":"template.openshift.io/v1","metadata":{"namespace":"n"},"objects":[{}]}`)}
	_, err := Load(fsys, "a")
	if err == nil {
		t.Fatal("Load succeeded")
	}
	joined, ok := err.(interface{ Unwrap() []error })
	if !ok {
		t.Fatalf("error %T is not a joined error", err)
	}
	var paths []string
	for _, e := range joined.Unwrap() {
		var fe *FileError
		if !errors.As(e, &fe) {
			t.Fatalf("%v is not a *FileError", e)
		}
		paths = append(paths, fe.Path)
	}
	// one.json: 1; two.json: unresolved tag + tag without from; three.json: missing name,
	// namespace, object without apiVersion, object without kind.
	want := []string{
		"a/x/imagestreams/one.json",
		"a/x/imagestreams/two.json", "a/x/imagestreams/two.json",
		"a/x/templates/three.json", "a/x/templates/three.json", "a/x/templates/three.json", "a/x/templates/three.json",
	}
	if !slices.Equal(paths, want) {
		t.Errorf("error paths = %v\nwant %v\nerror: %v", paths, want, err)
	}
}

func TestLoadOversizeFile(t *testing.T) {
	fsys := baseFS()
	big := make([]byte, MaxFileSize+1)
	for i := range big {
		big[i] = ' '
	}
	fsys["a/g/templates/huge.json"] = &fstest.MapFile{Data: big}
	_, err := Load(fsys, "a")
	if err == nil || !strings.Contains(err.Error(), "a/g/templates/huge.json: is 4194305 bytes, larger than the 4194304 byte limit") {
		t.Fatalf("error = %v, want an oversize error naming the file", err)
	}
	// Exactly at the limit is accepted by the size check (and then parsed).
	fsys["a/g/templates/huge.json"] = &fstest.MapFile{Data: append([]byte(okTemplate[:len(okTemplate)-1]), append(big[:MaxFileSize-len(okTemplate)], '}')...)}
	if _, err := Load(fsys, "a"); err == nil || !strings.Contains(err.Error(), "already defined") {
		t.Fatalf("a file of exactly MaxFileSize bytes should be parsed; error = %v", err)
	}
}

func TestLoadDirRejectsSymlinks(t *testing.T) {
	dir := t.TempDir()
	write := func(rel, data string) {
		p := filepath.Join(dir, rel)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("ocp-x86_64/ruby/imagestreams/ruby.json", okImageStream)
	write("elsewhere/t.json", okTemplate)
	if err := os.Symlink(filepath.Join(dir, "elsewhere/t.json"), filepath.Join(dir, "ocp-x86_64/ruby/templates.json")); err != nil {
		t.Skipf("cannot create symlinks here: %v", err)
	}
	if err := os.MkdirAll(filepath.Join(dir, "ocp-x86_64/ruby/templates"), 0o755); err != nil {
		t.Fatal(err)
	}
	// A file symlink in a templates/ directory and a directory symlink that loops back.
	if err := os.Symlink(filepath.Join(dir, "elsewhere/t.json"), filepath.Join(dir, "ocp-x86_64/ruby/templates/linked.json")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(dir, "ocp-x86_64"), filepath.Join(dir, "ocp-x86_64/ruby/loop")); err != nil {
		t.Fatal(err)
	}
	_, err := LoadDir(dir, "ocp-x86_64")
	if err == nil {
		t.Fatal("LoadDir succeeded with symlinks in the tree")
	}
	for _, want := range []string{
		filepath.Join(dir, "ocp-x86_64/ruby/templates/linked.json") + ": is a symbolic link",
		filepath.Join(dir, "ocp-x86_64/ruby/loop") + ": is a symbolic link",
	} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q\ndoes not contain %q", err, want)
		}
	}
}

func TestLoadDir(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "ocp-s390x/ruby/imagestreams/ruby.json")
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(okImageStream), 0o644); err != nil {
		t.Fatal(err)
	}
	inv, err := LoadDir(dir, "ocp-s390x")
	if err != nil {
		t.Fatal(err)
	}
	if f, _ := inv.ImageStreamFile("ruby"); f != p {
		t.Errorf("ImageStreamFile = %q, want %q", f, p)
	}
	if _, err := LoadDir(dir, "ocp-x86_64"); err == nil || !strings.Contains(err.Error(), filepath.Join(dir, "ocp-x86_64")+": cannot read the inventory directory") {
		t.Errorf("missing arch dir: error = %v", err)
	}
	if _, err := LoadDir(filepath.Join(dir, "nope"), "ocp-s390x"); err == nil {
		t.Error("missing inventory dir: no error")
	}
	if _, err := LoadDir(dir, "../x"); err == nil || !strings.Contains(err.Error(), "not a valid") {
		t.Errorf("arch dir with ..: error = %v", err)
	}
	if err := os.MkdirAll(filepath.Join(dir, "empty"), 0o755); err != nil {
		t.Fatal(err)
	}
	if _, err := LoadDir(dir, "empty"); err == nil || !strings.Contains(err.Error(), "holds no imagestreams") {
		t.Errorf("empty arch dir: error = %v", err)
	}
	if _, err := LoadDir(dir, "ocp-s390x/ruby/imagestreams/ruby.json"); err == nil || !strings.Contains(err.Error(), "is not a directory") {
		t.Errorf("file as arch dir: error = %v", err)
	}
}

// An imagestream whose openshift/<name> is exactly as long as the registry allows loads.
func TestAnImageStreamNameAtTheRegistryLimitLoads(t *testing.T) {
	name := strings.Repeat(strings.Repeat("a", 60)+".", 4) + "b" // 245 characters: openshift/ makes 255
	fsys := baseFS()
	fsys["a/g/imagestreams/long.json"] = &fstest.MapFile{Data: []byte(imageStreamJSON(name, `{"name":"1","from":{"kind":"DockerImage","name":"quay.io/a/b:1"}}`))}
	if _, err := Load(fsys, "a"); err != nil {
		t.Errorf("a name of %d characters: %v", len(name), err)
	}
}

// Template objects are held compacted, whatever indentation the inventory's files have.
func TestTemplateObjectsAreHeldCompacted(t *testing.T) {
	inv, err := Load(baseFS(), "a")
	if err != nil {
		t.Fatal(err)
	}
	tmpl, _ := inv.Template("ruby-example")
	for i, obj := range tmpl.Objects {
		var compact bytes.Buffer
		if err := json.Compact(&compact, obj.Raw); err != nil || !bytes.Equal(compact.Bytes(), obj.Raw) {
			t.Errorf("objects[%d] is held as %q, not compacted", i, obj.Raw)
		}
	}
}

// A DockerImage tag whose pull spec reads like STREAM:TAG of its own stream (docker.io/library/b:1
// written short, in stream b) ends a chain of ImageStreamTag references: it follows nothing.
func TestADockerImageNamedLikeItsStreamEndsAChain(t *testing.T) {
	fsys := baseFS()
	fsys["a/b/imagestreams/b.json"] = &fstest.MapFile{Data: []byte(imageStreamJSON("b",
		`{"name":"1","from":{"kind":"DockerImage","name":"b:1"}},{"name":"latest","from":{"kind":"ImageStreamTag","name":"1"}}`))}
	if _, err := Load(fsys, "a"); err != nil {
		t.Fatalf("Load: %v", err)
	}
}
