package integration

import (
	"context"
	"encoding/json"
	"fmt"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	imagev1 "github.com/openshift/api/image/v1"
	operatorv1 "github.com/openshift/api/operator/v1"
	samplesv1 "github.com/openshift/api/samples/v1"
	templatev1 "github.com/openshift/api/template/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/util/retry"

	"github.com/samples-operator-dev/cluster-samples-operator/pkg/desired"
	"github.com/samples-operator-dev/cluster-samples-operator/pkg/inventory"
	"github.com/samples-operator-dev/cluster-samples-operator/test/controlplane"
)

func (e *env) imageStream(name string) *imagev1.ImageStream {
	e.t.Helper()
	is, err := e.images.ImageV1().ImageStreams("openshift").Get(context.Background(), name, metav1.GetOptions{})
	if err != nil {
		e.t.Fatalf("getting imagestream %s: %v", name, err)
	}
	return is
}

func (e *env) template(name string) *templatev1.Template {
	e.t.Helper()
	tp, err := e.tmpl.TemplateV1().Templates("openshift").Get(context.Background(), name, metav1.GetOptions{})
	if err != nil {
		e.t.Fatalf("getting template %s: %v", name, err)
	}
	return tp
}

func (e *env) imageStreamExists(name string) bool {
	_, err := e.images.ImageV1().ImageStreams("openshift").Get(context.Background(), name, metav1.GetOptions{})
	return err == nil
}

func (e *env) templateExists(name string) bool {
	_, err := e.tmpl.TemplateV1().Templates("openshift").Get(context.Background(), name, metav1.GetOptions{})
	return err == nil
}

// editImageStream changes a sample as an admin's client does: read, change, write, and again on a
// conflict (the importer writes status concurrently).
func (e *env) editImageStream(name string, mutate func(*imagev1.ImageStream)) *imagev1.ImageStream {
	e.t.Helper()
	var updated *imagev1.ImageStream
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		is := e.imageStream(name)
		mutate(is)
		var err error
		updated, err = e.images.ImageV1().ImageStreams("openshift").Update(context.Background(), is, metav1.UpdateOptions{})
		return err
	})
	if err != nil {
		e.t.Fatalf("editing imagestream %s: %v", name, err)
	}
	return updated
}

func (e *env) editTemplate(name string, mutate func(*templatev1.Template)) {
	e.t.Helper()
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		tp := e.template(name)
		mutate(tp)
		_, err := e.tmpl.TemplateV1().Templates("openshift").Update(context.Background(), tp, metav1.UpdateOptions{})
		return err
	})
	if err != nil {
		e.t.Fatalf("editing template %s: %v", name, err)
	}
}

func hasTag(is *imagev1.ImageStream, tag string) bool {
	for _, t := range is.Spec.Tags {
		if t.Name == tag {
			return true
		}
	}
	return false
}

