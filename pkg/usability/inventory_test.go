package usability

import (
	"encoding/json"
	"maps"
	"slices"
	"strings"
	"testing"

	imagev1 "github.com/openshift/api/image/v1"
	templatev1 "github.com/openshift/api/template/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/sets"

	"github.com/samples-operator-dev/cluster-samples-operator/pkg/inventory"
)

// x86Inventory is the x86_64 OCP inventory's templates and streams, every spec tag of the
// streams imported (an image named after it).
func x86Inventory(t *testing.T) ([]*templatev1.Template, map[string]*imagev1.ImageStream) {
	t.Helper()
	inv, err := inventory.Embedded(inventory.ArchDirOCPX86_64)
	if err != nil {
		t.Fatal(err)
	}
	var templates []*templatev1.Template
	for _, name := range inv.TemplateNames() {
		tpl, _ := inv.Template(name)
		templates = append(templates, tpl)
	}
	streams := map[string]*imagev1.ImageStream{}
	for _, name := range inv.ImageStreamNames() {
		is, _ := inv.ImageStream(name)
		for _, tag := range is.Spec.Tags {
			is.Status.Tags = append(is.Status.Tags, imagev1.NamedTagEventList{Tag: tag.Name, Items: []imagev1.TagEvent{{Image: "sha256:" + name + "-" + tag.Name}}})
		}
		streams[name] = is
	}
	return templates, streams
}

// TestTheInventoryWithoutDeploymentConfigsAndBuilds: on a cluster that serves every kind the
// x86_64 templates create but apps.openshift.io and build.openshift.io, exactly the templates
// that create a DeploymentConfig or a BuildConfig are unusable, each for those kinds only.
func TestTheInventoryWithoutDeploymentConfigsAndBuilds(t *testing.T) {
	templates, _ := x86Inventory(t)
	served := map[schema.GroupVersion]sets.Set[string]{}
	creates := map[string]sets.Set[string]{} // template -> kinds, read here on their own
	for _, tpl := range templates {
		creates[tpl.Name] = sets.New[string]()
		for _, o := range tpl.Objects {
			var h struct{ APIVersion, Kind string }
			if err := json.Unmarshal(o.Raw, &h); err != nil {
				t.Fatal(err)
			}
			gv, err := schema.ParseGroupVersion(h.APIVersion)
			if err != nil {
				t.Fatal(err)
			}
			if served[gv] == nil {
				served[gv] = sets.New[string]()
			}
			served[gv].Insert(h.Kind)
			creates[tpl.Name].Insert(h.Kind)
		}
	}
	delete(served, schema.GroupVersion{Group: "apps.openshift.io", Version: "v1"})
	delete(served, schema.GroupVersion{Group: "build.openshift.io", Version: "v1"})
	c := Cluster{Served: served}

	var dcs, bcs, unusable int
	for _, tpl := range templates {
		var want []Reason
		if creates[tpl.Name].Has("DeploymentConfig") {
			dcs++
			want = append(want, notServed("apps.openshift.io/v1 DeploymentConfig"))
		}
		if creates[tpl.Name].Has("BuildConfig") {
			bcs++
			want = append(want, notServed("build.openshift.io/v1 BuildConfig"))
		}
		v := ForTemplate(tpl, c)
		if !slices.Equal(v.Reasons, want) {
			t.Errorf("%s: %v, want %v", tpl.Name, v.Reasons, want)
		}
		if !v.Usable() {
			unusable++
		}
	}
	t.Logf("x86_64: %d templates, %d create a DeploymentConfig, %d a BuildConfig, %d either: unusable", len(templates), dcs, bcs, unusable)
	if dcs == 0 || bcs == 0 || unusable == len(templates) || unusable != len(All(readAll(templates), c)) {
		t.Errorf("%d of %d unusable (All: %d): the test no longer tells anything", unusable, len(templates), len(All(readAll(templates), c)))
	}
}

// inventoryDefaultsMissing are the x86_64 templates whose parameters' default values name a tag
// the inventory's stream does not have (as openshift/library ships them): they cannot be
// instantiated with their defaults on any cluster.
var inventoryDefaultsMissing = map[string]string{
	"dancer-mysql-example":         "perl:5.30-ubi8",
	"dancer-mysql-persistent":      "perl:5.30-ubi8",
	"nginx-example":                "nginx:1.20-ubi8",
	"nodejs-postgresql-example":    "nodejs:20-ubi8",
	"nodejs-postgresql-persistent": "nodejs:20-ubi8",
	"react-web-app-example":        "nodejs:16-ubi8",
}

// TestTheInventoryResolvesItsOwnImages: with every tag of the inventory's streams imported for
// the nodes, every x86_64 template is usable but those whose defaults name a tag the inventory
// lacks. Without the streams, those that name one are unusable.
func TestTheInventoryResolvesItsOwnImages(t *testing.T) {
	templates, streams := x86Inventory(t)
	images := map[string][]string{}
	for _, is := range streams {
		for _, tag := range is.Status.Tags {
			images[tag.Items[0].Image] = []string{"amd64"}
		}
	}
	c := Cluster{Streams: streams, NodeArchitectures: []string{"amd64"}, ImageArchitectures: images}
	got := map[string]string{}
	for _, v := range All(readAll(templates), c) {
		got[v.Name] = Annotation(v)
	}
	want := map[string]string{}
	for name, ref := range inventoryDefaultsMissing {
		stream, tag, _ := strings.Cut(ref, ":")
		want[name] = "image openshift/" + ref + " does not exist (image stream openshift/" + stream + " has no tag " + tag + ")"
	}
	if !maps.Equal(got, want) {
		t.Errorf("with the inventory's streams, unusable:\n%v\nwant (inventoryDefaultsMissing)\n%v", got, want)
	}

	c.Streams = map[string]*imagev1.ImageStream{}
	naming := 0
	for _, v := range All(readAll(templates), c) {
		for _, r := range v.Reasons {
			if r.Code != ImageMissing {
				t.Errorf("%s: %v", v.Name, r)
			}
		}
		naming++
	}
	t.Logf("x86_64: %d of %d templates name an image stream tag of openshift (%d streams)", naming, len(templates), len(streams))
	if naming == 0 {
		t.Error("no template names an image of openshift: the references are not read")
	}
}
