package integration

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"reflect"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	configv1 "github.com/openshift/api/config/v1"
	imagev1 "github.com/openshift/api/image/v1"
	samplesv1 "github.com/openshift/api/samples/v1"
	configclient "github.com/openshift/client-go/config/clientset/versioned"
	imageclient "github.com/openshift/client-go/image/clientset/versioned"
	templateclient "github.com/openshift/client-go/template/clientset/versioned"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/samples-operator-dev/cluster-samples-operator/pkg/desired"
	"github.com/samples-operator-dev/cluster-samples-operator/pkg/inventory"
	"github.com/samples-operator-dev/cluster-samples-operator/test/controlplane"
	"github.com/samples-operator-dev/cluster-samples-operator/test/emulator"
)

// backend is one way of serving the image and template APIs: the stand-ins or the real server.
type backend struct {
	name      string
	cp        *controlplane.ControlPlane
	images    imageclient.Interface
	templates templateclient.Interface
	configs   configclient.Interface
	mu        sync.Mutex
	// seen is what each step stored or answered, by step and object.
	seen map[string]string
}

func newBackend(t *testing.T, name string, opts controlplane.Options) *backend {
	cp := controlplane.StartForTestWith(t, opts)
	b := &backend{name: name, cp: cp, seen: map[string]string{},
		images: imageclient.NewForConfigOrDie(cp.AdminConfig), templates: templateclient.NewForConfigOrDie(cp.AdminConfig),
		configs: configclient.NewForConfigOrDie(cp.AdminConfig)}
	kube := kubernetes.NewForConfigOrDie(cp.AdminConfig)
	for _, dir := range inventory.ArchDirs() {
		if _, err := kube.CoreV1().Namespaces().Create(context.Background(), &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: diffNamespace(dir)}}, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	return b
}

func diffNamespace(archDir string) string {
	return "diff-" + strings.ReplaceAll(strings.ReplaceAll(archDir, "_", "-"), ".", "-")
}

// record keeps what a backend stored or answered for a step, without what the server makes up
// per object (uid, timestamps, resourceVersion, managed fields).
func (b *backend) record(step, key string, obj any, err error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if err != nil {
		if status, ok := err.(apierrors.APIStatus); ok {
			b.seen[step+" "+key] = fmt.Sprintf("error %d %s", status.Status().Code, status.Status().Reason)
		} else {
			b.seen[step+" "+key] = "error " + err.Error()
		}
		return
	}
	data, _ := json.Marshal(obj)
	var m map[string]any
	_ = json.Unmarshal(data, &m)
	if meta, ok := m["metadata"].(map[string]any); ok {
		for _, f := range []string{"uid", "creationTimestamp", "resourceVersion", "managedFields"} {
			delete(meta, f)
		}
	}
	// Status is the importer's, and differs by design (see knownDifferences); spec, metadata
	// and generation are the server's rules.
	if status, ok := m["status"].(map[string]any); ok {
		if repo, ok := status["dockerImageRepository"]; ok {
			b.seen[step+" "+key+" status.dockerImageRepository"] = fmt.Sprint(repo)
		}
		delete(m, "status")
	}
	out, _ := json.Marshal(m)
	b.seen[step+" "+key] = string(out)
}

// knownDifferences are the answers the stand-ins cannot play, by kind and field, each with its
// reason (docs/design.md lists them too).
var knownDifferences = map[string]string{
	"imagestream status.dockerImageRepository": "the real server computes it on every read; the stand-in stores it when the import emulator writes status, which this test does not run for these steps",
	"template .metadata.generation":            "CRD storage sets metadata.generation on every object, and admission cannot remove it; openshift-apiserver's template storage sets none. The operator never reads a template's generation",
}

func knownDifference(key, path string) (string, bool) {
	for kind, why := range knownDifferences {
		k, field, _ := strings.Cut(kind, " ")
		if strings.Contains(key, "/"+k+"/") && (strings.HasSuffix(key, " "+field) || strings.HasPrefix(path, field+":")) {
			return why, true
		}
	}
	return "", false
}

