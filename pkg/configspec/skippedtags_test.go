package configspec

import (
	"fmt"
	"reflect"
	"strings"
	"testing"
	"testing/fstest"

	operatorv1 "github.com/openshift/api/operator/v1"
	samplesv1 "github.com/openshift/api/samples/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/samples-operator-dev/cluster-samples-operator/pkg/configspec/configspectest"
	"github.com/samples-operator-dev/cluster-samples-operator/pkg/desired"
	"github.com/samples-operator-dev/cluster-samples-operator/pkg/inventory"
)

func inventoryTags(stream string) ([]string, bool) {
	tags, ok := map[string][]string{
		"python": {"3.9-ubi8", "3.11-ubi9", "latest"},
		"ruby":   {"2.5-ubi8", "3.3-ubi9"},
	}[stream]
	return tags, ok
}

// TestParseSkippedTags: each row is parsed with the inventory's tags and, unless it names what
// the inventory lacks, without them (a malformed or repeated entry is left out before any
// inventory is asked); the problem must be exactly the one given.
func TestParseSkippedTags(t *testing.T) {
	for _, tc := range []struct {
		name, value string
		want        SkippedTags
		problem     string // after "annotation NAME: "; "" for none
		unshipped   bool   // names what the inventory lacks: parsed with the inventory only
	}{
		{name: "empty", value: "", want: SkippedTags{}},
		{name: "two streams", value: "python:3.9-ubi8,ruby:2.5-ubi8", want: SkippedTags{"python": {"3.9-ubi8"}, "ruby": {"2.5-ubi8"}}},
		{name: "sorted per stream", value: "python:latest,python:3.11-ubi9", want: SkippedTags{"python": {"3.11-ubi9", "latest"}}},
		{name: "spaces around entries and empty entries", value: " python:3.9-ubi8 ,, ruby:2.5-ubi8,", want: SkippedTags{"python": {"3.9-ubi8"}, "ruby": {"2.5-ubi8"}}},
		{name: "spaces inside", value: "python:3.9 ubi8,ruby:2.5-ubi8", want: SkippedTags{"ruby": {"2.5-ubi8"}},
			problem: `1 entry malformed and ignored: "python:3.9 ubi8" (spaces inside)`},
		{name: "no tag, no stream, no colon, two colons", value: "python:,:3.9-ubi8,ruby,ruby:2.5:x", want: SkippedTags{},
			problem: `4 entries malformed and ignored: "python:" (no tag), ":3.9-ubi8" (no imagestream), "ruby" (not STREAM:TAG), "ruby:2.5:x" (not STREAM:TAG)`},
		{name: "duplicates", value: "ruby:2.5-ubi8,ruby:2.5-ubi8", want: SkippedTags{"ruby": {"2.5-ubi8"}}, problem: "1 entry listed more than once: ruby:2.5-ubi8"},
		{name: "names the inventory lacks", value: "perl:5.30,python:2.7,ruby:3.3-ubi9", want: SkippedTags{"ruby": {"3.3-ubi9"}},
			problem: "2 entries naming tags this operator does not ship, ignored: perl:5.30, python:2.7", unshipped: true},
	} {
		for _, withInventory := range []bool{true, false} {
			if tc.unshipped && !withInventory {
				continue
			}
			t.Run(fmt.Sprintf("%s, inventory %t", tc.name, withInventory), func(t *testing.T) {
				tags := inventoryTags
				if !withInventory {
					tags = nil
				}
				got, problem := ParseSkippedTags(tc.value, tags)
				if !reflect.DeepEqual(got, tc.want) {
					t.Errorf("skipped = %v, want %v", got, tc.want)
				}
				checkProblem(t, problem, SkippedImageStreamTagsAnnotation, tc.problem)
			})
		}
	}
}

