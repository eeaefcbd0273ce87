package integration

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"

	imagev1 "github.com/openshift/api/image/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// TestImportEmulatorFillsStatus shows the emulator playing OpenShift's importer against the real
// API server: status for a good reference, ImportSuccess=False for a failing one, and a failing
// reference that succeeds once the rule is lifted and an ImageStreamImport asks again.
func TestImportEmulatorFillsStatus(t *testing.T) {
	parallel(t, 0)
	e := newEnv(t)
	ctx := context.Background()
	const good, bad = "registry.example/ns/good:1", "registry.example/ns/bad:1"
	e.importer.FailReference(bad, "manifest unknown")

	is := &imagev1.ImageStream{
		ObjectMeta: metav1.ObjectMeta{Name: "emulated", Namespace: "openshift"},
		Spec: imagev1.ImageStreamSpec{Tags: []imagev1.TagReference{
			{Name: "good", From: &corev1.ObjectReference{Kind: "DockerImage", Name: good}},
			{Name: "bad", From: &corev1.ObjectReference{Kind: "DockerImage", Name: bad}},
		}},
	}
	if _, err := e.images.ImageV1().ImageStreams("openshift").Create(ctx, is, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}

	tagState := func(tag string) (items int, failed bool, message string) {
		cur, err := e.images.ImageV1().ImageStreams("openshift").Get(ctx, "emulated", metav1.GetOptions{})
		if err != nil {
			return 0, false, err.Error()
		}
		for _, st := range cur.Status.Tags {
			if st.Tag != tag {
				continue
			}
			for _, c := range st.Conditions {
				if c.Type == imagev1.ImportSuccess && c.Status == corev1.ConditionFalse {
					return len(st.Items), true, c.Message
				}
			}
			if len(st.Items) > 0 && st.Items[0].Image == "" {
				return len(st.Items), false, "item without image id"
			}
			return len(st.Items), false, ""
		}
		return 0, false, "no status yet"
	}
	eventually(t, 10*time.Second, func() (bool, string) {
		items, failed, msg := tagState("good")
		return items == 1 && !failed, fmt.Sprintf("good: items=%d failed=%v %s", items, failed, msg)
	})
	eventually(t, 10*time.Second, func() (bool, string) {
		_, failed, msg := tagState("bad")
		return failed && msg == "manifest unknown", fmt.Sprintf("bad: failed=%v msg=%q", failed, msg)
	})

	if e.cp.RealOpenShiftAPIServer() {
		realServerAnswersImport(t, e, "bad", bad)
		return
	}

	// The importer keeps a failure until asked again, as OpenShift's does.
	e.importer.SucceedReference(bad)
	// The positive signal: an edit after the rule was lifted, and the emulator's sync of it.
	touched := e.editImageStream("emulated", func(is *imagev1.ImageStream) {
		metav1.SetMetaDataAnnotation(&is.ObjectMeta, "test/touched", "after the rule was lifted")
	})
	eventually(t, 10*time.Second, func() (bool, string) {
		synced, _ := strconv.ParseInt(e.importer.SyncedVersion("emulated"), 10, 64)
		want, _ := strconv.ParseInt(touched.ResourceVersion, 10, 64)
		return synced >= want, fmt.Sprintf("the emulator synced resourceVersion %d, the edit is %d", synced, want)
	})
	if _, failed, _ := tagState("bad"); !failed {
		t.Fatalf("a lifted rule alone re-imported the tag; only a new import should")
	}
	isi := &imagev1.ImageStreamImport{
		ObjectMeta: metav1.ObjectMeta{Name: "emulated", Namespace: "openshift"},
		Spec: imagev1.ImageStreamImportSpec{Import: true, Images: []imagev1.ImageImportSpec{{
			From: corev1.ObjectReference{Kind: "DockerImage", Name: bad},
			To:   &corev1.LocalObjectReference{Name: "bad"},
		}}},
	}
	if _, err := e.images.ImageV1().ImageStreamImports("openshift").Create(ctx, isi, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	eventually(t, 10*time.Second, func() (bool, string) {
		items, failed, msg := tagState("bad")
		return !failed && items >= 1, fmt.Sprintf("bad after re-import: items=%d failed=%v %s", items, failed, msg)
	})
	eventually(t, 5*time.Second, func() (bool, string) {
		n := e.importer.ImportRequests("emulated")
		return n == 1, fmt.Sprintf("import requests for emulated = %d, want 1", n)
	})

	// And back: failing again after a new import.
	e.importer.FailReference(good, "unauthorized")
	isi.Spec.Images[0] = imagev1.ImageImportSpec{From: corev1.ObjectReference{Kind: "DockerImage", Name: good}, To: &corev1.LocalObjectReference{Name: "good"}}
	eventually(t, 10*time.Second, func() (bool, string) {
		// The emulator deletes each ImageStreamImport once handled; wait for the name to be free.
		_, err := e.images.ImageV1().ImageStreamImports("openshift").Create(ctx, isi.DeepCopy(), metav1.CreateOptions{})
		return err == nil, fmt.Sprintf("creating the second import: %v", err)
	})
	eventually(t, 10*time.Second, func() (bool, string) {
		_, failed, msg := tagState("good")
		return failed && msg == "unauthorized", fmt.Sprintf("good after failing re-import: failed=%v %q", failed, msg)
	})

	// As openshift-apiserver's import handler writes the stream: stamped, and every tag whose
	// import brought something new (an image, a new failure) moved to a generation of its own,
	// the one its status records.
	eventually(t, 10*time.Second, func() (bool, string) {
		cur, err := e.images.ImageV1().ImageStreams("openshift").Get(ctx, "emulated", metav1.GetOptions{})
		if err != nil {
			return false, err.Error()
		}
		if _, ok := cur.Annotations[imagev1.DockerImageRepositoryCheckAnnotation]; !ok {
			return false, "no " + imagev1.DockerImageRepositoryCheckAnnotation + " annotation"
		}
		recorded := map[string]int64{}
		for _, st := range cur.Status.Tags {
			for _, c := range st.Conditions {
				if c.Type == imagev1.ImportSuccess && c.Status == corev1.ConditionFalse {
					recorded[st.Tag] = c.Generation
				}
			}
			if _, failed := recorded[st.Tag]; !failed && len(st.Items) > 0 {
				recorded[st.Tag] = st.Items[0].Generation
			}
		}
		var report []string
		for _, tag := range cur.Spec.Tags {
			if tag.Generation == nil || *tag.Generation <= 1 || *tag.Generation != recorded[tag.Name] {
				report = append(report, fmt.Sprintf("%s: spec generation %v, status %d", tag.Name, ptrValue(tag.Generation), recorded[tag.Name]))
			}
		}
		return len(report) == 0, fmt.Sprintf("stream generation %d; %v", cur.Generation, report)
	})
}

// realServerAnswersImport: the real openshift-apiserver handles an ImageStreamImport itself, and
// in the tests reaches no registry (its proxy is a closed loopback port): the tag records
// ImportSuccess=False reason InternalError at a spec generation of its own, and the stream is
// stamped, whatever the emulator's rules say.
func realServerAnswersImport(t *testing.T, e *env, tag, ref string) {
	t.Helper()
	ctx := context.Background()
	isi := &imagev1.ImageStreamImport{
		ObjectMeta: metav1.ObjectMeta{Name: "emulated", Namespace: "openshift"},
		Spec: imagev1.ImageStreamImportSpec{Import: true, Images: []imagev1.ImageImportSpec{{
			From: corev1.ObjectReference{Kind: "DockerImage", Name: ref},
			To:   &corev1.LocalObjectReference{Name: tag},
		}}},
	}
	if _, err := e.images.ImageV1().ImageStreamImports("openshift").Create(ctx, isi, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	cur, err := e.images.ImageV1().ImageStreams("openshift").Get(ctx, "emulated", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := cur.Annotations[imagev1.DockerImageRepositoryCheckAnnotation]; !ok {
		t.Errorf("no %s annotation after an import", imagev1.DockerImageRepositoryCheckAnnotation)
	}
	var specGen int64
	for _, st := range cur.Spec.Tags {
		if st.Name == tag && st.Generation != nil {
			specGen = *st.Generation
		}
	}
	for _, st := range cur.Status.Tags {
		for _, c := range st.Conditions {
			if st.Tag != tag || c.Type != imagev1.ImportSuccess {
				continue
			}
			if c.Status != corev1.ConditionFalse || c.Reason != "InternalError" || !strings.Contains(c.Message, "proxyconnect tcp: dial tcp 127.0.0.1:9") {
				t.Errorf("tag %s after an import on the real server: %s=%s %s %q, want False InternalError at the loopback proxy", tag, c.Type, c.Status, c.Reason, c.Message)
			}
			if specGen <= 1 || c.Generation != specGen {
				t.Errorf("tag %s: spec generation %d, condition generation %d; want the same, above 1", tag, specGen, c.Generation)
			}
			return
		}
	}
	t.Errorf("tag %s has no ImportSuccess condition after an import: %+v", tag, cur.Status.Tags)
}

func ptrValue[T any](p *T) any {
	if p == nil {
		return nil
	}
	return *p
}

// TestImportConsistencyCheckAsOpenShiftAPIServer: an ImageStreamImport sent with a stream's uid or
// resourceVersion acts on that stream only, as openshift-apiserver's handler answers it
// (imagestreamimport/rest.go): a missing stream is NotFound and nothing is created, an older
// resourceVersion a Conflict. Sent with neither, it creates the missing stream. (A uid alone never
// reaches the stand-in: kube-apiserver clears it before admission.)
func TestImportConsistencyCheckAsOpenShiftAPIServer(t *testing.T) {
	parallel(t, 0)
	e := newEnv(t)
	ctx := context.Background()
	isis := e.images.ImageV1().ImageStreamImports("openshift")
	streams := e.images.ImageV1().ImageStreams("openshift")
	request := func(name string, meta metav1.ObjectMeta) *imagev1.ImageStreamImport {
		meta.Name = name
		return &imagev1.ImageStreamImport{ObjectMeta: meta, Spec: imagev1.ImageStreamImportSpec{Import: true, Images: []imagev1.ImageImportSpec{{
			From: corev1.ObjectReference{Kind: "DockerImage", Name: "registry.redhat.io/ubi9/python-312:latest"},
			To:   &corev1.LocalObjectReference{Name: "3.12"},
		}}}}
	}

	// The retry of a stream deleted meanwhile: NotFound, and no stream appears.
	_, err := isis.Create(ctx, request("gone", metav1.ObjectMeta{UID: "6c1f0d4e-0000-4000-8000-000000000001", ResourceVersion: "12"}), metav1.CreateOptions{})
	if !apierrors.IsNotFound(err) {
		t.Fatalf("import naming the uid of a missing stream: %v, want NotFound", err)
	}

	// Sent with neither, the same import creates the stream (positive control: the emulator ran).
	if _, err := isis.Create(ctx, request("created", metav1.ObjectMeta{}), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	eventually(t, 10*time.Second, func() (bool, string) {
		is, err := streams.Get(ctx, "created", metav1.GetOptions{})
		if err != nil {
			return false, err.Error()
		}
		return len(is.Spec.Tags) == 1 && is.Spec.Tags[0].Name == "3.12" && len(is.Status.Tags) == 1, fmt.Sprintf("spec %+v status %+v", is.Spec.Tags, is.Status.Tags)
	})
	if _, err := streams.Get(ctx, "gone", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("the import with a uid created the missing stream: %v", err)
	}

	live, err := streams.Get(ctx, "created", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	_, err = isis.Create(ctx, request("created", metav1.ObjectMeta{UID: live.UID, ResourceVersion: "1"}), metav1.CreateOptions{})
	if !apierrors.IsConflict(err) {
		t.Errorf("import naming an older resourceVersion: %v, want Conflict", err)
	}
	// The first import's object may not be deleted by the emulator yet: its name is taken until then.
	eventually(t, 10*time.Second, func() (bool, string) {
		_, err := isis.Create(ctx, request("created", metav1.ObjectMeta{UID: live.UID, ResourceVersion: live.ResourceVersion}), metav1.CreateOptions{})
		return err == nil, "import naming the stream as it is: " + errString(err)
	})
}
