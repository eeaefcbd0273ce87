package integration

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	configv1 "github.com/openshift/api/config/v1"
	imagev1 "github.com/openshift/api/image/v1"
	operatorv1 "github.com/openshift/api/operator/v1"
	samplesv1 "github.com/openshift/api/samples/v1"
	templatev1 "github.com/openshift/api/template/v1"
	"github.com/openshift/library-go/pkg/config/clusteroperator/v1helpers"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/util/retry"

	"github.com/samples-operator-dev/cluster-samples-operator/pkg/inventory"
)

func (e *env) countManagedImageStreams() int {
	list, err := e.images.ImageV1().ImageStreams("openshift").List(context.Background(), metav1.ListOptions{LabelSelector: "samples.operator.openshift.io/managed=true"})
	if err != nil {
		return -1
	}
	return len(list.Items)
}

// TestKilledMidSyncConvergesOnRestart: kill -9 the operator after some creates of its initial
// sync; a new process converges with every sample created exactly once and the finalizer in place.
func TestKilledMidSyncConvergesOnRestart(t *testing.T) {
	parallel(t, 0)
	e := newEnv(t)
	inv := x86Inventory(t)
	// A killed leader cannot release its lease: its successor waits for the lease to expire, so
	// both processes use a short one. A slow client (5 requests/s) lands the kill mid-sync.
	lease := []string{"--leader-elect-lease-duration", "4s", "--leader-elect-renew-deadline", "3s", "--leader-elect-retry-period", "500ms"}
	first := e.startProcess(t, "v1", append(lease, "--kube-api-qps", "5", "--kube-api-burst", "1", "--sample-workers", "1")...)
	eventually(t, 60*time.Second, func() (bool, string) {
		n := e.countManagedImageStreams()
		return n >= 3, fmt.Sprintf("%d samples created so far", n)
	})
	first.signal(syscall.SIGKILL)
	first.wait(10 * time.Second)
	created := e.countManagedImageStreams()
	if created >= len(inv.ImageStreamNames()) {
		t.Fatalf("the kill came too late: %d imagestreams already created", created)
	}
	t.Logf("killed after %d of %d imagestreams", created, len(inv.ImageStreamNames()))

	e.startProcess(t, "v1", lease...)
	e.waitManaged(t, inv, "v1")
	cfg := e.getConfig()
	if len(cfg.Finalizers) != 1 || cfg.Finalizers[0] != samplesv1.ConfigFinalizer {
		t.Errorf("finalizers = %v", cfg.Finalizers)
	}
	events := e.operatorRequests(t)
	creates := map[string]int{}
	for _, ev := range events {
		if ev.Verb == "create" && (ev.Resource == "imagestreams" || ev.Resource == "templates" || ev.Resource == "configs") && ev.Code < 300 {
			creates[ev.Resource+"/"+ev.Name]++
		}
		if ev.Verb == "delete" && (ev.Resource == "imagestreams" || ev.Resource == "templates") {
			t.Errorf("the operator deleted %s/%s", ev.Resource, ev.Name)
		}
	}
	for name, n := range creates {
		if n != 1 {
			t.Errorf("%s created %d times", name, n)
		}
	}
	if want := 1 + len(inv.ImageStreamNames()) + len(inv.TemplateNames()); len(creates) != want {
		t.Errorf("%d objects created, want %d (the Config and every sample)", len(creates), want)
	}
}

