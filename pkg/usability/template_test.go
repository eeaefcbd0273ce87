package usability

import (
	"reflect"
	"slices"
	"testing"

	imagev1 "github.com/openshift/api/image/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/sets"

	"github.com/samples-operator-dev/cluster-samples-operator/pkg/desired"
)

const (
	dc       = `{"apiVersion":"apps.openshift.io/v1","kind":"DeploymentConfig","metadata":{"name":"web"}}`
	bc       = `{"apiVersion":"build.openshift.io/v1","kind":"BuildConfig","metadata":{"name":"web"}}`
	route    = `{"apiVersion":"route.openshift.io/v1","kind":"Route","metadata":{"name":"web"}}`
	service  = `{"apiVersion":"v1","kind":"Service","metadata":{"name":"web"}}`
	legacyDC = `{"apiVersion":"v1","kind":"DeploymentConfig","metadata":{"name":"web"}}`
)

func notServed(gvk string) Reason {
	return Reason{Code: KindNotServed, Message: "creates " + gvk + ", which this cluster does not serve"}
}

// TestKindsTheClusterDoesNotServe: rule 1, a template that creates a kind discovery does not list
// is unusable; a legacy "v1" OpenShift kind is its group's; a group whose discovery failed, a
// kind a parameter without a default names, or discovery not seen give no verdict.
func TestKindsTheClusterDoesNotServe(t *testing.T) {
	withoutGroup := func(group string) Cluster {
		return with(func(c *Cluster) {
			for gv := range c.Served {
				if gv.Group == group {
					delete(c.Served, gv)
				}
			}
		})
	}
	withoutKind := func(gv schema.GroupVersion, kind string) Cluster {
		return with(func(c *Cluster) { c.Served[gv] = c.Served[gv].Clone().Delete(kind) })
	}
	noApps := withoutGroup("apps.openshift.io")
	for _, tc := range []struct {
		name    string
		t       string // one object
		params  []string
		cluster Cluster
		want    []Reason
	}{
		{"everything served", dc, nil, cluster(), nil},
		{"DeploymentConfig not served", dc, nil, noApps, []Reason{notServed("apps.openshift.io/v1 DeploymentConfig")}},
		{"BuildConfig not served", bc, nil, withoutGroup("build.openshift.io"), []Reason{notServed("build.openshift.io/v1 BuildConfig")}},
		{"Route not served", route, nil, withoutGroup("route.openshift.io"), []Reason{notServed("route.openshift.io/v1 Route")}},
		{"a core kind not served", service, nil, withoutKind(schema.GroupVersion{Version: "v1"}, "Service"), []Reason{notServed("v1 Service")}},
		{"the group served at another version only", `{"apiVersion":"apps/v1beta2","kind":"Deployment"}`, nil, cluster(), []Reason{notServed("apps/v1beta2 Deployment")}},
		{"legacy v1 DeploymentConfig is apps.openshift.io's", legacyDC, nil, noApps, []Reason{notServed("apps.openshift.io/v1 DeploymentConfig")}},
		{"legacy v1 DeploymentConfig served by apps.openshift.io", legacyDC, nil, cluster(), nil},
		{"legacy v1 BuildConfig", `{"apiVersion":"v1","kind":"BuildConfig"}`, nil, withoutGroup("build.openshift.io"), []Reason{notServed("build.openshift.io/v1 BuildConfig")}},
		{"legacy v1 Route", `{"apiVersion":"v1","kind":"Route"}`, nil, withoutGroup("route.openshift.io"), []Reason{notServed("route.openshift.io/v1 Route")}},
		{"legacy v1 ImageStream", `{"apiVersion":"v1","kind":"ImageStream"}`, nil, withoutGroup("image.openshift.io"), []Reason{notServed("image.openshift.io/v1 ImageStream")}},
		{"a core kind of v1 stays core", service, nil, withoutGroup("route.openshift.io"), nil},
		{"the group's discovery failed", dc, nil, with(func(c *Cluster) {
			delete(c.Served, schema.GroupVersion{Group: "apps.openshift.io", Version: "v1"})
			c.Unknown.Insert("apps.openshift.io")
		}), nil},
		{"the legacy kind's group's discovery failed", legacyDC, nil, with(func(c *Cluster) {
			delete(c.Served, schema.GroupVersion{Group: "apps.openshift.io", Version: "v1"})
			c.Unknown.Insert("apps.openshift.io")
		}), nil},
		{"another group's discovery failed", dc, nil, with(func(c *Cluster) {
			delete(c.Served, schema.GroupVersion{Group: "apps.openshift.io", Version: "v1"})
			c.Unknown.Insert("build.openshift.io")
		}), []Reason{notServed("apps.openshift.io/v1 DeploymentConfig")}},
		{"discovery not seen", dc, nil, with(func(c *Cluster) { c.Served = nil }), nil},
		{"apiVersion from a parameter with a default", `{"apiVersion":"${API}","kind":"DeploymentConfig"}`, []string{"API=apps.openshift.io/v1"}, noApps, []Reason{notServed("apps.openshift.io/v1 DeploymentConfig")}},
		{"kind from a parameter with a default", `{"apiVersion":"apps.openshift.io/v1","kind":"${{KIND}}"}`, []string{"KIND=DeploymentConfig"}, noApps, []Reason{notServed("apps.openshift.io/v1 DeploymentConfig")}},
		{"apiVersion from a parameter without a default", `{"apiVersion":"${API}","kind":"DeploymentConfig"}`, []string{"API="}, noApps, nil},
		{"kind from an undeclared parameter", `{"apiVersion":"apps.openshift.io/v1","kind":"${KIND}"}`, nil, noApps, nil},
		{"an apiVersion that does not parse", `{"apiVersion":"apps.openshift.io/v1/x","kind":"DeploymentConfig"}`, nil, noApps, nil},
		{"no apiVersion", `{"kind":"DeploymentConfig"}`, nil, noApps, nil},
		{"no kind", `{"apiVersion":"apps.openshift.io/v1"}`, nil, noApps, nil},
		{"not JSON", `{"apiVersion":`, nil, noApps, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			v := ForTemplate(template("tpl", tc.params, tc.t), tc.cluster)
			if !reflect.DeepEqual(v.Reasons, tc.want) {
				t.Errorf("reasons: %v\nwant     %v", v.Reasons, tc.want)
			}
			if v.Kind != KindTemplate || v.Name != "tpl" || v.Usable() != (len(tc.want) == 0) {
				t.Errorf("verdict %+v, usable %v", v, v.Usable())
			}
		})
	}
}

