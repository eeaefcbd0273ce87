package apiserverhooks

import (
	"bytes"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"net"
	"net/http"
	"reflect"
	"strconv"
	"strings"
	"testing"
	"time"

	imagev1 "github.com/openshift/api/image/v1"
	templatev1 "github.com/openshift/api/template/v1"
	admissionv1 "k8s.io/api/admission/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

func dockerTag(name, from string) imagev1.TagReference {
	return imagev1.TagReference{Name: name, From: &corev1.ObjectReference{Kind: "DockerImage", Name: from}}
}

func gen(t imagev1.TagReference) string {
	if t.Generation == nil {
		return "nil"
	}
	return strconv.FormatInt(*t.Generation, 10)
}

func tagNamed(is *imagev1.ImageStream, name string) *imagev1.TagReference {
	for i := range is.Spec.Tags {
		if is.Spec.Tags[i].Name == name {
			return &is.Spec.Tags[i]
		}
	}
	panic("no tag " + name)
}

func generations(is *imagev1.ImageStream) map[string]string {
	out := map[string]string{}
	for _, t := range is.Spec.Tags {
		out[t.Name] = gen(t)
	}
	return out
}

func TestPrepareImageStreamOnCreate(t *testing.T) {
	is := &imagev1.ImageStream{}
	is.Spec.Tags = []imagev1.TagReference{dockerTag("b", "r/x:b"), dockerTag("a", "r/x:old"), dockerTag("a", "r/x:a")}
	is.Spec.Tags[0].ReferencePolicy.Type = imagev1.LocalTagReferencePolicy
	is.Spec.Tags[0].ImportPolicy.ImportMode = imagev1.ImportModePreserveOriginal
	is.Spec.Tags[1].Generation = ptr(int64(7))
	PrepareImageStream(is, nil)

	if len(is.Spec.Tags) != 2 || is.Spec.Tags[0].Name != "a" || is.Spec.Tags[1].Name != "b" {
		t.Fatalf("tags = %+v, want a, b: sorted by name, a repeated name keeping its last entry", is.Spec.Tags)
	}
	a, b := is.Spec.Tags[0], is.Spec.Tags[1]
	if a.From.Name != "r/x:a" {
		t.Errorf("a.from = %s, want the last entry's r/x:a", a.From.Name)
	}
	if a.ReferencePolicy.Type != imagev1.SourceTagReferencePolicy || a.ImportPolicy.ImportMode != imagev1.ImportModeLegacy {
		t.Errorf("a: referencePolicy %q, importMode %q; want the defaults Source, Legacy", a.ReferencePolicy.Type, a.ImportPolicy.ImportMode)
	}
	if b.ReferencePolicy.Type != imagev1.LocalTagReferencePolicy || b.ImportPolicy.ImportMode != imagev1.ImportModePreserveOriginal {
		t.Errorf("b: set values were defaulted: %+v", b)
	}
	if got := generations(is); !reflect.DeepEqual(got, map[string]string{"a": "1", "b": "1"}) {
		t.Errorf("generations = %v, want every tag at the stream's 1", got)
	}
}

func TestPrepareImageStreamOnUpdate(t *testing.T) {
	old := &imagev1.ImageStream{ObjectMeta: metav1.ObjectMeta{Name: "s", Namespace: "ns", Generation: 3}}
	old.Spec.Tags = []imagev1.TagReference{dockerTag("keep", "r/x:1"), dockerTag("move", "r/x:1"), dockerTag("mode", "r/x:1"), dockerTag("reset", "r/x:1"), dockerTag("pinned", "r/x:1")}
	for i, g := range []int64{2, 2, 3, 1, 2} {
		old.Spec.Tags[i].Generation = ptr(g)
	}
	PrepareImageStream(old, old.DeepCopy()) // as stored: defaulted, generations kept
	if got := generations(old); !reflect.DeepEqual(got, map[string]string{"keep": "2", "move": "2", "mode": "3", "reset": "1", "pinned": "2"}) {
		t.Fatalf("an update that changes nothing moved generations: %v", got)
	}

	t.Run("unchanged spec keeps every generation, whatever the client sends", func(t *testing.T) {
		next := old.DeepCopy()
		tagNamed(next, "keep").Generation = nil
		tagNamed(next, "pinned").Generation = ptr(int64(9))
		PrepareImageStream(next, old)
		if got := generations(next); !reflect.DeepEqual(got, generations(old)) {
			t.Errorf("generations = %v, want %v", got, generations(old))
		}
	})

	t.Run("changed and new tags get the next generation", func(t *testing.T) {
		next := old.DeepCopy()
		tagNamed(next, "move").From.Name = "r/x:2"
		tagNamed(next, "mode").ImportPolicy.ImportMode = imagev1.ImportModePreserveOriginal
		tagNamed(next, "reset").Generation = ptr(int64(0))                 // asks for a new import
		tagNamed(next, "pinned").Annotations = map[string]string{"k": "v"} // not what it imports
		next.Spec.Tags = append(next.Spec.Tags, dockerTag("added", "r/x:3"))
		PrepareImageStream(next, old)
		want := map[string]string{"keep": "2", "move": "4", "mode": "4", "reset": "4", "pinned": "2", "added": "4"}
		if got := generations(next); !reflect.DeepEqual(got, want) {
			t.Errorf("generations = %v, want %v", got, want)
		}
	})

	t.Run("a namespace spelled out is no change", func(t *testing.T) {
		next := old.DeepCopy()
		tagNamed(next, "keep").From = &corev1.ObjectReference{Kind: "ImageStreamTag", Name: "move", Namespace: "ns"}
		o := old.DeepCopy()
		tagNamed(o, "keep").From = &corev1.ObjectReference{Kind: "ImageStreamTag", Name: "move"}
		PrepareImageStream(next, o)
		if g := gen(*tagNamed(next, "keep")); g != "2" {
			t.Errorf("keep: generation %s, want 2 kept", g)
		}
	})
}

func TestValidateImageStream(t *testing.T) {
	valid := func() *imagev1.ImageStream {
		is := &imagev1.ImageStream{ObjectMeta: metav1.ObjectMeta{Name: "ruby", Namespace: "openshift"}}
		is.Spec.Tags = []imagev1.TagReference{dockerTag("3", "registry.example:5000/ns/ruby:3"), {
			Name: "latest", From: &corev1.ObjectReference{Kind: "ImageStreamTag", Name: "3"},
		}}
		PrepareImageStream(is, nil)
		return is
	}
	if errs := ValidateImageStream(valid(), nil); len(errs) > 0 {
		t.Fatalf("valid stream rejected: %v", errs)
	}
	cases := []struct {
		name   string
		change func(*imagev1.ImageStream)
		field  string
	}{
		{"name with a double dash", func(is *imagev1.ImageStream) { is.Name = "ru--by" }, "metadata.name"},
		{"name too long with its namespace", func(is *imagev1.ImageStream) { is.Name = strings.Repeat("a", 250) }, "metadata.name"},
		{"tagged dockerImageRepository", func(is *imagev1.ImageStream) { is.Spec.DockerImageRepository = "r/x:1" }, "spec.dockerImageRepository"},
		{"unparsable DockerImage", func(is *imagev1.ImageStream) { is.Spec.Tags[0].From.Name = "Registry/UPPER:1" }, "spec.tags[3].from.name"},
		{"empty from.name", func(is *imagev1.ImageStream) { is.Spec.Tags[0].From.Name = "" }, "spec.tags[3].from.name"},
		{"empty from.kind", func(is *imagev1.ImageStream) { is.Spec.Tags[0].From.Kind = "" }, "spec.tags[3].from.kind"},
		{"bad reference policy", func(is *imagev1.ImageStream) { is.Spec.Tags[0].ReferencePolicy.Type = "Remote" }, "spec.tags[3].referencePolicy.type"},
		{"bad import mode", func(is *imagev1.ImageStream) { is.Spec.Tags[0].ImportPolicy.ImportMode = "All" }, "spec.tags[3].importPolicy.importMode"},
		{"scheduled ImageStreamTag", func(is *imagev1.ImageStream) { is.Spec.Tags[1].ImportPolicy.Scheduled = true }, "spec.tags[latest].importPolicy.scheduled"},
		{"ImageStreamTag of three parts", func(is *imagev1.ImageStream) { is.Spec.Tags[1].From.Name = "a:b:c" }, "spec.tags[latest].from.name"},
	}
	for _, c := range cases {
		is := valid()
		c.change(is)
		errs := ValidateImageStream(is, nil)
		if len(errs) != 1 || errs[0].Field != c.field {
			t.Errorf("%s: errors %v, want one on %s", c.name, errs, c.field)
		}
	}
	// The form of an ImageStreamTag reference is checked only when the tag changes.
	old := valid()
	old.Spec.Tags[1].From.Name = "a:b:c"
	if errs := ValidateImageStream(old.DeepCopy(), old); len(errs) != 0 {
		t.Errorf("unchanged tag checked again: %v", errs)
	}
}

func TestImageStreamImportDefaultsAndValidation(t *testing.T) {
	isi := &imagev1.ImageStreamImport{ObjectMeta: metav1.ObjectMeta{Name: "ruby"}}
	isi.Spec.Import = true
	isi.Spec.Images = []imagev1.ImageImportSpec{
		{From: corev1.ObjectReference{Kind: "DockerImage", Name: "r/ruby:3"}},
		{From: corev1.ObjectReference{Kind: "DockerImage", Name: "r/ruby@sha256:" + strings.Repeat("0", 64)}, To: &corev1.LocalObjectReference{Name: "pinned"},
			ImportPolicy: imagev1.TagImportPolicy{ImportMode: imagev1.ImportModePreserveOriginal}, ReferencePolicy: imagev1.TagReferencePolicy{Type: imagev1.LocalTagReferencePolicy}},
	}
	DefaultImageStreamImport(isi)
	first, second := isi.Spec.Images[0], isi.Spec.Images[1]
	if first.To == nil || first.To.Name != "3" || first.ImportPolicy.ImportMode != imagev1.ImportModeLegacy || first.ReferencePolicy.Type != imagev1.SourceTagReferencePolicy {
		t.Errorf("defaults not applied: %+v", first)
	}
	if second.To.Name != "pinned" || second.ImportPolicy.ImportMode != imagev1.ImportModePreserveOriginal || second.ReferencePolicy.Type != imagev1.LocalTagReferencePolicy {
		t.Errorf("set values changed: %+v", second)
	}
	if errs := ValidateImageStreamImport(isi); len(errs) > 0 {
		t.Errorf("valid import rejected: %v", errs)
	}
	bad := isi.DeepCopy()
	bad.Name = "Ruby"
	bad.Spec.Images[0].From.Kind = "ImageStreamTag"
	bad.Spec.Images[1].From.Name = "r/ruby:"
	bad.Spec.Images[1].ImportPolicy.ImportMode = "Both"
	want := []string{"spec.images[0].from.kind", "spec.images[1].from.name", "spec.images[1].importPolicy.importMode", "metadata.name"}
	if got := fields(ValidateImageStreamImport(bad)); !reflect.DeepEqual(got, want) {
		t.Errorf("errors on %v, want %v", got, want)
	}
	if got := fields(ValidateImageStreamImport(&imagev1.ImageStreamImport{ObjectMeta: metav1.ObjectMeta{Name: "x"}})); !reflect.DeepEqual(got, []string{"spec.images"}) {
		t.Errorf("empty import: errors on %v", got)
	}
}

func TestValidateTemplate(t *testing.T) {
	tpl := &templatev1.Template{Parameters: []templatev1.Parameter{{Name: "GOOD_1"}, {Name: ""}, {Name: "NO-DASH"}}}
	if got := fields(ValidateTemplate(tpl)); !reflect.DeepEqual(got, []string{"parameters[1].name", "parameters[2].name"}) {
		t.Errorf("errors on %v", got)
	}
}

func fields(errs field.ErrorList) []string {
	var out []string
	for _, e := range errs {
		out = append(out, e.Field)
	}
	return out
}

// review sends an AdmissionReview to the running server as kube-apiserver does.
func review(t *testing.T, s *Server, path string, op admissionv1.Operation, obj, old any) *admissionv1.AdmissionResponse {
	t.Helper()
	raw := func(v any) runtime.RawExtension {
		if v == nil {
			return runtime.RawExtension{}
		}
		b, err := json.Marshal(v)
		if err != nil {
			t.Fatal(err)
		}
		return runtime.RawExtension{Raw: b}
	}
	resource := map[string]metav1.GroupVersionResource{
		"imagestreams":       {Group: "image.openshift.io", Version: "v1", Resource: "imagestreams"},
		"imagestreamimports": {Group: "image.openshift.io", Version: "v1", Resource: "imagestreamimports"},
		"templates":          {Group: "template.openshift.io", Version: "v1", Resource: "templates"},
	}[path[strings.LastIndex(path, "/")+1:]]
	body, _ := json.Marshal(admissionv1.AdmissionReview{
		TypeMeta: metav1.TypeMeta{APIVersion: "admission.k8s.io/v1", Kind: "AdmissionReview"},
		Request: &admissionv1.AdmissionRequest{UID: types.UID("u-1"), Resource: resource, Operation: op,
			Name: "x", Namespace: "openshift", Object: raw(obj), OldObject: raw(old)},
	})
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(s.CABundle) {
		t.Fatal("CABundle holds no certificate")
	}
	client := &http.Client{Timeout: 5 * time.Second, Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool}}}
	resp, err := client.Post(s.URL+path, "application/json", bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var out admissionv1.AdmissionReview
	if err := json.NewDecoder(resp.Body).Decode(&out); err != nil || out.Response == nil {
		t.Fatalf("no AdmissionReview response (%v)", err)
	}
	if out.Response.UID != "u-1" {
		t.Errorf("response UID %q, want the request's", out.Response.UID)
	}
	return out.Response
}

