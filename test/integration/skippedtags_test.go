package integration

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	imagev1 "github.com/openshift/api/image/v1"
	samplesv1 "github.com/openshift/api/samples/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/samples-operator-dev/cluster-samples-operator/pkg/configspec"
	"github.com/samples-operator-dev/cluster-samples-operator/pkg/desired"
	"github.com/samples-operator-dev/cluster-samples-operator/pkg/imports"
	"github.com/samples-operator-dev/cluster-samples-operator/pkg/inventory"
)

// TestAnAdminSkipsOneBrokenTag: a tag whose import fails, recorded and retried, then skipped with
// the Config's skipped-imagestream-tags annotation, with one valid entry among a duplicate, a
// malformed one and a name the inventory lacks. The operator removes the tag from the live stream
// in one write and writes nothing else; ConfigurationValid stays True and names each bad entry;
// the import record drops the tag and no import of the stream follows; an edit of another tag of
// the stream is still reverted and the skipped tag is not recreated; an admin who puts it back
// keeps it, and its failing import is neither recorded nor retried; with the annotation cleared,
// the operator's tag comes back.
func TestAnAdminSkipsOneBrokenTag(t *testing.T) {
	parallel(t, aboutHalfAMinute)
	e := newEnv(t)
	inv := x86Inventory(t)
	python, _ := inv.ImageStream("python")
	unfollowed := unfollowedDockerTags(inv, "python")
	if len(unfollowed) < 2 {
		t.Fatal("python has fewer than two DockerImage tags no other tag follows")
	}
	broken, other := unfollowed[0], unfollowed[1]
	// The tag is broken indeed: its import fails, is recorded and retried until it is skipped.
	e.failImport(inv, "python", broken)
	const retryInterval = 3 * time.Second
	opts := defaultOptions()
	opts.ImportRetryInterval = retryInterval
	e.startOperator(opts)
	e.waitManaged(t, inv, "v1")
	e.waitImportFailedAndRetried(t, "python", broken)

	tagIn := func(is *imagev1.ImageStream, name string) *imagev1.TagReference {
		for i := range is.Spec.Tags {
			if is.Spec.Tags[i].Name == name {
				return &is.Spec.Tags[i]
			}
		}
		return nil
	}
	hasTag := func(is *imagev1.ImageStream, tag string) bool { return tagIn(is, tag) != nil }
	annotatedAt := time.Now()
	value := fmt.Sprintf("python:%s, python:%s,ruby:no-such-tag,python:,has space:1", broken, broken)
	e.updateConfig(func(c *samplesv1.Config) {
		if c.Annotations == nil {
			c.Annotations = map[string]string{}
		}
		c.Annotations[configspec.SkippedImageStreamTagsAnnotation] = value
	})
	eventually(t, 30*time.Second, func() (bool, string) {
		is := e.imageStream("python")
		return is != nil && !hasTag(is, broken) && is.Annotations[desired.StreamSkippedTagsAnnotation] == broken,
			fmt.Sprintf("python still has %s, or does not name it skipped (%v)", broken, is.Annotations)
	})
	eventually(t, 30*time.Second, func() (bool, string) {
		c := configCondition(e.getConfig(), samplesv1.ConfigurationValid)
		if c == nil || c.Status != corev1.ConditionTrue {
			return false, fmt.Sprintf("ConfigurationValid %+v, want True", c)
		}
		for _, part := range []string{configspec.SkippedImageStreamTagsAnnotation, `"python:" (no tag)`, `"has space:1" (spaces inside)`,
			"listed more than once: python:" + broken, "ruby:no-such-tag"} {
			if !strings.Contains(c.Message, part) {
				return false, fmt.Sprintf("ConfigurationValid's message %q does not name %s", c.Message, part)
			}
		}
		return true, ""
	})
	// One write, of python, for the annotation. The canary's recreate is told apart by time, not
	// by name: kube-apiserver's audit log does not name a create it proxies, and a create
	// openshift-apiserver never saw (a 503 from the proxy) is named by neither log.
	canaryAt := time.Now()
	e.proveSamplesWatched(t, "httpd-example")
	var writes []string
	for _, ev := range e.operatorRequests(t, stateWrites, onSamples, receivedAfter(annotatedAt), receivedBefore(canaryAt)) {
		writes = append(writes, ev.Verb+" "+byObject(ev))
	}
	if !slices.Equal(writes, []string{"update imagestreams/python"}) {
		t.Errorf("the annotation made the operator write %v, want one update of python", writes)
	}
	for _, ev := range e.operatorRequests(t, stateWrites, onSamples, receivedAfter(canaryAt)) {
		if ev.Verb != "create" || ev.Resource != "templates" || (ev.Name != "" && ev.Name != "httpd-example") {
			t.Errorf("after the canary's deletion the operator wrote %s %s, want only the canary's recreate", ev.Verb, byObject(ev))
		}
	}
	// The record drops the skipped tag (the only failed one: the record goes), and its retries
	// stop: none in three retry intervals after that.
	e.waitNoImportRecord(t, "python")
	e.assertImportsStopped(t, retryInterval, "its only failed tag skipped", "python")

	// An edit of another tag is reverted; the skipped tag is not recreated.
	e.editTag(t, "python", other, func(tag *imagev1.TagReference) { tag.From.Name = "registry.example.com/edited:1" })
	eventually(t, 30*time.Second, func() (bool, string) {
		is, tag := e.tagOf(t, "python", other)
		return tag.From.Name != "registry.example.com/edited:1" && !hasTag(is, broken),
			fmt.Sprintf("python:%s from %s, %s there: %v", other, tag.From.Name, broken, hasTag(is, broken))
	})

	// An admin who puts the skipped tag back keeps it, and its import, failing too, is the
	// admin's concern: neither recorded nor retried.
	var original imagev1.TagReference
	for _, tag := range python.Spec.Tags {
		if tag.Name == broken {
			original = *tag.DeepCopy()
		}
	}
	putBack := original.DeepCopy()
	putBack.From.Name = "registry.example.com/admins-own:1"
	e.importer.FailReference(putBack.From.Name, "manifest unknown: "+putBack.From.Name)
	for i := 0; ; i++ {
		is := e.imageStream("python")
		is.Spec.Tags = append(is.Spec.Tags, *putBack)
		if _, err := e.images.ImageV1().ImageStreams("openshift").Update(t.Context(), is, metav1.UpdateOptions{}); err == nil {
			break
		} else if i > 10 {
			t.Fatalf("putting python:%s back: %v", broken, err)
		}
	}
	e.proveSamplesWatched(t, "httpd-example")
	if tag := tagIn(e.imageStream("python"), broken); tag == nil || tag.From.Name != putBack.From.Name {
		t.Errorf("the admin's python:%s is %+v, want it kept", broken, tag)
	}
	eventually(t, 10*time.Second, func() (bool, string) {
		return imports.FailedTags(e.imageStream("python"))[broken] != "", fmt.Sprintf("the import of the admin's python:%s has not failed", broken)
	})
	e.assertImportsStopped(t, retryInterval, "the admin's own tag failing", "python")

	// The annotation cleared: the operator's tag is back, and the stream names no skipped tag.
	e.updateConfig(func(c *samplesv1.Config) { delete(c.Annotations, configspec.SkippedImageStreamTagsAnnotation) })
	eventually(t, 30*time.Second, func() (bool, string) {
		is := e.imageStream("python")
		tag := tagIn(is, broken)
		_, named := is.Annotations[desired.StreamSkippedTagsAnnotation]
		return tag != nil && tag.From.Name == original.From.Name && !named,
			fmt.Sprintf("python:%s is %+v, skipped-tags annotation there: %v", broken, tag, named)
	})
	if reverted := e.eventsWithReason(t, "SampleReverted"); len(reverted) != 1 || !strings.Contains(reverted[0], "python") {
		t.Errorf("SampleReverted events %v, want one, for the edit of python:%s", reverted, other)
	}
}