// TestEachKindNotServedOnce: a template that creates two DeploymentConfigs and a BuildConfig on a
// cluster without either names each kind once, sorted.
func TestEachKindNotServedOnce(t *testing.T) {
	c := with(func(c *Cluster) {
		c.Served = map[schema.GroupVersion]sets.Set[string]{{Version: "v1"}: sets.New("Service")}
	})
	v := ForTemplate(template("tpl", nil, route, dc, service, dc, bc), c)
	want := []Reason{notServed("apps.openshift.io/v1 DeploymentConfig"), notServed("build.openshift.io/v1 BuildConfig"), notServed("route.openshift.io/v1 Route")}
	if !reflect.DeepEqual(v.Reasons, want) {
		t.Errorf("reasons: %v\nwant     %v", v.Reasons, want)
	}
	if got := Annotation(v); got != want[0].Message+"; "+want[1].Message+"; "+want[2].Message {
		t.Errorf("annotation %q", got)
	}
}

// TestATypedObjectIsReadToo: a template object held as an Object instead of raw JSON is judged.
func TestATypedObjectIsReadToo(t *testing.T) {
	tpl := template("tpl", nil)
	tpl.Objects = []runtime.RawExtension{{Object: &imagev1.ImageStream{TypeMeta: metav1.TypeMeta{APIVersion: "image.openshift.io/v1", Kind: "ImageStream"}}}}
	c := with(func(c *Cluster) { delete(c.Served, schema.GroupVersion{Group: "image.openshift.io", Version: "v1"}) })
	if got := codes(ForTemplate(tpl, c)); !reflect.DeepEqual(got, []string{KindNotServed}) {
		t.Errorf("reasons %v, want KindNotServed", got)
	}
	// With both, the raw JSON is the object, as it is what the template is sent as.
	tpl.Objects[0].Raw = []byte(service)
	if got := codes(ForTemplate(tpl, c)); got != nil {
		t.Errorf("an object with raw JSON and a typed Object: reasons %v, want none (the raw Service)", got)
	}
}

