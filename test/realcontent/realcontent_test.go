// Package realcontent tests the operator's pure parts on openshift/library's real files
// (assets/operator as library-sync.sh wrote it), against expectations read from the raw JSON
// independently of pkg/inventory: the shapes the hand-written inventory never had, and every
// output an admin mirrors from.
package realcontent

import (
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	samplesv1 "github.com/openshift/api/samples/v1"
	"sigs.k8s.io/yaml"

	"github.com/samples-operator-dev/cluster-samples-operator/assets"
	"github.com/samples-operator-dev/cluster-samples-operator/pkg/desired"
	"github.com/samples-operator-dev/cluster-samples-operator/pkg/inventory"
	"github.com/samples-operator-dev/cluster-samples-operator/pkg/pin"
)

// rawStream is an imagestream file read with nothing but encoding/json.
type rawStream struct {
	Metadata struct {
		Name        string            `json:"name"`
		Annotations map[string]string `json:"annotations"`
	} `json:"metadata"`
	Spec struct {
		Tags []map[string]any `json:"tags"`
	} `json:"spec"`
}

func rawStreams(t *testing.T, archDir string) map[string]rawStream {
	t.Helper()
	out := map[string]rawStream{}
	files, err := fs.Glob(assets.Operator, "operator/"+archDir+"/*/imagestreams/*.json")
	if err != nil || len(files) == 0 {
		t.Fatalf("no imagestream files for %s: %v", archDir, err)
	}
	for _, f := range files {
		data, err := fs.ReadFile(assets.Operator, f)
		if err != nil {
			t.Fatal(err)
		}
		var s rawStream
		if err := json.Unmarshal(data, &s); err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		out[s.Metadata.Name] = s
	}
	return out
}

// rawTagImages is "<stream>_<tag>" -> from.name for every DockerImage tag of the raw files.
func rawTagImages(streams map[string]rawStream) map[string]string {
	m := map[string]string{}
	for name, s := range streams {
		for _, tag := range s.Spec.Tags {
			from, _ := tag["from"].(map[string]any)
			if from["kind"] == "DockerImage" {
				m[name+"_"+tag["name"].(string)] = from["name"].(string)
			}
		}
	}
	return m
}

func sortedUnique(m map[string]string) []string {
	v := slices.Sorted(maps.Values(m))
	return slices.Compact(v)
}

// TestMirrorOutputsCoverEveryImageOfTheRealSet: `inventory images`, the imagestreamtag-to-image
// ConfigMap's data and digest pinning name exactly the images of the raw files, for every
// arch-dir; the committed OLM bundle's relatedImages are the operator and every ocp-x86_64 image.
func TestMirrorOutputsCoverEveryImageOfTheRealSet(t *testing.T) {
	for _, archDir := range inventory.ArchDirs() {
		t.Run(archDir, func(t *testing.T) {
			raw := rawTagImages(rawStreams(t, archDir))
			want := sortedUnique(raw)
			inv, err := inventory.Embedded(archDir)
			if err != nil {
				t.Fatal(err)
			}
			if got := inv.ImagesToMirror(); !slices.Equal(got, want) {
				t.Errorf("ImagesToMirror: %d images, the files have %d; extra %v, missing %v", len(got), len(want), minus(got, want), minus(want, got))
			}
			if got := inv.TagToImage(); !maps.Equal(got, raw) {
				t.Errorf("TagToImage has %d keys, the files %d DockerImage tags", len(got), len(raw))
			}
			// Pinning: a digest for every image pins every one of them.
			d := pin.Digests{}
			for _, ref := range want {
				d[ref] = fmt.Sprintf("sha256:%x", sha256.Sum256([]byte(ref)))
			}
			sub, _ := fs.Sub(assets.Operator, "operator")
			res, err := pin.Tree(sub, archDir, d, false)
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(res.Pinned, want) || len(res.Unpinned) != 0 || len(res.AlreadyPinned) != 0 {
				t.Errorf("pinned %d of %d images (unpinned %v)", len(res.Pinned), len(want), res.Unpinned)
			}
			pinnedDir := t.TempDir()
			if err := pin.WriteTree(pinnedDir, res.Files); err != nil {
				t.Fatal(err)
			}
			pinnedInv, err := inventory.LoadDir(pinnedDir, archDir)
			if err != nil {
				t.Fatalf("the pinned tree does not load: %v", err)
			}
			for key, ref := range pinnedInv.TagToImage() {
				if ref != pin.PinnedReference(raw[key], d[raw[key]]) || !strings.Contains(ref, "@sha256:") {
					t.Errorf("%s pinned to %s, from %s", key, ref, raw[key])
				}
			}
		})
	}
	t.Run("bundle relatedImages", func(t *testing.T) {
		want := sortedUnique(rawTagImages(rawStreams(t, inventory.ArchDirOCPX86_64)))
		csvs, _ := filepath.Glob(filepath.Join("..", "..", "bundle", "manifests", "*.clusterserviceversion.yaml"))
		if len(csvs) != 1 {
			t.Fatalf("want one CSV in bundle/manifests, found %v", csvs)
		}
		data, err := os.ReadFile(csvs[0])
		if err != nil {
			t.Fatal(err)
		}
		var csv struct {
			Spec struct {
				RelatedImages []struct{ Name, Image string } `json:"relatedImages"`
			} `json:"spec"`
		}
		if err := yaml.Unmarshal(data, &csv); err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, ri := range csv.Spec.RelatedImages[1:] {
			got = append(got, ri.Image)
		}
		slices.Sort(got)
		if !slices.Equal(got, want) {
			t.Errorf("relatedImages: %d inventory images, the files have %d; extra %v, missing %v", len(got), len(want), minus(got, want), minus(want, got))
		}
	})
}