// TestStandInsAnswerAsOpenShiftAPIServer runs one table of requests against the stand-ins and the
// real openshift-apiserver and compares, field by field, what each stores and answers: every
// sample of every arch-dir created, then updated with the operator's next write (another
// samplesRegistry and version), admin edits, a registry the import allow-list refuses (on
// create, and on updates within a repository the stream names and to another one), and
// ImageStreamImports against a missing stream with and without a resourceVersion.
func TestStandInsAnswerAsOpenShiftAPIServer(t *testing.T) {
	parallel(t, 2*aboutAMinute) // 118 s in CI
	requireReal(t, "openshift-apiserver", os.Getenv(controlplane.OpenShiftBinDirEnv) != "", "set "+controlplane.OpenShiftBinDirEnv+" to compare the stand-ins with it")
	ctx := context.Background()
	backends := []*backend{
		newBackend(t, "stand-ins", controlplane.Options{StandIns: true}),
		newBackend(t, "openshift-apiserver", controlplane.Options{}),
	}
	if backends[0].cp.RealOpenShiftAPIServer() || !backends[1].cp.RealOpenShiftAPIServer() {
		t.Fatal("the two control planes do not serve the two backends")
	}
	nextSpec := &samplesv1.ConfigSpec{SamplesRegistry: "mirror.example.com:5000/samples"}
	// 1 and 2, every arch-dir of both backends at once (each in a namespace of its own): 1,504
	// requests, one at a time, made this the longest test with the real servers (118 s).
	var wg sync.WaitGroup
	for _, b := range backends {
		for _, dir := range inventory.ArchDirs() {
			wg.Go(func() { createAndRewrite(ctx, t, b, dir, nextSpec) })
		}
	}
	wg.Wait()
	for _, b := range backends {
		// 3. An admin's edits of one stream, one at a time.
		ns := diffNamespace(inventory.ArchDirOCPX86_64)
		streams := b.images.ImageV1().ImageStreams(ns)
		for _, edit := range []struct {
			name   string
			change func(*imagev1.ImageStream)
		}{
			{"tag removed", func(is *imagev1.ImageStream) { is.Spec.Tags = is.Spec.Tags[1:] }},
			{"from changed", func(is *imagev1.ImageStream) {
				is.Spec.Tags[0].From = &corev1.ObjectReference{Kind: "DockerImage", Name: "quay.io/someone/python:edited"}
			}},
			{"annotation changed", func(is *imagev1.ImageStream) { is.Annotations["openshift.io/display-name"] = "Edited" }},
			{"scheduled import set", func(is *imagev1.ImageStream) { is.Spec.Tags[0].ImportPolicy.Scheduled = true }},
			{"tag pointing at a missing tag", func(is *imagev1.ImageStream) {
				is.Spec.Tags = append(is.Spec.Tags, imagev1.TagReference{Name: "dangling", From: &corev1.ObjectReference{Kind: "ImageStreamTag", Name: "no-such-tag"}})
			}},
			{"invalid tag name", func(is *imagev1.ImageStream) { is.Spec.Tags[0].Name = "not/valid" }},
		} {
			is, err := streams.Get(ctx, "python", metav1.GetOptions{})
			if err != nil {
				t.Fatal(err)
			}
			edit.change(is)
			got, err := streams.Update(ctx, is, metav1.UpdateOptions{})
			b.record("3 admin edit: "+edit.name, ns+"/imagestream/python", got, err)
		}

		// 4. A registry the import allow-list leaves out. A stream created before the list
		// narrowed may still move a tag within a repository it names, not to another repository.
		before := &imagev1.ImageStream{ObjectMeta: metav1.ObjectMeta{Name: "allowlist-updated"}, Spec: imagev1.ImageStreamSpec{Tags: []imagev1.TagReference{{
			Name: "1", From: &corev1.ObjectReference{Kind: "DockerImage", Name: "registry.redhat.io/ubi9/python-311:1"}}}}}
		if _, err := streams.Create(ctx, before, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		setAllowList(t, b, []configv1.RegistryLocation{{DomainName: "quay.io"}})
		for _, update := range []struct{ step, ref string }{
			{"4 allow-list admits an update within a repository the stream names", "registry.redhat.io/ubi9/python-311:2"},
			{"4 allow-list refuses an update to another repository of the registry", "registry.redhat.io/ubi9/python-312:1"},
		} {
			is, err := streams.Get(ctx, before.Name, metav1.GetOptions{})
			if err != nil {
				t.Fatal(err)
			}
			is.Spec.Tags[0].From.Name = update.ref
			got, err := streams.Update(ctx, is, metav1.UpdateOptions{})
			b.record(update.step, ns+"/imagestream/"+before.Name, got, err)
		}
		refused := &imagev1.ImageStream{ObjectMeta: metav1.ObjectMeta{Name: "allowlist-refused"}, Spec: imagev1.ImageStreamSpec{Tags: []imagev1.TagReference{{
			Name: "1", From: &corev1.ObjectReference{Kind: "DockerImage", Name: "registry.redhat.io/ubi9/python-311:latest"}}}}}
		got, err := streams.Create(ctx, refused, metav1.CreateOptions{})
		b.record("4 allow-list refuses the registry", ns+"/imagestream/allowlist-refused", got, err)
		allowed := refused.DeepCopy()
		allowed.Name, allowed.Spec.Tags[0].From.Name = "allowlist-allowed", "quay.io/someone/python:1"
		got, err = streams.Create(ctx, allowed, metav1.CreateOptions{})
		b.record("4 allow-list admits the registry", ns+"/imagestream/allowlist-allowed", got, err)
		setAllowList(t, b, nil)

		// 5. ImageStreamImports against a missing stream.
		runImporter(t, b, ns, func() {
			imports := b.images.ImageV1().ImageStreamImports(ns)
			isi := func(name, rv string) *imagev1.ImageStreamImport {
				return &imagev1.ImageStreamImport{ObjectMeta: metav1.ObjectMeta{Name: name, ResourceVersion: rv}, Spec: imagev1.ImageStreamImportSpec{
					Import: true,
					Images: []imagev1.ImageImportSpec{{From: corev1.ObjectReference{Kind: "DockerImage", Name: "quay.io/someone/app:1"}, To: &corev1.LocalObjectReference{Name: "1"}}},
				}}
			}
			_, err := imports.Create(ctx, isi("isi-missing-with-rv", "12345"), metav1.CreateOptions{})
			b.record("5 import naming a resourceVersion, stream missing", ns+"/imagestreamimport/isi-missing-with-rv", nil, err)
			_, err = streams.Get(ctx, "isi-missing-with-rv", metav1.GetOptions{})
			b.record("5 import naming a resourceVersion, stream missing: stream", ns+"/imagestream/isi-missing-with-rv", nil, err)
			_, _ = imports.Create(ctx, isi("isi-creates", ""), metav1.CreateOptions{})
			var created *imagev1.ImageStream
			var getErr error
			// The stand-ins' import emulator creates the stream after the fact; on a loaded
			// machine it may take a while, hence the package's patience.
			deadline := time.Now().Add(10 * time.Second * patience)
			for created, getErr = streams.Get(ctx, "isi-creates", metav1.GetOptions{}); apierrors.IsNotFound(getErr) && time.Now().Before(deadline); created, getErr = streams.Get(ctx, "isi-creates", metav1.GetOptions{}) {
				time.Sleep(100 * time.Millisecond)
			}
			if created != nil {
				// The import's outcome (status, and the spec tag's generation it bumps) is the
				// importer's; the rule compared is that the stream is created with the tag.
				created = created.DeepCopy()
				for i := range created.Spec.Tags {
					created.Spec.Tags[i].Generation = nil
				}
				created.Generation = 0
				delete(created.Annotations, "openshift.io/image.dockerRepositoryCheck")
			}
			b.record("5 import without resourceVersion or uid, stream missing: stream", ns+"/imagestream/isi-creates", created, getErr)
		})
	}

	standIn, real := backends[0], backends[1]
	keys := map[string]bool{}
	for k := range standIn.seen {
		keys[k] = true
	}
	for k := range real.seen {
		keys[k] = true
	}
	sorted := make([]string, 0, len(keys))
	for k := range keys {
		sorted = append(sorted, k)
	}
	sort.Strings(sorted)
	steps := map[string]*[3]int{} // step -> answers equal, differing only where known, differing
	for _, k := range sorted {
		step := k[:strings.Index(k, " diff-")]
		if steps[step] == nil {
			steps[step] = &[3]int{}
		}
		counts := steps[step]
		a, b := standIn.seen[k], real.seen[k]
		if a == b {
			counts[0]++
			if strings.HasPrefix(a, "error") || strings.HasPrefix(step, "5") {
				t.Logf("%s: both %.120s", k, a)
			}
			continue
		}
		if why, known := knownDifference(k, ""); known {
			counts[1]++
			t.Logf("known difference %s (%s): stand-ins %q, real %q", k, why, a, b)
			continue
		}
		var unknown []string
		for _, d := range jsonDifferences(a, b) {
			if why, known := knownDifference(k, d); known {
				t.Logf("known difference %s %s (%s)", k, d, why)
				continue
			}
			unknown = append(unknown, d)
		}
		if len(unknown) > 0 {
			counts[2]++
			t.Errorf("%s differs: %s", k, strings.Join(unknown, "; "))
		} else {
			counts[1]++
		}
	}
	var table []string
	for step, c := range steps {
		table = append(table, fmt.Sprintf("| %s | %d | %d | %d |", step, c[0], c[1], c[2]))
	}
	sort.Strings(table)
	t.Logf("stand-ins vs openshift-apiserver (answers: equal | differing only where known | differing):\n%s", strings.Join(table, "\n"))
	if !reflect.DeepEqual(len(standIn.seen), len(real.seen)) {
		t.Errorf("the backends answered %d and %d requests", len(standIn.seen), len(real.seen))
	}
}

// createAndRewrite creates every sample of archDir as the operator would at v1, and writes each
// again as the operator's next write would (another samplesRegistry, v2), recording both answers.
func createAndRewrite(ctx context.Context, t *testing.T, b *backend, archDir string, nextSpec *samplesv1.ConfigSpec) {
	inv, err := inventory.Embedded(archDir)
	if err != nil {
		t.Error(err)
		return
	}
	ns := diffNamespace(archDir)
	streams, tmpls := b.images.ImageV1().ImageStreams(ns), b.templates.TemplateV1().Templates(ns)
	for _, name := range inv.ImageStreamNames() {
		want, _, _ := desired.ImageStream(&samplesv1.ConfigSpec{}, desired.Choice{Version: "v1"}, inv, name)
		got, err := streams.Create(ctx, want, metav1.CreateOptions{})
		b.record("1 create", ns+"/imagestream/"+name, got, err)
		if err != nil {
			continue
		}
		next, _, _ := desired.ImageStream(nextSpec, desired.Choice{Version: "v2", SamplesRegistry: nextSpec.SamplesRegistry}, inv, name)
		action := desired.ForImageStream(desired.Managed, next, false, got)
		updated, err := streams.Update(ctx, action.Object, metav1.UpdateOptions{})
		b.record("2 operator's next write", ns+"/imagestream/"+name, updated, err)
	}
	for _, name := range inv.TemplateNames() {
		want, _, _ := desired.Template(&samplesv1.ConfigSpec{}, desired.Choice{Version: "v1"}, inv, name)
		got, err := tmpls.Create(ctx, want, metav1.CreateOptions{})
		b.record("1 create", ns+"/template/"+name, got, err)
		if err != nil {
			continue
		}
		next, _, _ := desired.Template(nextSpec, desired.Choice{Version: "v2"}, inv, name)
		action := desired.ForTemplate(desired.Managed, next, false, got)
		updated, err := tmpls.Update(ctx, action.Object, metav1.UpdateOptions{})
		b.record("2 operator's next write", ns+"/template/"+name, updated, err)
	}
}

// setAllowList sets images.config.openshift.io/cluster spec.allowedRegistriesForImport and, on
// the real server, rolls it out as its operator would.
func setAllowList(t *testing.T, b *backend, allowed []configv1.RegistryLocation) {
	t.Helper()
	ctx := context.Background()
	img, err := b.configs.ConfigV1().Images().Get(ctx, "cluster", metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		img, err = b.configs.ConfigV1().Images().Create(ctx, &configv1.Image{ObjectMeta: metav1.ObjectMeta{Name: "cluster"}}, metav1.CreateOptions{})
	}
	if err != nil {
		t.Fatal(err)
	}
	img.Spec.AllowedRegistriesForImport = allowed
	if _, err := b.configs.ConfigV1().Images().Update(ctx, img, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := b.cp.RolloutAllowedRegistriesForImport(ctx, allowed); err != nil {
		t.Fatal(err)
	}
}

// runImporter runs the import emulator in namespace while f runs: on the stand-ins it plays the
// server's handling of ImageStreamImports; the real server handles them itself.
func runImporter(t *testing.T, b *backend, namespace string, f func()) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		_ = emulator.New(b.images, namespace).Run(ctx)
	}()
	f()
	cancel()
	<-done
}