// unfollowedDockerTags lists, in inventory order, the stream's DockerImage tags that no other
// tag of it follows (python:latest follows a numbered tag): skipping or retiring one leaves no
// tag pointing at nothing.
func unfollowedDockerTags(inv *inventory.Inventory, stream string) []string {
	is, _ := inv.ImageStream(stream)
	followed := map[string]bool{}
	for _, tag := range is.Spec.Tags {
		if tag.From != nil && tag.From.Kind == "ImageStreamTag" {
			followed[tag.From.Name[strings.LastIndex(tag.From.Name, ":")+1:]] = true
		}
	}
	var out []string
	for _, tag := range is.Spec.Tags {
		if tag.From != nil && tag.From.Kind == "DockerImage" && !followed[tag.Name] {
			out = append(out, tag.Name)
		}
	}
	return out
}

// failImport makes every import of the reference the inventory gives stream:tag fail.
func (e *env) failImport(inv *inventory.Inventory, stream, tag string) {
	is, _ := inv.ImageStream(stream)
	for _, ref := range is.Spec.Tags {
		if ref.Name == tag && ref.From != nil {
			e.importer.FailReference(ref.From.Name, "manifest unknown: "+ref.From.Name)
		}
	}
}

// waitImportFailedAndRetried waits until stream's import record names tag and the stream's
// imports have been retried: the failure is tracked, the ground a check of "no longer
// tracked" needs.
func (e *env) waitImportFailedAndRetried(t *testing.T, stream, tag string) {
	t.Helper()
	eventually(t, 30*time.Second, func() (bool, string) {
		cm, err := e.configMap(stream)
		if err != nil {
			return false, fmt.Sprintf("no import record of %s: %v", stream, err)
		}
		// The message is the emulator's, or, once retried on the real openshift-apiserver, that
		// server's (it reaches no registry).
		return cm.Data[tag] != "" && e.importRequests(t)(stream) > 0,
			fmt.Sprintf("%s's record %v, %d retries, want %s failed and retried", stream, cm.Data, e.importRequests(t)(stream), tag)
	})
}

// waitNoImportRecord waits until stream has no import record.
func (e *env) waitNoImportRecord(t *testing.T, stream string) {
	t.Helper()
	eventually(t, 10*time.Second, func() (bool, string) {
		cm, err := e.configMap(stream)
		if apierrors.IsNotFound(err) {
			return true, ""
		}
		return false, fmt.Sprintf("%s's import record: %v (%v)", stream, cm.Data, err)
	})
}

// assertImportsStopped checks that none of streams is imported, nor has an import record, in
// three retry intervals from now.
func (e *env) assertImportsStopped(t *testing.T, retryInterval time.Duration, when string, streams ...string) {
	t.Helper()
	// Counted now: with the stand-ins the count is the emulator's live one.
	before := map[string]int{}
	for _, stream := range streams {
		before[stream] = e.importRequests(t)(stream)
	}
	idle(t, 3*retryInterval+time.Second)
	for _, stream := range streams {
		if n := e.importRequests(t)(stream) - before[stream]; n != 0 {
			t.Errorf("%s: %d imports of %s in three retry intervals, want none", when, n, stream)
		}
		if cm, err := e.configMap(stream); err == nil {
			t.Errorf("%s: %s's import record %v, want none", when, stream, cm.Data)
		}
	}
}