func minus(a, b []string) []string {
	var out []string
	for _, x := range a {
		if !slices.Contains(b, x) {
			out = append(out, x)
		}
	}
	return out
}

// TestTagsThatPointAtTagsStayReferences: python's latest and jenkins' upgrade-strategy tags are
// ImageStreamTag references to other tags of their stream; a samplesRegistry moves the tags they
// point at, never the references, and the references are no image to mirror.
func TestTagsThatPointAtTagsStayReferences(t *testing.T) {
	inv, err := inventory.Embedded(inventory.ArchDirOCPX86_64)
	if err != nil {
		t.Fatal(err)
	}
	spec := &samplesv1.ConfigSpec{SamplesRegistry: "mirror.example:5000"}
	for _, tc := range []struct {
		stream string
		want   map[string]string // tag -> kind:name after the rewrite, read off the library's file
	}{
		{"python", map[string]string{
			"latest":             "ImageStreamTag:3.12-ubi8",
			"3.12-ubi8":          "DockerImage:mirror.example:5000/ubi8/python-312:latest",
			"3.12-minimal-ubi10": "DockerImage:mirror.example:5000/ubi10/python-312-minimal:latest",
		}},
		{"jenkins", map[string]string{
			"latest":                           "ImageStreamTag:2",
			"ocp-upgrade-redeploy":             "ImageStreamTag:2",
			"2":                                "DockerImage:mirror.example:5000/ocp-tools-4/jenkins-rhel8:v4.13.0-1686682222",
			"user-maintained-upgrade-redeploy": "DockerImage:mirror.example:5000/ocp-tools-4/jenkins-rhel8:v4.13.0",
			"scheduled-upgrade-redeploy":       "DockerImage:mirror.example:5000/ocp-tools-4/jenkins-rhel8:v4.13.0",
		}},
	} {
		is, _, known := desired.ImageStream(spec, desired.Choice{Version: "v1", SamplesRegistry: spec.SamplesRegistry}, inv, tc.stream)
		if !known {
			t.Fatalf("%s not in the inventory", tc.stream)
		}
		got := map[string]string{}
		for _, tag := range is.Spec.Tags {
			got[tag.Name] = tag.From.Kind + ":" + tag.From.Name
		}
		for tag, want := range tc.want {
			if got[tag] != want {
				t.Errorf("%s:%s = %s, want %s", tc.stream, tag, got[tag], want)
			}
		}
		for key := range inv.TagToImage() {
			if strings.HasPrefix(tc.want[strings.TrimPrefix(key, tc.stream+"_")], "ImageStreamTag:") && strings.HasPrefix(key, tc.stream+"_") {
				t.Errorf("TagToImage lists the reference %s", key)
			}
		}
	}
}