func buildFrom(kind, namespace, name string) string {
	return `{"apiVersion":"build.openshift.io/v1","kind":"BuildConfig","spec":{"strategy":{"type":"Source","sourceStrategy":{"from":{"kind":"` +
		kind + `","namespace":"` + namespace + `","name":"` + name + `"}}}}}`
}

func image(code, ref, rest string) Reason {
	return Reason{Code: code, Message: "image openshift/" + ref + " " + rest}
}

// TestImageReferences: rule 2, a template whose objects name an ImageStreamTag of openshift
// (once the parameters take their defaults) that is missing, skipped, retired, not imported or
// unusable on the nodes is unusable; a reference a parameter without a default leaves unknown,
// into another namespace, or of another kind counts for nothing.
func TestImageReferences(t *testing.T) {
	rubyParams := []string{"NAMESPACE=openshift", "RUBY_VERSION=3.3-ubi9"}
	rubyBuild := buildFrom("ImageStreamTag", "${NAMESPACE}", "ruby:${RUBY_VERSION}")
	withRuby := func(tags ...tagState) Cluster {
		return with(func(c *Cluster) { c.Streams["ruby"] = stream("ruby", tags...) })
	}
	missing33 := []Reason{image(ImageMissing, "ruby:3.3-ubi9", "does not exist (image stream openshift/ruby has no tag 3.3-ubi9)")}
	for _, tc := range []struct {
		name    string
		object  string
		params  []string
		cluster Cluster
		want    []Reason
	}{
		{"resolves", rubyBuild, rubyParams, cluster(), nil},
		{"a tag that follows an imported tag", buildFrom("ImageStreamTag", "openshift", "ruby:latest"), nil,
			withRuby(tagState{name: "3.3-ubi9", image: "sha256:ruby33"}, tagState{name: "latest", follows: "3.3-ubi9"}), nil},
		{"no such tag", rubyBuild, []string{"NAMESPACE=openshift", "RUBY_VERSION=2.7"}, cluster(),
			[]Reason{image(ImageMissing, "ruby:2.7", "does not exist (image stream openshift/ruby has no tag 2.7)")}},
		{"a tag in status only is missing", rubyBuild, rubyParams, with(func(c *Cluster) {
			c.Streams["ruby"] = stream("ruby", tagState{name: "latest", image: "sha256:x"})
			c.Streams["ruby"].Status.Tags = append(c.Streams["ruby"].Status.Tags, imagev1.NamedTagEventList{Tag: "3.3-ubi9", Items: []imagev1.TagEvent{{Image: "sha256:x"}}})
		}), missing33},
		{"no such stream", rubyBuild, rubyParams, with(func(c *Cluster) { delete(c.Streams, "ruby") }),
			[]Reason{image(ImageMissing, "ruby:3.3-ubi9", "does not exist (no image stream openshift/ruby)")}},
		{"a nil stream", rubyBuild, rubyParams, with(func(c *Cluster) { c.Streams["ruby"] = nil }),
			[]Reason{image(ImageMissing, "ruby:3.3-ubi9", "does not exist (no image stream openshift/ruby)")}},
		{"streams not seen", rubyBuild, rubyParams, with(func(c *Cluster) { c.Streams = nil }), nil},
		{"${{X}}", buildFrom("ImageStreamTag", "${{NAMESPACE}}", "ruby:${{RUBY_VERSION}}"), []string{"NAMESPACE=openshift", "RUBY_VERSION=2.7"}, cluster(),
			[]Reason{image(ImageMissing, "ruby:2.7", "does not exist (image stream openshift/ruby has no tag 2.7)")}},
		{"a literal namespace", buildFrom("ImageStreamTag", "openshift", "ruby:2.7"), nil, cluster(),
			[]Reason{image(ImageMissing, "ruby:2.7", "does not exist (image stream openshift/ruby has no tag 2.7)")}},
		{"no tag is latest", buildFrom("ImageStreamTag", "openshift", "python"), nil, cluster(),
			[]Reason{image(ImageMissing, "python:latest", "does not exist (no image stream openshift/python)")}},
		{"tag from a parameter without a default", rubyBuild, []string{"NAMESPACE=openshift", "RUBY_VERSION="}, cluster(), nil},
		{"namespace from a parameter without a default", rubyBuild, []string{"NAMESPACE=", "RUBY_VERSION=2.7"}, cluster(), nil},
		{"an undeclared parameter", rubyBuild, []string{"NAMESPACE=openshift"}, cluster(), nil},
		{"another namespace", rubyBuild, []string{"NAMESPACE=myproject", "RUBY_VERSION=2.7"}, cluster(), nil},
		{"no namespace: the template's own", buildFrom("ImageStreamTag", "", "ruby:2.7"), nil, cluster(), nil},
		{"a DockerImage", buildFrom("DockerImage", "openshift", "ruby:2.7"), nil, cluster(), nil},
		{"an empty stream name", buildFrom("ImageStreamTag", "openshift", ":2.7"), nil, cluster(), nil},
		{"an empty tag", buildFrom("ImageStreamTag", "openshift", "ruby:"), nil, cluster(), nil},
		{"docker strategy", `{"apiVersion":"build.openshift.io/v1","kind":"BuildConfig","spec":{"strategy":{"dockerStrategy":{"from":{"kind":"ImageStreamTag","namespace":"openshift","name":"ruby:2.7"}}}}}`, nil, cluster(),
			[]Reason{image(ImageMissing, "ruby:2.7", "does not exist (image stream openshift/ruby has no tag 2.7)")}},
		{"custom strategy", `{"apiVersion":"build.openshift.io/v1","kind":"BuildConfig","spec":{"strategy":{"customStrategy":{"from":{"kind":"ImageStreamTag","namespace":"openshift","name":"ruby:2.7"}}}}}`, nil, cluster(),
			[]Reason{image(ImageMissing, "ruby:2.7", "does not exist (image stream openshift/ruby has no tag 2.7)")}},
		{"a docker strategy without from", `{"apiVersion":"build.openshift.io/v1","kind":"BuildConfig","spec":{"strategy":{"dockerStrategy":{}}}}`, nil, cluster(), nil},
		{"legacy v1 BuildConfig", `{"apiVersion":"v1","kind":"BuildConfig","spec":{"strategy":{"sourceStrategy":{"from":{"kind":"ImageStreamTag","namespace":"openshift","name":"ruby:2.7"}}}}}`, nil, cluster(),
			[]Reason{image(ImageMissing, "ruby:2.7", "does not exist (image stream openshift/ruby has no tag 2.7)")}},
		{"a strategy of another kind counts for nothing", `{"apiVersion":"apps/v1","kind":"Deployment","spec":{"strategy":{"sourceStrategy":{"from":{"kind":"ImageStreamTag","namespace":"openshift","name":"ruby:2.7"}}}}}`, nil, cluster(), nil},
		{"DeploymentConfig trigger", `{"apiVersion":"apps.openshift.io/v1","kind":"DeploymentConfig","spec":{"replicas":"${{REPLICAS}}","triggers":[{"type":"ConfigChange"},{"type":"ImageChange","imageChangeParams":{"automatic":true,"from":{"kind":"ImageStreamTag","namespace":"${NAMESPACE}","name":"postgresql:${V}"}}}]}}`,
			[]string{"NAMESPACE=openshift", "V=16-el9", "REPLICAS=1"}, cluster(),
			[]Reason{image(ImageMissing, "postgresql:16-el9", "does not exist (no image stream openshift/postgresql)")}},
		{"trigger annotation", `{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"annotations":{"image.openshift.io/triggers":"[{\"from\":{\"kind\":\"ImageStreamTag\",\"name\":\"${NAME}:latest\"},\"fieldPath\":\"spec.template.spec.containers[0].image\"},{\"from\":{\"kind\":\"ImageStreamTag\",\"name\":\"mysql:${MYSQL_VERSION}\",\"namespace\":\"${NAMESPACE}\"},\"fieldPath\":\"spec.template.spec.containers[1].image\"}]"}}}`,
			[]string{"NAME=app", "MYSQL_VERSION=8.0-el9", "NAMESPACE=openshift"}, cluster(),
			[]Reason{image(ImageMissing, "mysql:8.0-el9", "does not exist (no image stream openshift/mysql)")}},
		{"trigger annotation with a parameter without a default", `{"apiVersion":"v1","kind":"Service","metadata":{"annotations":{"image.openshift.io/triggers":"[{\"from\":{\"kind\":\"ImageStreamTag\",\"name\":\"mysql:${V}\",\"namespace\":\"openshift\"},\"fieldPath\":\"a\"},{\"from\":{\"kind\":\"ImageStreamTag\",\"name\":\"ruby:2.7\",\"namespace\":\"openshift\"},\"fieldPath\":\"b\"}]"}}}`,
			[]string{"V="}, cluster(),
			[]Reason{image(ImageMissing, "ruby:2.7", "does not exist (image stream openshift/ruby has no tag 2.7)")}},
		{"trigger annotation that is not JSON", `{"apiVersion":"v1","kind":"Service","metadata":{"annotations":{"image.openshift.io/triggers":"[{\"from\":"}}}`, nil, cluster(), nil},
		{"skipped stream, absent", rubyBuild, rubyParams, with(func(c *Cluster) { delete(c.Streams, "ruby"); c.SkippedStreams.Insert("ruby") }),
			[]Reason{image(ImageSkipped, "ruby:3.3-ubi9", "is skipped by the Config")}},
		{"skipped stream, present", rubyBuild, rubyParams, with(func(c *Cluster) { c.SkippedStreams.Insert("ruby") }),
			[]Reason{image(ImageSkipped, "ruby:3.3-ubi9", "is skipped by the Config")}},
		{"skipped tag", rubyBuild, rubyParams, with(func(c *Cluster) { c.SkippedTags.Insert("ruby:3.3-ubi9") }),
			[]Reason{image(ImageSkipped, "ruby:3.3-ubi9", "is skipped by the Config")}},
		{"another tag skipped", rubyBuild, rubyParams, with(func(c *Cluster) { c.SkippedTags.Insert("ruby:latest"); c.SkippedStreams.Insert("ruby33") }), nil},
		{"retired tag", rubyBuild, rubyParams, withRuby(tagState{name: "3.3-ubi9", image: "sha256:ruby33", annotations: map[string]string{desired.RetiredAnnotation: "4.22"}}),
			[]Reason{image(ImageRetired, "ruby:3.3-ubi9", "was retired in 4.22")}},
		{"retired tag without a version", rubyBuild, rubyParams, withRuby(tagState{name: "3.3-ubi9", image: "sha256:ruby33", annotations: map[string]string{desired.RetiredAnnotation: ""}}),
			[]Reason{image(ImageRetired, "ruby:3.3-ubi9", "was retired")}},
		{"retired stream", rubyBuild, rubyParams, with(func(c *Cluster) { c.Streams["ruby"].Annotations = map[string]string{desired.RetiredAnnotation: "4.21"} }),
			[]Reason{image(ImageRetired, "ruby:3.3-ubi9", "was retired in 4.21 with its image stream")}},
		{"retired stream without a version", rubyBuild, rubyParams, with(func(c *Cluster) { c.Streams["ruby"].Annotations = map[string]string{desired.RetiredAnnotation: ""} }),
			[]Reason{image(ImageRetired, "ruby:3.3-ubi9", "was retired with its image stream")}},
		{"another tag retired", rubyBuild, rubyParams, withRuby(tagState{name: "3.3-ubi9", image: "sha256:ruby33"}, tagState{name: "2.7", image: "sha256:ruby27", annotations: map[string]string{desired.RetiredAnnotation: "4.22"}}), nil},
		{"not imported yet: pending", rubyBuild, rubyParams, withRuby(tagState{name: "3.3-ubi9"}), nil},
		{"an item without image and no failure: pending", rubyBuild, rubyParams, with(func(c *Cluster) {
			c.Streams["ruby"] = stream("ruby", tagState{name: "3.3-ubi9"})
			c.Streams["ruby"].Status.Tags = []imagev1.NamedTagEventList{{Tag: "3.3-ubi9", Items: []imagev1.TagEvent{{DockerImageReference: "x"}}}}
		}), nil},
		{"an import that succeeded is no failure", rubyBuild, rubyParams, with(func(c *Cluster) {
			c.Streams["ruby"] = stream("ruby", tagState{name: "3.3-ubi9"})
			c.Streams["ruby"].Status.Tags = []imagev1.NamedTagEventList{{Tag: "3.3-ubi9", Conditions: []imagev1.TagEventCondition{{Type: imagev1.ImportSuccess, Status: "True"}}}}
		}), nil},
		{"the import of the tag followed failed", buildFrom("ImageStreamTag", "openshift", "ruby:latest"), nil, with(func(c *Cluster) {
			c.Streams["ruby"] = stream("ruby", tagState{name: "3.3-ubi9"}, tagState{name: "latest", follows: "3.3-ubi9"})
			c.Streams["ruby"].Status.Tags = []imagev1.NamedTagEventList{{Tag: "3.3-ubi9", Conditions: []imagev1.TagEventCondition{{Type: imagev1.ImportSuccess, Status: "False"}}}}
		}), []Reason{image(ImageNotImported, "ruby:latest", "has no image (its import failed)")}},
		{"a stream the operator installs, not created yet: pending", rubyBuild, rubyParams, with(func(c *Cluster) {
			delete(c.Streams, "ruby")
			c.Installing, c.InstallingStreams = sets.New("ruby:3.3-ubi9"), sets.New("ruby")
		}), nil},
		{"a tag the operator installs, not written yet: pending", rubyBuild, rubyParams, with(func(c *Cluster) {
			c.Streams["ruby"] = stream("ruby", tagState{name: "latest", image: "sha256:x"})
			c.Installing, c.InstallingStreams = sets.New("ruby:3.3-ubi9"), sets.New("ruby")
		}), nil},
		{"a tag the operator does not install, of a stream it installs, not created yet", rubyBuild, rubyParams, with(func(c *Cluster) {
			delete(c.Streams, "ruby")
			c.Installing, c.InstallingStreams = sets.New("ruby:latest", "python:3.3-ubi9"), sets.New("ruby", "python")
		}), missing33},
		{"a tag the operator does not install, of a stream whose every tag the Config skips, not created yet", rubyBuild, rubyParams, with(func(c *Cluster) {
			delete(c.Streams, "ruby")
			c.SkippedTags = sets.New("ruby:latest")
			c.Installing, c.InstallingStreams = sets.New("python:3.3-ubi9"), sets.New("ruby", "python")
		}), missing33},
		{"the same, once the stream is created without its tags", rubyBuild, rubyParams, with(func(c *Cluster) {
			c.Streams["ruby"] = stream("ruby")
			c.SkippedTags = sets.New("ruby:latest")
			c.Installing, c.InstallingStreams = sets.New("python:3.3-ubi9"), sets.New("ruby", "python")
		}), missing33},
		{"a stream the operator does not install, not there", rubyBuild, rubyParams, with(func(c *Cluster) {
			delete(c.Streams, "ruby")
			c.Installing, c.InstallingStreams = sets.New("rubyx:3.3-ubi9", "python:3.3-ubi9"), sets.New("rubyx", "python")
		}), []Reason{image(ImageMissing, "ruby:3.3-ubi9", "does not exist (no image stream openshift/ruby)")}},
		{"not imported: a status with a failed import's condition only", rubyBuild, rubyParams, with(func(c *Cluster) {
			c.Streams["ruby"] = stream("ruby", tagState{name: "3.3-ubi9"})
			c.Streams["ruby"].Status.Tags = []imagev1.NamedTagEventList{{Tag: "3.3-ubi9", Conditions: []imagev1.TagEventCondition{{Type: imagev1.ImportSuccess, Status: "False", Reason: "NotFound"}}}}
		}), []Reason{image(ImageNotImported, "ruby:3.3-ubi9", "has no image (its import failed)")}},
		{"another tag imported", rubyBuild, rubyParams, with(func(c *Cluster) {
			c.Streams["ruby"] = stream("ruby", tagState{name: "3.3-ubi9"}, tagState{name: "latest", image: "sha256:ruby33"})
			c.Streams["ruby"].Status.Tags = append(c.Streams["ruby"].Status.Tags, imagev1.NamedTagEventList{Tag: "3.3-ubi9", Conditions: []imagev1.TagEventCondition{{Type: imagev1.ImportSuccess, Status: "False"}}})
		}), []Reason{image(ImageNotImported, "ruby:3.3-ubi9", "has no image (its import failed)")}},
		{"no image for the nodes", rubyBuild, rubyParams, with(func(c *Cluster) { c.NodeArchitectures = []string{"s390x"} }),
			[]Reason{image(ImageUnusable, "ruby:3.3-ubi9", "is unusable: no image for node architecture s390x (image for amd64, arm64)")}},
		{"an image for some of the nodes", rubyBuild, rubyParams, with(func(c *Cluster) { c.NodeArchitectures = []string{"amd64", "s390x"} }), nil},
		// A skipped tag is absent, a retired tag may be not imported: the first cause is named.
		{"skipped before missing", buildFrom("ImageStreamTag", "openshift", "ruby:2.7"), nil, with(func(c *Cluster) { c.SkippedTags.Insert("ruby:2.7") }),
			[]Reason{image(ImageSkipped, "ruby:2.7", "is skipped by the Config")}},
		{"retired before not imported", rubyBuild, rubyParams, withRuby(tagState{name: "3.3-ubi9", annotations: map[string]string{desired.RetiredAnnotation: "4.22"}}),
			[]Reason{image(ImageRetired, "ruby:3.3-ubi9", "was retired in 4.22")}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			v := ForTemplate(template("tpl", tc.params, tc.object), tc.cluster)
			if !reflect.DeepEqual(v.Reasons, tc.want) {
				t.Errorf("reasons: %v\nwant     %v", v.Reasons, tc.want)
			}
		})
	}
}

