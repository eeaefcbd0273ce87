package integration

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	samplesv1 "github.com/openshift/api/samples/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/apimachinery/pkg/watch"

	"github.com/samples-operator-dev/cluster-samples-operator/pkg/inventory"
)

// gitOpsManager is the field manager of the GitOps tool the tests play.
const gitOpsManager = "gitops-tool"

// applyAsTool applies a Config manifest server-side as a GitOps tool does, without forcing:
// a field another manager set to another value would be a conflict.
func (e *env) applyAsTool(t *testing.T, manifest string) {
	t.Helper()
	_, err := e.samples.SamplesV1().Configs().Patch(context.Background(), "cluster", types.ApplyPatchType, []byte(manifest),
		metav1.PatchOptions{FieldManager: gitOpsManager})
	if err != nil {
		t.Fatalf("the tool's apply failed: %v", err)
	}
}

// toolConfig is the Config a GitOps repository holds: no architectures, and a skippedHelmCharts
// list when charts are given.
func toolConfig(charts ...string) string {
	spec := `"managementState":"Managed"`
	if len(charts) > 0 {
		spec += `,"skippedHelmCharts":["` + strings.Join(charts, `","`) + `"]`
	}
	return `{"apiVersion":"samples.operator.openshift.io/v1","kind":"Config","metadata":{"name":"cluster"},"spec":{` + spec + `}}`
}

// assertNeverInvalid fails the test for each time the operator reported ConfigurationValid False
// (in this test, or this scene).
func (e *env) assertNeverInvalid(t *testing.T) {
	t.Helper()
	for _, m := range e.eventsWithReason(t, "ConditionChanged") {
		if strings.HasPrefix(m, "ConfigurationValid is False") {
			t.Errorf("the Config was reported invalid: %s", m)
		}
	}
}

// TestConfigAppliedByAToolWithoutArchitectures: a GitOps tool creates the Config before the
// operator does, server-side, with no architectures and a skippedHelmCharts list. The operator
// fills in the cluster's architecture (its own field, told in an Event), installs the samples
// without ever calling the Config invalid, and says in ConfigurationValid that skippedHelmCharts
// is ignored. The tool's next applies meet no conflict and set off no write of the operator's.
func TestConfigAppliedByAToolWithoutArchitectures(t *testing.T) {
	parallel(t, 0)
	e := newEnv(t)
	inv := x86Inventory(t)
	// Every version of the Config from before the tool's apply to the end of the test: one
	// that says ConfigurationValid False would be the operator calling it invalid, however
	// briefly. (Its Events cannot tell: client-go rewrites the messages of similar ones.)
	versions := e.watchConfigVersions(t)
	e.applyAsTool(t, toolConfig("redhat-nginx-imagestreams"))
	e.startOperator(defaultOptions())
	e.waitManaged(t, inv, "v1")

	cfg := e.getConfig()
	if !slices.Equal(cfg.Spec.Architectures, []string{"x86_64"}) || !slices.Equal(cfg.Status.Architectures, []string{"x86_64"}) {
		t.Errorf("architectures: spec %q, status %q; want [x86_64] in both", cfg.Spec.Architectures, cfg.Status.Architectures)
	}
	// spec.architectures is the operator's field: the tool's applies neither own it nor clear it.
	var owners []string
	for _, mf := range cfg.ManagedFields {
		if mf.Subresource == "" && mf.FieldsV1 != nil && strings.Contains(string(mf.FieldsV1.Raw), `"f:architectures"`) {
			owners = append(owners, mf.Manager)
		}
	}
	if len(owners) != 1 || owners[0] == gitOpsManager {
		t.Errorf("spec.architectures is managed by %q, want by the operator alone", owners)
	}
	e.waitEvent(t, "ConfigArchitectureDefaulted", "set it to x86_64, the cluster's architecture")
	const ignored = "spec.skippedHelmCharts is ignored: this operator installs no Helm charts, only imagestreams and templates (it lists redhat-nginx-imagestreams)"
	eventually(t, 10*time.Second, func() (bool, string) {
		c := configCondition(e.getConfig(), samplesv1.ConfigurationValid)
		return c != nil && c.Status == corev1.ConditionTrue && c.Message == ignored, fmt.Sprintf("ConfigurationValid: %+v", c)
	})

	// The tool applies again, as it does on every sync: no conflict, nothing for the operator
	// to write to the Config's spec. Then the repository drops skippedHelmCharts.
	e.waitQuiet(t, 300*time.Millisecond)
	reapplied := time.Now()
	e.applyAsTool(t, toolConfig("redhat-nginx-imagestreams"))
	e.applyAsTool(t, toolConfig())
	eventually(t, 10*time.Second, func() (bool, string) {
		c := configCondition(e.getConfig(), samplesv1.ConfigurationValid)
		return c != nil && c.Status == corev1.ConditionTrue && c.Message == "", fmt.Sprintf("ConfigurationValid: %+v", c)
	})
	e.waitQuiet(t, 300*time.Millisecond)
	if got := e.getConfig().Spec.Architectures; !slices.Equal(got, []string{"x86_64"}) {
		t.Errorf("after the tool's applies spec.architectures is %q, want [x86_64]", got)
	}
	if specWrites := describe(e.operatorRequests(t, writes, on("configs"), noSubresource, receivedAfter(reapplied))); len(specWrites) > 0 {
		t.Errorf("the operator wrote the Config after the tool's applies: %v", specWrites)
	}
	if n := len(e.eventsWithReason(t, "ConfigArchitectureDefaulted")); n != 1 {
		t.Errorf("%d ConfigArchitectureDefaulted events, want 1", n)
	}
	seen, reported := versions(), 0
	for _, cfg := range seen {
		c := configCondition(cfg, samplesv1.ConfigurationValid)
		if c == nil {
			continue
		}
		reported++
		if c.Status == corev1.ConditionFalse {
			t.Errorf("the Config was reported invalid (resourceVersion %s, spec.architectures %q): %s", cfg.ResourceVersion, cfg.Spec.Architectures, c.Message)
		}
	}
	t.Logf("watched %d versions of the Config, %d of them with ConfigurationValid", len(seen), reported)
	if reported == 0 {
		t.Errorf("the watch saw no version of the Config with ConfigurationValid: it proves nothing")
	}
}

