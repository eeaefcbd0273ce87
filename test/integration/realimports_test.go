package integration

import (
	"context"
	"fmt"
	"maps"
	"net/http"
	"os"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/random"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	imagev1 "github.com/openshift/api/image/v1"
	samplesv1 "github.com/openshift/api/samples/v1"
	imageclient "github.com/openshift/client-go/image/clientset/versioned"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/samples-operator-dev/cluster-samples-operator/pkg/desired"
	"github.com/samples-operator-dev/cluster-samples-operator/pkg/imports"
	"github.com/samples-operator-dev/cluster-samples-operator/pkg/metrics"
	"github.com/samples-operator-dev/cluster-samples-operator/test/controlplane"
	"github.com/samples-operator-dev/cluster-samples-operator/test/mirrortest"
)

// These tests import for real: openshift-controller-manager's import controllers ask the real
// openshift-apiserver to import, and the server pulls from a registry on loopback
// (test/controlplane/imports.go). They run with OPENSHIFT_BIN_DIR (`make test-openshift`).

// scheduledImportInterval is openshift-controller-manager's shortest interval between two
// scheduled imports of a tag in these tests (its configuration says 30 s at the least).
const scheduledImportInterval = 30 * time.Second

// newEnvRealImports is newEnv with the real import controllers and a registry the cluster
// trusts instead of the import emulator. It returns the registry's host:port. The test is
// skipped where the real servers are not at hand, and fails where OPENSHIFT_BIN_DIR is set and
// one of them is missing (requireReal).
func newEnvRealImports(t *testing.T) (*env, string) {
	t.Helper()
	requireReal(t, "import controllers", os.Getenv(controlplane.OpenShiftBinDirEnv) != "",
		fmt.Sprintf("set %s to a folder holding the real openshift-apiserver and openshift-controller-manager to import for real", controlplane.OpenShiftBinDirEnv))
	e, ctx := newEnvWithoutImporter(t, func(ctx context.Context, cp *controlplane.ControlPlane) (*controlplane.ApplyResult, error) {
		return controlplane.ApplyDir(ctx, cp.AdminConfig, controlplane.RepoRoot()+"/manifests")
	})
	ok, why := e.cp.CanImport()
	requireReal(t, "import controllers", ok, why)
	registry, err := e.cp.StartRegistry(ctx)
	if err != nil {
		t.Fatalf("starting the test registry: %v", err)
	}
	if err := e.cp.StartImportControllers(ctx, scheduledImportInterval); err != nil {
		e.cp.DumpLogTail(t, 30)
		t.Fatalf("starting the import controllers: %v", err)
	}
	return e, registry
}

// registryTransport talks to the test registry directly, whatever proxy this process is told of.
var registryTransport = &http.Transport{Proxy: nil}

// pushRandomImage pushes a new single-layer image under ref, which must be on a loopback
// registry, and returns its manifest digest.
func pushRandomImage(ref string) (string, error) {
	return pushRandomImageVia(ref, registryTransport)
}

// pushRandomImageVia is pushRandomImage through transport (cp.RegistryTransport for a registry
// that serves TLS), with the options of a registry that wants more (a login).
func pushRandomImageVia(ref string, transport http.RoundTripper, opts ...remote.Option) (string, error) {
	r, err := name.ParseReference(ref, name.Insecure)
	if err != nil {
		return "", err
	}
	if host := r.Context().RegistryStr(); !strings.HasPrefix(host, "127.0.0.1:") {
		return "", fmt.Errorf("refusing to push %s: the tests never reach beyond loopback", ref)
	}
	img, err := random.Image(256, 1)
	if err != nil {
		return "", err
	}
	// A built image names its platform in its config, as the server records it.
	config, err := img.ConfigFile()
	if err != nil {
		return "", err
	}
	config.Architecture, config.OS = "amd64", "linux"
	if img, err = mutate.ConfigFile(img, config); err != nil {
		return "", err
	}
	if err := remote.Write(r, img, append(opts, remote.WithTransport(transport))...); err != nil {
		return "", fmt.Errorf("pushing %s: %w", ref, err)
	}
	d, err := img.Digest()
	return d.String(), err
}

// pushAll pushes an image under every ref, four at a time, and returns ref -> digest.
func pushAll(t *testing.T, refs []string) map[string]string {
	t.Helper()
	return pushAllVia(t, refs, registryTransport)
}

// pushAllVia is pushAll through transport.
func pushAllVia(t *testing.T, refs []string, transport http.RoundTripper) map[string]string {
	t.Helper()
	return mirrortest.PushEach(t, refs, 4, func(ref string) (string, error) { return pushRandomImageVia(ref, transport) })
}