// TestAPIServerAndEtcdRestarts: the operator rides out a kube-apiserver restart and an etcd restart,
// converges again, and writes nothing it did not need to.
func TestAPIServerAndEtcdRestarts(t *testing.T) {
	parallel(t, aboutHalfAMinute)
	e := newEnv(t)
	inv := x86Inventory(t)
	op := e.startProcess(t, "v1")
	e.waitManaged(t, inv, "v1")
	e.waitQuiet(t, 500*time.Millisecond)
	before := e.operatorWrites(t)

	ctx := context.Background()
	// A kube-apiserver that has just started denies requests until its RBAC caches have synced;
	// the operator's watches retry. Forbidden answers are checked outside that window only.
	e.probesForbidden = true
	restartWindow := time.Now()
	// After each restart, the operator's watches are back once it reverts a deletion made after it.
	revertsAgain := func(after, name string) {
		t.Helper()
		if err := e.images.ImageV1().ImageStreams("openshift").Delete(ctx, name, metav1.DeleteOptions{}); err != nil {
			t.Fatal(err)
		}
		took := within(t, 30*time.Second, func() (bool, string) {
			return e.imageStreamExists(name), name + " not recreated after the " + after + " restart"
		})
		t.Logf("a deletion after the %s restart was reverted in %s", after, took)
	}
	if err := e.cp.RestartAPIServer(ctx); err != nil {
		t.Fatal(err)
	}
	revertsAgain("kube-apiserver", "ruby")
	if err := e.cp.RestartEtcd(ctx); err != nil {
		t.Fatal(err)
	}
	revertsAgain("etcd", "nodejs")
	restartEnd := time.Now()
	if code := op.wait(0); code != -1 {
		t.Fatalf("the operator exited (code %d) across the restarts", code)
	}
	defer func() {
		for _, ev := range e.operatorRequests(t, answered(403)) {
			if ev.Time.Before(restartWindow) || ev.Time.After(restartEnd) {
				t.Errorf("forbidden outside the restart window: %s %s", ev.Verb, ev.Resource)
			}
		}
	}()
	// Still reverting drift afterwards.
	if err := e.images.ImageV1().ImageStreams("openshift").Delete(ctx, "perl", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	eventually(t, 10*time.Second, func() (bool, string) { return e.imageStreamExists("perl"), "perl not recreated after the restarts" })
	e.waitManaged(t, inv, "v1")
	e.waitQuiet(t, 500*time.Millisecond)
	after := e.operatorWrites(t)
	extra := map[string]int{}
	for k, v := range after {
		if d := v - before[k]; d > 0 {
			extra[k] = d
		}
	}
	// The only sample writes recreate the three streams deleted on purpose.
	if extra["create imagestreams"] != 3 || len(extra) > 3 {
		t.Errorf("writes across the restarts beyond recreating ruby, nodejs and perl: %v", extra)
	}
	t.Logf("writes across two restarts and three reverts: %v", extra)
}

// TestAdminEditStormConverges: an admin's client edits managed samples in a tight loop while the
// operator syncs; once the edits stop everything converges, the operator's writes stay bounded,
// and conflicts never show as Degraded. The storm spends each sample's revert budget in its
// first moments; the operator reverts again once the budget allows, which a 2 s window (10
// minutes by default) brings within the test's wait.
func TestAdminEditStormConverges(t *testing.T) {
	parallel(t, 0)
	e := newEnv(t)
	inv := x86Inventory(t)
	ctx := context.Background()
	opts := defaultOptions()
	opts.RevertWindow = 2 * time.Second
	e.startOperator(opts)
	e.waitManaged(t, inv, "v1")

	stop := make(chan struct{})
	var edits atomic.Int64
	var wg sync.WaitGroup
	for _, name := range []string{"python", "nodejs", "ruby"} {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; ; i++ {
				select {
				case <-stop:
					return
				default:
				}
				is, err := e.images.ImageV1().ImageStreams("openshift").Get(ctx, name, metav1.GetOptions{})
				if err != nil {
					continue
				}
				is.Spec.Tags[0].Annotations["openshift.io/display-name"] = fmt.Sprintf("storm %d", i)
				if _, err := e.images.ImageV1().ImageStreams("openshift").Update(ctx, is, metav1.UpdateOptions{}); err == nil {
					edits.Add(1)
				}
			}
		}()
	}
	var degradedSeen atomic.Bool
	watchDone := make(chan struct{})
	go func() {
		defer close(watchDone)
		for {
			select {
			case <-stop:
				return
			case <-time.After(50 * time.Millisecond):
			}
			if co, err := e.clusterOperator(); err == nil && v1helpers.IsStatusConditionTrue(co.Status.Conditions, configv1.OperatorDegraded) {
				degradedSeen.Store(true)
			}
		}
	}()
	since := time.Now()
	time.Sleep(3 * time.Second)
	close(stop)
	wg.Wait()
	<-watchDone

	e.waitManaged(t, inv, "v1")
	eventually(t, 5*time.Second, func() (bool, string) {
		// The storm edited the first live tag; the server keeps tags sorted by name, which need
		// not be the inventory's order, so the inventory's tag is looked up by name.
		want, _ := inv.ImageStream("python")
		live := e.imageStream("python").Spec.Tags[0]
		for _, tag := range want.Spec.Tags {
			if tag.Name == live.Name {
				got := live.Annotations["openshift.io/display-name"]
				return got == tag.Annotations["openshift.io/display-name"], "python:" + tag.Name + "'s display name is " + got
			}
		}
		return false, "python's first tag " + live.Name + " is not in the inventory"
	})
	e.waitQuiet(t, 500*time.Millisecond)
	// Each admin edit deserves at most one revert; a revert that loses a race with the next edit
	// gets a 409 and is retried from the newer object, which is not a hot loop.
	events := e.operatorRequests(t)
	var reverts, conflicts int64
	for _, ev := range events {
		if ev.Verb == "update" && ev.Resource == "imagestreams" && ev.Time.After(since) {
			switch {
			case ev.Code < 300:
				reverts++
			case ev.Code == 409:
				conflicts++
			}
		}
	}
	t.Logf("admin edits: %d; operator reverts: %d, conflicts retried: %d", edits.Load(), reverts, conflicts)
	if reverts > edits.Load()+10 {
		t.Errorf("the operator reverted %d times for %d admin edits: a hot loop", reverts, edits.Load())
	}
	if degradedSeen.Load() {
		t.Errorf("conflicts surfaced as Degraded")
	}
	if c := configCondition(e.getConfig(), samplesv1.SamplesExist); c == nil || c.Status == corev1.ConditionUnknown {
		t.Errorf("SamplesExist went Unknown: %+v", c)
	}
}