// jsonDifferences names the paths where two recorded answers differ, with both values.
func jsonDifferences(a, b string) []string {
	var va, vb any
	if json.Unmarshal([]byte(a), &va) != nil || json.Unmarshal([]byte(b), &vb) != nil {
		return []string{fmt.Sprintf("stand-ins %q, openshift-apiserver %q", a, b)}
	}
	var out []string
	var walk func(path string, x, y any)
	walk = func(path string, x, y any) {
		switch xv := x.(type) {
		case map[string]any:
			yv, ok := y.(map[string]any)
			if !ok {
				break
			}
			keys := map[string]bool{}
			for k := range xv {
				keys[k] = true
			}
			for k := range yv {
				keys[k] = true
			}
			for k := range keys {
				walk(path+"."+k, xv[k], yv[k])
			}
			return
		case []any:
			yv, ok := y.([]any)
			if !ok || len(xv) != len(yv) {
				break
			}
			for i := range xv {
				walk(fmt.Sprintf("%s[%d]", path, i), xv[i], yv[i])
			}
			return
		}
		if !reflect.DeepEqual(x, y) {
			xs, _ := json.Marshal(x)
			ys, _ := json.Marshal(y)
			out = append(out, fmt.Sprintf("%s: stand-ins %.200s, openshift-apiserver %.200s", path, xs, ys))
		}
	}
	walk("", va, vb)
	sort.Strings(out)
	return out
}
