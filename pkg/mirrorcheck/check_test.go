package mirrorcheck

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"

	configv1 "github.com/openshift/api/config/v1"

	"github.com/samples-operator-dev/cluster-samples-operator/pkg/mirrorsets"
)

// fakeMirror holds the references in has; any reference under broken fails as a registry that
// cannot say.
func fakeMirror(has map[string]bool, broken string) Lookup {
	return func(_ context.Context, ref string) error {
		switch {
		case broken != "" && strings.HasPrefix(ref, broken):
			return errors.New("unauthorized: authentication required")
		case has[ref]:
			return nil
		}
		return fmt.Errorf("%w (HTTP 404)", ErrNotFound)
	}
}

func TestCheckReportsEveryImage(t *testing.T) {
	images := []string{
		"registry.redhat.io/ubi9/python-311:latest",
		"registry.redhat.io/ubi9/python-312:latest",
		"registry.redhat.io/ubi9/ruby-33:latest",
		"quay.io/org/app:1",
	}
	sets := mirrorsets.Sets{Tag: []*configv1.ImageTagMirrorSet{{Spec: configv1.ImageTagMirrorSetSpec{ImageTagMirrors: []configv1.ImageTagMirrors{
		{Source: "registry.redhat.io", Mirrors: []configv1.ImageMirror{"one.example", "two.example"}}}}}}}
	has := map[string]bool{
		"one.example/ubi9/python-311:latest": true,
		"two.example/ubi9/ruby-33:latest":    true, // only on the second mirror
	}
	r := Check(context.Background(), images, MirrorSets(sets), fakeMirror(has, ""), 2)
	want := []struct {
		status Status
		mirror string
		reason string
	}{
		{Present, "one.example/ubi9/python-311:latest", ""},
		{Missing, "one.example/ubi9/python-312:latest", "one.example/ubi9/python-312:latest: not found (HTTP 404); two.example/ubi9/python-312:latest: not found (HTTP 404)"},
		{Present, "two.example/ubi9/ruby-33:latest", ""},
		{NoMirror, "", "no mirror set covers this image"},
	}
	for i, w := range want {
		got := r.Rows[i]
		if got.Image != images[i] || got.Status != w.status || got.Mirror != w.mirror || got.Reason != w.reason {
			t.Errorf("row %d = %+v, want %s %s %q", i, got, w.status, w.mirror, w.reason)
		}
	}
	if r.Summary != (Summary{Images: 4, Present: 2, Missing: 1, NoMirror: 1}) || r.Summary.OK() {
		t.Errorf("summary %+v", r.Summary)
	}
}

func TestCheckTellsErrorsFromMissingImages(t *testing.T) {
	images := []string{"registry.redhat.io/ubi9/python-311:latest", "registry.access.redhat.com/ubi8/ruby-30:latest"}
	rewrite := func(image string) string {
		_, rest, _ := strings.Cut(image, "/")
		return "mirror.example:5000/" + rest
	}
	r := Check(context.Background(), images, SamplesRegistry(rewrite), fakeMirror(map[string]bool{"mirror.example:5000/ubi9/python-311:latest": true}, "mirror.example:5000/ubi8"), 1)
	if r.Rows[0].Status != Present || r.Rows[1].Status != Error || r.Rows[1].Reason != "unauthorized: authentication required" || r.Rows[1].Tried != nil {
		t.Errorf("rows %+v", r.Rows)
	}
	if r.Summary.String() != "2 images: 1 present, 0 missing, 1 not checked (errors)" {
		t.Errorf("summary %q", r.Summary)
	}
}

func TestReportOutputs(t *testing.T) {
	images := []string{"registry.redhat.io/ubi9/python-311:latest", "registry.redhat.io/ubi9/python-312:latest"}
	rewrite := func(image string) string {
		return strings.Replace(image, "registry.redhat.io", "mirror.example:5000", 1)
	}
	r := Check(context.Background(), images, SamplesRegistry(rewrite), fakeMirror(map[string]bool{"mirror.example:5000/ubi9/python-311:latest": true}, ""), 4)
	var table bytes.Buffer
	if err := r.WriteTable(&table); err != nil {
		t.Fatal(err)
	}
	want := `IMAGE                                      MIRROR                                      STATUS   REASON
registry.redhat.io/ubi9/python-311:latest  mirror.example:5000/ubi9/python-311:latest  present
registry.redhat.io/ubi9/python-312:latest  mirror.example:5000/ubi9/python-312:latest  missing  not found (HTTP 404)
2 images: 1 present, 1 missing
`
	if table.String() != want {
		t.Errorf("table:\n%s\nwant:\n%s", table.String(), want)
	}
	var out bytes.Buffer
	if err := r.WriteJSON(&out); err != nil {
		t.Fatal(err)
	}
	var back Report
	if err := json.Unmarshal(out.Bytes(), &back); err != nil {
		t.Fatal(err)
	}
	if back.Summary != r.Summary || len(back.Rows) != 2 || back.Rows[1].Status != Missing || back.Rows[1].Mirror != "mirror.example:5000/ubi9/python-312:latest" {
		t.Errorf("JSON does not carry the report: %s", out.String())
	}
	if !strings.Contains(out.String(), `"status": "missing"`) || !strings.Contains(out.String(), `"summary": {`) {
		t.Errorf("JSON field names: %s", out.String())
	}
}
