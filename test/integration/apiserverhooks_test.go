package integration

import (
	"context"
	"slices"
	"strings"
	"testing"

	configv1 "github.com/openshift/api/config/v1"
	imagev1 "github.com/openshift/api/image/v1"
	templatev1 "github.com/openshift/api/template/v1"
	configclient "github.com/openshift/client-go/config/clientset/versioned"
	imageclient "github.com/openshift/client-go/image/clientset/versioned"
	templateclient "github.com/openshift/client-go/template/clientset/versioned"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	"k8s.io/utils/ptr"

	"github.com/samples-operator-dev/cluster-samples-operator/test/controlplane"
)

func dockerImageTag(name, from string) imagev1.TagReference {
	return imagev1.TagReference{Name: name, From: &corev1.ObjectReference{Kind: "DockerImage", Name: from}}
}

func tagGenerations(is *imagev1.ImageStream) map[string]int64 {
	out := map[string]int64{}
	for _, t := range is.Spec.Tags {
		if t.Generation == nil {
			out[t.Name] = -1
		} else {
			out[t.Name] = *t.Generation
		}
	}
	return out
}

func causeFields(err error) []string {
	var fields []string
	if status, ok := err.(apierrors.APIStatus); ok && status.Status().Details != nil {
		for _, c := range status.Status().Details.Causes {
			fields = append(fields, c.Field)
		}
	}
	return fields
}

