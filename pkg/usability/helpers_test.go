package usability

import (
	"strings"

	imagev1 "github.com/openshift/api/image/v1"
	templatev1 "github.com/openshift/api/template/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/sets"

	"github.com/samples-operator-dev/cluster-samples-operator/pkg/names"
)

// template is a template of the given JSON objects; params are NAME=VALUE ("NAME=" has no
// default value).
func template(name string, params []string, objects ...string) *templatev1.Template {
	t := &templatev1.Template{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: names.SamplesNamespace}}
	for _, p := range params {
		n, v, _ := strings.Cut(p, "=")
		param := templatev1.Parameter{Name: n, Value: v}
		if v == "" {
			param.Generate = "expression"
			param.From = "[a-z]{8}"
		}
		t.Parameters = append(t.Parameters, param)
	}
	for _, o := range objects {
		t.Objects = append(t.Objects, runtime.RawExtension{Raw: []byte(o)})
	}
	return t
}

// tagState is one tag of a test stream: its image ("" when not imported), the tag it follows,
// its annotations.
type tagState struct {
	name, image, follows string
	annotations          map[string]string
}

func stream(name string, tags ...tagState) *imagev1.ImageStream {
	is := &imagev1.ImageStream{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: names.SamplesNamespace}}
	for _, t := range tags {
		ref := imagev1.TagReference{Name: t.name, Annotations: t.annotations,
			From: &corev1.ObjectReference{Kind: "DockerImage", Name: "registry.example.com/" + name + ":" + t.name}}
		if t.follows != "" {
			ref.From = &corev1.ObjectReference{Kind: "ImageStreamTag", Name: t.follows}
		}
		is.Spec.Tags = append(is.Spec.Tags, ref)
		if t.image != "" {
			is.Status.Tags = append(is.Status.Tags, imagev1.NamedTagEventList{Tag: t.name,
				Items: []imagev1.TagEvent{{Image: t.image}, {Image: "sha256:older"}}})
		}
	}
	return is
}

// cluster serves every kind the tests create, has ruby with tags 3.3-ubi9 and latest (following
// 3.3-ubi9) imported for amd64 and arm64, on amd64 nodes.
func cluster() Cluster {
	return Cluster{
		Served: map[schema.GroupVersion]sets.Set[string]{
			{Version: "v1"}:                                      sets.New("Service", "Secret", "ConfigMap"),
			{Group: "apps", Version: "v1"}:                       sets.New("Deployment"),
			{Group: "apps.openshift.io", Version: "v1"}:          sets.New("DeploymentConfig"),
			{Group: "build.openshift.io", Version: "v1"}:         sets.New("BuildConfig"),
			{Group: "route.openshift.io", Version: "v1"}:         sets.New("Route"),
			{Group: "image.openshift.io", Version: "v1"}:         sets.New("ImageStream"),
			{Group: "template.openshift.io", Version: "v1"}:      sets.New("Template"),
			{Group: "monitoring.coreos.com", Version: "v1"}:      sets.New("ServiceMonitor"),
			{Group: "authorization.openshift.io", Version: "v1"}: sets.New("RoleBinding"),
		},
		Unknown:           sets.New[string](),
		NodeArchitectures: []string{"amd64"},
		Streams: map[string]*imagev1.ImageStream{
			"ruby": stream("ruby", tagState{name: "3.3-ubi9", image: "sha256:ruby33"}, tagState{name: "latest", follows: "3.3-ubi9", image: "sha256:ruby33"}),
		},
		SkippedStreams:     sets.New[string](),
		SkippedTags:        sets.New[string](),
		ImageArchitectures: map[string][]string{"sha256:ruby33": {"amd64", "arm64"}},
	}
}

// with changes a copy of cluster().
func with(change func(c *Cluster)) Cluster {
	c := cluster()
	change(&c)
	return c
}

func codes(v Verdict) []string {
	var out []string
	for _, r := range v.Reasons {
		out = append(out, r.Code)
	}
	return out
}

// readAll reads the facts of each template.
func readAll(templates []*templatev1.Template) []Facts {
	out := make([]Facts, len(templates))
	for i, t := range templates {
		out[i] = Read(t)
	}
	return out
}