// watchConfigVersions watches the Config from now on; the function it returns waits until the
// watch has delivered the version the server holds then, stops the watch and returns every
// version it delivered, in order. A watch the server ends is resumed where it ended, so no
// version is missed.
func (e *env) watchConfigVersions(t *testing.T) func() []*samplesv1.Config {
	t.Helper()
	configs := e.samples.SamplesV1().Configs()
	byName := metav1.ListOptions{FieldSelector: "metadata.name=cluster"}
	list, err := configs.List(context.Background(), byName)
	if err != nil {
		t.Fatal(err)
	}
	var (
		mu       sync.Mutex
		seen     []*samplesv1.Config
		rvs      = sets.New[string]()
		watchErr error // why the watch ended before it was stopped
	)
	for i := range list.Items {
		seen = append(seen, &list.Items[i])
		rvs.Insert(list.Items[i].ResourceVersion)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		fail := func(err error) {
			if ctx.Err() == nil {
				mu.Lock()
				watchErr = err
				mu.Unlock()
			}
		}
		rv := list.ResourceVersion
		for ctx.Err() == nil {
			opts := byName
			opts.ResourceVersion, opts.AllowWatchBookmarks = rv, true
			w, err := configs.Watch(ctx, opts)
			if err != nil {
				fail(err)
				return
			}
			for ev := range w.ResultChan() {
				if ev.Type == watch.Error {
					w.Stop()
					fail(apierrors.FromObject(ev.Object))
					return
				}
				cfg, ok := ev.Object.(*samplesv1.Config)
				if !ok {
					continue
				}
				rv = cfg.ResourceVersion
				if ev.Type == watch.Bookmark {
					continue
				}
				mu.Lock()
				seen = append(seen, cfg)
				rvs.Insert(cfg.ResourceVersion)
				mu.Unlock()
			}
		}
	}()
	stop := func() { cancel(); <-done }
	t.Cleanup(stop)
	return func() []*samplesv1.Config {
		t.Helper()
		last, err := configs.Get(context.Background(), "cluster", metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		eventually(t, 10*time.Second, func() (bool, string) {
			mu.Lock()
			defer mu.Unlock()
			return rvs.Has(last.ResourceVersion) || watchErr != nil, "the watch has not delivered resourceVersion " + last.ResourceVersion + " yet"
		})
		stop()
		mu.Lock()
		defer mu.Unlock()
		if watchErr != nil {
			t.Fatalf("the watch of the Config failed: %v", watchErr)
		}
		return seen
	}
}

// specReplacedWithoutArchitectures: a tool that replaces the whole spec of the installed Config
// with one that names no architectures changes nothing: the operator writes the cluster's
// architecture back, no sample is written, and the Config is never called invalid.
func specReplacedWithoutArchitectures(t *testing.T, e *env, inv *inventory.Inventory) {
	replaced := time.Now()
	e.updateConfig(func(c *samplesv1.Config) { c.Spec.Architectures = nil })
	e.waitEvent(t, "ConfigArchitectureDefaulted", "set it to x86_64")
	eventually(t, 10*time.Second, func() (bool, string) {
		got := e.getConfig().Spec.Architectures
		return slices.Equal(got, []string{"x86_64"}), fmt.Sprintf("spec.architectures %q", got)
	})
	e.waitQuiet(t, 300*time.Millisecond)
	if ok, why := e.samplesInPlace(inv, "v1", sets.New[string](), sets.New[string]()); !ok {
		t.Errorf("samples changed: %s", why)
	}
	if w := e.sampleWritesSince(t, replaced); len(w) > 0 {
		t.Errorf("samples were written after the spec was replaced without architectures: %v", w)
	}
	if got := e.getConfig().Status.Architectures; !slices.Equal(got, []string{"x86_64"}) {
		t.Errorf("status.architectures %q, want [x86_64]", got)
	}
	e.assertNeverInvalid(t)
}