// TestImageStreamsAsOpenShiftAPIServerStoresThem writes ImageStreams through kube-apiserver, the
// generated CRD and the webhooks of test/apiserverhooks, and reads back what openshift-apiserver
// would return.
func TestImageStreamsAsOpenShiftAPIServerStoresThem(t *testing.T) {
	cp := sharedControlPlane(t)
	ctx := context.Background()
	streams := imageclient.NewForConfigOrDie(cp.AdminConfig).ImageV1().ImageStreams("openshift")

	is := &imagev1.ImageStream{ObjectMeta: metav1.ObjectMeta{Name: "hooks-behaviour"}}
	is.Spec.Tags = []imagev1.TagReference{
		dockerImageTag("b", "registry.example/ns/img:b"),
		dockerImageTag("a", "registry.example/ns/img:first"),
		dockerImageTag("a", "registry.example/ns/img:a"),
	}
	is.Spec.Tags[0].ReferencePolicy.Type = imagev1.LocalTagReferencePolicy
	is.Spec.Tags[0].Generation = ptr.To(int64(42)) // not the client's to set
	is.Status.DockerImageRepository = "client/set"
	created, err := streams.Create(ctx, is, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(created.Spec.Tags) != 2 || created.Spec.Tags[0].Name != "a" || created.Spec.Tags[1].Name != "b" {
		t.Fatalf("tags %+v, want a, b: sorted, a repeated name keeping its last entry", created.Spec.Tags)
	}
	a, b := created.Spec.Tags[0], created.Spec.Tags[1]
	if a.From.Name != "registry.example/ns/img:a" {
		t.Errorf("tag a from %s, want the last entry's", a.From.Name)
	}
	if a.ReferencePolicy.Type != imagev1.SourceTagReferencePolicy || a.ImportPolicy.ImportMode != imagev1.ImportModeLegacy || b.ReferencePolicy.Type != imagev1.LocalTagReferencePolicy {
		t.Errorf("defaults: a %+v %+v, b %+v; want Source and Legacy for a, b's Local kept", a.ReferencePolicy, a.ImportPolicy, b.ReferencePolicy)
	}
	if got := tagGenerations(created); created.Generation != 1 || got["a"] != 1 || got["b"] != 1 {
		t.Errorf("generation %d, tags %v; want 1 everywhere", created.Generation, got)
	}
	// The client's status is dropped. openshift-apiserver reports the stream's name in the
	// integrated registry on every read; the stand-in cannot store status on a create (the CRD
	// drops it), so there it comes with the first status the emulator writes.
	internal := "image-registry.openshift-image-registry.svc:5000/openshift/hooks-behaviour"
	if got := created.Status.DockerImageRepository; got != internal && (cp.RealOpenShiftAPIServer() || got != "") {
		t.Errorf("status.dockerImageRepository %q (client sent %q), want %q", got, is.Status.DockerImageRepository, internal)
	}

	// An update that sends back what it read changes nothing, not even the resourceVersion.
	same, err := streams.Update(ctx, created, metav1.UpdateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if same.ResourceVersion != created.ResourceVersion || same.Generation != 1 {
		t.Errorf("no-op update: resourceVersion %s -> %s, generation %d", created.ResourceVersion, same.ResourceVersion, same.Generation)
	}

	// A changed source moves the stream's generation and that tag's; the client's tag generations
	// are ignored, except 0, which asks for a new import.
	next := same.DeepCopy()
	next.Spec.Tags[0].From.Name = "registry.example/ns/img:a2"
	next.Spec.Tags[1].Generation = ptr.To(int64(7))
	updated, err := streams.Update(ctx, next, metav1.UpdateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if got := tagGenerations(updated); updated.Generation != 2 || got["a"] != 2 || got["b"] != 1 {
		t.Errorf("after changing a: generation %d, tags %v; want 2, a 2, b 1", updated.Generation, got)
	}
	next = updated.DeepCopy()
	next.Spec.Tags[1].Generation = ptr.To(int64(0))
	updated, err = streams.Update(ctx, next, metav1.UpdateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if got := tagGenerations(updated); updated.Generation != 3 || got["a"] != 2 || got["b"] != 3 {
		t.Errorf("after resetting b: generation %d, tags %v; want 3, a 2, b 3", updated.Generation, got)
	}

	// Unknown fields are pruned by the schema; an untyped client's empty lookupPolicy and
	// reference policy are completed as a typed decoder would.
	dyn := dynamic.NewForConfigOrDie(cp.AdminConfig).Resource(schema.GroupVersionResource{Group: "image.openshift.io", Version: "v1", Resource: "imagestreams"}).Namespace("openshift")
	u := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "image.openshift.io/v1", "kind": "ImageStream", "metadata": map[string]any{"name": "hooks-untyped"},
		"spec": map[string]any{"lookupPolicy": map[string]any{}, "bogus": true, "tags": []any{map[string]any{
			"name": "t", "from": map[string]any{"kind": "DockerImage", "name": "registry.example/ns/img:t", "bogus": 1},
			"referencePolicy": map[string]any{},
		}}},
	}}
	got, err := dyn.Create(ctx, u, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if _, found, _ := unstructured.NestedFieldNoCopy(got.Object, "spec", "bogus"); found {
		t.Errorf("unknown field spec.bogus kept")
	}
	if local, found, _ := unstructured.NestedBool(got.Object, "spec", "lookupPolicy", "local"); !found || local {
		t.Errorf("lookupPolicy.local = %v (found %v), want false", local, found)
	}
	tag := got.Object["spec"].(map[string]any)["tags"].([]any)[0].(map[string]any)
	if from := tag["from"].(map[string]any); len(from) != 2 || tag["referencePolicy"].(map[string]any)["type"] != "Source" {
		t.Errorf("tag %v, want from without bogus and referencePolicy Source", tag)
	}

	// What openshift-apiserver rejects.
	for _, c := range []struct {
		name  string
		is    *imagev1.ImageStream
		field string
	}{
		{"a name outside the repository rule", &imagev1.ImageStream{ObjectMeta: metav1.ObjectMeta{Name: "hooks--name"}}, "metadata.name"},
		{"an unparsable reference", &imagev1.ImageStream{ObjectMeta: metav1.ObjectMeta{Name: "hooks-ref"},
			Spec: imagev1.ImageStreamSpec{Tags: []imagev1.TagReference{dockerImageTag("1", "registry.example/UPPER/img:1")}}}, "spec.tags[1].from.name"},
		{"a tagged dockerImageRepository", &imagev1.ImageStream{ObjectMeta: metav1.ObjectMeta{Name: "hooks-repo"},
			Spec: imagev1.ImageStreamSpec{DockerImageRepository: "registry.example/ns/img:1"}}, "spec.dockerImageRepository"},
	} {
		_, err := streams.Create(ctx, c.is, metav1.CreateOptions{})
		if !apierrors.IsInvalid(err) || !strings.Contains(strings.Join(causeFields(err), ","), c.field) {
			t.Errorf("%s: err = %v (causes %v), want Invalid on %s", c.name, err, causeFields(err), c.field)
		}
	}

	// An ImageStreamImport gets the server's defaults.
	isi := &imagev1.ImageStreamImport{ObjectMeta: metav1.ObjectMeta{Name: "hooks-behaviour", Namespace: "openshift"},
		Spec: imagev1.ImageStreamImportSpec{Import: true, Images: []imagev1.ImageImportSpec{{From: corev1.ObjectReference{Kind: "DockerImage", Name: "registry.example/ns/img:9"}}}}}
	body, err := imageclient.NewForConfigOrDie(cp.AdminConfig).ImageV1().RESTClient().Post().Namespace("openshift").Resource("imagestreamimports").Body(isi).DoRaw(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`"to":{"name":"9"}`, `"importMode":"Legacy"`, `"type":"Source"`} {
		if !strings.Contains(string(body), want) {
			t.Errorf("ImageStreamImport %s lacks %s", body, want)
		}
	}
}

// TestTemplatesAsOpenShiftAPIServerStoresThem: objects are kept as sent, parameter names are
// checked on create only.
func TestTemplatesAsOpenShiftAPIServerStoresThem(t *testing.T) {
	cp := sharedControlPlane(t)
	ctx := context.Background()
	templates := templateclient.NewForConfigOrDie(cp.AdminConfig).TemplateV1().Templates("openshift")

	tmpl := &templatev1.Template{
		ObjectMeta: metav1.ObjectMeta{Name: "hooks-template"},
		Parameters: []templatev1.Parameter{{Name: "NAME"}},
		Objects:    []runtime.RawExtension{{Raw: []byte(`{"apiVersion":"v1","kind":"Service","metadata":{"name":"${NAME}","labels":{"app":"${NAME}"},"x-unknown":1},"spec":{"ports":[{"port":"${PORT}"}]}}`)}},
	}
	created, err := templates.Create(ctx, tmpl, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if got := string(created.Objects[0].Raw); !strings.Contains(got, `"x-unknown":1`) || !strings.Contains(got, `"port":"${PORT}"`) {
		t.Errorf("template object changed: %s", got)
	}
	bad := tmpl.DeepCopy()
	bad.Name = "hooks-template-bad"
	bad.Parameters = []templatev1.Parameter{{Name: "BAD-NAME"}}
	if _, err := templates.Create(ctx, bad, metav1.CreateOptions{}); !apierrors.IsInvalid(err) {
		t.Errorf("create with parameter BAD-NAME: err = %v, want Invalid", err)
	}
	created.Parameters = append(created.Parameters, templatev1.Parameter{Name: "BAD-NAME"})
	if _, err := templates.Update(ctx, created, metav1.UpdateOptions{}); err != nil {
		t.Errorf("update with parameter BAD-NAME: %v; openshift-apiserver validates parameters on create only", err)
	}
}

// TestWebhookNormalizerRewritesImageStreams shows the test hook: the control plane's webhook
// server can be told to rewrite fields the operator owns, as a server that normalizes them would.
func TestWebhookNormalizerRewritesImageStreams(t *testing.T) {
	parallel(t, 0)
	cp := controlplane.StartForTestWith(t, controlplane.Options{StandIns: true}) // the webhooks' normalizer knob
	ctx := context.Background()
	streams := imageclient.NewForConfigOrDie(cp.AdminConfig).ImageV1().ImageStreams("openshift")

	const name = "hooks-normalized"
	cp.Webhooks().NormalizeImageStreams(func(is *imagev1.ImageStream) {
		if is.Name != name { // only the stream this test writes
			return
		}
		delete(is.Annotations, "strip-me")
		for i := range is.Spec.Tags {
			is.Spec.Tags[i].From.Name = strings.Replace(is.Spec.Tags[i].From.Name, "registry.example", "mirror.example", 1)
		}
	})
	t.Cleanup(func() { cp.Webhooks().NormalizeImageStreams(nil) })

	is := &imagev1.ImageStream{ObjectMeta: metav1.ObjectMeta{Name: name, Annotations: map[string]string{"strip-me": "x", "keep": "y"}}}
	is.Spec.Tags = []imagev1.TagReference{dockerImageTag("1", "registry.example/ns/img:1")}
	created, err := streams.Create(ctx, is, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := created.Annotations["strip-me"]; ok || created.Annotations["keep"] != "y" || created.Spec.Tags[0].From.Name != "mirror.example/ns/img:1" {
		t.Fatalf("not normalized: annotations %v, from %s", created.Annotations, created.Spec.Tags[0].From.Name)
	}
	// Writing the field back is a no-op for the server: same object, same resourceVersion.
	created.Spec.Tags[0].From.Name = "registry.example/ns/img:1"
	updated, err := streams.Update(ctx, created, metav1.UpdateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if updated.ResourceVersion != created.ResourceVersion || updated.Spec.Tags[0].From.Name != "mirror.example/ns/img:1" {
		t.Errorf("rewrite back: resourceVersion %s -> %s, from %s", created.ResourceVersion, updated.ResourceVersion, updated.Spec.Tags[0].From.Name)
	}
	if n := cp.Webhooks().Requests("/mutate/imagestreams"); n < 2 {
		t.Errorf("the mutating webhook answered %d requests", n)
	}
}

// TestAllowListOnImageStreamUpdatesAsOpenShiftAPIServer: once images.config.openshift.io
// restricts imports, a stream that already records an image from a registry the list leaves out
// may still be updated, but a status write that records a new image from such a registry is
// refused. And an update of the stream itself admits every reference to a repository the stored
// stream names in its spec or its status, whatever its registry, and no other repository of that
// registry (osa validation.go ValidateImageStreamUpdateWithWhitelister, whitelister.go
// canonicalRepository: registry as written, port included, namespace and name).
func TestAllowListOnImageStreamUpdatesAsOpenShiftAPIServer(t *testing.T) {
	parallel(t, 0)
	cp := controlplane.StartForTest(t)
	ctx := context.Background()
	streams := imageclient.NewForConfigOrDie(cp.AdminConfig).ImageV1().ImageStreams("openshift")
	images := configclient.NewForConfigOrDie(cp.AdminConfig).ConfigV1().Images()

	is := &imagev1.ImageStream{ObjectMeta: metav1.ObjectMeta{Name: "allow-updates"}}
	is.Spec.Tags = []imagev1.TagReference{dockerImageTag("1", "registry.redhat.io/ubi9/ruby-33:1"), dockerImageTag("2", "quay.io/ns/ruby:2")}
	created, err := streams.Create(ctx, is, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	event := func(ref string) imagev1.TagEvent {
		return imagev1.TagEvent{Created: metav1.Now(), DockerImageReference: ref, Image: "sha256:" + strings.Repeat("ab", 32), Generation: 1}
	}
	created.Status.Tags = []imagev1.NamedTagEventList{{Tag: "1", Items: []imagev1.TagEvent{event("registry.redhat.io/ubi9/ruby-33@sha256:" + strings.Repeat("ab", 32))}}}
	recorded, err := streams.UpdateStatus(ctx, created, metav1.UpdateOptions{})
	if err != nil {
		t.Fatal(err)
	}

	img, err := images.Get(ctx, "cluster", metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		img, err = images.Create(ctx, &configv1.Image{ObjectMeta: metav1.ObjectMeta{Name: "cluster"}}, metav1.CreateOptions{})
	}
	if err != nil {
		t.Fatal(err)
	}
	img.Spec.AllowedRegistriesForImport = []configv1.RegistryLocation{{DomainName: "quay.io"}}
	if _, err := images.Update(ctx, img, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := cp.RolloutImageConfig(ctx); err != nil {
		t.Fatal(err)
	}

	annotated := recorded.DeepCopy()
	annotated.Annotations = map[string]string{"touched": "yes"}
	if annotated, err = streams.Update(ctx, annotated, metav1.UpdateOptions{}); err != nil {
		t.Fatalf("updating a stream that recorded an image from a registry now left out: %v", err)
	}
	if _, err := streams.UpdateStatus(ctx, annotated, metav1.UpdateOptions{}); err != nil {
		t.Fatalf("writing back the recorded status: %v", err)
	}

	allowed := annotated.DeepCopy()
	allowed.Status.Tags = append(allowed.Status.Tags, imagev1.NamedTagEventList{Tag: "2", Items: []imagev1.TagEvent{event("quay.io/ns/ruby@sha256:" + strings.Repeat("ab", 32))}})
	allowed, err = streams.UpdateStatus(ctx, allowed, metav1.UpdateOptions{})
	if err != nil {
		t.Fatalf("recording an image from an allowed registry: %v", err)
	}

	refused := allowed.DeepCopy()
	refused.Status.Tags[0].Items = append([]imagev1.TagEvent{event("registry.redhat.io/ubi9/ruby-33@sha256:" + strings.Repeat("cd", 32))}, refused.Status.Tags[0].Items...)
	_, err = streams.UpdateStatus(ctx, refused, metav1.UpdateOptions{})
	if !apierrors.IsInvalid(err) || !strings.Contains(err.Error(), "status.tags[1].items[0].dockerImageReference") || !strings.Contains(err.Error(), "not allowed by whitelist") {
		t.Errorf("recording a new image from a registry the list leaves out, on /status: %v, want Invalid on status.tags[1].items[0].dockerImageReference, not allowed by whitelist", err)
	}
	// An update of the stream itself keeps the stored status: nothing new is recorded, nothing refused.
	kept, err := streams.Update(ctx, refused, metav1.UpdateOptions{})
	if err != nil {
		t.Fatalf("the same status in an update of the stream: %v, want it ignored", err)
	}
	if len(kept.Status.Tags) != 2 || len(kept.Status.Tags[0].Items) != 1 {
		t.Errorf("an update of the stream changed its status: %+v", kept.Status.Tags)
	}

	// Updates of the spec, each from the stored stream.
	const ruby = "registry.redhat.io/ubi9/ruby-33"
	update := func(step string, edit func(is *imagev1.ImageStream), refusedAt string) {
		t.Helper()
		is, err := streams.Get(ctx, "allow-updates", metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		edit(is)
		_, err = streams.Update(ctx, is, metav1.UpdateOptions{})
		switch {
		case refusedAt == "" && err != nil:
			t.Errorf("%s: %v, want it accepted", step, err)
		case refusedAt != "" && (!apierrors.IsInvalid(err) || !strings.Contains(err.Error(), refusedAt) || !strings.Contains(err.Error(), "not allowed by whitelist")):
			t.Errorf("%s: %v, want Invalid at %s, not allowed by whitelist", step, err, refusedAt)
		}
	}
	setTag := func(name, ref string) func(*imagev1.ImageStream) {
		return func(is *imagev1.ImageStream) {
			for i := range is.Spec.Tags {
				if is.Spec.Tags[i].Name == name {
					is.Spec.Tags[i].From.Name = ref
					return
				}
			}
			is.Spec.Tags = append(is.Spec.Tags, dockerImageTag(name, ref))
		}
	}
	update("a tag moved to another tag of its repository", setTag("1", ruby+":2"), "")
	update("a new tag from a repository the stream names", setTag("3", ruby+":3"), "")
	update("a new tag from another repository of that registry", setTag("4", "registry.redhat.io/ubi9/python-312:1"), "spec.tags[4].from.name")
	update("the same repository written with the registry's port", setTag("4", "registry.redhat.io:443/ubi9/ruby-33:1"), "spec.tags[4].from.name")
	update("the repository left in the spec only by an allowed tag's change", func(is *imagev1.ImageStream) {
		setTag("1", "quay.io/ns/ruby:1")(is)
		is.Spec.Tags = slices.DeleteFunc(is.Spec.Tags, func(tag imagev1.TagReference) bool { return tag.Name == "3" })
	}, "")
	update("back to the repository the status still records", setTag("1", ruby+":1"), "")
}
