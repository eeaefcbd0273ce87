package desired

import (
	"slices"
	"testing"

	imagev1 "github.com/openshift/api/image/v1"
	samplesv1 "github.com/openshift/api/samples/v1"
	templatev1 "github.com/openshift/api/template/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
)

// A template trimmed for the cache drifts in exactly the fields the whole template does: the
// digests compare as the values did.
func TestTrimmedTemplateDriftsAsTheWholeOne(t *testing.T) {
	want, _, _ := Template(&samplesv1.ConfigSpec{}, Choice{Version: "v1"}, fakeSource{}, "httpd-example")
	inSync := want.DeepCopy()
	inSync.ResourceVersion = "3"
	inSync.Objects[0].Raw = []byte(`{"metadata":{"name":"${NAME}"},"kind":"Service","apiVersion":"v1"}`)
	edit := func(f func(*templatev1.Template)) *templatev1.Template { out := inSync.DeepCopy(); f(out); return out }
	cases := []struct {
		name  string
		live  *templatev1.Template
		drift []string
	}{
		{"compacted, keys reordered", inSync, nil},
		{"admin label", edit(func(o *templatev1.Template) { o.Labels["team"] = "x" }), nil},
		{"object added", edit(func(o *templatev1.Template) {
			o.Objects = append(o.Objects, runtime.RawExtension{Raw: []byte(`{"kind":"ConfigMap"}`)})
		}), []string{"objects"}},
		{"parameter value", edit(func(o *templatev1.Template) { o.Parameters[0].Value = "x" }), []string{"parameters"}},
		{"parameter removed", edit(func(o *templatev1.Template) { o.Parameters = nil }), []string{"parameters"}},
		{"object edited", edit(func(o *templatev1.Template) {
			o.Objects[0].Raw = []byte(`{"kind":"Service","apiVersion":"v1","metadata":{"name":"other"}}`)
		}), []string{"objects[0]"}},
		{"object not JSON", edit(func(o *templatev1.Template) { o.Objects[0].Raw = []byte(`{"kind":`) }), []string{"objects[0]"}},
		{"objects removed", edit(func(o *templatev1.Template) { o.Objects = nil }), []string{"objects"}},
		{"message", edit(func(o *templatev1.Template) { o.Message = "x" }), []string{"message"}},
		{"message emptied", edit(func(o *templatev1.Template) { o.Message = "" }), []string{"message"}},
		{"object labels", edit(func(o *templatev1.Template) { o.ObjectLabels["template"] = "x" }), []string{"labels"}},
		{"object labels removed", edit(func(o *templatev1.Template) { o.ObjectLabels = nil }), []string{"labels"}},
		{"version annotation", edit(func(o *templatev1.Template) { o.Annotations[VersionAnnotation] = "v0" }),
			[]string{"metadata.annotations[" + VersionAnnotation + "]"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			whole := TemplateDrift(tc.live, want)
			if !slices.Equal(whole, tc.drift) {
				t.Errorf("whole template: drift %q, want %q", whole, tc.drift)
			}
			trimmed := tc.live.DeepCopy()
			TrimTemplate(trimmed)
			if !IsTrimmed(trimmed) || trimmed.Objects != nil || trimmed.Parameters != nil || trimmed.Message != "" {
				t.Fatalf("not trimmed: %+v", trimmed)
			}
			if got := TemplateDrift(trimmed, want); !slices.Equal(got, whole) {
				t.Errorf("trimmed template: drift %q, the whole one's %q", got, whole)
			}
			if trimmed.ResourceVersion != "3" || trimmed.Labels[ManagedLabel] != tc.live.Labels[ManagedLabel] {
				t.Errorf("trimming lost metadata")
			}
		})
	}
}

// Objects digest as JSON values: -0 and 0 are one number, formatting and key order do not count.
func TestObjectDigestIsOfTheValue(t *testing.T) {
	if objectDigest([]byte(`{"n":-0}`)) != objectDigest([]byte(`{"n":0}`)) {
		t.Error("-0 and 0 digest differently")
	}
	if objectDigest([]byte(`{"n":1}`)) == objectDigest([]byte(`{"n":1.5}`)) {
		t.Error("1 and 1.5 digest the same")
	}
	if objectDigest([]byte(`{"a":1,"b":[1,2]}`)) != objectDigest([]byte("{\n  \"b\": [1, 2],\n  \"a\": 1.0\n}")) {
		t.Error("formatting and key order change the digest")
	}
}

// An update decided on a trimmed template is still a trimmed one: the samples controller must
// read the whole object before writing. Decided on the whole object, it is whole and in sync.
func TestUpdateFromTrimmedTemplateIsMarked(t *testing.T) {
	want, _, _ := Template(&samplesv1.ConfigSpec{}, Choice{Version: "v1"}, fakeSource{}, "httpd-example")
	live := want.DeepCopy()
	live.Message = "edited"
	trimmed := live.DeepCopy()
	TrimTemplate(trimmed)
	if got := ForTemplate(Managed, want, false, trimmed); got.Verb != Update || !IsTrimmed(got.Object) {
		t.Fatalf("decided on the trimmed template: %q, trimmed %v", got.Verb, IsTrimmed(got.Object))
	}
	got := ForTemplate(Managed, want, false, live)
	if got.Verb != Update || IsTrimmed(got.Object) || !TemplateInSync(got.Object, want) {
		t.Fatalf("decided on the whole template: %q, in sync %v", got.Verb, TemplateInSync(got.Object, want))
	}
	if _, ok := got.Object.Annotations[ContentDigestAnnotation]; ok {
		t.Error("the cache's annotation would be written")
	}
	if got := ForTemplate(Managed, nil, true, trimmed); got.Verb != MarkUnmanaged || !IsTrimmed(got.Object) {
		t.Errorf("marking a trimmed template unmanaged: %q, trimmed %v", got.Verb, IsTrimmed(got.Object))
	}
}

