package usability

import (
	"reflect"
	"testing"

	imagev1 "github.com/openshift/api/image/v1"

	"github.com/samples-operator-dev/cluster-samples-operator/pkg/desired"
)

// TestImageStreamTagArchitectures: rule 3, a tag whose image is for none of the nodes'
// architectures is unusable, one that lacks some of them is partial, and unknown architectures
// give no verdict.
func TestImageStreamTagArchitectures(t *testing.T) {
	ruby := func(tags ...tagState) *imagev1.ImageStream { return stream("ruby", tags...) }
	imported := ruby(tagState{name: "3.3-ubi9", image: "sha256:ruby33"})
	for _, tc := range []struct {
		name        string
		is          *imagev1.ImageStream
		tag         string
		nodes       []string
		images      map[string][]string
		want        []Reason
		wantMissing []string
	}{
		{"an image for the node", imported, "3.3-ubi9", []string{"amd64"}, map[string][]string{"sha256:ruby33": {"amd64"}}, nil, nil},
		{"an image for every node", imported, "3.3-ubi9", []string{"amd64", "arm64"}, map[string][]string{"sha256:ruby33": {"arm64", "amd64", "s390x"}}, nil, nil},
		{"no image for the node", imported, "3.3-ubi9", []string{"s390x"}, map[string][]string{"sha256:ruby33": {"arm64", "amd64"}},
			[]Reason{{NoImageForNodes, "no image for node architecture s390x (image for amd64, arm64)"}}, nil},
		{"no image for any node", imported, "3.3-ubi9", []string{"s390x", "ppc64le"}, map[string][]string{"sha256:ruby33": {"amd64", "amd64"}},
			[]Reason{{NoImageForNodes, "no image for node architectures ppc64le, s390x (image for amd64)"}}, nil},
		{"an image for some nodes: partial", imported, "3.3-ubi9", []string{"s390x", "amd64", "ppc64le"}, map[string][]string{"sha256:ruby33": {"amd64"}}, nil, []string{"ppc64le", "s390x"}},
		{"a variant covers its architecture", imported, "3.3-ubi9", []string{"arm64"}, map[string][]string{"sha256:ruby33": {"arm64/v8"}}, nil, nil},
		{"an architecture named like another's prefix does not cover it", imported, "3.3-ubi9", []string{"arm"}, map[string][]string{"sha256:ruby33": {"arm64"}},
			[]Reason{{NoImageForNodes, "no image for node architecture arm (image for arm64)"}}, nil},
		{"the image's architectures unknown", imported, "3.3-ubi9", []string{"s390x"}, map[string][]string{"sha256:other": {"amd64"}}, nil, nil},
		{"the image's architectures empty", imported, "3.3-ubi9", []string{"s390x"}, map[string][]string{"sha256:ruby33": {""}}, nil, nil},
		{"no node architecture known", imported, "3.3-ubi9", nil, map[string][]string{"sha256:ruby33": {"amd64"}}, nil, nil},
		{"a node architecture empty", imported, "3.3-ubi9", []string{""}, map[string][]string{"sha256:ruby33": {"amd64"}}, nil, nil},
		{"not imported", ruby(tagState{name: "3.3-ubi9"}), "3.3-ubi9", []string{"s390x"}, map[string][]string{"": {"amd64"}}, nil, nil},
		{"the newest image counts", func() *imagev1.ImageStream {
			is := imported.DeepCopy()
			is.Status.Tags[0].Items = []imagev1.TagEvent{{Image: "sha256:new"}, {Image: "sha256:ruby33"}}
			return is
		}(), "3.3-ubi9", []string{"s390x"}, map[string][]string{"sha256:ruby33": {"s390x"}, "sha256:new": {"amd64"}},
			[]Reason{{NoImageForNodes, "no image for node architecture s390x (image for amd64)"}}, nil},
		{"a followed tag's verdict", ruby(tagState{name: "3.3-ubi9", image: "sha256:ruby33"}, tagState{name: "latest", follows: "3.3-ubi9", image: "sha256:stale"}), "latest",
			[]string{"s390x"}, map[string][]string{"sha256:ruby33": {"amd64"}, "sha256:stale": {"s390x"}},
			[]Reason{{NoImageForNodes, "no image for node architecture s390x (image for amd64)"}}, nil},
		{"a followed tag named with its stream, through a chain", ruby(tagState{name: "3.3-ubi9", image: "sha256:ruby33"}, tagState{name: "3", follows: "ruby:3.3-ubi9"}, tagState{name: "latest", follows: "3"}), "latest",
			[]string{"s390x", "amd64"}, map[string][]string{"sha256:ruby33": {"amd64"}}, nil, []string{"s390x"}},
		{"a followed tag without an image: the tag's own", ruby(tagState{name: "3.3-ubi9"}, tagState{name: "latest", follows: "3.3-ubi9", image: "sha256:own"}), "latest",
			[]string{"s390x"}, map[string][]string{"sha256:own": {"amd64"}},
			[]Reason{{NoImageForNodes, "no image for node architecture s390x (image for amd64)"}}, nil},
		{"a tag of another stream is not followed", ruby(tagState{name: "3.12", image: "sha256:python"}, tagState{name: "latest", follows: "python:3.12", image: "sha256:own"}), "latest",
			[]string{"amd64"}, map[string][]string{"sha256:own": {"amd64"}, "sha256:python": {"s390x"}}, nil, nil},
		// Retired and skipped are the templates' concern: a retired tag is judged by its image.
		{"retired", ruby(tagState{name: "2.7", image: "sha256:ruby27", annotations: map[string]string{desired.RetiredAnnotation: "4.22"}}), "2.7",
			[]string{"amd64"}, map[string][]string{"sha256:ruby27": {"amd64"}}, nil, nil},
		{"retired and no image for the node", ruby(tagState{name: "2.7", image: "sha256:ruby27", annotations: map[string]string{desired.RetiredAnnotation: "4.22"}}), "2.7",
			[]string{"s390x"}, map[string][]string{"sha256:ruby27": {"amd64"}}, []Reason{{NoImageForNodes, "no image for node architecture s390x (image for amd64)"}}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := with(func(c *Cluster) { c.NodeArchitectures, c.ImageArchitectures = tc.nodes, tc.images })
			v := ForImageStreamTag(tc.is, tc.tag, c)
			if !reflect.DeepEqual(v.Reasons, tc.want) || !reflect.DeepEqual(v.MissingArchitectures, tc.wantMissing) {
				t.Errorf("reasons %v, missing %v\nwant    %v, missing %v", v.Reasons, v.MissingArchitectures, tc.want, tc.wantMissing)
			}
			if v.Kind != KindImageStreamTag || v.Name != "ruby:"+tc.tag {
				t.Errorf("verdict on %s %s", v.Kind, v.Name)
			}
			if v.Usable() != (tc.want == nil) || v.Partial() != (tc.wantMissing != nil) {
				t.Errorf("usable %v, partial %v", v.Usable(), v.Partial())
			}
		})
	}
}