// TestDriftIsRevertedWithinASecond: a removed spec tag, an edited display name, an edited template
// parameter, a removed version annotation and a deleted sample all come back within a second, while
// what an admin adds (a label, an annotation) stays.
func TestDriftIsRevertedWithinASecond(t *testing.T) {
	e := newEnv(t)
	inv := x86Inventory(t)
	e.startOperator(defaultOptions())
	e.waitManaged(t, inv, "v1")
	ctx := context.Background()
	isClient := e.images.ImageV1().ImageStreams("openshift")
	tClient := e.tmpl.TemplateV1().Templates("openshift")

	// A spec tag removed.
	removedTag := e.imageStream("python").Spec.Tags[0].Name
	e.editImageStream("python", func(is *imagev1.ImageStream) { is.Spec.Tags = is.Spec.Tags[1:] })
	took := within(t, time.Second, func() (bool, string) {
		return hasTag(e.imageStream("python"), removedTag), "tag " + removedTag + " not back"
	})
	t.Logf("removed spec tag reverted in %s", took)

	// A tag's display name edited, plus an admin's own label and annotation.
	want := e.imageStream("python").Spec.Tags[0].Annotations["openshift.io/display-name"]
	e.editImageStream("python", func(is *imagev1.ImageStream) {
		is.Spec.Tags[0].Annotations["openshift.io/display-name"] = "Edited by an admin"
		is.Labels["team"] = "platform"
		is.Annotations["admin.example/note"] = "keep me"
	})
	took = within(t, time.Second, func() (bool, string) {
		got := e.imageStream("python").Spec.Tags[0].Annotations["openshift.io/display-name"]
		return got == want, fmt.Sprintf("display-name is %q, want %q", got, want)
	})
	t.Logf("edited display-name reverted in %s", took)
	python := e.imageStream("python")
	if python.Labels["team"] != "platform" || python.Annotations["admin.example/note"] != "keep me" {
		t.Errorf("the admin's label and annotation were dropped: labels %v annotations %v", python.Labels, python.Annotations)
	}

	// The version annotation and the managed label removed.
	e.editImageStream("python", func(is *imagev1.ImageStream) {
		is.Annotations[desired.VersionAnnotation] = "someone-else"
		delete(is.Labels, desired.ManagedLabel)
	})
	within(t, time.Second, func() (bool, string) {
		is := e.imageStream("python")
		return is.Annotations[desired.VersionAnnotation] == "v1" && is.Labels[desired.ManagedLabel] == "true", "version/label not restored"
	})

	// A template parameter edited.
	wantValue := e.template("jenkins-ephemeral").Parameters[0].Value
	e.editTemplate("jenkins-ephemeral", func(tp *templatev1.Template) { tp.Parameters[0].Value = "edited" })
	took = within(t, time.Second, func() (bool, string) {
		got := e.template("jenkins-ephemeral").Parameters[0].Value
		return got == wantValue, fmt.Sprintf("parameter value %q, want %q", got, wantValue)
	})
	t.Logf("edited template parameter reverted in %s", took)

	// A template object edited, with an admin's annotation beside it. The operator's cache holds
	// only digests of a template's objects; the update is built from the whole template, keeps
	// the admin's annotation and carries nothing of the cache.
	wantObject := e.template("jenkins-ephemeral").Objects[0].Raw
	e.editTemplate("jenkins-ephemeral", func(tp *templatev1.Template) {
		tp.Objects[0].Raw = []byte(`{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"edited"}}`)
		tp.Annotations["admin.example/note"] = "keep me"
	})
	took = within(t, time.Second, func() (bool, string) {
		got := e.template("jenkins-ephemeral").Objects[0].Raw
		return jsonValuesEqual(got, wantObject), fmt.Sprintf("objects[0] is %s", got)
	})
	t.Logf("edited template object reverted in %s", took)
	jenkins := e.template("jenkins-ephemeral")
	if jenkins.Annotations["admin.example/note"] != "keep me" || len(jenkins.Parameters) == 0 || jenkins.Message == "" {
		t.Errorf("the update from the whole template lost something: annotations %v, %d parameters, message %q",
			jenkins.Annotations, len(jenkins.Parameters), jenkins.Message)
	}
	if _, ok := jenkins.Annotations[desired.ContentDigestAnnotation]; ok {
		t.Errorf("the cache's digest annotation was written to the server")
	}

	// Deleted samples.
	if err := isClient.Delete(ctx, "nodejs", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := tClient.Delete(ctx, "httpd-example", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	took = within(t, time.Second, func() (bool, string) {
		return e.imageStreamExists("nodejs") && e.templateExists("httpd-example"), "deleted samples not recreated"
	})
	t.Logf("deleted samples recreated in %s", took)

	// Once reverted, nothing keeps writing: the admin's additions do not count as drift.
	e.waitQuiet(t, 500*time.Millisecond)
	before := e.operatorWrites(t)
	time.Sleep(time.Second)
	if after := e.operatorWrites(t); fmt.Sprint(after) != fmt.Sprint(before) {
		t.Errorf("the operator kept writing after reverting: before %v after %v", before, after)
	}
	cfg := e.getConfig()
	if !conditionIs(cfg, samplesv1.SamplesExist, "True") {
		t.Errorf("SamplesExist should be True after the reverts: %+v", cfg.Status.Conditions)
	}
}

// TestRemovedAndBackLeavesForeignAndSkippedSamplesAlone: Managed -> Removed -> Managed deletes and
// recreates the managed samples; an admin's imagestream outside the inventory and a skipped,
// edited template come through untouched; RemovePending is True while samples are deleted.
func TestRemovedAndBackLeavesForeignAndSkippedSamplesAlone(t *testing.T) {
	parallel(t, aboutTwentySecond)
	e := newEnv(t)
	inv := x86Inventory(t)
	ctx := context.Background()

	foreign := &imagev1.ImageStream{
		ObjectMeta: metav1.ObjectMeta{Name: "my-team-app", Namespace: "openshift"},
		Spec: imagev1.ImageStreamSpec{Tags: []imagev1.TagReference{{
			Name: "1.0", From: &corev1.ObjectReference{Kind: "DockerImage", Name: "registry.example/team/app:1.0"},
		}}},
	}
	if _, err := e.images.ImageV1().ImageStreams("openshift").Create(ctx, foreign, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	// The importer rewrites the stream once it has imported it (a new generation); compare the
	// operator's doing with that.
	eventually(t, 10*time.Second, func() (bool, string) {
		foreign = e.imageStream("my-team-app")
		_, imported := foreign.Annotations[imagev1.DockerImageRepositoryCheckAnnotation]
		return imported && len(foreign.Status.Tags) == 1, "the admin's imagestream not imported yet"
	})

	e.startOperator(defaultOptions())
	e.waitManaged(t, inv, "v1")
	e.updateConfig(func(c *samplesv1.Config) { c.Spec.SkippedTemplates = []string{"jenkins-persistent"} })
	eventually(t, 10*time.Second, func() (bool, string) {
		tp := e.template("jenkins-persistent")
		return tp.Labels[desired.ManagedLabel] == "false", "skipped template not labelled managed=false"
	})
	e.editTemplate("jenkins-persistent", func(tp *templatev1.Template) { tp.Message = "edited by an admin" })
	firstUID := e.imageStream("python").UID

	sawRemovePending := watchConfigFor(t, e, func(c *samplesv1.Config) bool { return conditionIs(c, samplesv1.RemovePending, "True") })
	e.updateConfig(func(c *samplesv1.Config) { c.Spec.ManagementState = operatorv1.Removed })
	eventually(t, 20*time.Second, func() (bool, string) {
		c := e.getConfig()
		return c.Status.ManagementState == operatorv1.Removed && conditionIs(c, samplesv1.SamplesExist, "False") && conditionIs(c, samplesv1.RemovePending, "False"),
			fmt.Sprintf("status %q conditions %+v", c.Status.ManagementState, c.Status.Conditions)
	})
	if !sawRemovePending() {
		t.Errorf("RemovePending was never True while the samples were deleted")
	}
	for _, name := range inv.ImageStreamNames() {
		if e.imageStreamExists(name) {
			t.Errorf("managed imagestream %s survived Removed", name)
		}
	}
	for _, name := range inv.TemplateNames() {
		if name != "jenkins-persistent" && e.templateExists(name) {
			t.Errorf("managed template %s survived Removed", name)
		}
	}

	e.updateConfig(func(c *samplesv1.Config) { c.Spec.ManagementState = operatorv1.Managed })
	e.waitManaged(t, inv, "v1")
	if e.imageStream("python").UID == firstUID {
		t.Errorf("python was not recreated by Removed -> Managed")
	}
	if got := e.imageStream("my-team-app"); got.Generation != foreign.Generation || len(got.Labels) != 0 {
		t.Errorf("the admin's imagestream was changed: generation %d -> %d, labels %v", foreign.Generation, got.Generation, got.Labels)
	}
	// Neither an admin's imagestream nor the CVO's in-payload ones (manifests/08-*) are touched.
	for _, name := range []string{"my-team-app", "cli", "tools", "must-gather"} {
		if n := len(e.operatorRequests(t, on("imagestreams"), named(name))); n > 0 {
			t.Errorf("the operator sent %d requests naming imagestream %s, which it does not manage", n, name)
		}
	}
	if got := e.template("jenkins-persistent"); got.Message != "edited by an admin" || got.Labels[desired.ManagedLabel] != "false" {
		t.Errorf("the skipped template lost its edit or label: message %q labels %v", got.Message, got.Labels)
	}
}

// watchConfigFor watches the Config from now on and reports whether pred ever held.
func watchConfigFor(t *testing.T, e *env, pred func(*samplesv1.Config) bool) func() bool {
	t.Helper()
	w, err := e.samples.SamplesV1().Configs().Watch(context.Background(), metav1.ListOptions{FieldSelector: "metadata.name=cluster"})
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	seen := false
	go func() {
		for ev := range w.ResultChan() {
			if ev.Type != watch.Modified && ev.Type != watch.Added {
				continue
			}
			if c, ok := ev.Object.(*samplesv1.Config); ok && pred(c) {
				mu.Lock()
				seen = true
				mu.Unlock()
			}
		}
	}()
	t.Cleanup(w.Stop)
	return func() bool {
		mu.Lock()
		defer mu.Unlock()
		return seen
	}
}

// TestConfigChangesOnAManagedCluster: the scenes of an admin changing the Config of a cluster
// whose samples the operator manages, each undone before the next (runScenes).
func TestConfigChangesOnAManagedCluster(t *testing.T) {
	parallel(t, aboutHalfAMinute)
	runScenes(t,
		scene{"SkippedSamplesAreLeftAlone", skippedSamplesAreLeftAlone},
		scene{"UnmanagedWritesNothing", unmanagedWritesNothing},
		scene{"ArchitectureChangeIsRejected", architectureChangeIsRejected},
		scene{"SpecReplacedWithoutArchitectures", specReplacedWithoutArchitectures},
		scene{"BadConfigInput", badConfigInput},
		scene{"ConfigDeletionCleansUpAndRecreatesDefault", configDeletionCleansUpAndRecreatesDefault},
	)
}

// TestRegistryAndRevertsOnAManagedCluster: the scenes of samplesRegistry, the pull secret and an
// admin's edits of samples on a managed cluster, each undone before the next: on the whole
// inventory, since the tag-to-image map is checked against all of it and a burst of reverts
// needs 40 imagestreams (runScenesOnTheWholeInventory).
func TestRegistryAndRevertsOnAManagedCluster(t *testing.T) {
	parallel(t, aboutAMinute) // 78 s in CI
	runScenesOnTheWholeInventory(t,
		scene{"SamplesRegistryRewritesAndBadValuesChangeNothing", samplesRegistryRewritesAndBadValuesChangeNothing},
		scene{"TagToImageMapListsTheInventory", tagToImageMapListsTheInventory},
		scene{"EveryRevertOfABurstIsReported", everyRevertOfABurstIsReported},
		scene{"PullSecretDrivesImportCredentials", pullSecretDrivesImportCredentials},
	)
}

// skippedSamplesAreLeftAlone: a skipped imagestream and template are labelled managed=false,
// keep an admin's edits, are not recreated when deleted; status mirrors the lists; un-skipping
// brings them back under management.
func skippedSamplesAreLeftAlone(t *testing.T, e *env, inv *inventory.Inventory) {
	ctx := context.Background()

	e.updateConfig(func(c *samplesv1.Config) {
		c.Spec.SkippedImagestreams = []string{"ruby"}
		c.Spec.SkippedTemplates = []string{"nginx-example"}
	})
	eventually(t, 10*time.Second, func() (bool, string) {
		c := e.getConfig()
		is, tp := e.imageStream("ruby"), e.template("nginx-example")
		return fmt.Sprint(c.Status.SkippedImagestreams) == "[ruby]" && fmt.Sprint(c.Status.SkippedTemplates) == "[nginx-example]" &&
				is.Labels[desired.ManagedLabel] == "false" && tp.Labels[desired.ManagedLabel] == "false",
			fmt.Sprintf("status skipped %v %v, labels %v %v", c.Status.SkippedImagestreams, c.Status.SkippedTemplates, is.Labels, tp.Labels)
	})

	e.editImageStream("ruby", func(is *imagev1.ImageStream) { is.Spec.Tags = is.Spec.Tags[:1] })
	if err := e.tmpl.TemplateV1().Templates("openshift").Delete(ctx, "nginx-example", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	// Events are handled in the order they come: once a managed sample deleted after these edits
	// is back, the operator has seen the edits too.
	e.proveSamplesWatched(t, "httpd-example")
	if n := len(e.imageStream("ruby").Spec.Tags); n != 1 {
		t.Errorf("the skipped imagestream's edit was reverted: %d tags", n)
	}
	if e.templateExists("nginx-example") {
		t.Errorf("the skipped template was recreated")
	}

	e.updateConfig(func(c *samplesv1.Config) {
		c.Spec.SkippedImagestreams = nil
		c.Spec.SkippedTemplates = nil
	})
	e.waitManaged(t, inv, "v1")
	if n, want := len(e.imageStream("ruby").Spec.Tags), func() int { is, _ := inv.ImageStream("ruby"); return len(is.Spec.Tags) }(); n != want {
		t.Errorf("un-skipped ruby has %d tags, want the inventory's %d", n, want)
	}
}

// samplesRegistryRewritesAndBadValuesChangeNothing: a samplesRegistry rewrites every stream once,
// told as one SamplesRegistryChanged and no SampleReverted; an admin's edit of a rewritten stream
// is still reverted and told; invalid values write nothing; clearing it rewrites back.
func samplesRegistryRewritesAndBadValuesChangeNothing(t *testing.T, e *env, inv *inventory.Inventory) {
	const mirror = "mirror.example:5000/samples"
	e.updateConfig(func(c *samplesv1.Config) { c.Spec.SamplesRegistry = mirror })
	eventually(t, 10*time.Second, func() (bool, string) {
		for _, name := range inv.ImageStreamNames() {
			for _, tag := range e.imageStream(name).Spec.Tags {
				if tag.From != nil && tag.From.Kind == "DockerImage" && !strings.HasPrefix(tag.From.Name, mirror+"/") {
					return false, fmt.Sprintf("%s:%s still pulls %s", name, tag.Name, tag.From.Name)
				}
			}
		}
		return e.getConfig().Status.SamplesRegistry == mirror, "status.samplesRegistry not updated"
	})
	// The rewrite is the operator's own doing: told once, and never as an admin's edit reverted.
	e.waitEvent(t, "SamplesRegistryChanged", mirror)
	e.waitQuiet(t, 300*time.Millisecond)
	if reverted := e.eventsWithReason(t, "SampleReverted"); len(reverted) > 0 {
		t.Errorf("the registry rewrite was reported as reverted edits: %v", reverted)
	}
	// Positive control: an admin's edit of a rewritten stream is a revert, and said so.
	e.editImageStream("python", func(python *imagev1.ImageStream) {
		for i := range python.Spec.Tags {
			if python.Spec.Tags[i].From != nil && python.Spec.Tags[i].From.Kind == "DockerImage" {
				python.Spec.Tags[i].From.Name = "quay.io/someone/python:edited"
				break
			}
		}
	})
	e.waitEvent(t, "SampleReverted", "ImageStream openshift/python")

	e.waitQuiet(t, 300*time.Millisecond)
	invalidFrom := time.Now()
	for _, bad := range []string{"https://mirror.example", "mirror example", "/samples", "mirror.example:notaport"} {
		e.updateConfig(func(c *samplesv1.Config) { c.Spec.SamplesRegistry = bad })
		// The message names the value: the one before it left a ConfigurationValid False too.
		eventually(t, 10*time.Second, func() (bool, string) {
			c := configCondition(e.getConfig(), samplesv1.ConfigurationValid)
			return c != nil && c.Status == corev1.ConditionFalse && strings.Contains(c.Message, fmt.Sprintf("samplesRegistry %q", bad)),
				fmt.Sprintf("ConfigurationValid for %q: %+v", bad, c)
		})
		t.Logf("samplesRegistry %q: %s", bad, configCondition(e.getConfig(), samplesv1.ConfigurationValid).Message)
	}
	time.Sleep(500 * time.Millisecond)
	if writes := e.sampleWritesSince(t, invalidFrom); len(writes) > 0 {
		t.Errorf("samples were written while samplesRegistry was invalid: %v", writes)
	}
	e.updateConfig(func(c *samplesv1.Config) { c.Spec.SamplesRegistry = "" })
	e.waitManaged(t, inv, "v1")
	is, _ := inv.ImageStream("python")
	want := is.Spec.Tags[0]
	// Looked up by name: the server returns spec.tags sorted by name, not in the inventory's order.
	// And waited for: the status was Managed at v1 all along, so waitManaged does not wait for
	// the rewrite, which takes the operator a few milliseconds per write.
	eventually(t, 10*time.Second, func() (bool, string) {
		for _, tag := range e.imageStream("python").Spec.Tags {
			if tag.Name == want.Name && tag.From.Name != want.From.Name {
				return false, fmt.Sprintf("clearing samplesRegistry left %s:%s at %s, want the inventory's %s", is.Name, tag.Name, tag.From.Name, want.From.Name)
			}
		}
		return true, ""
	})
	e.waitEvent(t, "SamplesRegistryChanged", "is now empty")
	e.waitQuiet(t, 300*time.Millisecond)
	if reverted := e.eventsWithReason(t, "SampleReverted"); len(reverted) != 1 {
		t.Errorf("want only the admin's edit reported as reverted, got %v", reverted)
	}
}

// eventsWithReason lists the messages of the operator's events with this reason.
//
// It gives one message per occurrence: the recorder merges a repeated Event into one object whose
// count (or series.count) grows, and a check for "one Event" must see the repeats. In a scene, an
// object first recorded before the scene counts once: its earlier occurrences are not the
// scene's.
func (e *env) eventsWithReason(t *testing.T, reason string) []string {
	t.Helper()
	var out []string
	for _, ev := range e.operatorEvents(t) {
		if ev.Reason != reason {
			continue
		}
		for range occurrences(ev, e.since) {
			out = append(out, ev.Message)
		}
	}
	return out
}

// occurrences is how many times an Event object was recorded since since (zero: ever).
func occurrences(ev corev1.Event, since time.Time) int {
	n := max(int(ev.Count), 1)
	if ev.Series != nil {
		n = max(n, int(ev.Series.Count))
	}
	first := ev.FirstTimestamp.Time
	if first.IsZero() {
		first = ev.EventTime.Time
	}
	if !since.IsZero() && first.Before(since) {
		return 1
	}
	return n
}

// operatorEvents is the tests' one way to read what the operator told an admin: the Events in
// its namespace, those of the current scene only (e.since; see runScenes). An Event the
// recorder repeats is one object whose lastTimestamp moves, so a repeat in this scene counts.
func (e *env) operatorEvents(t *testing.T) []corev1.Event {
	t.Helper()
	list, err := e.kube.CoreV1().Events(controlplane.OperatorNamespace).List(context.Background(), metav1.ListOptions{})
	if err != nil {
		t.Fatalf("listing the operator's events: %v", err)
	}
	var out []corev1.Event
	for _, ev := range list.Items {
		last := ev.LastTimestamp.Time
		if ev.Series != nil && ev.Series.LastObservedTime.After(last) {
			last = ev.Series.LastObservedTime.Time
		}
		if ev.EventTime.After(last) {
			last = ev.EventTime.Time
		}
		if !e.since.IsZero() && last.Before(e.since) {
			continue
		}
		out = append(out, ev)
	}
	return out
}

// unmanagedWritesNothing: in Unmanaged the operator neither recreates, reverts nor deletes.
func unmanagedWritesNothing(t *testing.T, e *env, inv *inventory.Inventory) {
	ctx := context.Background()

	e.updateConfig(func(c *samplesv1.Config) { c.Spec.ManagementState = operatorv1.Unmanaged })
	eventually(t, 10*time.Second, func() (bool, string) {
		c := e.getConfig()
		return c.Status.ManagementState == operatorv1.Unmanaged, "status not Unmanaged"
	})
	e.waitQuiet(t, 300*time.Millisecond)
	before := e.operatorWrites(t)

	if err := e.images.ImageV1().ImageStreams("openshift").Delete(ctx, "jenkins", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	e.editTemplate("jenkins-ephemeral", func(tp *templatev1.Template) { tp.Message = "unmanaged edit" })
	time.Sleep(1500 * time.Millisecond)
	if e.imageStreamExists("jenkins") {
		t.Errorf("jenkins was recreated while Unmanaged")
	}
	if e.template("jenkins-ephemeral").Message != "unmanaged edit" {
		t.Errorf("the template edit was reverted while Unmanaged")
	}
	if after := e.operatorWrites(t); fmt.Sprint(after) != fmt.Sprint(before) {
		t.Errorf("writes while Unmanaged: before %v after %v", before, after)
	}

	e.updateConfig(func(c *samplesv1.Config) { c.Spec.ManagementState = operatorv1.Managed })
	e.waitManaged(t, inv, "v1")
}

// architectureChangeIsRejected: after bootstrap, a new architecture is refused with a message
// and nothing is deleted or changed.
func architectureChangeIsRejected(t *testing.T, e *env, inv *inventory.Inventory) {
	changed := time.Now()
	e.updateConfig(func(c *samplesv1.Config) { c.Spec.Architectures = []string{"ppc64le"} })
	eventually(t, 10*time.Second, func() (bool, string) {
		c := configCondition(e.getConfig(), samplesv1.ConfigurationValid)
		return c != nil && c.Status == corev1.ConditionFalse && strings.Contains(c.Message, "cannot change from [x86_64] to [ppc64le]"),
			fmt.Sprintf("ConfigurationValid: %+v", c)
	})
	time.Sleep(500 * time.Millisecond)
	if ok, why := e.samplesInPlace(inv, "v1", sets.New[string](), sets.New[string]()); !ok {
		t.Errorf("samples changed after a rejected architecture change: %s", why)
	}
	if writes := e.sampleWritesSince(t, changed); len(writes) > 0 {
		t.Errorf("samples were written after a rejected architecture change: %v", writes)
	}
	e.updateConfig(func(c *samplesv1.Config) { c.Spec.Architectures = []string{"x86_64"} })
	eventually(t, 10*time.Second, func() (bool, string) {
		return conditionIs(e.getConfig(), samplesv1.ConfigurationValid, "True"), "ConfigurationValid not back to True"
	})
}

// configDeletionCleansUpAndRecreatesDefault: deleting the Config deletes the managed samples
// (the finalizer holds the Config until then), then a default Config is created again and the
// samples come back, newer than before.
func configDeletionCleansUpAndRecreatesDefault(t *testing.T, e *env, inv *inventory.Inventory) {
	ctx := context.Background()
	old := e.getConfig()
	oldPython := e.imageStream("python")

	if err := e.samples.SamplesV1().Configs().Delete(ctx, "cluster", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	eventually(t, 20*time.Second, func() (bool, string) {
		cfg, err := e.samples.SamplesV1().Configs().Get(ctx, "cluster", metav1.GetOptions{})
		if err != nil {
			return false, err.Error()
		}
		return cfg.UID != old.UID, "the Config was not recreated"
	})
	e.waitManaged(t, inv, "v1")
	if python := e.imageStream("python"); python.UID == oldPython.UID {
		t.Errorf("python was not deleted and recreated with the Config")
	}
	if cfg := e.getConfig(); len(cfg.Finalizers) != 1 {
		t.Errorf("the new Config has finalizers %v", cfg.Finalizers)
	}
}

// TestResyncWithNothingChangedWritesNothing: informer resyncs re-run every sync, and none writes.
func TestResyncWithNothingChangedWritesNothing(t *testing.T) {
	parallel(t, 0)
	e := newEnv(t)
	inv := x86Inventory(t)
	opts := defaultOptions()
	opts.Resync = time.Second
	e.startOperator(opts)
	e.waitManaged(t, inv, "v1")
	e.waitQuiet(t, 500*time.Millisecond)
	before := e.operatorWrites(t)
	time.Sleep(3500 * time.Millisecond) // three resyncs
	if after := e.operatorWrites(t); fmt.Sprint(after) != fmt.Sprint(before) {
		t.Errorf("writes during resyncs with nothing changed: before %v after %v", before, after)
	}
	e.assertNoCreateOfWhatExists(t)
}

// assertNoCreateOfWhatExists fails the test for each create of the operator's that met
// AlreadyExists: the object was there, and the operator had created it or its cache showed it.
// (The audit log names no object for a create sent to an aggregated API server, only its
// resource.)
func (e *env) assertNoCreateOfWhatExists(t *testing.T) {
	t.Helper()
	creates := 0
	for _, ev := range e.operatorRequests(t) {
		if ev.Verb != "create" {
			continue
		}
		creates++
		// An import's 409 says the stream changed since the retry was built, not that it existed.
		if ev.Code == 409 && ev.Resource != "imagestreamimports" {
			t.Errorf("the operator created %s %q, which existed already (409); its history:\n%s", ev.Resource, ev.Name, e.historyOf(t, ev.Resource, ev.Name))
		}
	}
	if creates == 0 {
		t.Errorf("the audit log holds no create of the operator's: nothing was checked")
	}
}

// jsonValuesEqual compares two JSON documents as values, as the server may reorder keys.
func jsonValuesEqual(a, b []byte) bool {
	var va, vb interface{}
	if json.Unmarshal(a, &va) != nil || json.Unmarshal(b, &vb) != nil {
		return false
	}
	return reflect.DeepEqual(va, vb)
}
