package integration

import (
	"context"
	"flag"
	"fmt"
	"maps"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	operatorv1 "github.com/openshift/api/operator/v1"
	samplesv1 "github.com/openshift/api/samples/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/client-go/util/retry"
	"k8s.io/klog/v2"

	"github.com/samples-operator-dev/cluster-samples-operator/pkg/imports"
	"github.com/samples-operator-dev/cluster-samples-operator/pkg/inventory"
)

const operatorNamespace = "openshift-cluster-samples-operator"

func (e *env) configMap(name string) (*corev1.ConfigMap, error) {
	return e.kube.CoreV1().ConfigMaps(operatorNamespace).Get(context.Background(), name, metav1.GetOptions{})
}

// TestFailedImportsAreRecordedRetriedAndCleared: a failing reference gets its ConfigMap and sets
// ImportImageErrorsExist; the import is retried within the (shortened) interval; once the reference
// imports, the ConfigMap and the condition clear.
func TestFailedImportsAreRecordedRetriedAndCleared(t *testing.T) {
	parallel(t, aboutTwentySecond)
	e := newEnv(t)
	inv := x86Inventory(t)
	python, _ := inv.ImageStream("python")
	failingTag, failingRef := python.Spec.Tags[0].Name, python.Spec.Tags[0].From.Name
	e.importer.FailReference(failingRef, "manifest unknown: "+failingRef)

	opts := defaultOptions()
	opts.ImportRetryInterval = 2 * time.Second
	e.startOperator(opts)
	e.waitManaged(t, inv, "v1")

	eventually(t, 30*time.Second, func() (bool, string) {
		cm, err := e.configMap("python")
		if err != nil {
			return false, err.Error()
		}
		c := configCondition(e.getConfig(), samplesv1.ImportImageErrorsExist)
		return cm.Labels[imports.ErrorLabel] == "true" && strings.Contains(cm.Data[failingTag], "manifest unknown") &&
				c != nil && c.Status == corev1.ConditionTrue && strings.Contains(c.Message, "python"),
			fmt.Sprintf("configmap %+v condition %+v", cm.Data, c)
	})
	cm, _ := e.configMap("python")
	t.Logf("recorded: %v; condition: %s", cm.Data, configCondition(e.getConfig(), samplesv1.ImportImageErrorsExist).Message)
	for tag := range cm.Data {
		// A tag that follows the failing one (latest) gets its events, never its failure.
		if tag != failingTag {
			t.Errorf("tag %s recorded as failed; only %s failed", tag, failingTag)
		}
	}
	if _, err := e.configMap("nodejs"); !apierrors.IsNotFound(err) {
		t.Errorf("a stream whose imports succeeded has a ConfigMap: %v", err)
	}

	// Retries come at most the interval apart (docs/admin-guide.md, "Failed imports": the
	// delay starts at 30 s or the interval, whichever is shorter, and never passes the
	// interval), from the failure's record on: measured from the audit log.
	eventually(t, 30*time.Second, func() (bool, string) {
		return e.importRequests(t)("python") >= 3, fmt.Sprintf("%d ImageStreamImports for python, want 3", e.importRequests(t)("python"))
	})
	recorded := e.operatorRequests(t, verb("create"), on("configmaps"), named("python"), carriedOut)
	retried := e.operatorRequests(t, verb("create"), on("imagestreamimports"), named("python"))
	if len(recorded) == 0 || len(retried) < 3 {
		t.Fatalf("the audit log holds %d creates of python's record and %d imports of python", len(recorded), len(retried))
	}
	// The interval bounds the delay, counted from the answer to the write before (the record's,
	// then each retry's: the operator schedules the next retry once it has the failure), to the
	// next retry's arrival. What is left is the sync that sends it: 10 to 30 ms alone; CI, with
	// two other tests beside it, once took 260 ms more counting from the arrivals, which include
	// the server's time on the import. A delay that doubles (4 s) or falls back to 30 s is far
	// beyond the slack.
	const sending = 500 * time.Millisecond
	// Nor does a retry come before its turn: the interval, which here caps the first delay and
	// its jitter, counts from the answer to the write that took the turn before. Load only
	// delays a retry; the bound keeps a fifth of the interval in hand for the clocks' reading.
	// A conflict (409) takes no turn: what follows it is measured from the turn before.
	earliest := opts.ImportRetryInterval * 4 / 5
	previous, what := recorded[0].Time, "the record"
	turnFrom, turnWhat := previous, what
	for _, retry := range retried[:3] {
		gap := retry.Received.Sub(previous)
		t.Logf("a retry of python %.2f s after %s (answered %d)", gap.Seconds(), what, retry.Code)
		if gap > opts.ImportRetryInterval+sending {
			t.Errorf("a retry of python came %.2f s after %s, more than the interval (%s)", gap.Seconds(), what, opts.ImportRetryInterval)
		}
		if early := retry.Received.Sub(turnFrom); early < earliest {
			t.Errorf("a retry of python came %.2f s after %s, before its turn (the interval, %s)", early.Seconds(), turnWhat, opts.ImportRetryInterval)
		}
		previous, what = retry.Time, "the answer to the one before"
		if retry.Code != 409 {
			turnFrom, turnWhat = previous, what
		}
	}

	if e.cp.RealOpenShiftAPIServer() {
		// The server here reaches no registry, so the failure cannot end; the recovery is
		// TestRealImportsFromAMirror's, with the real import controllers and a registry.
		t.Log("recording, retry and condition checked on the real openshift-apiserver; the recovery needs a registry (TestRealImportsFromAMirror)")
		return
	}
	// The registry recovers: the next retry imports, the record and the condition clear.
	e.importer.SucceedReference(failingRef)
	eventually(t, 30*time.Second, func() (bool, string) {
		_, err := e.configMap("python")
		c := configCondition(e.getConfig(), samplesv1.ImportImageErrorsExist)
		return apierrors.IsNotFound(err) && c != nil && c.Status == corev1.ConditionFalse, fmt.Sprintf("configmap err %v, condition %+v", err, c)
	})
	retries := e.importer.ImportRequests("python")
	time.Sleep(3 * time.Second)
	if n := e.importer.ImportRequests("python"); n != retries {
		t.Errorf("retries went on after the imports succeeded: %d -> %d", retries, n)
	}
}

