package integration

import (
	"encoding/json"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"reflect"
	"testing"

	imagev1 "github.com/openshift/api/image/v1"
	templatev1 "github.com/openshift/api/template/v1"

	"github.com/samples-operator-dev/cluster-samples-operator/test/controlplane"
)

// The checks here judge a live sample against openshift/library's file for it, read straight
// from assets/operator with encoding/json: neither pkg/inventory's parsing nor pkg/desired's
// notion of "in sync" takes part, so a bug in either cannot hide itself. Only what the file
// sets is compared; what the server defaults (a tag's reference policy, its import mode) and
// what openshift-apiserver's import writes (tag generations, status) are the server's.

const (
	managedLabel      = "samples.operator.openshift.io/managed"
	versionAnnotation = "samples.operator.openshift.io/version"
)

// librarySamples reads every ImageStream and Template file of an arch-dir, by name.
func librarySamples(t *testing.T, archDir string) (map[string]imagev1.ImageStream, map[string]templatev1.Template) {
	t.Helper()
	streams, templates := map[string]imagev1.ImageStream{}, map[string]templatev1.Template{}
	root := filepath.Join(controlplane.RepoRoot(), "assets", "operator", archDir)
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || filepath.Ext(path) != ".json" {
			return err
		}
		data, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		var kind struct{ Kind string }
		if err := json.Unmarshal(data, &kind); err != nil {
			return fmt.Errorf("%s: %w", path, err)
		}
		switch kind.Kind {
		case "ImageStream":
			var is imagev1.ImageStream
			if err := json.Unmarshal(data, &is); err != nil {
				return fmt.Errorf("%s: %w", path, err)
			}
			streams[is.Name] = is
		case "Template":
			var tp templatev1.Template
			if err := json.Unmarshal(data, &tp); err != nil {
				return fmt.Errorf("%s: %w", path, err)
			}
			templates[tp.Name] = tp
		default:
			return fmt.Errorf("%s: kind %q", path, kind.Kind)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return streams, templates
}

// stampDrift is what is wrong with the operator's own label and version annotation.
func stampDrift(labels, annotations map[string]string, version string) []string {
	var out []string
	if labels[managedLabel] != "true" {
		out = append(out, fmt.Sprintf("label %s=%q, want \"true\"", managedLabel, labels[managedLabel]))
	}
	if annotations[versionAnnotation] != version {
		out = append(out, fmt.Sprintf("annotation %s=%q, want %q", versionAnnotation, annotations[versionAnnotation], version))
	}
	return out
}

// subsetDrift lists the keys of want that got does not hold with the same value.
func subsetDrift(what string, want, got map[string]string) []string {
	var out []string
	for k, v := range want {
		if g, ok := got[k]; !ok || g != v {
			out = append(out, fmt.Sprintf("%s %s=%q, want %q", what, k, g, v))
		}
	}
	return out
}

// marked is the annotations a sample should have when the operator judged that it cannot work
// on this cluster (the unusable annotation is on it): the file's, its catalog tags hidden. A
// verdict is the operator's own to make; the check is that it hid what it judged, and nothing
// else.
func marked(file, live map[string]string) map[string]string {
	if _, unusable := live["samples.operator.openshift.io/unusable"]; !unusable {
		return file
	}
	out := maps.Clone(file)
	if out == nil {
		out = map[string]string{}
	}
	if out["tags"] == "" {
		out["tags"] = "hidden"
	} else {
		out["tags"] += ",hidden"
	}
	return out
}

// imageStreamDrift compares a live stream with the library's file, field by field.
func imageStreamDrift(live *imagev1.ImageStream, file imagev1.ImageStream, version string) []string {
	out := stampDrift(live.Labels, live.Annotations, version)
	out = append(out, subsetDrift("annotation", file.Annotations, live.Annotations)...)
	out = append(out, subsetDrift("label", file.Labels, live.Labels)...)
	if file.Spec.LookupPolicy.Local != live.Spec.LookupPolicy.Local {
		out = append(out, fmt.Sprintf("lookupPolicy.local %v, want %v", live.Spec.LookupPolicy.Local, file.Spec.LookupPolicy.Local))
	}
	liveTags := map[string]imagev1.TagReference{}
	for _, tag := range live.Spec.Tags {
		liveTags[tag.Name] = tag
	}
	if len(liveTags) != len(file.Spec.Tags) {
		out = append(out, fmt.Sprintf("%d tags, want %d", len(liveTags), len(file.Spec.Tags)))
	}
	for _, want := range file.Spec.Tags {
		got, ok := liveTags[want.Name]
		if !ok {
			out = append(out, "tag "+want.Name+" missing")
			continue
		}
		prefix := "tag " + want.Name + " "
		switch {
		case (want.From == nil) != (got.From == nil):
			out = append(out, fmt.Sprintf("%sfrom %v, want %v", prefix, got.From, want.From))
		case want.From != nil && (want.From.Kind != got.From.Kind || want.From.Name != got.From.Name || want.From.Namespace != got.From.Namespace):
			out = append(out, fmt.Sprintf("%sfrom %s %s, want %s %s", prefix, got.From.Kind, got.From.Name, want.From.Kind, want.From.Name))
		}
		out = append(out, subsetDrift(prefix+"annotation", marked(want.Annotations, got.Annotations), got.Annotations)...)
		if want.ReferencePolicy.Type != "" && want.ReferencePolicy.Type != got.ReferencePolicy.Type {
			out = append(out, fmt.Sprintf("%sreferencePolicy %s, want %s", prefix, got.ReferencePolicy.Type, want.ReferencePolicy.Type))
		}
		if want.ImportPolicy.Scheduled != got.ImportPolicy.Scheduled || want.ImportPolicy.Insecure != got.ImportPolicy.Insecure {
			out = append(out, fmt.Sprintf("%simportPolicy %+v, want %+v", prefix, got.ImportPolicy, want.ImportPolicy))
		}
		if want.ImportPolicy.ImportMode != "" && want.ImportPolicy.ImportMode != got.ImportPolicy.ImportMode {
			out = append(out, fmt.Sprintf("%simportMode %s, want %s", prefix, got.ImportPolicy.ImportMode, want.ImportPolicy.ImportMode))
		}
		if want.Reference != got.Reference {
			out = append(out, fmt.Sprintf("%sreference %v, want %v", prefix, got.Reference, want.Reference))
		}
	}
	return out
}

// templateDrift compares a live template with the library's file, field by field; objects
// are compared as the JSON the file gives (the server keeps them as raw extensions).
func templateDrift(live *templatev1.Template, file templatev1.Template, version string) []string {
	out := stampDrift(live.Labels, live.Annotations, version)
	out = append(out, subsetDrift("annotation", marked(file.Annotations, live.Annotations), live.Annotations)...)
	out = append(out, subsetDrift("label", file.Labels, live.Labels)...)
	if live.Message != file.Message {
		out = append(out, fmt.Sprintf("message %q, want %q", live.Message, file.Message))
	}
	if !reflect.DeepEqual(nonNil(live.ObjectLabels), nonNil(file.ObjectLabels)) {
		out = append(out, fmt.Sprintf("objectLabels %v, want %v", live.ObjectLabels, file.ObjectLabels))
	}
	if len(live.Parameters) != len(file.Parameters) {
		out = append(out, fmt.Sprintf("%d parameters, want %d", len(live.Parameters), len(file.Parameters)))
	} else {
		for i := range file.Parameters {
			if !reflect.DeepEqual(live.Parameters[i], file.Parameters[i]) {
				out = append(out, fmt.Sprintf("parameter %d %+v, want %+v", i, live.Parameters[i], file.Parameters[i]))
			}
		}
	}
	if len(live.Objects) != len(file.Objects) {
		out = append(out, fmt.Sprintf("%d objects, want %d", len(live.Objects), len(file.Objects)))
		return out
	}
	for i := range file.Objects {
		var got, want any
		if err := json.Unmarshal(live.Objects[i].Raw, &got); err != nil {
			out = append(out, fmt.Sprintf("object %d: %v", i, err))
			continue
		}
		if err := json.Unmarshal(file.Objects[i].Raw, &want); err != nil {
			out = append(out, fmt.Sprintf("object %d in the file: %v", i, err))
			continue
		}
		if !reflect.DeepEqual(got, want) {
			out = append(out, fmt.Sprintf("object %d differs from the file", i))
		}
	}
	return out
}

func nonNil(m map[string]string) map[string]string {
	if m == nil {
		return map[string]string{}
	}
	return m
}

// TestIndependentDriftChecksCatchDrift: the field-by-field checks find each kind of change a
// reverted sample could still carry, so that their silence in other tests means something.
func TestIndependentDriftChecksCatchDrift(t *testing.T) {
	streams, templates := librarySamples(t, "ocp-x86_64")
	stamp := func(labels, annotations map[string]string) (map[string]string, map[string]string) {
		l, a := map[string]string{managedLabel: "true"}, map[string]string{versionAnnotation: "v1"}
		for k, v := range labels {
			l[k] = v
		}
		for k, v := range annotations {
			a[k] = v
		}
		return l, a
	}
	file := streams["python"]
	liveStream := func() *imagev1.ImageStream {
		is := file.DeepCopy()
		is.Labels, is.Annotations = stamp(is.Labels, is.Annotations)
		return is
	}
	if drift := imageStreamDrift(liveStream(), file, "v1"); len(drift) > 0 {
		t.Fatalf("an exact copy drifts: %v", drift)
	}
	for name, mutate := range map[string]func(*imagev1.ImageStream){
		"tag removed":       func(is *imagev1.ImageStream) { is.Spec.Tags = is.Spec.Tags[1:] },
		"from changed":      func(is *imagev1.ImageStream) { is.Spec.Tags[0].From.Name += "-other" },
		"tag annotation":    func(is *imagev1.ImageStream) { is.Spec.Tags[0].Annotations["description"] = "edited" },
		"stream annotation": func(is *imagev1.ImageStream) { is.Annotations["openshift.io/display-name"] = "edited" },
		"scheduled import set": func(is *imagev1.ImageStream) {
			is.Spec.Tags[0].ImportPolicy.Scheduled = !is.Spec.Tags[0].ImportPolicy.Scheduled
		},
		"not managed": func(is *imagev1.ImageStream) { is.Labels[managedLabel] = "false" },
		"old version": func(is *imagev1.ImageStream) { is.Annotations[versionAnnotation] = "v0" },
	} {
		is := liveStream()
		mutate(is)
		if drift := imageStreamDrift(is, file, "v1"); len(drift) == 0 {
			t.Errorf("imagestream check misses: %s", name)
		}
	}

	tfile := templates["httpd-example"]
	liveTemplate := func() *templatev1.Template {
		tp := tfile.DeepCopy()
		tp.Labels, tp.Annotations = stamp(tp.Labels, tp.Annotations)
		return tp
	}
	if drift := templateDrift(liveTemplate(), tfile, "v1"); len(drift) > 0 {
		t.Fatalf("an exact copy drifts: %v", drift)
	}
	for name, mutate := range map[string]func(*templatev1.Template){
		"message":         func(tp *templatev1.Template) { tp.Message = "edited" },
		"object removed":  func(tp *templatev1.Template) { tp.Objects = tp.Objects[1:] },
		"object changed":  func(tp *templatev1.Template) { tp.Objects[0].Raw = []byte(`{"kind":"Service"}`) },
		"parameter value": func(tp *templatev1.Template) { tp.Parameters[0].Value += "-edited" },
		"annotation":      func(tp *templatev1.Template) { tp.Annotations["description"] = "edited" },
	} {
		tp := liveTemplate()
		mutate(tp)
		if drift := templateDrift(tp, tfile, "v1"); len(drift) == 0 {
			t.Errorf("template check misses: %s", name)
		}
	}
}
