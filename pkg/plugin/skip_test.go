package plugin

import (
	"reflect"
	"testing"

	samplesv1 "github.com/openshift/api/samples/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/samples-operator-dev/cluster-samples-operator/pkg/configspec"
	"github.com/samples-operator-dev/cluster-samples-operator/pkg/sampleusage"
)

func TestSkipEdit(t *testing.T) {
	base := func() *samplesv1.Config {
		return &samplesv1.Config{
			ObjectMeta: metav1.ObjectMeta{Annotations: map[string]string{configspec.SkippedImageStreamTagsAnnotation: "ruby:3.0, bad entry,"}},
			Spec:       samplesv1.ConfigSpec{SkippedImagestreams: []string{"perl"}, SkippedTemplates: []string{"t1"}},
		}
	}
	cases := []struct {
		name    string
		target  sampleusage.Target
		skip    bool
		changed bool
		check   func(*samplesv1.Config) bool
	}{
		{"skip a stream", sampleusage.Target{ImageStream: "python"}, true, true,
			func(c *samplesv1.Config) bool {
				return reflect.DeepEqual(c.Spec.SkippedImagestreams, []string{"perl", "python"})
			}},
		{"skip a skipped stream", sampleusage.Target{ImageStream: "perl"}, true, false, nil},
		{"unskip a stream", sampleusage.Target{ImageStream: "perl"}, false, true,
			func(c *samplesv1.Config) bool { return len(c.Spec.SkippedImagestreams) == 0 }},
		{"unskip a stream not skipped", sampleusage.Target{ImageStream: "python"}, false, false, nil},
		{"skip a template", sampleusage.Target{Template: "t2"}, true, true,
			func(c *samplesv1.Config) bool {
				return reflect.DeepEqual(c.Spec.SkippedTemplates, []string{"t1", "t2"})
			}},
		// Entries it does not touch stay as written, the malformed one too (the operator names it).
		{"skip a tag", sampleusage.Target{ImageStream: "python", Tag: "3.9"}, true, true,
			func(c *samplesv1.Config) bool {
				return c.Annotations[configspec.SkippedImageStreamTagsAnnotation] == "ruby:3.0,bad entry,python:3.9"
			}},
		{"unskip the last good tag", sampleusage.Target{ImageStream: "ruby", Tag: "3.0"}, false, true,
			func(c *samplesv1.Config) bool {
				return c.Annotations[configspec.SkippedImageStreamTagsAnnotation] == "bad entry"
			}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			cfg := base()
			change, changed := skipEdit(cfg, tc.target, tc.skip)
			if changed != tc.changed {
				t.Fatalf("changed %v, want %v (%s)", changed, tc.changed, change)
			}
			if !changed && !reflect.DeepEqual(cfg, base()) {
				t.Errorf("nothing to change, yet the Config changed: %+v", cfg)
			}
			if tc.check != nil && !tc.check(cfg) {
				t.Errorf("after %s: %+v %v (%s)", tc.name, cfg.Spec, cfg.Annotations, change)
			}
		})
	}
	cfg := &samplesv1.Config{ObjectMeta: metav1.ObjectMeta{Annotations: map[string]string{configspec.SkippedImageStreamTagsAnnotation: "python:3.9"}}}
	if _, changed := skipEdit(cfg, sampleusage.Target{ImageStream: "python", Tag: "3.9"}, false); !changed {
		t.Fatal("unskipping the only tag changes nothing")
	}
	if _, has := cfg.Annotations[configspec.SkippedImageStreamTagsAnnotation]; has {
		t.Errorf("an empty list leaves the annotation: %v", cfg.Annotations)
	}
}