// TestImportRecordsGoWithSkipAndRemoved: skipping a failing stream drops its record; Removed
// drops them all; the tag-to-image map stays.
func TestImportRecordsGoWithSkipAndRemoved(t *testing.T) {
	parallel(t, aboutTwentySecond)
	e := newEnv(t)
	inv := x86Inventory(t)
	for _, name := range []string{"python", "ruby"} {
		is, _ := inv.ImageStream(name)
		e.importer.FailReference(is.Spec.Tags[0].From.Name, "unauthorized")
	}
	e.startOperator(defaultOptions())
	e.waitManaged(t, inv, "v1")
	eventually(t, 30*time.Second, func() (bool, string) {
		_, err1 := e.configMap("python")
		_, err2 := e.configMap("ruby")
		return err1 == nil && err2 == nil, fmt.Sprintf("records: %v %v", err1, err2)
	})

	e.updateConfig(func(c *samplesv1.Config) { c.Spec.SkippedImagestreams = []string{"ruby"} })
	eventually(t, 10*time.Second, func() (bool, string) {
		_, err := e.configMap("ruby")
		c := configCondition(e.getConfig(), samplesv1.ImportImageErrorsExist)
		return apierrors.IsNotFound(err) && c != nil && !strings.Contains(c.Message, "ruby") && strings.Contains(c.Message, "python"),
			fmt.Sprintf("ruby record: %v; condition %+v", err, c)
	})

	e.updateConfig(func(c *samplesv1.Config) { c.Spec.ManagementState = operatorv1.Removed })
	eventually(t, 15*time.Second, func() (bool, string) {
		_, err := e.configMap("python")
		c := e.getConfig()
		return apierrors.IsNotFound(err) && c.Status.ManagementState == operatorv1.Removed && conditionIs(c, samplesv1.ImportImageErrorsExist, "False"),
			fmt.Sprintf("python record: %v, state %q", err, c.Status.ManagementState)
	})
	if _, err := e.configMap(imports.TagToImageName); err != nil {
		t.Errorf("the tag-to-image map did not survive Removed: %v", err)
	}
}

