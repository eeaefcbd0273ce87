package integration

import (
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	imagev1 "github.com/openshift/api/image/v1"
	templatev1 "github.com/openshift/api/template/v1"

	"github.com/samples-operator-dev/cluster-samples-operator/pkg/inventory"
	"github.com/samples-operator-dev/cluster-samples-operator/pkg/metrics"
	"github.com/samples-operator-dev/cluster-samples-operator/test/controlplane"
)

// normalizedSource is what the test's server makes of every DockerImage source the operator
// writes: a registry rewrite the operator does not ask for.
func normalizedSource(name string) string {
	if strings.HasPrefix(name, "normalized.example/") {
		return name
	}
	return "normalized.example/" + name
}

// TestServerNormalizationDoesNotMakeTheOperatorLoop: the webhook playing openshift-apiserver
// changes fields the operator owns on every write (each DockerImage tag's source of every
// imagestream, one annotation of every template). The operator writes each sample at most twice,
// then not at all through resyncs, reports the normalization once, and reports the samples
// installed. An admin's edit of the normalized field is still reverted, once.
func TestServerNormalizationDoesNotMakeTheOperatorLoop(t *testing.T) {
	parallel(t, aboutTwentySecond)
	// The real openshift-apiserver rewrites no field the operator owns; only the webhooks can be told to.
	e := newEnvOnStandIns(t)
	inv := x86Inventory(t)
	normalizeSources := func(is *imagev1.ImageStream) {
		for i := range is.Spec.Tags {
			if from := is.Spec.Tags[i].From; from != nil && from.Kind == "DockerImage" {
				from.Name = normalizedSource(from.Name)
			}
		}
	}
	e.cp.Webhooks().NormalizeImageStreams(normalizeSources)
	e.cp.Webhooks().NormalizeTemplates(func(tp *templatev1.Template) {
		delete(tp.Annotations, "description")
	})
	// A short resync: the loop this guards against shows at the resyncs of an operator that
	// remembers its writes. The admin's edit below is reverted through the stream's event at
	// the shipped resync in the scenes (everyRevertOfABurstIsReported).
	opts := defaultOptions()
	opts.Resync = time.Second
	scrape := e.startOperatorServingMetrics(t, opts)
	e.waitManaged(t, inv, "v1")
	e.waitQuiet(t, 2*time.Second)

	settled := e.sampleWritesByObject(t)
	for obj, n := range settled {
		if n > 2 {
			t.Errorf("%s: %d writes, want at most 2 (create, then at most one update the server normalizes again)", obj, n)
		}
	}
	if want := len(inv.ImageStreamNames()) + len(inv.TemplateNames()); len(settled) != want {
		t.Errorf("the operator wrote %d samples, want %d", len(settled), want)
	}
	time.Sleep(3 * time.Second) // three resyncs
	if after := e.sampleWritesByObject(t); fmt.Sprint(after) != fmt.Sprint(settled) {
		t.Errorf("writes went on after the samples settled:\nbefore %v\nafter  %v", settled, after)
	}

	// Reported once per object and field: an event, and the counter.
	// (The event recorder folds similar events of different samples into one, so the events only
	// show that it was said; the counter shows it was said once per sample and field.)
	var normalizedEvents int
	for _, ev := range e.operatorEvents(t) {
		if ev.Reason == "SampleNormalizedByServer" {
			normalizedEvents++
		}
	}
	if normalizedEvents == 0 {
		t.Errorf("no SampleNormalizedByServer event")
	}
	samples := scrape(t)
	python := fmt.Sprintf(`%s{field="spec.tags[3.11-ubi9].from",kind="ImageStream",name="python"}`, metrics.NormalizedName)
	found := false
	for key, s := range samples {
		if strings.HasPrefix(key, metrics.NormalizedName+"{") && s.value != 1 {
			t.Errorf("%s = %v, want 1", key, s.value)
		}
		if strings.Contains(s.exported, `name="python"`) && strings.HasPrefix(s.exported, metrics.NormalizedName) {
			found = true
		}
	}
	if !found {
		t.Errorf("no %s series for python (like %s)", metrics.NormalizedName, python)
	}

	// An admin points a normalized tag elsewhere: reverted once, then quiet again.
	is := e.imageStream("python")
	var tagName, normalizedFrom string
	for _, tag := range is.Spec.Tags {
		if tag.From != nil && tag.From.Kind == "DockerImage" {
			tagName, normalizedFrom = tag.Name, tag.From.Name
			break
		}
	}
	e.editImageStream("python", func(is *imagev1.ImageStream) {
		for i := range is.Spec.Tags {
			if is.Spec.Tags[i].Name == tagName {
				is.Spec.Tags[i].From.Name = "admin.example/python:mine"
			}
		}
	})
	// The server normalizes the admin's value too ("normalized.example/admin.example/..."): only
	// the value before the edit shows the operator's revert.
	eventually(t, 10*time.Second, func() (bool, string) {
		for _, tag := range e.imageStream("python").Spec.Tags {
			if tag.Name == tagName {
				return tag.From.Name == normalizedFrom, "tag " + tagName + " from " + tag.From.Name + ", want " + normalizedFrom
			}
		}
		return false, "tag " + tagName + " gone"
	})
	e.waitQuiet(t, 2*time.Second)
	if n := e.sampleWritesByObject(t)["imagestreams/python"] - settled["imagestreams/python"]; n != 1 {
		for _, line := range describe(e.operatorRequests(t, writes, on("imagestreams"), named("python"))) {
			t.Log(line)
		}
		t.Errorf("the admin's edit cost %d writes, want 1", n)
	}

	// A write the server has received and not answered is not quiet, though its object may
	// be stored before its answer is in the audit log (a read once showed this revert done
	// while the log held no trace of it). The revert of a second edit is held in the webhook;
	// by the completed writes alone the operator is quiet all that time.
	var armed atomic.Bool
	var holdOnce sync.Once
	held, release := make(chan struct{}), make(chan struct{})
	releaseHeld := sync.OnceFunc(func() { close(release) })
	t.Cleanup(releaseHeld)
	e.cp.Webhooks().NormalizeImageStreams(func(is *imagev1.ImageStream) {
		if is.Name == "python" {
			byAdmin := strings.Contains(tagSource(is, tagName), "admin.example/python:again")
			if byAdmin {
				armed.Store(true)
			}
			if armed.Load() && !strings.Contains(tagSource(is, tagName), "admin.example/") {
				holdOnce.Do(func() {
					close(held)
					select {
					case <-release:
					case <-time.After(20 * time.Second):
					}
				})
			}
		}
		normalizeSources(is)
	})
	e.editImageStream("python", func(is *imagev1.ImageStream) {
		for i := range is.Spec.Tags {
			if is.Spec.Tags[i].Name == tagName {
				is.Spec.Tags[i].From.Name = "admin.example/python:again"
			}
		}
	})
	select {
	case <-held:
	case <-time.After(10 * time.Second):
		t.Fatalf("the operator did not revert the second edit")
	}
	var heldRevert string // its audit ID
	eventually(t, 5*time.Second, func() (bool, string) {
		inFlight := e.operatorWritesInFlight(t)
		for _, ev := range inFlight {
			if ev.Resource == "imagestreams" && ev.Name == "python" {
				heldRevert = ev.ID
			}
		}
		return heldRevert != "", fmt.Sprintf("in flight: %v", describe(inFlight))
	})
	// Asked again and again while held: the operator's other writes leave gaps longer than the
	// quiet time asked for, in which only the write in flight says "not quiet".
	for asked := time.Now(); time.Since(asked) < 1500*time.Millisecond; time.Sleep(50 * time.Millisecond) {
		if quiet, why := e.quietFor(t, 200*time.Millisecond); quiet {
			t.Errorf("the operator's revert is held in the server, yet the operator counts as quiet (%s)", why)
			break
		}
	}
	// Counted the moment it is let go, the revert is among the answered writes: the count waits
	// for its answer. (Whatever the answer: under load the import emulator's update of the
	// edited stream came first, the revert met a 409 and was made again on the fresher stream.)
	releaseHeld()
	e.sampleWritesByObject(t)
	if answered := e.operatorRequests(t, func(ev controlplane.AuditEvent) bool { return ev.ID == heldRevert }); len(answered) != 1 {
		t.Errorf("counted as the held revert was let go, its answer is not in the count")
	}
	e.waitQuiet(t, time.Second)
	if n := e.sampleWritesByObject(t)["imagestreams/python"] - settled["imagestreams/python"]; n != 2 {
		t.Errorf("the two edits cost %d writes, want 2", n)
	}
}

