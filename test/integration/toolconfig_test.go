package integration

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	samplesv1 "github.com/openshift/api/samples/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/sets"

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
	e.assertNeverInvalid(t)
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