// TestARetiredAndUnusableTemplateShowsBoth: retirement is marked elsewhere and does not hide the
// usability verdict: a retired template that creates a kind not served and names a retired tag
// has both reasons, sorted by code.
func TestARetiredAndUnusableTemplateShowsBoth(t *testing.T) {
	tpl := template("rails", []string{"NAMESPACE=openshift"}, buildFrom("ImageStreamTag", "${NAMESPACE}", "ruby:2.7"), dc)
	tpl.Annotations = map[string]string{desired.RetiredAnnotation: "4.22"}
	c := with(func(c *Cluster) {
		delete(c.Served, schema.GroupVersion{Group: "apps.openshift.io", Version: "v1"})
		c.Streams["ruby"].Spec.Tags = append(c.Streams["ruby"].Spec.Tags, imagev1.TagReference{Name: "2.7", Annotations: map[string]string{desired.RetiredAnnotation: "4.22"}})
	})
	want := []Reason{image(ImageRetired, "ruby:2.7", "was retired in 4.22"), notServed("apps.openshift.io/v1 DeploymentConfig")}
	v := ForTemplate(tpl, c)
	if !reflect.DeepEqual(v.Reasons, want) {
		t.Errorf("reasons: %v\nwant     %v", v.Reasons, want)
	}
	if got := Annotation(v); got != "image openshift/ruby:2.7 was retired in 4.22; creates apps.openshift.io/v1 DeploymentConfig, which this cluster does not serve" {
		t.Errorf("annotation %q", got)
	}
}