// checkProblem fails unless problem is want about annotation, or empty when want is.
func checkProblem(t *testing.T, problem, annotation, want string) {
	t.Helper()
	if want != "" {
		want = "annotation " + annotation + ": " + want
	}
	if problem != want {
		t.Errorf("problem %q\n   want %q", problem, want)
	}
}

// TestTenThousandEntriesGiveAShortMessage: the valid entries apply, the message names a few of
// each problem and counts the rest.
func TestTenThousandEntriesGiveAShortMessage(t *testing.T) {
	var entries []string
	for i := 0; i < 10000; i++ {
		switch i % 4 {
		case 0:
			entries = append(entries, fmt.Sprintf("python:%d", i)) // not shipped
		case 1:
			entries = append(entries, "ruby:2.5-ubi8") // repeated after the first
		case 2:
			entries = append(entries, fmt.Sprintf("bad entry %d", i))
		default:
			entries = append(entries, "python:3.9-ubi8")
		}
	}
	got, problem := ParseSkippedTags(strings.Join(entries, ","), inventoryTags)
	if want := (SkippedTags{"python": {"3.9-ubi8"}, "ruby": {"2.5-ubi8"}}); !reflect.DeepEqual(got, want) {
		t.Errorf("skipped = %v, want %v", got, want)
	}
	if len(problem) > 1000 {
		t.Errorf("the message is %d characters long, want a short one: %.300s", len(problem), problem)
	}
	for _, part := range []string{"2500 entries malformed", "and 2495 more", "4998 entries listed more than once", "2500 entries naming tags"} {
		if !strings.Contains(problem, part) {
			t.Errorf("problem %q lacks %q", problem, part)
		}
	}
}

// TestEvaluationNamesSkippedTagsAndWhatFollowsThem: the valid entries are the evaluation's, the
// rest and a tag left pointing at a skipped one are named among the warnings; the Config stays
// valid.
func TestEvaluationNamesSkippedTagsAndWhatFollowsThem(t *testing.T) {
	inv, err := configspectest.X86Only{}.For("x86_64")
	if err != nil {
		t.Fatal(err)
	}
	python, _ := inv.ImageStream("python")
	var followed, follower string
	for _, tag := range python.Spec.Tags {
		if tag.From != nil && tag.From.Kind == "ImageStreamTag" {
			follower, followed = tag.Name, tag.From.Name[strings.LastIndex(tag.From.Name, ":")+1:]
		}
	}
	if follower == "" {
		t.Fatal("python has no tag that follows another")
	}
	cfg := &samplesv1.Config{ObjectMeta: metav1.ObjectMeta{Name: "cluster", Annotations: map[string]string{
		SkippedImageStreamTagsAnnotation: "python:" + followed + ",ruby:nope"}},
		Spec: samplesv1.ConfigSpec{ManagementState: operatorv1.Managed, Architectures: []string{"x86_64"}}}
	eval := Evaluate(cfg, configspectest.X86Only{}, nil)
	if eval.Validation.Err != nil || eval.Mode != desired.Managed {
		t.Fatalf("the Config is %v, mode %v; want valid and Managed", eval.Validation.Err, eval.Mode)
	}
	if got := eval.SkippedTags; !reflect.DeepEqual(got, SkippedTags{"python": {followed}}) {
		t.Errorf("skipped %v, want python:%s", got, followed)
	}
	warnings := strings.Join(eval.Validation.Warnings, "\n")
	for _, part := range []string{"ruby:nope", fmt.Sprintf("python:%s follows python:%s", follower, followed)} {
		if !strings.Contains(warnings, part) {
			t.Errorf("warnings %q do not name %s", warnings, part)
		}
	}
}

