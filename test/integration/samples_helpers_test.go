package integration

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	samplesv1 "github.com/openshift/api/samples/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/sets"

	"github.com/samples-operator-dev/cluster-samples-operator/pkg/configstatus"
	"github.com/samples-operator-dev/cluster-samples-operator/pkg/desired"
	"github.com/samples-operator-dev/cluster-samples-operator/pkg/inventory"
	"github.com/samples-operator-dev/cluster-samples-operator/test/controlplane"
)

// x86Inventory is the inventory most tests install (testInventoryDir): a part of the embedded
// ocp-x86_64 inventory, parsed once for the whole package.
func x86Inventory(t *testing.T) *inventory.Inventory {
	t.Helper()
	ti, err := testInventoryOnce()
	if err != nil {
		t.Fatalf("writing the test inventory: %v", err)
	}
	return ti.inv
}

// fullX86Inventory is the whole embedded ocp-x86_64 inventory, parsed once for the whole
// package: an Inventory never changes and hands out copies.
func fullX86Inventory(t *testing.T) *inventory.Inventory {
	t.Helper()
	inv, err := embeddedX86()
	if err != nil {
		t.Fatal(err)
	}
	return inv
}

var embeddedX86 = sync.OnceValues(func() (*inventory.Inventory, error) {
	return inventory.Embedded(inventory.ArchDirOCPX86_64)
})

func (e *env) getConfig() *samplesv1.Config {
	e.t.Helper()
	cfg, err := e.samples.SamplesV1().Configs().Get(context.Background(), "cluster", metav1.GetOptions{})
	if err != nil {
		e.t.Fatalf("getting Config cluster: %v", err)
	}
	return cfg
}

// updateConfig changes the Config's spec, retrying on conflicts as an admin's client would.
func (e *env) updateConfig(mutate func(*samplesv1.Config)) {
	e.t.Helper()
	for i := 0; ; i++ {
		cfg := e.getConfig()
		mutate(cfg)
		_, err := e.samples.SamplesV1().Configs().Update(context.Background(), cfg, metav1.UpdateOptions{})
		if err == nil {
			return
		}
		if !apierrors.IsConflict(err) || i > 20 {
			e.t.Fatalf("updating Config: %v", err)
		}
	}
}

// configCondition is the test suite's one way to read a Config condition: nil for a nil Config
// or a condition not set.
func configCondition(cfg *samplesv1.Config, t samplesv1.ConfigConditionType) *samplesv1.ConfigCondition {
	if cfg == nil {
		return nil
	}
	return configstatus.Condition(&cfg.Status, t)
}

func conditionIs(cfg *samplesv1.Config, t samplesv1.ConfigConditionType, status string) bool {
	c := configCondition(cfg, t)
	return c != nil && string(c.Status) == status
}

// samplesInPlace reports whether every inventory sample (less the skipped ones) exists, labelled
// managed and stamped with version.
func (e *env) samplesInPlace(inv *inventory.Inventory, version string, skippedIS, skippedT sets.Set[string]) (bool, string) {
	ctx := context.Background()
	streams, err := e.images.ImageV1().ImageStreams("openshift").List(ctx, metav1.ListOptions{})
	if err != nil {
		return false, err.Error()
	}
	live := map[string]map[string]string{}
	labels := map[string]map[string]string{}
	for _, is := range streams.Items {
		live[is.Name], labels[is.Name] = is.Annotations, is.Labels
	}
	for _, name := range inv.ImageStreamNames() {
		if skippedIS.Has(name) {
			continue
		}
		if _, ok := live[name]; !ok {
			return false, fmt.Sprintf("imagestream %s missing", name)
		}
		if live[name][desired.VersionAnnotation] != version || labels[name][desired.ManagedLabel] != "true" {
			return false, fmt.Sprintf("imagestream %s has version %q managed %q", name, live[name][desired.VersionAnnotation], labels[name][desired.ManagedLabel])
		}
	}
	templates, err := e.tmpl.TemplateV1().Templates("openshift").List(ctx, metav1.ListOptions{})
	if err != nil {
		return false, err.Error()
	}
	liveT := map[string]map[string]string{}
	for _, tp := range templates.Items {
		liveT[tp.Name] = tp.Annotations
	}
	for _, name := range inv.TemplateNames() {
		if skippedT.Has(name) {
			continue
		}
		if a, ok := liveT[name]; !ok || a[desired.VersionAnnotation] != version {
			return false, fmt.Sprintf("template %s missing or not at %s", name, version)
		}
	}
	return true, ""
}

// waitManaged waits until the Config reports the samples installed at version and they are.
func (e *env) waitManaged(t *testing.T, inv *inventory.Inventory, version string) {
	t.Helper()
	eventually(t, 30*time.Second, func() (bool, string) {
		cfg, err := e.samples.SamplesV1().Configs().Get(context.Background(), "cluster", metav1.GetOptions{})
		if err != nil {
			return false, err.Error()
		}
		if cfg.Status.ManagementState != "Managed" || !conditionIs(cfg, samplesv1.SamplesExist, "True") || cfg.Status.Version != version {
			return false, fmt.Sprintf("status: state=%q version=%q conditions=%+v", cfg.Status.ManagementState, cfg.Status.Version, cfg.Status.Conditions)
		}
		return e.samplesInPlace(inv, version, sets.New(cfg.Spec.SkippedImagestreams...), sets.New(cfg.Spec.SkippedTemplates...))
	})
}

// importRequests counts the ImageStreamImports the operator sent per stream. The stand-in's
// emulator counts those it processed; the real openshift-apiserver answers them itself, so there
// they are counted from the audit log: every create the server's handler answered (201, or the
// NotFound and Conflict of its consistency check), as the emulator counts every one it processed.
func (e *env) importRequests(t *testing.T) func(stream string) int {
	t.Helper()
	if !e.cp.RealOpenShiftAPIServer() {
		return e.importer.ImportRequests
	}
	handled := func(ev controlplane.AuditEvent) bool { return ev.Code != 403 && ev.Code < 500 }
	counts := countBy(e.operatorRequests(t, verb("create"), on("imagestreamimports"), handled), func(ev controlplane.AuditEvent) string { return ev.Name })
	return func(stream string) int { return counts[stream] }
}

// proveSamplesWatched deletes the managed template name and waits for the operator to put it
// back: the positive signal that the operator was running and handling sample events after
// whatever the test did before, so that a check that nothing happened to those is not vacuous.
func (e *env) proveSamplesWatched(t *testing.T, name string) {
	t.Helper()
	if err := e.tmpl.TemplateV1().Templates("openshift").Delete(context.Background(), name, metav1.DeleteOptions{}); err != nil {
		t.Fatalf("deleting the canary template %s: %v", name, err)
	}
	eventually(t, 10*time.Second, func() (bool, string) {
		return e.templateExists(name), "the canary template " + name + " was not recreated: the operator is not handling sample events"
	})
}