// applyPatch applies the top-level JSON patch the server answers with.
func applyPatch(t *testing.T, obj any, resp *admissionv1.AdmissionResponse) map[string]any {
	t.Helper()
	b, _ := json.Marshal(obj)
	var m map[string]any
	_ = json.Unmarshal(b, &m)
	if resp.Patch == nil {
		return m
	}
	if resp.PatchType == nil || *resp.PatchType != admissionv1.PatchTypeJSONPatch {
		t.Fatalf("patch type %v", resp.PatchType)
	}
	var ops []struct {
		Op, Path string
		Value    any
	}
	if err := json.Unmarshal(resp.Patch, &ops); err != nil {
		t.Fatal(err)
	}
	for _, op := range ops {
		key := strings.TrimPrefix(op.Path, "/")
		if strings.Contains(key, "/") {
			t.Fatalf("patch goes below the top level: %s", op.Path)
		}
		switch op.Op {
		case "add":
			m[key] = op.Value
		case "remove":
			delete(m, key)
		default:
			t.Fatalf("unexpected op %s", op.Op)
		}
	}
	return m
}

func TestServerOverHTTPS(t *testing.T) {
	s, err := Start()
	if err != nil {
		t.Fatal(err)
	}
	defer s.Stop()

	// An untyped client's stream: no reference policy, lookupPolicy without local, two tags out
	// of order, an unknown annotation the test hook strips.
	stream := map[string]any{
		"apiVersion": "image.openshift.io/v1", "kind": "ImageStream",
		"metadata": map[string]any{"name": "x", "namespace": "openshift", "annotations": map[string]any{"strip": "me", "keep": "me"}},
		"spec": map[string]any{"lookupPolicy": map[string]any{}, "tags": []any{
			map[string]any{"name": "b", "from": map[string]any{"kind": "DockerImage", "name": "r/x:b"}},
			map[string]any{"name": "a", "from": map[string]any{"kind": "DockerImage", "name": "r/x:a"}, "annotations": nil},
		}},
	}
	resp := review(t, s, "/mutate/imagestreams", admissionv1.Create, stream, nil)
	if !resp.Allowed {
		t.Fatalf("denied: %v", resp.Result)
	}
	got := applyPatch(t, stream, resp)
	wantSpec := map[string]any{"lookupPolicy": map[string]any{"local": false}, "tags": []any{
		map[string]any{"name": "a", "from": map[string]any{"kind": "DockerImage", "name": "r/x:a"}, "generation": float64(1),
			"importPolicy": map[string]any{"importMode": "Legacy"}, "referencePolicy": map[string]any{"type": "Source"}},
		map[string]any{"name": "b", "from": map[string]any{"kind": "DockerImage", "name": "r/x:b"}, "generation": float64(1),
			"importPolicy": map[string]any{"importMode": "Legacy"}, "referencePolicy": map[string]any{"type": "Source"}},
	}}
	if !reflect.DeepEqual(got["spec"], wantSpec) {
		t.Errorf("spec =\n%v\nwant\n%v", got["spec"], wantSpec)
	}
	if !reflect.DeepEqual(got["metadata"], stream["metadata"]) {
		t.Errorf("metadata changed without a normalizer: %v", got["metadata"])
	}

	s.NormalizeImageStreams(func(is *imagev1.ImageStream) {
		delete(is.Annotations, "strip")
		is.Spec.Tags[0].From.Name = "r/x:normalized"
	})
	got = applyPatch(t, stream, review(t, s, "/mutate/imagestreams", admissionv1.Create, stream, nil))
	if md := got["metadata"].(map[string]any); !reflect.DeepEqual(md["annotations"], map[string]any{"keep": "me"}) || md["name"] != "x" {
		t.Errorf("normalizer: metadata %v, want only the annotation stripped", md)
	}
	if from := got["spec"].(map[string]any)["tags"].([]any)[1].(map[string]any)["from"].(map[string]any); from["name"] != "r/x:normalized" {
		t.Errorf("normalizer: tag b from %v, want r/x:normalized (the normalizer sees the tags as sent)", from)
	}
	s.NormalizeImageStreams(nil)

	bad := map[string]any{"apiVersion": "image.openshift.io/v1", "kind": "ImageStream", "metadata": map[string]any{"name": "a--b"}}
	resp = review(t, s, "/validate/imagestreams", admissionv1.Create, bad, nil)
	if resp.Allowed || resp.Result == nil || resp.Result.Code != http.StatusUnprocessableEntity || resp.Result.Reason != metav1.StatusReasonInvalid {
		t.Errorf("invalid name: allowed=%v result=%+v, want 422 Invalid", resp.Allowed, resp.Result)
	} else if d := resp.Result.Details; d == nil || d.Kind != "ImageStream" || len(d.Causes) != 1 || d.Causes[0].Field != "metadata.name" {
		t.Errorf("details %+v, want one cause on metadata.name", d)
	}

	// A template's objects are never touched, nulls included, even by a normalizer.
	tpl := map[string]any{"apiVersion": "template.openshift.io/v1", "kind": "Template", "metadata": map[string]any{"name": "t"},
		"objects": []any{map[string]any{"kind": "Service", "apiVersion": "v1", "spec": map[string]any{"x": nil}}}}
	if resp := review(t, s, "/mutate/templates", admissionv1.Create, tpl, nil); resp.Patch != nil {
		t.Errorf("template patched without a normalizer: %s", resp.Patch)
	}
	s.NormalizeTemplates(func(t *templatev1.Template) { t.Message = "normalized" })
	got = applyPatch(t, tpl, review(t, s, "/mutate/templates", admissionv1.Create, tpl, nil))
	if got["message"] != "normalized" || !reflect.DeepEqual(got["objects"], tpl["objects"]) {
		t.Errorf("template normalizer: %v", got)
	}

	if got := s.Requests("/mutate/imagestreams"); got != 2 {
		t.Errorf("Requests = %d, want 2", got)
	}
	addr := strings.TrimPrefix(s.URL, "https://")
	s.Stop()
	if conn, err := net.DialTimeout("tcp", addr, time.Second); err == nil {
		conn.Close()
		t.Errorf("%s still accepts connections after Stop", addr)
	}
	s.Stop() // a second Stop is harmless
}
