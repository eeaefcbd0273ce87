package integration

import (
	"context"
	"encoding/json"
	"io/fs"
	"maps"
	"testing"
	"time"

	imagev1 "github.com/openshift/api/image/v1"
	operatorv1 "github.com/openshift/api/operator/v1"
	samplesv1 "github.com/openshift/api/samples/v1"
	templatev1 "github.com/openshift/api/template/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/samples-operator-dev/cluster-samples-operator/assets"
	"github.com/samples-operator-dev/cluster-samples-operator/pkg/desired"
)

// upstreamSample reads an inventory file as the upstream operator does (encoding/json into the
// typed object, nothing dropped) and stamps it as that operator writes it: the managed label and
// the version annotation on the file's object, created as is.
func upstreamSample[T any](t *testing.T, file, version string, meta func(*T) *metav1.ObjectMeta) *T {
	t.Helper()
	data, err := fs.ReadFile(assets.Operator, file)
	if err != nil {
		t.Fatal(err)
	}
	obj := new(T)
	if err := json.Unmarshal(data, obj); err != nil {
		t.Fatalf("%s: %v", file, err)
	}
	m := meta(obj)
	if m.Labels == nil {
		m.Labels = map[string]string{}
	}
	if m.Annotations == nil {
		m.Annotations = map[string]string{}
	}
	m.Labels[desired.ManagedLabel] = "true"
	m.Annotations[desired.VersionAnnotation] = version
	return obj
}

// TestTakeoverFromUpstreamSamplesWritesNoSample: a cluster where the upstream operator installed
// the same openshift/library content at the same version, and the importer has since run, is
// taken over without one sample write: the operator reports the samples installed, goes quiet,
// and still reverts an admin's edit (so it was watching them all along).
func TestTakeoverFromUpstreamSamplesWritesNoSample(t *testing.T) {
	parallel(t, aboutHalfAMinute)
	e := newEnv(t)
	inv := fullX86Inventory(t)
	ctx := context.Background()
	const version = "v1"

	for _, name := range inv.ImageStreamNames() {
		file, _ := inv.ImageStreamFile(name)
		is := upstreamSample(t, file, version, func(is *imagev1.ImageStream) *metav1.ObjectMeta { return &is.ObjectMeta })
		if _, err := e.images.ImageV1().ImageStreams("openshift").Create(ctx, is, metav1.CreateOptions{}); err != nil {
			t.Fatalf("creating upstream's %s: %v", name, err)
		}
	}
	for _, name := range inv.TemplateNames() {
		file, _ := inv.TemplateFile(name)
		tp := upstreamSample(t, file, version, func(tp *templatev1.Template) *metav1.ObjectMeta { return &tp.ObjectMeta })
		if _, err := e.tmpl.TemplateV1().Templates("openshift").Create(ctx, tp, metav1.CreateOptions{}); err != nil {
			t.Fatalf("creating upstream's %s: %v", name, err)
		}
	}
	// The Config as the upstream operator left it.
	cfg := &samplesv1.Config{
		ObjectMeta: metav1.ObjectMeta{Name: "cluster"},
		Spec:       samplesv1.ConfigSpec{ManagementState: operatorv1.Managed, Architectures: []string{"x86_64"}},
	}
	if _, err := e.samples.SamplesV1().Configs().Create(ctx, cfg, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	// The importer has imported every stream (it rewrites spec and status as the server does).
	eventually(t, 60*time.Second, func() (bool, string) {
		list, err := e.images.ImageV1().ImageStreams("openshift").List(ctx, metav1.ListOptions{})
		if err != nil {
			return false, err.Error()
		}
		for _, is := range list.Items {
			if len(is.Status.Tags) == 0 {
				return false, "imagestream " + is.Name + " not imported yet"
			}
		}
		return true, ""
	})

	opts := fullInventoryOptions()
	opts.Version = version
	e.startOperator(opts)
	// SamplesExist turns True only once the operator has judged which samples can work here and
	// marked those that cannot: before its first verdicts it writes no status. CI once saw the
	// first verdicts come after a True written without them, and the marks after this check.
	e.waitManaged(t, inv, version)
	e.waitQuiet(t, 3*time.Second)

	// Upstream's samples carry no verdict on whether they can work here: the operator writes its
	// marks on those that cannot (issue 50), once each, and nothing else.
	marked := e.markedUnusable(t)
	if writes := e.sampleWritesByObject(t); !maps.Equal(writes, marked) {
		t.Errorf("taking over upstream's samples at the same version wrote %v, want only the marks of the samples that cannot work here, once each: %v", writes, marked)
	}

	// Positive control: the operator watches the samples it did not write.
	want := e.template("jenkins-ephemeral").Annotations["description"]
	e.editTemplate("jenkins-ephemeral", func(tp *templatev1.Template) { tp.Annotations["description"] = "edited by an admin" })
	eventually(t, 10*time.Second, func() (bool, string) {
		tp, err := e.tmpl.TemplateV1().Templates("openshift").Get(ctx, "jenkins-ephemeral", metav1.GetOptions{})
		if err != nil {
			return false, err.Error()
		}
		return tp.Annotations["description"] == want, "description is " + tp.Annotations["description"]
	})
	writes := e.sampleWritesByObject(t)
	marked["templates/jenkins-ephemeral"]++
	if !maps.Equal(writes, marked) {
		t.Errorf("after the admin's edit the operator wrote %v, want templates/jenkins-ephemeral once more than %v", writes, marked)
	}
}

// markedUnusable counts one write for each live sample that carries the operator's verdict that
// it cannot work here (on a template, or on a tag of a stream), as sampleWritesByObject names
// them.
func (e *env) markedUnusable(t *testing.T) map[string]int {
	t.Helper()
	ctx := context.Background()
	out := map[string]int{}
	templates, err := e.tmpl.TemplateV1().Templates("openshift").List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for _, tp := range templates.Items {
		if _, ok := tp.Annotations[desired.UnusableAnnotation]; ok {
			out["templates/"+tp.Name] = 1
		}
	}
	streams, err := e.images.ImageV1().ImageStreams("openshift").List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for _, is := range streams.Items {
		for _, tag := range is.Spec.Tags {
			if _, ok := tag.Annotations[desired.UnusableAnnotation]; ok {
				out["imagestreams/"+is.Name] = 1
			}
		}
	}
	return out
}