// badConfigInput: each bad value is refused by the CRD or answered with ConfigurationValid
// False and a message that says what to fix, and nothing is deleted.
func badConfigInput(t *testing.T, e *env, inv *inventory.Inventory) {
	ctx := context.Background()

	// Refused by the CRD. The server checks the resourceVersion before the schema, and the
	// operator writes the Config's status meanwhile: resent on a conflict, as an admin's client does.
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		cfg := e.getConfig()
		cfg.Spec.ManagementState = "Sometimes"
		_, err := e.samples.SamplesV1().Configs().Update(ctx, cfg, metav1.UpdateOptions{})
		return err
	})
	if err == nil || !strings.Contains(err.Error(), "managementState") {
		t.Errorf("an unknown managementState was accepted: %v", err)
	}

	invalid := []struct {
		name    string
		mutate  func(*samplesv1.Config)
		message string
	}{
		{"unknown architecture", func(c *samplesv1.Config) { c.Spec.Architectures = []string{"sparc"} }, `architecture "sparc" is unsupported`},
		{"changed architecture", func(c *samplesv1.Config) { c.Spec.Architectures = []string{"arm64"} }, "cannot change"},
		// Each message names its value: the case before left ConfigurationValid False too.
		{"registry with a scheme", func(c *samplesv1.Config) { c.Spec.SamplesRegistry = "https://mirror.example" }, `samplesRegistry "https://mirror.example"`},
		{"registry with spaces", func(c *samplesv1.Config) { c.Spec.SamplesRegistry = "mirror example" }, `samplesRegistry "mirror example"`},
		{"registry with an empty host", func(c *samplesv1.Config) { c.Spec.SamplesRegistry = ":5000/x" }, `samplesRegistry ":5000/x"`},
		{"duplicate skipped imagestream", func(c *samplesv1.Config) { c.Spec.SkippedImagestreams = []string{"ruby", "ruby"} }, `lists "ruby" more than once`},
		{"duplicate skipped template", func(c *samplesv1.Config) { c.Spec.SkippedTemplates = []string{"httpd-example", "httpd-example"} }, `lists "httpd-example" more than once`},
	}
	for _, tc := range invalid {
		e.updateConfig(func(c *samplesv1.Config) {
			c.Spec.Architectures, c.Spec.SamplesRegistry, c.Spec.SkippedImagestreams, c.Spec.SkippedTemplates = []string{"x86_64"}, "", nil, nil
			tc.mutate(c)
		})
		eventually(t, 10*time.Second, func() (bool, string) {
			c := configCondition(e.getConfig(), samplesv1.ConfigurationValid)
			return c != nil && c.Status == corev1.ConditionFalse && strings.Contains(c.Message, tc.message), fmt.Sprintf("%s: ConfigurationValid %+v", tc.name, c)
		})
		if n := e.countManagedImageStreams(); n != len(inv.ImageStreamNames()) {
			t.Errorf("%s: %d managed imagestreams left, want %d", tc.name, n, len(inv.ImageStreamNames()))
		}
		t.Logf("%s: %+v", tc.name, configCondition(e.getConfig(), samplesv1.ConfigurationValid))
	}

	// Skip entries that name nothing are accepted and reported.
	e.updateConfig(func(c *samplesv1.Config) {
		c.Spec.Architectures, c.Spec.SamplesRegistry, c.Spec.SkippedTemplates = []string{"x86_64"}, "", nil
		c.Spec.SkippedImagestreams = []string{"no-such-stream"}
	})
	eventually(t, 10*time.Second, func() (bool, string) {
		c := configCondition(e.getConfig(), samplesv1.ConfigurationValid)
		return c != nil && c.Status == corev1.ConditionTrue && strings.Contains(c.Message, "no-such-stream"), fmt.Sprintf("ConfigurationValid %+v", c)
	})

	// A Config with another name is ignored, with an event.
	other := &samplesv1.Config{ObjectMeta: metav1.ObjectMeta{Name: "other"}, Spec: samplesv1.ConfigSpec{ManagementState: operatorv1.Removed}}
	if _, err := e.samples.SamplesV1().Configs().Create(ctx, other, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	eventually(t, 10*time.Second, func() (bool, string) {
		for _, ev := range e.operatorEvents(t) {
			if ev.Reason == "ConfigIgnored" && strings.Contains(ev.Message, `"other"`) {
				return true, ""
			}
		}
		return false, "no ConfigIgnored event"
	})
	if got, _ := e.samples.SamplesV1().Configs().Get(ctx, "other", metav1.GetOptions{}); len(got.Status.Conditions) != 0 || len(got.Finalizers) != 0 {
		t.Errorf("the operator touched Config other: %+v", got)
	}
	if n := e.countManagedImageStreams(); n != len(inv.ImageStreamNames()) {
		t.Errorf("a Removed Config named other deleted samples: %d left", n)
	}

	// Undone, for the scene after this one.
	if err := e.samples.SamplesV1().Configs().Delete(ctx, "other", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	e.updateConfig(func(c *samplesv1.Config) { c.Spec.SkippedImagestreams = nil })
}

// TestHostileInventoryRefusesToStart: a broken inventory directory stops the operator before it
// writes anything, with an error that names the file.
func TestHostileInventoryRefusesToStart(t *testing.T) {
	parallel(t, 0)
	e := newEnv(t)
	inv := x86Inventory(t)
	cases := []struct {
		name  string
		file  string // relative to the python group
		write func(path string) error
	}{
		{"invalid JSON", "imagestreams/broken.json", func(p string) error { return os.WriteFile(p, []byte(`{"kind": "ImageStream",`), 0o644) }},
		{"wrong kind", "imagestreams/wrong-kind.json", func(p string) error {
			return os.WriteFile(p, []byte(`{"kind":"Template","apiVersion":"template.openshift.io/v1","metadata":{"name":"x"}}`), 0o644)
		}},
		{"namespace set", "imagestreams/namespaced.json", func(p string) error {
			return os.WriteFile(p, []byte(`{"kind":"ImageStream","apiVersion":"image.openshift.io/v1","metadata":{"name":"x","namespace":"kube-system"},"spec":{}}`), 0o644)
		}},
		{"very large file", "templates/huge.json", func(p string) error {
			return os.WriteFile(p, append([]byte(`{"kind":"Template","apiVersion":"template.openshift.io/v1","metadata":{"name":"huge"},"message":"`), append(make([]byte, inventory.MaxFileSize), []byte(`"}`)...)...), 0o644)
		}},
		{"symlink loop", "imagestreams/loop", func(p string) error { return os.Symlink(".", p) }},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			writeInventory(t, dir, inv, []string{"python", "ruby"}, []string{"httpd-example"})
			bad := filepath.Join(dir, "ocp-x86_64", "python", tc.file)
			if err := tc.write(bad); err != nil {
				t.Fatal(err)
			}
			p := e.startProcess(t, "v1", "--inventory-dir", dir)
			if code := p.wait(20 * time.Second); code == 0 || code == -1 {
				t.Fatalf("exit code %d, want a failure", code)
			}
			out := p.output.String()
			if !strings.Contains(out, filepath.Base(bad)) {
				t.Errorf("the error does not name %s:\n%s", filepath.Base(bad), tail(out, 1500))
			}
			t.Logf("%s", strings.TrimSpace(tail(out, 300)))
		})
	}
	if _, err := e.samples.SamplesV1().Configs().Get(context.Background(), "cluster", metav1.GetOptions{}); err == nil {
		t.Errorf("a Config was created by an operator that refused to start")
	}
	if n := e.countManagedImageStreams(); n != 0 {
		t.Errorf("%d samples were created by an operator that refused to start", n)
	}
}