// onRegistry is where an admin mirrors ref for samplesRegistry: the inventory's two source
// registries replaced by the mirror, the repository path and tag kept; a reference without a tag
// names :latest (the library has such tags, jboss-eap74-openjdk11-openshift:7.4.0), so two
// references to one image give one key.
func onRegistry(ref, registry string) string {
	for _, source := range []string{"registry.redhat.io/", "registry.access.redhat.com/"} {
		if rest, ok := strings.CutPrefix(ref, source); ok {
			ref = registry + "/" + rest
			break
		}
	}
	if r, err := name.ParseReference(ref, name.Insecure); err == nil {
		return r.Name()
	}
	return ref
}

// dockerImageTags lists stream -> tag -> pull spec of every DockerImage tag of the managed
// imagestreams in openshift.
func (e *env) dockerImageTags(t *testing.T) map[string]map[string]string {
	t.Helper()
	list, err := e.images.ImageV1().ImageStreams("openshift").List(context.Background(), metav1.ListOptions{LabelSelector: desired.ManagedLabel + "=true"})
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]map[string]string{}
	for _, is := range list.Items {
		for _, tag := range is.Spec.Tags {
			if tag.From != nil && tag.From.Kind == "DockerImage" {
				if out[is.Name] == nil {
					out[is.Name] = map[string]string{}
				}
				out[is.Name][tag.Name] = tag.From.Name
			}
		}
	}
	return out
}

// importedImage is the image the tag's newest status item holds, "" if none.
func importedImage(is *imagev1.ImageStream, tag string) string {
	for _, st := range is.Status.Tags {
		if st.Tag == tag && len(st.Items) > 0 {
			return st.Items[0].Image
		}
	}
	return ""
}