// TestTheCallersSlicesStayAsGiven: sorting the architectures does not reorder the Cluster's.
func TestTheCallersSlicesStayAsGiven(t *testing.T) {
	nodes, images := []string{"s390x", "amd64"}, []string{"arm64", "amd64"}
	c := with(func(c *Cluster) {
		c.NodeArchitectures, c.ImageArchitectures = nodes, map[string][]string{"sha256:ruby33": images}
	})
	ForImageStreamTag(c.Streams["ruby"], "3.3-ubi9", c)
	if !reflect.DeepEqual(nodes, []string{"s390x", "amd64"}) || !reflect.DeepEqual(images, []string{"arm64", "amd64"}) {
		t.Errorf("the cluster's slices changed: %v %v", nodes, images)
	}
}

// TestAnArchitectureMarkStandsUntilTheArchitecturesAreRead (issue 56, item 10): after a restart
// the images' architectures are read again, and those reads may fail (openshift-apiserver away);
// the nodes may not be listed yet. Until both are known, a tag keeps the NoImageForNodes verdict
// its mark carries, and no other reason a mark may hold; once they are known, the fresh verdict
// replaces it, whatever the mark says.
func TestAnArchitectureMarkStandsUntilTheArchitecturesAreRead(t *testing.T) {
	const marked = "no image for node architecture s390x (image for amd64)"
	ruby := func(image, mark string) *imagev1.ImageStream {
		var annotations map[string]string
		if mark != "" {
			annotations = map[string]string{desired.UnusableAnnotation: mark}
		}
		return stream("ruby", tagState{name: "3.3-ubi9", image: image, annotations: annotations})
	}
	kept := []Reason{{NoImageForNodes, marked}}
	for _, tc := range []struct {
		name   string
		is     *imagev1.ImageStream
		nodes  []string
		images map[string][]string
		want   []Reason
	}{
		{"the image's architectures unknown", ruby("sha256:ruby33", marked), []string{"s390x"}, nil, kept},
		{"the nodes' architectures unknown", ruby("sha256:ruby33", marked), nil, map[string][]string{"sha256:ruby33": {"amd64"}}, kept},
		{"neither known", ruby("sha256:ruby33", marked), nil, nil, kept},
		{"other reasons of the mark are not kept", ruby("sha256:ruby33", "retired in 4.22; "+marked), []string{"s390x"}, nil, kept},
		{"a mark with no architecture reason", ruby("sha256:ruby33", "retired in 4.22"), []string{"s390x"}, nil, nil},
		{"no mark", ruby("sha256:ruby33", ""), []string{"s390x"}, nil, nil},
		{"the mark of a tag after another", stream("ruby", tagState{name: "3.1-ubi8", image: "sha256:ruby31"},
			tagState{name: "3.3-ubi9", image: "sha256:ruby33", annotations: map[string]string{desired.UnusableAnnotation: marked}}), []string{"s390x"}, nil, kept},
		{"not imported: no verdict", ruby("", marked), []string{"s390x"}, nil, nil},
		{"known: the fresh verdict, usable", ruby("sha256:ruby33", marked), []string{"s390x"}, map[string][]string{"sha256:ruby33": {"s390x"}}, nil},
		{"known: the fresh verdict, reworded", ruby("sha256:ruby33", marked), []string{"arm64"}, map[string][]string{"sha256:ruby33": {"amd64"}},
			[]Reason{{NoImageForNodes, "no image for node architecture arm64 (image for amd64)"}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := with(func(c *Cluster) { c.NodeArchitectures, c.ImageArchitectures = tc.nodes, tc.images })
			v := ForImageStreamTag(tc.is, "3.3-ubi9", c)
			if !reflect.DeepEqual(v.Reasons, tc.want) || v.MissingArchitectures != nil {
				t.Errorf("reasons %v, missing %v; want %v", v.Reasons, v.MissingArchitectures, tc.want)
			}
		})
	}
}
