package integration

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	imagev1 "github.com/openshift/api/image/v1"
	samplesv1 "github.com/openshift/api/samples/v1"
	templatev1 "github.com/openshift/api/template/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/samples-operator-dev/cluster-samples-operator/pkg/configspec"
	"github.com/samples-operator-dev/cluster-samples-operator/pkg/desired"
	"github.com/samples-operator-dev/cluster-samples-operator/pkg/samplereport"
)

// TestRetiredTemplatesAreJudgedAndMarked (issue 56 item 7): an earlier version retired the
// imagestream oldruby and two templates, which the cluster keeps: rails-old builds from
// oldruby:2.5, python-old from a tag of python the inventory ships. The operator judges them
// like the inventory's templates: rails-old gets the retired tag as its mark at once, and
// `oc samples status` shows it retired and why it cannot work; python-old is marked while the
// Config skips its builder tag, and unmarked when the skip goes, one update each time. Nothing
// else of either is written (their content, edited by an admin, stays), and nothing at all at
// the resyncs.
func TestRetiredTemplatesAreJudgedAndMarked(t *testing.T) {
	parallel(t, aboutHalfAMinute)
	e := newEnv(t)
	inv := x86Inventory(t)
	ctx := context.Background()
	builder := "python:" + unfollowedDockerTags(inv, "python")[0]

	retired := func() metav1.ObjectMeta {
		return metav1.ObjectMeta{Namespace: "openshift", Labels: map[string]string{desired.ManagedLabel: "true"},
			Annotations: map[string]string{desired.RetiredAnnotation: "v0", desired.VersionAnnotation: "v0", "tags": "hidden"}}
	}
	oldruby := &imagev1.ImageStream{ObjectMeta: retired(), Spec: imagev1.ImageStreamSpec{Tags: []imagev1.TagReference{{
		Name: "2.5", Annotations: map[string]string{desired.RetiredAnnotation: "v0", "tags": "builder,hidden"},
		From: &corev1.ObjectReference{Kind: "DockerImage", Name: "registry.example.com/ruby:2.5"},
	}}}}
	oldruby.Name = "oldruby"
	if _, err := e.images.ImageV1().ImageStreams("openshift").Create(ctx, oldruby, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	buildingFrom := func(name, from string) *templatev1.Template {
		bc := fmt.Sprintf(`{"apiVersion":"build.openshift.io/v1","kind":"BuildConfig","metadata":{"name":"app"},`+
			`"spec":{"strategy":{"sourceStrategy":{"from":{"kind":"ImageStreamTag","namespace":"openshift","name":%q}}}}}`, from)
		tp := &templatev1.Template{ObjectMeta: retired(), Message: "edited by an admin after the retirement",
			Objects: []runtime.RawExtension{{Raw: []byte(bc)}}}
		tp.Name = name
		if _, err := e.tmpl.TemplateV1().Templates("openshift").Create(ctx, tp, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		return tp
	}
	buildingFrom("rails-old", "oldruby:2.5")
	buildingFrom("python-old", builder)

	opts := defaultOptions()
	opts.Resync = 2 * time.Second
	startedAt := time.Now()
	e.startOperator(opts)
	e.waitManaged(t, inv, "v1")

	retiredTag := "image openshift/oldruby:2.5 was retired in v0 with its image stream"
	eventually(t, 15*time.Second, func() (bool, string) {
		reason, hidden := unusableMarks(e.template("rails-old").Annotations)
		return reason == retiredTag && hidden, fmt.Sprintf("rails-old: %s %q, hidden %v; want %q", desired.UnusableAnnotation, reason, hidden, retiredTag)
	})
	if reason, _ := unusableMarks(e.template("python-old").Annotations); reason != "" {
		t.Errorf("python-old, whose builder tag is there, is marked %q", reason)
	}

	// Both reasons in `oc samples status`: retired, and why it cannot work.
	asJSON := e.kubectlSamplesQuiet("status", "-o", "json")
	var report samplereport.Report
	if err := json.Unmarshal([]byte(asJSON.out), &report); err != nil {
		t.Fatalf("oc samples status -o json: %v\n%s", err, asJSON.out)
	}
	found := false
	for _, s := range report.Samples {
		if s.Kind == samplereport.KindTemplate && s.Name == "rails-old" {
			found = true
			if s.State != samplereport.Retired || s.RetiredIn != "v0" || s.Unusable != retiredTag {
				t.Errorf("oc samples status -o json: rails-old %+v; want retired in v0 and unusable: %s", s, retiredTag)
			}
		}
	}
	if !found {
		t.Errorf("oc samples status -o json names no rails-old:\n%s", asJSON.out)
	}
	table := e.kubectlSamplesQuiet("status")
	for _, line := range strings.Split(table.out, "\n") {
		if f := strings.Fields(line); len(f) > 1 && f[0] == "template" && f[1] == "rails-old" {
			if !strings.Contains(line, "retired in v0") || !strings.Contains(line, "oldruby:2.5 was retired") {
				t.Errorf("oc samples status: %q; want it retired in v0 and unusable for oldruby:2.5", line)
			}
		}
	}

	skippedAt := time.Now()
	e.updateConfig(func(c *samplesv1.Config) {
		if c.Annotations == nil {
			c.Annotations = map[string]string{}
		}
		c.Annotations[configspec.SkippedImageStreamTagsAnnotation] = builder
	})
	skippedTag := "image openshift/" + builder + " is skipped by the Config"
	eventually(t, 15*time.Second, func() (bool, string) {
		reason, _ := unusableMarks(e.template("python-old").Annotations)
		return reason == skippedTag, fmt.Sprintf("python-old: %s %q; want %q", desired.UnusableAnnotation, reason, skippedTag)
	})
	e.waitQuiet(t, time.Second)
	unskippedAt := time.Now()
	e.updateConfig(func(c *samplesv1.Config) { delete(c.Annotations, configspec.SkippedImageStreamTagsAnnotation) })
	eventually(t, 15*time.Second, func() (bool, string) {
		a := e.template("python-old").Annotations
		_, marked := a[desired.UnusableAnnotation]
		return !marked && a["tags"] == "hidden" && a[desired.RetiredAnnotation] == "v0",
			fmt.Sprintf("python-old: annotations %v; want no mark, still retired and hidden", a)
	})
	e.assertNoWritesFor(t, 3*opts.Resync+time.Second, "retired templates marked, resyncs")

	writesOn := func(since time.Time, name string) (n int) {
		for _, w := range e.sampleWritesSince(t, since) {
			if w == "update templates/"+name {
				n++
			} else if strings.HasSuffix(w, "templates/"+name) || strings.HasSuffix(w, "imagestreams/oldruby") {
				t.Errorf("a write of a retired sample other than its mark: %s", w)
			}
		}
		return n
	}
	if n := writesOn(startedAt, "rails-old"); n != 1 {
		t.Errorf("rails-old was updated %d times; want once, for its mark", n)
	}
	if all, unskip := writesOn(skippedAt, "python-old"), writesOn(unskippedAt, "python-old"); all != 2 || unskip != 1 {
		t.Errorf("python-old was updated %d times for the skip and its end (%d after the end); want once each", all, unskip)
	}
	for _, name := range []string{"rails-old", "python-old"} {
		if tp := e.template(name); tp.Message != "edited by an admin after the retirement" || len(tp.Objects) != 1 {
			t.Errorf("retired %s's content was put back: message %q, %d objects", name, tp.Message, len(tp.Objects))
		}
	}
	if tags := e.imageStream("oldruby").Spec.Tags; len(tags) != 1 || tags[0].From.Name != "registry.example.com/ruby:2.5" {
		t.Errorf("the retired oldruby was rewritten: %+v", tags)
	}
	if reverted := e.eventsWithReason(t, "SampleReverted"); len(reverted) > 0 {
		t.Errorf("marking retired samples was reported as reverts: %q", reverted)
	}
}