// tagSource is the source of the stream's tag, "" for a tag without one.
func tagSource(is *imagev1.ImageStream, tag string) string {
	for _, t := range is.Spec.Tags {
		if t.Name == tag && t.From != nil {
			return t.From.Name
		}
	}
	return ""
}

// TestEveryInventoryArchInstallsWithoutUpdates: against the webhook's openshift-apiserver
// behaviour and the importer's rewrites of every imported stream, the initial sync of every
// embedded inventory creates each sample once and updates none, and neither do forced resyncs
// nor a minute of steady state.
func TestEveryInventoryArchInstallsWithoutUpdates(t *testing.T) {
	parallelParent(t)
	archs := []struct {
		goarch, archDir string
		okd             bool
	}{
		{"amd64", inventory.ArchDirOCPX86_64, false},
		{"arm64", inventory.ArchDirOCPAarch64, false},
		{"ppc64le", inventory.ArchDirOCPPpc64le, false},
		{"s390x", inventory.ArchDirOCPS390x, false},
		{"amd64", inventory.ArchDirOKDX86_64, true},
	}
	// Resyncs every 2 s: a 10 s window holds four or five of them. The canary at its end proves
	// the operator was alive and acting all along: a stopped or wedged operator would write
	// nothing during the window too (that it reverts through the stream's event, not at a
	// resync, the scenes show at the shipped resync: everyRevertOfABurstIsReported).
	const resync, steady = 2 * time.Second, 10 * time.Second
	for _, a := range archs {
		t.Run(a.archDir, func(t *testing.T) {
			parallel(t, aboutHalfAMinute)
			e := newEnv(t)
			inv, err := inventory.Embedded(a.archDir)
			if err != nil {
				t.Fatal(err)
			}
			fileStreams, fileTemplates := librarySamples(t, a.archDir)
			opts := fullInventoryOptions()
			opts.GOARCH, opts.OKD, opts.Resync = a.goarch, a.okd, resync
			e.startOperator(opts)
			e.waitManaged(t, inv, "v1")
			// The window starts once the importer has rewritten every stream (as
			// openshift-apiserver's import does), so that it holds the operator's answer to that.
			eventually(t, 60*time.Second, func() (bool, string) {
				for name := range fileStreams {
					if _, imported := e.imageStream(name).Annotations[imagev1.DockerImageRepositoryCheckAnnotation]; !imported {
						return false, "imagestream " + name + " not imported yet"
					}
				}
				return true, ""
			})
			idle(t, steady)

			canary := inv.ImageStreamNames()[0]
			e.editImageStream(canary, func(is *imagev1.ImageStream) { is.Spec.Tags = is.Spec.Tags[1:] })
			e.waitEvent(t, "SampleReverted", "ImageStream openshift/"+canary)
			eventually(t, 10*time.Second, func() (bool, string) {
				drift := imageStreamDrift(e.imageStream(canary), fileStreams[canary], "v1")
				return len(drift) == 0, fmt.Sprintf("canary %s not reverted: %v", canary, drift)
			})

			for obj, n := range e.sampleWritesByObject(t) {
				want := 1
				if obj == "imagestreams/"+canary {
					want = 2 // its create and the canary's revert
				}
				if n != want {
					t.Errorf("%s: %d writes, want %d", obj, n, want)
				}
			}
			for _, line := range describe(e.operatorRequests(t, writes, not(verb("create")), onSamples, not(named(canary)))) {
				t.Errorf("%s: the server's behaviour made the operator write again", line)
			}
			// Every sample still is what openshift/library's file says, as the server keeps it,
			// judged without the operator's own code.
			if len(fileStreams) != len(inv.ImageStreamNames()) || len(fileTemplates) != len(inv.TemplateNames()) {
				t.Errorf("%s holds %d imagestreams and %d templates, the inventory %d and %d", a.archDir,
					len(fileStreams), len(fileTemplates), len(inv.ImageStreamNames()), len(inv.TemplateNames()))
			}
			for name, file := range fileStreams {
				live := e.imageStream(name)
				if drift := imageStreamDrift(live, file, "v1"); len(drift) > 0 {
					t.Errorf("imagestream %s drifted: %v", name, drift)
				}
				// ... after the importer rewrote it, as openshift-apiserver's import does.
				if _, imported := live.Annotations[imagev1.DockerImageRepositoryCheckAnnotation]; !imported {
					t.Errorf("imagestream %s was never imported (no %s annotation)", name, imagev1.DockerImageRepositoryCheckAnnotation)
				}
			}
			for name, file := range fileTemplates {
				if drift := templateDrift(e.template(name), file, "v1"); len(drift) > 0 {
					t.Errorf("template %s drifted: %v", name, drift)
				}
			}
		})
	}
}