// A tag may follow another as STREAM:TAG as well as TAG: skipping the followed tag names the
// follower either way.
func TestAFollowerNamedWithItsStreamIsOrphaned(t *testing.T) {
	inv, err := inventory.Load(fstest.MapFS{"x/s/imagestreams/s.json": &fstest.MapFile{Data: []byte(`{"kind":"ImageStream","apiVersion":"image.openshift.io/v1","metadata":{"name":"s"},"spec":{"tags":[
		{"name":"1","from":{"kind":"DockerImage","name":"registry.redhat.io/ubi9/s:1"}},
		{"name":"latest","from":{"kind":"ImageStreamTag","name":"s:1"}}]}}`)}}, "x")
	if err != nil {
		t.Fatal(err)
	}
	cfg := &samplesv1.Config{ObjectMeta: metav1.ObjectMeta{Name: "cluster", Annotations: map[string]string{SkippedImageStreamTagsAnnotation: "s:1"}},
		Spec: samplesv1.ConfigSpec{ManagementState: operatorv1.Managed, Architectures: []string{"x86_64"}}}
	eval := Evaluate(cfg, configspectest.X86Only{Inventory: inv}, nil)
	if warnings := strings.Join(eval.Validation.Warnings, "\n"); !strings.Contains(warnings, "s:latest follows s:1") {
		t.Errorf("warnings %q do not name s:latest follows s:1", warnings)
	}
}

// A problem names its first five entries and counts only those it does not name.
func TestAProblemCountsWhatItDoesNotName(t *testing.T) {
	const head = "annotation " + SkippedImageStreamTagsAnnotation + ": "
	for value, want := range map[string]string{
		"a:1,b:1,c:1,d:1,e:1":     head + "5 entries naming tags this operator does not ship, ignored: a:1, b:1, c:1, d:1, e:1",
		"a:1,b:1,c:1,d:1,e:1,f:1": head + "6 entries naming tags this operator does not ship, ignored: a:1, b:1, c:1, d:1, e:1 and 1 more",
	} {
		if _, problem := ParseSkippedTags(value, inventoryTags); problem != want {
			t.Errorf("%s: problem %q, want %q", value, problem, want)
		}
	}
}

// TestOrphansAreTheKeptFollowersOfASkippedTag: only a kept ImageStreamTag reference to a skipped
// tag is an orphan; a DockerImage whose reference ends in a skipped tag's name follows nothing,
// and a skipped stream that the inventory lacks leaves the others' checked.
func TestOrphansAreTheKeptFollowersOfASkippedTag(t *testing.T) {
	inv, err := inventory.Load(fstest.MapFS{"x/s/imagestreams/s.json": &fstest.MapFile{Data: []byte(`{"kind":"ImageStream","apiVersion":"image.openshift.io/v1","metadata":{"name":"s"},"spec":{"tags":[
		{"name":"1","from":{"kind":"DockerImage","name":"registry.redhat.io/ubi9/s:2"}},
		{"name":"2","from":{"kind":"DockerImage","name":"registry.redhat.io/ubi9/s:2"}},
		{"name":"latest","from":{"kind":"ImageStreamTag","name":"2"}},
		{"name":"skipped-follower","from":{"kind":"ImageStreamTag","name":"2"}}]}}`)}}, "x")
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name    string
		skipped SkippedTags
		want    string // "" for none
	}{
		{"the followed tag skipped", SkippedTags{"s": {"2", "skipped-follower"}},
			"s:latest follows s:2"},
		{"after a stream the inventory lacks", SkippedTags{"a": {"1"}, "s": {"2", "skipped-follower"}},
			"s:latest follows s:2"},
		{"a follower skipped with it", SkippedTags{"s": {"2", "latest", "skipped-follower"}}, ""},
		{"a tag that follows nothing", SkippedTags{"s": {"1"}}, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			want := tc.want
			if want != "" {
				want = "annotation " + SkippedImageStreamTagsAnnotation + ": " + want + ", which is skipped: skip the follower too, or it resolves to no image"
			}
			if got := orphanedBySkip(inv, tc.skipped); got != want {
				t.Errorf("orphans %q\n   want %q", got, want)
			}
		})
	}
}