// tagToImageMapListsTheInventory: the map equals the inventory's source images, before any
// samplesRegistry override, also while the imagestreams are rewritten to a mirror.
func tagToImageMapListsTheInventory(t *testing.T, e *env, _ *inventory.Inventory) {
	// What the map must hold, from openshift/library's files read with encoding/json rather than
	// from pkg/inventory: <imagestream>_<tag> for every tag that pulls a DockerImage.
	streams, _ := librarySamples(t, "ocp-x86_64")
	want := map[string]string{}
	for name, is := range streams {
		for _, tag := range is.Spec.Tags {
			if tag.From != nil && tag.From.Kind == "DockerImage" {
				want[name+"_"+tag.Name] = tag.From.Name
			}
		}
	}
	check := func(when string) {
		t.Helper()
		cm, err := e.configMap(imports.TagToImageName)
		if err != nil {
			t.Fatalf("%s: %v", when, err)
		}
		if !maps.Equal(cm.Data, want) {
			t.Errorf("%s: the map has %d entries, the inventory %d; first differences: %v", when, len(cm.Data), len(want), firstDiff(cm.Data, want))
		}
		if cm.Annotations["samples.operator.openshift.io/version"] != "v1" {
			t.Errorf("%s: version annotation %q", when, cm.Annotations["samples.operator.openshift.io/version"])
		}
	}
	check("after install")
	if len(want) < 60 {
		t.Errorf("the inventory lists only %d tag images", len(want))
	}

	e.updateConfig(func(c *samplesv1.Config) { c.Spec.SamplesRegistry = "mirror.example:5000" })
	eventually(t, 10*time.Second, func() (bool, string) {
		got := e.imageStream("python").Spec.Tags[0].From.Name
		return strings.HasPrefix(got, "mirror.example:5000/"), "python not rewritten: " + got
	})
	check("after a registry override")

	// Drift in the map is put back.
	// The operator writes the map too: an edit it wrote meanwhile is a conflict to retry.
	if err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		cm, err := e.configMap(imports.TagToImageName)
		if err != nil {
			return err
		}
		cm.Data["python_3.11-ubi9"] = "somewhere.else/x:y"
		delete(cm.Data, "ruby_3.3-ubi9")
		_, err = e.kube.CoreV1().ConfigMaps(operatorNamespace).Update(context.Background(), cm, metav1.UpdateOptions{})
		return err
	}); err != nil {
		t.Fatal(err)
	}
	eventually(t, 5*time.Second, func() (bool, string) {
		cm, _ := e.configMap(imports.TagToImageName)
		return maps.Equal(cm.Data, want), "the edited map was not put back"
	})
	e.updateConfig(func(c *samplesv1.Config) { c.Spec.SamplesRegistry = "" })
}

func firstDiff(got, want map[string]string) []string {
	var out []string
	for k, v := range want {
		if got[k] != v {
			out = append(out, fmt.Sprintf("%s: %q != %q", k, got[k], v))
		}
		if len(out) > 3 {
			break
		}
	}
	return out
}

