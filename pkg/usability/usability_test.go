package usability

import (
	"reflect"
	"testing"

	templatev1 "github.com/openshift/api/template/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// TestAllKeepsTheVerdictsWithSomethingToSay: one verdict per template and per spec tag of every
// stream, kept when it has a reason or missing architectures, sorted by kind then name.
func TestAllKeepsTheVerdictsWithSomethingToSay(t *testing.T) {
	c := with(func(c *Cluster) {
		delete(c.Served, schema.GroupVersion{Group: "apps.openshift.io", Version: "v1"})
		c.NodeArchitectures = []string{"amd64", "s390x"}
		c.Streams["perl"] = stream("perl", tagState{name: "5.40", image: "sha256:perl"}, tagState{name: "5.38", image: "sha256:perl538"}, tagState{name: "5.36"})
		c.Streams["nil"] = nil
		c.ImageArchitectures["sha256:perl"] = []string{"ppc64le"}
		c.ImageArchitectures["sha256:perl538"] = []string{"amd64", "s390x"}
	})
	templates := []*templatev1.Template{
		template("rails", nil, buildFrom("ImageStreamTag", "openshift", "ruby:latest")),
		template("dancer", nil, dc),
		template("cakephp", nil, service, buildFrom("ImageStreamTag", "openshift", "php:8.3")),
	}
	got := All(readAll(templates), c)
	want := []Verdict{
		{Kind: KindImageStreamTag, Name: "perl:5.40", Reasons: []Reason{{NoImageForNodes, "no image for node architectures amd64, s390x (image for ppc64le)"}}},
		{Kind: KindImageStreamTag, Name: "ruby:3.3-ubi9", MissingArchitectures: []string{"s390x"}},
		{Kind: KindImageStreamTag, Name: "ruby:latest", MissingArchitectures: []string{"s390x"}},
		{Kind: KindTemplate, Name: "cakephp", Reasons: []Reason{image(ImageMissing, "php:8.3", "does not exist (no image stream openshift/php)")}},
		{Kind: KindTemplate, Name: "dancer", Reasons: []Reason{notServed("apps.openshift.io/v1 DeploymentConfig")}},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("All:\n%+v\nwant\n%+v", got, want)
	}
	// The streams are a map, visited in another order at each call: of enough calls, some visit
	// the nil stream before the others, which it must not hide.
	for range 20 {
		if again := All(readAll(templates), c); !reflect.DeepEqual(again, got) {
			t.Fatalf("another call differs:\n%+v", again)
		}
	}
	if got := All(nil, cluster()); got != nil {
		t.Errorf("All on a cluster where everything works: %+v", got)
	}
}

// TestVerdictAnswers: Usable, Partial and Annotation.
func TestVerdictAnswers(t *testing.T) {
	for _, tc := range []struct {
		v               Verdict
		usable, partial bool
		annotation      string
	}{
		{Verdict{}, true, false, ""},
		{Verdict{MissingArchitectures: []string{"s390x"}}, true, true, ""},
		{Verdict{Reasons: []Reason{{ImageMissing, "a"}}}, false, false, "a"},
		{Verdict{Reasons: []Reason{{ImageMissing, "a"}, {KindNotServed, "b"}, {KindNotServed, "c"}}}, false, false, "a; b; c"},
	} {
		if tc.v.Usable() != tc.usable || tc.v.Partial() != tc.partial || Annotation(tc.v) != tc.annotation {
			t.Errorf("%+v: usable %v, partial %v, annotation %q", tc.v, tc.v.Usable(), tc.v.Partial(), Annotation(tc.v))
		}
	}
}

// TestReasonsAreSortedAndDistinct: by code, then message; repeats once.
func TestReasonsAreSortedAndDistinct(t *testing.T) {
	got := sortReasons([]Reason{{"B", "2"}, {"A", "9"}, {"B", "1"}, {"A", "9"}, {"B", "2"}})
	if want := []Reason{{"A", "9"}, {"B", "1"}, {"B", "2"}}; !reflect.DeepEqual(got, want) {
		t.Errorf("sortReasons = %v, want %v", got, want)
	}
}