// TestSameImageNamedTwiceIsOneReason: two objects naming the same missing tag give one reason;
// two missing tags give two, sorted.
func TestSameImageNamedTwiceIsOneReason(t *testing.T) {
	v := ForTemplate(template("tpl", nil, buildFrom("ImageStreamTag", "openshift", "ruby:2.7"), buildFrom("ImageStreamTag", "openshift", "perl:5"),
		buildFrom("ImageStreamTag", "openshift", "ruby:2.7")), cluster())
	want := []Reason{image(ImageMissing, "perl:5", "does not exist (no image stream openshift/perl)"),
		image(ImageMissing, "ruby:2.7", "does not exist (image stream openshift/ruby has no tag 2.7)")}
	if !reflect.DeepEqual(v.Reasons, want) {
		t.Errorf("reasons: %v\nwant     %v", v.Reasons, want)
	}
}

// TestGroupVersionsAreThoseTheVerdictsRead: each group/version once, sorted; a legacy "v1"
// OpenShift kind counts as its group's; an apiVersion or kind a parameter without a default
// leaves open, or that does not parse, asks for none.
func TestGroupVersionsAreThoseTheVerdictsRead(t *testing.T) {
	a := Read(template("a", []string{"API=route.openshift.io/v1", "OPEN="},
		dc, legacyDC, service,
		`{"apiVersion":"${API}","kind":"Route"}`,
		`{"apiVersion":"${OPEN}","kind":"Secret"}`,
		`{"apiVersion":"v1","kind":"${OPEN}"}`,
		`{"apiVersion":"a/b/c","kind":"Thing"}`,
		`{"apiVersion":"v1"}`))
	b := Read(template("b", nil, bc, service))
	got := GroupVersions([]Facts{a, b})
	want := []schema.GroupVersion{
		{Group: "apps.openshift.io", Version: "v1"},
		{Group: "build.openshift.io", Version: "v1"},
		{Group: "route.openshift.io", Version: "v1"},
		{Version: "v1"},
	}
	if !slices.Equal(got, want) {
		t.Errorf("GroupVersions = %v, want %v", got, want)
	}
}