// writeInventory writes some of an inventory's samples in the on-disk layout.
func writeInventory(t *testing.T, dir string, inv *inventory.Inventory, streams, templates []string) {
	t.Helper()
	for _, name := range streams {
		is, _ := inv.ImageStream(name)
		writeJSON(t, filepath.Join(dir, "ocp-x86_64", name, "imagestreams", name+".json"), is, "ImageStream", "image.openshift.io/v1")
	}
	for _, name := range templates {
		tp, _ := inv.Template(name)
		writeJSON(t, filepath.Join(dir, "ocp-x86_64", "python", "templates", name+".json"), tp, "Template", "template.openshift.io/v1")
	}
	if err := os.MkdirAll(filepath.Join(dir, "ocp-x86_64", "python", "templates"), 0o755); err != nil {
		t.Fatal(err)
	}
}

func writeJSON(t *testing.T, path string, obj interface{}, kind, apiVersion string) {
	t.Helper()
	switch o := obj.(type) {
	case *imagev1.ImageStream:
		o.Kind, o.APIVersion = kind, apiVersion
	case *templatev1.Template:
		o.Kind, o.APIVersion = kind, apiVersion
	}
	data, err := jsonMarshal(obj)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestSIGTERMReleasesTheLease: on SIGTERM the leader stops cleanly (exit 0) and releases its lease,
// so a standby takes over in about its retry period, not after the lease duration. The bound it
// judges by (20 s, against a 60 s lease) holds on a loaded machine: it runs beside other tests.
func TestSIGTERMReleasesTheLease(t *testing.T) {
	parallel(t, 0)
	e := newEnv(t)
	inv := x86Inventory(t)
	timings := []string{"--leader-elect-lease-duration", "60s", "--leader-elect-renew-deadline", "40s", "--leader-elect-retry-period", "1s"}
	leader := e.startProcess(t, "v1", timings...)
	e.waitManaged(t, inv, "v1")
	standby := e.startProcess(t, "v1", timings...)
	time.Sleep(2 * time.Second)

	start := time.Now()
	leader.signal(syscall.SIGTERM)
	if code := leader.wait(20 * time.Second); code != 0 {
		t.Fatalf("the leader exited with %d after SIGTERM, want 0", code)
	}
	t.Logf("leader stopped %s after SIGTERM", time.Since(start))
	if err := e.tmpl.TemplateV1().Templates("openshift").Delete(context.Background(), "httpd-example", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	eventually(t, 15*time.Second, func() (bool, string) { return e.templateExists("httpd-example"), "the standby did not take over" })
	took := time.Since(start)
	t.Logf("the standby took over and reverted a deletion %s after SIGTERM (lease duration 60s)", took)
	if took > 20*time.Second {
		t.Errorf("takeover took %s: the lease was not released", took)
	}
	if code := standby.wait(0); code != -1 {
		t.Errorf("the standby exited with %d", code)
	}
}

func jsonMarshal(v interface{}) ([]byte, error) { return json.MarshalIndent(v, "", "  ") }