// TestRealImportsFromAMirror runs the disconnected-cluster procedure against the real import
// path: the admin mirrors the sample images (all but one, and another stream's later), points
// samplesRegistry at the mirror; the operator's rewrite imports for real, the missing image
// fails with openshift-apiserver's own text in the per-imagestream ConfigMap and in the alert's
// input series, the operator's retry imports the image once it is pushed, a scheduled tag picks
// up a new image, the operator's own rewrites (registry change, upgrade) are not reported as
// reverted edits, nothing loops once all imported, a retry against a stream removed meanwhile
// creates nothing, and no create at start-up met an object that was there.
func TestRealImportsFromAMirror(t *testing.T) {
	parallel(t, aboutAMinute)
	e, registry := newEnvRealImports(t)
	inv := x86Inventory(t)
	opts := defaultOptions()
	opts.ImportRetryInterval = 3 * time.Second
	op, scrape := e.startOperatorWithScrape(t, opts)
	e.waitManaged(t, inv, "v1")
	// The inventory's registries are out of reach here (the server's proxy is a closed port):
	// every stream's first imports failed.

	// The admin mirrors every image but two: python's first tag, which the test pushes later, and
	// ruby's, which stays missing.
	before := e.dockerImageTags(t)
	refs := map[string]bool{}
	users := map[string]int{}
	for _, tags := range before {
		for _, ref := range tags {
			refs[onRegistry(ref, registry)] = true
			users[onRegistry(ref, registry)]++
		}
	}
	pick := func(stream string) (string, string) {
		tags := slices.Sorted(func(yield func(string) bool) {
			for tag := range before[stream] {
				if !yield(tag) {
					return
				}
			}
		})
		for _, tag := range tags {
			if ref := onRegistry(before[stream][tag], registry); users[ref] == 1 {
				return tag, ref
			}
		}
		t.Fatalf("%s has no tag whose image no other tag uses", stream)
		return "", ""
	}
	pythonTag, pythonRef := pick("python")
	rubyTag, rubyRef := pick("ruby")
	delete(refs, pythonRef)
	delete(refs, rubyRef)
	mirrored := pushAll(t, slices.Sorted(func(yield func(string) bool) {
		for ref := range refs {
			if !yield(ref) {
				return
			}
		}
	}))
	t.Logf("mirrored %d images to %s; missing: python:%s (%s, pushed later), ruby:%s (%s)", len(mirrored), registry, pythonTag, pythonRef, rubyTag, rubyRef)

	changed := time.Now()
	e.updateConfig(func(c *samplesv1.Config) { c.Spec.SamplesRegistry = registry })

	// Every DockerImage tag imports the mirrored image, by the import controllers or the
	// operator's retries.
	eventuallyEvery(t, 120*time.Second, time.Second, func() (bool, string) {
		pending := e.tagsNotImported(slices.Collect(maps.Keys(before)), func(stream, tag string) string {
			return mirrored[onRegistry(before[stream][tag], registry)]
		})
		return len(pending) == 0, fmt.Sprintf("%d tags not imported from the mirror yet, e.g. %.400v", len(pending), pending)
	})
	t.Logf("every mirrored image imported %s after the registry change", time.Since(changed).Round(100*time.Millisecond))

	// The missing images fail with the server's own words, in the stream's ConfigMap, in
	// ImportImageErrorsExist and in the alert's input series.
	for stream, tc := range map[string]struct{ tag, ref string }{"python": {pythonTag, pythonRef}, "ruby": {rubyTag, rubyRef}} {
		serverText := fmt.Sprintf("dockerimage.image.openshift.io %q not found", tc.ref)
		eventually(t, 30*time.Second, func() (bool, string) {
			cm, err := e.configMap(stream)
			if err != nil {
				return false, err.Error()
			}
			return cm.Labels[imports.ErrorLabel] == "true" && strings.Contains(cm.Data[tc.tag], serverText) && len(cm.Data) == 1,
				fmt.Sprintf("%s's record %v, want only %s with %q", stream, cm.Data, tc.tag, serverText)
		})
	}
	eventually(t, 30*time.Second, func() (bool, string) {
		c := configCondition(e.getConfig(), samplesv1.ImportImageErrorsExist)
		return c != nil && c.Status == corev1.ConditionTrue && strings.Contains(c.Message, "python") && strings.Contains(c.Message, "ruby"),
			fmt.Sprintf("ImportImageErrorsExist %+v", c)
	})
	failing := func() []string {
		var out []string
		for _, s := range scrape(t) {
			if strings.HasPrefix(s.exported, metrics.FailedImportName+"{") && s.value == 1 {
				out = append(out, s.exported)
			}
		}
		sort.Strings(out)
		return out
	}
	wantSeries := func(streams ...string) []string {
		var out []string
		for _, s := range streams {
			out = append(out, fmt.Sprintf("%s{name=%q}", metrics.FailedImportName, s))
		}
		return out
	}
	eventuallyEvery(t, 30*time.Second, time.Second, func() (bool, string) {
		got := failing()
		return slices.Equal(got, wantSeries("python", "ruby")), fmt.Sprintf("failing series %v", got)
	})

	// The registry change is the operator's own rewrite: no sample is reported as reverted, and
	// each stream was written once for it.
	if reverted := e.eventsWithReason(t, "SampleReverted"); len(reverted) != 0 {
		t.Errorf("the registry change was reported as reverted edits: %v", reverted)
	}
	if told := e.eventsWithReason(t, "SamplesRegistryChanged"); len(told) != 1 || !strings.Contains(told[0], registry) {
		t.Errorf("want one SamplesRegistryChanged event naming %s, got %v", registry, told)
	}
	e.assertWrittenOnceSince(t, changed)

	// The mirror gets python's image: the operator's retry imports it, the record, the condition
	// and the series clear for python; ruby's stay.
	pushed, err := pushRandomImage(pythonRef)
	if err != nil {
		t.Fatal(err)
	}
	eventually(t, 30*time.Second, func() (bool, string) {
		got := importedImage(e.imageStream("python"), pythonTag)
		_, err := e.configMap("python")
		return got == pushed && apierrors.IsNotFound(err), fmt.Sprintf("python:%s has %q (want %s); record: %v", pythonTag, got, pushed, err)
	})
	eventuallyEvery(t, 30*time.Second, time.Second, func() (bool, string) {
		c := configCondition(e.getConfig(), samplesv1.ImportImageErrorsExist)
		got := failing()
		return c != nil && c.Status == corev1.ConditionTrue && !strings.Contains(c.Message, "python") && strings.Contains(c.Message, "ruby") &&
			slices.Equal(got, wantSeries("ruby")), fmt.Sprintf("ImportImageErrorsExist %+v; failing series %v", c, got)
	})

	// Nothing loops once all that can import has: ruby's retries go on (the operator is at
	// work), and no sample is written.
	e.assertNoSampleWritesWhileRetrying(t, "ruby")

	// A scheduled tag, set by the admin as OpenShift documents, picks up a new image pushed
	// under the same reference; the operator keeps the admin's schedule.
	scheduledTag, scheduledRef := pick("nodejs")
	e.editTag(t, "nodejs", scheduledTag, func(tag *imagev1.TagReference) { tag.ImportPolicy.Scheduled = true })
	scheduledAt := time.Now()
	// The edit may have moved the tag's spec ahead of its status: wait for that import, so that
	// the new image can only come by the schedule.
	eventually(t, 30*time.Second, func() (bool, string) {
		is, tag := e.tagOf(t, "nodejs", scheduledTag)
		for _, st := range is.Status.Tags {
			if st.Tag == scheduledTag && len(st.Items) > 0 && (tag.Generation == nil || st.Items[0].Generation >= *tag.Generation) {
				return true, ""
			}
		}
		return false, fmt.Sprintf("nodejs:%s spec generation %v, status %+v", scheduledTag, tag.Generation, is.Status.Tags)
	})
	newer, err := pushRandomImage(scheduledRef)
	if err != nil {
		t.Fatal(err)
	}
	eventuallyEvery(t, 3*scheduledImportInterval, 500*time.Millisecond, func() (bool, string) {
		got := importedImage(e.imageStream("nodejs"), scheduledTag)
		return got == newer, fmt.Sprintf("nodejs:%s has %q, want the new %s", scheduledTag, got, newer)
	})
	t.Logf("the scheduled tag picked up the new image %s after the push", time.Since(scheduledAt).Round(time.Second))
	if _, tag := e.tagOf(t, "nodejs", scheduledTag); !tag.ImportPolicy.Scheduled {
		t.Errorf("the operator dropped the admin's schedule on nodejs:%s", scheduledTag)
	}
	if w := countBy(e.operatorRequests(t, writes, onSamples, named("nodejs"), receivedAfter(scheduledAt)), byVerbAndResource); len(w) != 0 {
		t.Errorf("the operator wrote nodejs after the admin scheduled a tag: %v", w)
	}

	// An upgrade rewrites every sample for the new version: no reverted edits either.
	op.stop(t)
	opts.Version = "v2"
	e.startOperator(opts)
	e.waitManaged(t, inv, "v2")
	if reverted := e.eventsWithReason(t, "SampleReverted"); len(reverted) != 0 {
		t.Errorf("the upgrade was reported as reverted edits: %v", reverted)
	}

	// Removed deletes the samples while ruby's import is retried. A retry that meets its stream
	// gone must create nothing: the server creates a bare stream for an import that names no
	// resourceVersion or UID. Whether one of the operator's retries races the delete is chance,
	// so the operator's retry of the stream as last seen is also sent, as the operator, after.
	staleRuby := e.imageStream("ruby")
	removedAt := time.Now()
	e.updateConfig(func(c *samplesv1.Config) { c.Spec.ManagementState = "Removed" })
	eventually(t, 30*time.Second, func() (bool, string) {
		n := e.countManagedImageStreams()
		return n == 0 && !e.imageStreamExists("ruby"), fmt.Sprintf("%d managed imagestreams left", n)
	})
	asOperator := imageclient.NewForConfigOrDie(e.cp.OperatorConfig)
	retry := imports.RetryImport(staleRuby, map[string]string{rubyTag: "not found"})
	if retry == nil {
		t.Fatalf("no retry for ruby:%s", rubyTag)
	}
	_, err = asOperator.ImageV1().ImageStreamImports("openshift").Create(context.Background(), retry, metav1.CreateOptions{})
	if !apierrors.IsNotFound(err) {
		t.Errorf("the retry of a removed stream was answered %v, want NotFound", err)
	}
	if e.imageStreamExists("ruby") {
		t.Errorf("ruby exists again after Removed: a retry created it")
	}
	// Until the operator has seen Removed, a retry of a stream still there may still be carried
	// out; no import the server received once the delete of its stream was done may be.
	deletedAt := map[string]time.Time{}
	for _, ev := range e.operatorRequests(t, verb("delete"), on("imagestreams"), receivedAfter(removedAt)) {
		if ev.Code < 300 {
			deletedAt[ev.Name] = ev.Time
		}
	}
	if _, ok := deletedAt["ruby"]; !ok {
		t.Error("the audit log shows no delete of ruby after Removed")
	}
	for _, ev := range e.operatorRequests(t, verb("create"), on("imagestreamimports"), receivedAfter(removedAt)) {
		if deleted, ok := deletedAt[ev.Name]; ok && ev.Code < 300 && ev.Received.After(deleted) {
			t.Errorf("an import of %s was carried out after the operator deleted it (%d)", ev.Name, ev.Code)
		}
	}
	e.assertNoCreateOfWhatExists(t)
}