// Someone may set the cache's key on a live template: the whole template is still whole, its
// content compared as it is, and the cache's copy gets the operator's digests.
func TestContentDigestAnnotationOnTheServer(t *testing.T) {
	want, _, _ := Template(&samplesv1.ConfigSpec{}, Choice{Version: "v1"}, fakeSource{}, "httpd-example")
	live := want.DeepCopy()
	live.Annotations[ContentDigestAnnotation] = "not a digest"
	if IsTrimmed(live) {
		t.Fatal("a whole template with the key counts as trimmed")
	}
	if drift := TemplateDrift(live, want); len(drift) != 0 {
		t.Errorf("drift %q", drift)
	}
	TrimTemplate(live)
	if drift := TemplateDrift(live, want); len(drift) != 0 {
		t.Errorf("after trimming: drift %q", drift)
	}
	inv := inventoryTemplate()
	inv.Annotations = map[string]string{ContentDigestAnnotation: "x"}
	if got, _, _ := Template(&samplesv1.ConfigSpec{}, Choice{Version: "v1"}, singleTemplate{inv}, "httpd-example"); got.Annotations[ContentDigestAnnotation] != "" {
		t.Error("the desired template carries the cache's key")
	}
}

type singleTemplate struct{ t *templatev1.Template }

func (s singleTemplate) ImageStreamNames() []string { return nil }
func (s singleTemplate) TemplateNames() []string    { return []string{s.t.Name} }
func (s singleTemplate) ImageStreamForRegistry(string, string) (*imagev1.ImageStream, bool) {
	return nil, false
}
func (s singleTemplate) Template(name string) (*templatev1.Template, bool) {
	return s.t.DeepCopy(), name == s.t.Name
}

// The digests survive the annotation's round trip.
func TestTemplateContentRoundTrip(t *testing.T) {
	for _, c := range []templateContent{
		{message: "a", parameters: "b", objectLabels: "c", objects: []string{"jx", "jy"}},
		{message: "a"},
		{message: "a", objects: []string{"r1"}},
	} {
		got, ok := parseTemplateContent(c.String())
		if !ok || got.message != c.message || got.parameters != c.parameters || got.objectLabels != c.objectLabels || !slices.Equal(got.objects, c.objects) {
			t.Errorf("%q: got %+v, %v", c.String(), got, ok)
		}
	}
	for _, bad := range []string{"", "m=a", "x=a;p=;l=;o=", "m=a;p=;l=;o=;z"} {
		if _, ok := parseTemplateContent(bad); ok {
			t.Errorf("%q parsed", bad)
		}
	}
}

// The server drops an empty list or map from a template it stores, the inventory may write one:
// empty and missing are the same content.
func TestEmptyParametersAndLabelsAreNoDrift(t *testing.T) {
	want, _, _ := Template(&samplesv1.ConfigSpec{}, Choice{Version: "v1"}, fakeSource{}, "httpd-example")
	want.Parameters, want.ObjectLabels = []templatev1.Parameter{}, map[string]string{}
	live := want.DeepCopy()
	live.Parameters, live.ObjectLabels = nil, nil
	if drift := TemplateDrift(live, want); len(drift) != 0 {
		t.Errorf("drift %q between empty and missing parameters and labels", drift)
	}
}

// A template object given decoded (Object, no Raw) is compared by its JSON, as a raw one is.
func TestDecodedTemplateObjectComparesByValue(t *testing.T) {
	want, _, _ := Template(&samplesv1.ConfigSpec{}, Choice{Version: "v1"}, fakeSource{}, "httpd-example")
	decoded := func(name string) *templatev1.Template {
		live := want.DeepCopy()
		live.Objects[0] = runtime.RawExtension{Object: &unstructured.Unstructured{Object: map[string]interface{}{
			"apiVersion": "v1", "kind": "Service", "metadata": map[string]interface{}{"name": name},
		}}}
		return live
	}
	if drift := TemplateDrift(decoded("${NAME}"), want); len(drift) != 0 {
		t.Errorf("the same object decoded: drift %q", drift)
	}
	if drift := TemplateDrift(decoded("other"), want); !slices.Equal(drift, []string{"objects[0]"}) {
		t.Errorf("another object decoded: drift %q, want objects[0]", drift)
	}
}

// The memo of object digests remembers what it was given and never holds more than
// digestMemoMax of them.
func TestDigestMemoIsBounded(t *testing.T) {
	memo := &digestMemo{m: map[[32]byte]string{}}
	key := func(i int) [32]byte { return [32]byte{byte(i), byte(i >> 8), byte(i >> 16)} }
	memo.put(key(1), "one")
	memo.put(key(2), "two")
	if v, ok := memo.get(key(1)); !ok || v != "one" {
		t.Fatalf("get(1) = %q, %v after two puts", v, ok)
	}
	for i := 3; i <= digestMemoMax+1; i++ {
		memo.put(key(i), "x")
		if len(memo.m) > digestMemoMax {
			t.Fatalf("the memo holds %d digests after %d puts, more than %d", len(memo.m), i, digestMemoMax)
		}
	}
}