// pullSecretDrivesImportCredentials: removing the pull secret, or its registry.redhat.io
// entry, sets ImportCredentialsExist False with a message; restoring it, or overriding the
// registry, sets it True. No log line contains the secret's content. Other tests run meanwhile
// and their operators log into the capture too (with the same secret in their clusters): the
// positive control is a line only this test's operator writes.
func pullSecretDrivesImportCredentials(t *testing.T, e *env, _ *inventory.Inventory) {
	logs := captureKlog(t)
	ctx := context.Background()
	secrets := e.kube.CoreV1().Secrets("openshift-config")
	credentials := func(status corev1.ConditionStatus, contains string) {
		t.Helper()
		eventually(t, 10*time.Second, func() (bool, string) {
			c := configCondition(e.getConfig(), samplesv1.ImportCredentialsExist)
			return c != nil && c.Status == status && strings.Contains(c.Message, contains), fmt.Sprintf("ImportCredentialsExist %+v", c)
		})
		t.Logf("ImportCredentialsExist %s: %s", status, configCondition(e.getConfig(), samplesv1.ImportCredentialsExist).Message)
	}
	credentials(corev1.ConditionTrue, "registry.redhat.io")

	if err := secrets.Delete(ctx, "pull-secret", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	credentials(corev1.ConditionFalse, "does not exist")

	if _, err := secrets.Create(ctx, pullSecret(testPullSecretAuth, "quay.io"), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	credentials(corev1.ConditionFalse, "no credentials for registry.redhat.io")

	const mirror = "pull-secret-test-mirror.example:5000" // no other test's registry
	e.updateConfig(func(c *samplesv1.Config) { c.Spec.SamplesRegistry = mirror })
	credentials(corev1.ConditionTrue, "samplesRegistry is "+mirror)
	e.updateConfig(func(c *samplesv1.Config) { c.Spec.SamplesRegistry = "" })
	credentials(corev1.ConditionFalse, "no credentials")

	if err := secrets.Delete(ctx, "pull-secret", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := secrets.Create(ctx, pullSecret(testPullSecretAuth), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	credentials(corev1.ConditionTrue, "holds credentials")

	out := logs()
	// The positive control: the capture holds this operator's own line about the registry
	// override, which names this test's mirror, so an empty or misdirected capture cannot pass
	// for a clean log.
	ownLine := false
	for _, line := range strings.Split(out, "\n") {
		if strings.Contains(line, "ImportCredentialsExist is True") && strings.Contains(line, mirror) {
			ownLine = true
			break
		}
	}
	if !ownLine {
		t.Fatalf("the captured log (%d bytes) lacks the operator's line \"ImportCredentialsExist is True: ... %s ...\": the capture missed this test's operator", len(out), mirror)
	}
	if strings.Contains(out, testPullSecretAuth) || strings.Contains(out, "samples-test:secret-token") {
		t.Errorf("the operator's log contains the pull secret's content")
	} else {
		t.Logf("checked %d bytes of operator log: no secret content", len(out))
	}
}

// klogCapture is held by the test capturing klog's output, so that one test's capture holds no
// other capturing test's lines (call captureKlog before starting anything). Other tests running
// meanwhile log into the capture too.
var klogCapture sync.Mutex

// captureKlog collects klog's output (the in-process operators' log) for this test.
func captureKlog(t *testing.T) func() string {
	t.Helper()
	klogCapture.Lock()
	t.Cleanup(klogCapture.Unlock)
	buf := &syncBuffer{}
	klogOutput.add(buf)
	t.Cleanup(func() {
		klog.Flush()
		klogOutput.remove(buf)
	})
	return func() string {
		klog.Flush()
		return buf.String()
	}
}

// klogTee is klog's one output in this test binary: standard error, and the capture open, if
// any. klog's flags are set once, before any test runs (setUpKlog): setting them while other
// tests' operators log is a data race.
type klogTee struct {
	mu       sync.Mutex
	captures map[*syncBuffer]bool
}

var klogOutput = &klogTee{captures: map[*syncBuffer]bool{}}

func (k *klogTee) Write(p []byte) (int, error) {
	k.mu.Lock()
	for b := range k.captures {
		_, _ = b.Write(p)
	}
	k.mu.Unlock()
	return os.Stderr.Write(p)
}

func (k *klogTee) add(b *syncBuffer) {
	k.mu.Lock()
	defer k.mu.Unlock()
	k.captures[b] = true
}

func (k *klogTee) remove(b *syncBuffer) {
	k.mu.Lock()
	defer k.mu.Unlock()
	delete(k.captures, b)
}

// setUpKlog points klog at klogOutput at verbosity 2 (the operator's detail lines), for the
// whole test binary.
func setUpKlog() {
	flags := flag.NewFlagSet("klog", flag.ContinueOnError)
	klog.InitFlags(flags)
	_ = flags.Set("logtostderr", "false")
	_ = flags.Set("alsologtostderr", "false")
	_ = flags.Set("v", "2")
	klog.SetOutput(klogOutput)
}

// TestImportRetryRacingRemovedLeavesNoStream: every sample's import fails and is retried every
// 100 ms when the admin sets Removed. Retries whose stream the operator has just deleted reach the
// server with the stream's resourceVersion, which answers NotFound instead of creating a bare,
// unlabelled stream that nothing would ever delete.
func TestImportRetryRacingRemovedLeavesNoStream(t *testing.T) {
	parallel(t, aboutAMinute)
	e := newEnv(t)
	// The whole inventory: the race is between Removed's deletes and as many retries under way
	// as there are streams, and a part of it would leave most of that race out.
	inv := fullX86Inventory(t)
	e.importer.FailMatching(func(ref string) (string, bool) { return "manifest unknown: " + ref, true })
	opts := fullInventoryOptions()
	opts.ImportRetryInterval = 100 * time.Millisecond
	e.startOperator(opts)
	e.waitManaged(t, inv, "v1")
	// Retries are under way for every stream. The real openshift-apiserver performs each import
	// (failing ones too) before it answers, 0.1 s to several seconds here, and the operator's
	// import workers wait for the answers: about 5 retries a second go out instead of dozens.
	retriesUnderWay := 60 * time.Second // generous: see waitImportsFailing
	if e.cp.RealOpenShiftAPIServer() {
		retriesUnderWay = 90 * time.Second
	}
	eventually(t, retriesUnderWay, func() (bool, string) {
		n := 0
		requests := e.importRequests(t)
		for _, name := range inv.ImageStreamNames() {
			if requests(name) > 1 {
				n++
			}
		}
		return n == len(inv.ImageStreamNames()), fmt.Sprintf("%d of %d streams retried twice", n, len(inv.ImageStreamNames()))
	})

	e.updateConfig(func(c *samplesv1.Config) { c.Spec.ManagementState = operatorv1.Removed })
	samples := sets.New(inv.ImageStreamNames()...)
	left := func() []string {
		list, err := e.images.ImageV1().ImageStreams("openshift").List(context.Background(), metav1.ListOptions{})
		if err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, is := range list.Items {
			if samples.Has(is.Name) { // the payload's own imagestreams stay
				out = append(out, fmt.Sprintf("%s (labels %v)", is.Name, is.Labels))
			}
		}
		return out
	}
	eventually(t, 20*time.Second, func() (bool, string) {
		l := left()
		return len(l) == 0, fmt.Sprintf("samples left: %v", l)
	})
	// Whatever retries were in flight have been answered by now; none created a stream.
	time.Sleep(2 * time.Second)
	for _, is := range left() {
		t.Errorf("imagestream %s exists after Removed: created by an import retry", is)
	}
}