// assertNoSampleWritesWhileRetrying waits for two of the operator's retries of stream's failed
// import (so it is at work) and checks that it wrote no sample meanwhile.
func (e *env) assertNoSampleWritesWhileRetrying(t *testing.T, stream string) {
	t.Helper()
	quietFrom := time.Now()
	retriesBefore := len(e.operatorRequests(t, verb("create"), on("imagestreamimports"), named(stream)))
	eventuallyEvery(t, 30*time.Second, 500*time.Millisecond, func() (bool, string) {
		n := len(e.operatorRequests(t, verb("create"), on("imagestreamimports"), named(stream)))
		return n >= retriesBefore+2, fmt.Sprintf("%d retries of %s's import since %s", n-retriesBefore, stream, quietFrom.Format(time.TimeOnly))
	})
	if w := e.sampleWritesSince(t, quietFrom); len(w) != 0 {
		t.Errorf("samples written while nothing changed: %v", w)
	}
}

// assertWrittenOnceSince checks that the operator wrote each imagestream at most once since t0, and
// nothing more once that write succeeded. A write the server refused with 409 Conflict before it
// is no second write when someone else changed the object first: for a stream, an import
// (the operator's retries run every few seconds here, and one can be under way when the admin
// changes the registry) that the server was carrying out after the operator's own last write of
// the stream and before it answered the refused write: an import commits the stream before it
// answers, and the operator's informer may deliver it later still on a loaded machine. A conflict that no such import explains is the operator writing from a cache
// older than its own last write. Templates carry no registry: what the operator writes on them
// after a registry change is whether they can work here (issue 50), which moves with each
// import that succeeds or fails, once per cause that comes or goes; those writes are not counted.
func (e *env) assertWrittenOnceSince(t *testing.T, t0 time.Time) {
	t.Helper()
	lastOwnWrite := func(object string, before time.Time) time.Time {
		var last time.Time
		for _, ev := range e.operatorRequests(t, writes, onSamples) {
			if ev.Code < 300 && byObject(ev) == object && ev.Received.Before(before) && ev.Time.After(last) {
				last = ev.Time
			}
		}
		return last
	}
	since := e.operatorRequests(t, writes, on("imagestreams"), noSubresource, receivedAfter(t0))
	byObj := map[string][]controlplane.AuditEvent{}
	for _, ev := range since {
		byObj[byObject(ev)] = append(byObj[byObject(ev)], ev)
	}
	seen := func(evs []controlplane.AuditEvent) []string {
		var out []string
		for _, ev := range evs {
			out = append(out, fmt.Sprintf("%s %s %d at +%s", ev.Verb, ev.Subresource, ev.Code, ev.Received.Sub(t0).Round(time.Millisecond)))
		}
		return out
	}
	for object, evs := range byObj {
		succeeded := 0
		for _, ev := range evs {
			switch {
			case ev.Code < 300:
				succeeded++
			case ev.Code == 409 && succeeded == 0 && ev.Resource == "imagestreams":
				own := lastOwnWrite(object, ev.Received)
				// An import commits the stream before it answers: one still under way when the
				// refused write arrived counts.
				refused := ev
				overlapping := func(imp controlplane.AuditEvent) bool {
					return imp.Received.Before(refused.Time) && imp.Time.After(own)
				}
				imports := e.everyonesRequests(t, verb("create"), on("imagestreamimports"), named(ev.Name), carriedOut, overlapping)
				if len(imports) == 0 {
					var others []string
					for _, w := range e.everyonesRequests(t, writes, named(ev.Name), overlapping) {
						others = append(others, fmt.Sprintf("%s %s/%s by %s %d, +%s to +%s", w.Verb, w.Resource, w.Subresource, w.User, w.Code,
							w.Received.Sub(t0).Round(time.Millisecond), w.Time.Sub(t0).Round(time.Millisecond)))
					}
					t.Errorf("%s: a write refused with 409 that no import since the operator's last write (+%s) explains (a write from a stale cache): %v; writes of that name meanwhile: %v",
						object, own.Sub(t0).Round(time.Millisecond), seen(evs), others)
				} else {
					t.Logf("%s: a write met an import under way (%s by %s) and was sent again: %v", object, imports[0].Time.Sub(t0).Round(time.Millisecond), imports[0].User, seen(evs))
				}
			default:
				t.Errorf("%s: written since +0s as %v, want once", object, seen(evs))
			}
		}
		if succeeded > 1 {
			t.Errorf("%s written %d times since +0s, want once: %v", object, succeeded, seen(evs))
		}
	}
}