// TestATagRewrittenSinceItsImportFailedIsPending: issue 56 item 11. The operator pointed a tag
// whose import failed at another reference; until the image API has imported it, the tag is
// waiting (pending, no verdict), by imports.FailedTagsOfSpec's rule. A failure of the new
// reference, or of the tag it follows, is a failure again.
func TestATagRewrittenSinceItsImportFailedIsPending(t *testing.T) {
	failedAt := func(gen int64, specGen int64) Cluster {
		return with(func(c *Cluster) {
			is := stream("ruby", tagState{name: "3.3-ubi9"}, tagState{name: "latest", follows: "3.3-ubi9"})
			is.Spec.Tags[0].Generation = &specGen
			is.Status.Tags = []imagev1.NamedTagEventList{{Tag: "3.3-ubi9", Conditions: []imagev1.TagEventCondition{{
				Type: imagev1.ImportSuccess, Status: "False", Message: "manifest unknown", Generation: gen}}}}
			c.Streams["ruby"] = is
		})
	}
	for _, ref := range []string{"ruby:3.3-ubi9", "ruby:latest"} {
		tpl := template("tpl", nil, buildFrom("ImageStreamTag", "openshift", ref))
		if v := ForTemplate(tpl, failedAt(2, 3)); len(v.Reasons) > 0 {
			t.Errorf("%s rewritten since its import failed: %v, want no verdict", ref, v.Reasons)
		}
		want := []Reason{image(ImageNotImported, ref, "has no image (its import failed)")}
		if v := ForTemplate(tpl, failedAt(3, 3)); !reflect.DeepEqual(v.Reasons, want) {
			t.Errorf("%s failed again: %v, want %v", ref, v.Reasons, want)
		}
	}
}
