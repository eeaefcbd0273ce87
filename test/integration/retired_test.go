package integration

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	imagev1 "github.com/openshift/api/image/v1"
	samplesv1 "github.com/openshift/api/samples/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/samples-operator-dev/cluster-samples-operator/pkg/desired"
	"github.com/samples-operator-dev/cluster-samples-operator/pkg/inventory"
	"github.com/samples-operator-dev/cluster-samples-operator/pkg/metrics"
)

// TestAnUpgradeRetiresSamplesHiddenAndNamed: v2's inventory no longer has a tag of python, the
// imagestream perl and a template. The upgrade keeps all three, hidden from the catalog ("hidden"
// in their tags annotation) and annotated with v2; one SamplesRetired event, SamplesExist's
// message and one metric series each name them; nothing is reported reverted; their imports,
// failing before the upgrade, are no longer recorded nor retried; the retired stream, once an admin deletes it, is not recreated. The event is told
// once for the upgrade, not again by the next operator (an upgrade restarts the pod several
// times; a new leader takes over), nor for the smaller set an admin's deletion leaves.
func TestAnUpgradeRetiresSamplesHiddenAndNamed(t *testing.T) {
	parallel(t, aboutHalfAMinute)
	e := newEnv(t)
	inv := x86Inventory(t)
	retiredTag := unfollowedDockerTags(inv, "python")[0]
	const retiredStream = "perl"
	retiredTemplate := inv.TemplateNames()[0]

	// A tag of each retired imagestream fails to import, is recorded and retried: the retirement
	// must end that.
	retiredStreamTag := unfollowedDockerTags(inv, retiredStream)[0]
	e.failImport(inv, "python", retiredTag)
	e.failImport(inv, retiredStream, retiredStreamTag)
	const retryInterval = 3 * time.Second
	opts := defaultOptions()
	opts.ImportRetryInterval = retryInterval
	op := e.startOperator(opts)
	e.waitManaged(t, inv, "v1")
	e.waitImportFailedAndRetried(t, "python", retiredTag)
	e.waitImportFailedAndRetried(t, retiredStream, retiredStreamTag)

	v2Dir := t.TempDir()
	if err := os.CopyFS(filepath.Join(v2Dir, "ocp-x86_64"), os.DirFS(filepath.Join(testInventoryDir(), "ocp-x86_64"))); err != nil {
		t.Fatal(err)
	}
	editInventoryStream(t, v2Dir, "python", func(is *imagev1.ImageStream) {
		var kept []imagev1.TagReference
		for _, tag := range is.Spec.Tags {
			if tag.Name != retiredTag {
				kept = append(kept, tag)
			}
		}
		is.Spec.Tags = kept
	})
	for _, file := range []func() (string, bool){
		func() (string, bool) { return inv.ImageStreamFile(retiredStream) },
		func() (string, bool) { return inv.TemplateFile(retiredTemplate) },
	} {
		path, ok := file() // operator/ocp-x86_64/<group>/... in the embedded inventory
		i := strings.Index(path, "ocp-x86_64/")
		if !ok || i < 0 {
			t.Fatalf("no file for a sample to retire: %q", path)
		}
		if err := os.Remove(filepath.Join(v2Dir, path[i:])); err != nil {
			t.Fatal(err)
		}
	}
	v2, err := inventory.LoadDir(v2Dir, "ocp-x86_64")
	if err != nil {
		t.Fatal(err)
	}
	if _, has := v2.ImageStream(retiredStream); has {
		t.Fatalf("v2 still has %s", retiredStream)
	}

	op.stop(t)
	upgradedAt := time.Now()
	opts.Version, opts.InventoryDir = "v2", v2Dir
	upgraded, scrape := e.startOperatorWithScrape(t, opts)
	e.waitManaged(t, v2, "v2")

	ctx := context.Background()
	eventually(t, 30*time.Second, func() (bool, string) {
		is := e.imageStream("python")
		for _, tag := range is.Spec.Tags {
			if tag.Name == retiredTag {
				return tag.Annotations[desired.RetiredAnnotation] == "v2" && strings.Contains(tag.Annotations["tags"], "hidden"),
					fmt.Sprintf("python:%s annotations %v", retiredTag, tag.Annotations)
			}
		}
		return false, fmt.Sprintf("python:%s is gone: a retired tag must stay", retiredTag)
	})
	eventually(t, 30*time.Second, func() (bool, string) {
		is := e.imageStream(retiredStream)
		if is.Annotations[desired.RetiredAnnotation] != "v2" {
			return false, fmt.Sprintf("%s annotations %v", retiredStream, is.Annotations)
		}
		for _, tag := range is.Spec.Tags {
			if !strings.Contains(tag.Annotations["tags"], "hidden") {
				return false, fmt.Sprintf("%s:%s is not hidden: %v", retiredStream, tag.Name, tag.Annotations)
			}
		}
		return true, ""
	})
	eventually(t, 30*time.Second, func() (bool, string) {
		tp, err := e.tmpl.TemplateV1().Templates("openshift").Get(ctx, retiredTemplate, metav1.GetOptions{})
		if err != nil {
			return false, err.Error()
		}
		return tp.Annotations[desired.RetiredAnnotation] == "v2" && strings.Contains(tp.Annotations["tags"], "hidden"),
			fmt.Sprintf("template %s annotations %v", retiredTemplate, tp.Annotations)
	})

	names := []string{"imagestream " + retiredStream, "imagestreamtag python:" + retiredTag, "template " + retiredTemplate}
	eventually(t, 30*time.Second, func() (bool, string) {
		c := configCondition(e.getConfig(), samplesv1.SamplesExist)
		for _, n := range names {
			if c == nil || !strings.Contains(c.Message, n+" (retired in v2)") {
				return false, fmt.Sprintf("SamplesExist %+v does not name %s", c, n)
			}
		}
		return true, ""
	})
	eventually(t, 30*time.Second, func() (bool, string) {
		events := e.eventsWithReason(t, "SamplesRetired")
		return len(events) == 1 && func() bool {
			for _, n := range names {
				if !strings.Contains(events[0], n) {
					return false
				}
			}
			return true
		}(), fmt.Sprintf("SamplesRetired events %v, want one naming %v", events, names)
	})
	series := map[string]float64{}
	for _, s := range scrape(t) {
		series[s.exported] = s.value
	}
	for _, want := range []string{
		fmt.Sprintf(`%s{kind="imagestream",name=%q,retired_in="v2"}`, metrics.RetiredName, retiredStream),
		fmt.Sprintf(`%s{kind="imagestreamtag",name="python:%s",retired_in="v2"}`, metrics.RetiredName, retiredTag),
		fmt.Sprintf(`%s{kind="template",name=%q,retired_in="v2"}`, metrics.RetiredName, retiredTemplate),
	} {
		if v, ok := series[want]; !ok || v != 1 {
			var got []string
			for k := range series {
				if strings.HasPrefix(k, metrics.RetiredName) {
					got = append(got, k)
				}
			}
			t.Errorf("no series %s = 1; the retired series are %v", want, got)
		}
	}
	// Once, not once per sync (eventsWithReason counts the repeats client-go folds into one
	// Event).
	if told := e.eventsWithReason(t, "SamplesRetired"); len(told) != 1 {
		t.Errorf("SamplesRetired was told %d times, want once", len(told))
	}
	if reverted := e.eventsWithReason(t, "SampleReverted"); len(reverted) != 0 {
		t.Errorf("the retirement was reported as reverted edits: %v", reverted)
	}

	// Their imports are not tracked: the records go (the retired tags were the only failed
	// ones), and no import of either stream follows.
	e.waitNoImportRecord(t, retiredStream)
	e.waitNoImportRecord(t, "python")
	e.assertImportsStopped(t, retryInterval, "retired", "python", retiredStream)

	// The next operator (a restart, a new leader) does not tell it again.
	upgraded.stop(t)
	e.startOperator(opts)

	// An admin deletes the retired stream: it stays deleted, and what is left of the retirement
	// is no news either.
	if err := e.images.ImageV1().ImageStreams("openshift").Delete(ctx, retiredStream, metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	// The next operator's status controller has looked at the retired samples since the deletion
	// (it decides on the announcement in the sync that writes SamplesExist).
	eventually(t, 30*time.Second, func() (bool, string) {
		c := configCondition(e.getConfig(), samplesv1.SamplesExist)
		return c != nil && !strings.Contains(c.Message, "imagestream "+retiredStream) && strings.Contains(c.Message, names[1]),
			fmt.Sprintf("SamplesExist %+v still names %s, or no longer %s", c, retiredStream, names[1])
	})
	e.proveSamplesWatched(t, v2.TemplateNames()[0])
	if e.imageStreamExists(retiredStream) {
		t.Errorf("the operator recreated the retired %s after an admin deleted it", retiredStream)
	}
	if told := e.eventsWithReason(t, "SamplesRetired"); len(told) != 1 {
		t.Errorf("SamplesRetired was told %d times after a restart and an admin's deletion, want once: %q", len(told), told)
	}
	t.Logf("upgrade to v2 retired %v; told %.1fs after the operator started", names, time.Since(upgradedAt).Seconds())
}