// TestTemplatesThatCarryTheirOwnImageStreamAndBuildConfig: cakephp-mysql-example creates an
// ImageStream and a BuildConfig of its own, from an ImageStreamTag in ${NAMESPACE}. The operator
// installs its objects exactly as the library wrote them: a samplesRegistry rewrites no
// template, and none of their images is an image to mirror.
func TestTemplatesThatCarryTheirOwnImageStreamAndBuildConfig(t *testing.T) {
	inv, err := inventory.Embedded(inventory.ArchDirOCPX86_64)
	if err != nil {
		t.Fatal(err)
	}
	data, err := fs.ReadFile(assets.Operator, "operator/ocp-x86_64/cakephp/templates/cakephp-mysql-example.json")
	if err != nil {
		t.Fatal(err)
	}
	var raw struct {
		Objects    []json.RawMessage `json:"objects"`
		Parameters []map[string]any  `json:"parameters"`
	}
	if err := json.Unmarshal(data, &raw); err != nil {
		t.Fatal(err)
	}
	want, _, _ := desired.Template(&samplesv1.ConfigSpec{SamplesRegistry: "mirror.example:5000"}, desired.Choice{Version: "v1"}, inv, "cakephp-mysql-example")
	if len(want.Objects) != len(raw.Objects) || len(want.Parameters) != len(raw.Parameters) {
		t.Fatalf("desired template has %d objects and %d parameters, the file %d and %d", len(want.Objects), len(want.Parameters), len(raw.Objects), len(raw.Parameters))
	}
	kinds := map[string]bool{}
	for i := range raw.Objects {
		var a, b any
		if err := json.Unmarshal(raw.Objects[i], &a); err != nil {
			t.Fatal(err)
		}
		if err := json.Unmarshal(want.Objects[i].Raw, &b); err != nil {
			t.Fatal(err)
		}
		if !equalJSON(a, b) {
			t.Errorf("object %d differs from the library's:\n%s\nwant\n%s", i, want.Objects[i].Raw, raw.Objects[i])
		}
		kinds[a.(map[string]any)["kind"].(string)] = true
		if strings.Contains(string(want.Objects[i].Raw), "mirror.example") {
			t.Errorf("object %d was rewritten onto the samplesRegistry", i)
		}
	}
	if !kinds["ImageStream"] || !kinds["BuildConfig"] {
		t.Errorf("the library's cakephp-mysql-example no longer carries an ImageStream and a BuildConfig (%v): pick another template", kinds)
	}
	if !desired.TemplateInSync(want.DeepCopy(), want) {
		t.Errorf("a template equal to the desired one is not in sync: %v", desired.TemplateDrift(want.DeepCopy(), want))
	}
}

func equalJSON(a, b any) bool {
	x, _ := json.Marshal(a)
	y, _ := json.Marshal(b)
	return string(x) == string(y)
}

// TestShapesTheLibraryDoesNotUse records what the list of edge cases looked for and the
// library at the locked commit does not have, so that a sync that brings one in fails here and
// gets its own test: tags with reference: true, tags without from, ImageStreamTag references to
// another stream, openshift.io/imported-from, and samples.operator.openshift.io annotations.
func TestShapesTheLibraryDoesNotUse(t *testing.T) {
	for _, archDir := range inventory.ArchDirs() {
		for name, s := range rawStreams(t, archDir) {
			for k := range s.Metadata.Annotations {
				if k == "openshift.io/imported-from" || strings.HasPrefix(k, "samples.operator.openshift.io/") {
					t.Errorf("%s/%s carries %s", archDir, name, k)
				}
			}
			for _, tag := range s.Spec.Tags {
				from, hasFrom := tag["from"].(map[string]any)
				switch {
				case tag["reference"] == true:
					t.Errorf("%s/%s:%v has reference: true", archDir, name, tag["name"])
				case !hasFrom:
					t.Errorf("%s/%s:%v has no from", archDir, name, tag["name"])
				case from["kind"] == "ImageStreamTag" && (from["namespace"] != nil || strings.Contains(from["name"].(string), ":")):
					t.Errorf("%s/%s:%v points at another stream: %v", archDir, name, tag["name"], from)
				}
			}
		}
	}
}
