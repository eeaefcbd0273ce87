package integration

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	configv1 "github.com/openshift/api/config/v1"
	operatorv1 "github.com/openshift/api/operator/v1"
	samplesv1 "github.com/openshift/api/samples/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/samples-operator-dev/cluster-samples-operator/pkg/bootstrapstate"
	"github.com/samples-operator-dev/cluster-samples-operator/pkg/configspec"
	"github.com/samples-operator-dev/cluster-samples-operator/pkg/configstatus"
)

// startUnreachable starts the operator with a registry that does not answer at install, and waits
// until the default Config is Removed for it and the operator has probed again at least three
// times (so that it would switch, were nothing else to stop it).
func (e *env) startUnreachable(t *testing.T) *switchableProbe {
	t.Helper()
	probe := &switchableProbe{}
	opts := defaultOptions()
	opts.RegistryProbe = probe.probe
	opts.RegistryRecheckInterval = 100 * time.Millisecond
	e.startOperator(opts)
	e.waitBootstrappedRemoved(t, 20*time.Second, configspec.ReasonRegistryUnreachable)
	eventually(t, 10*time.Second, func() (bool, string) {
		return len(probe.probes()) >= 3, fmt.Sprintf("%d probes", len(probe.probes()))
	})
	return probe
}

// stillRemovedAfterTheNextLook answers the probe once the operator has judged the gate that
// now keeps the samples out (the Config names it), makes the operator look again at once
// (nudge changes what it judges, keeping the gate), waits for that look (its SamplesStayRemoved
// Event counted once more) and checks that the Config is still Removed: a look that ignored the
// gate would have probed, found the registry answering, and switched.
func (e *env) stillRemovedAfterTheNextLook(t *testing.T, probe *switchableProbe, gate string, nudge func()) {
	t.Helper()
	eventually(t, 30*time.Second, func() (bool, string) {
		reason, _, _ := bootstrapstate.Of(e.getConfig()).Removal()
		return reason == gate, "the Config's bootstrap reason is " + reason
	})
	looks := len(e.eventsWithReason(t, "SamplesStayRemoved"))
	probe.answer()
	nudge()
	eventually(t, 30*time.Second, func() (bool, string) {
		if cfg := e.getConfig(); cfg.Spec.ManagementState != operatorv1.Removed {
			t.Fatalf("switched to %s", cfg.Spec.ManagementState)
		}
		n := len(e.eventsWithReason(t, "SamplesStayRemoved"))
		return n > looks, fmt.Sprintf("%d looks since the answer", n-looks)
	})
	if cfg := e.getConfig(); cfg.Spec.ManagementState != operatorv1.Removed {
		t.Fatalf("switched to %s", cfg.Spec.ManagementState)
	}
}

// stillRemovedWhenTheNextProbeWasDue answers the probe and waits until the probe that the
// schedule so far (waits doubling) puts next is overdue, then checks that no probe came and the
// Config is still Removed: the operator stopped probing when someone else set the spec.
func (e *env) stillRemovedWhenTheNextProbeWasDue(t *testing.T, probe *switchableProbe) {
	t.Helper()
	calls := probe.probes()
	probe.answer()
	last, wait := calls[len(calls)-1], calls[len(calls)-1].Sub(calls[len(calls)-2])
	idle(t, time.Until(last.Add(2*wait+2*time.Second)))
	if got := probe.probes(); len(got) > len(calls) {
		t.Errorf("probed %d more times after someone else set the spec", len(got)-len(calls))
	}
	if cfg := e.getConfig(); cfg.Spec.ManagementState != operatorv1.Removed {
		t.Fatalf("switched to %s", cfg.Spec.ManagementState)
	}
}

// TestTheBootstrapNeverOverrulesAnAdmin: a Config the operator created Removed because the
// registry did not answer is switched to Managed when it answers only while nobody else has set
// its spec, and only into a cluster that would admit the samples.
func TestTheBootstrapNeverOverrulesAnAdmin(t *testing.T) {
	parallelParent(t)
	t.Run("a tool re-applies Removed, changing no generation", func(t *testing.T) {
		parallel(t, aboutTwentySecond)
		e := newEnv(t)
		probe := e.startUnreachable(t)
		before := e.getConfig()
		apply := []byte(`{"apiVersion":"samples.operator.openshift.io/v1","kind":"Config","metadata":{"name":"cluster"},"spec":{"managementState":"Removed"}}`)
		after, err := e.samples.SamplesV1().Configs().Patch(context.Background(), "cluster", types.ApplyPatchType, apply,
			metav1.PatchOptions{FieldManager: "gitops-tool", Force: ptrTo(true)})
		if err != nil {
			t.Fatal(err)
		}
		if after.Generation != before.Generation {
			t.Fatalf("the re-apply moved the generation %d -> %d: this case is about one that does not", before.Generation, after.Generation)
		}
		// The Removed is the tool's now: SamplesExist no longer blames the registry, and the
		// operator, having seen that, probes no more.
		eventually(t, 10*time.Second, func() (bool, string) {
			c := configCondition(e.getConfig(), samplesv1.SamplesExist)
			return c.Reason == configstatus.ReasonCurrentlyRemoved, "SamplesExist reason " + c.Reason
		})
		e.stillRemovedWhenTheNextProbeWasDue(t, probe)
	})

	t.Run("a cluster proxy set after install", func(t *testing.T) {
		parallel(t, aboutTwentySecond)
		e := newEnv(t)
		probe := e.startUnreachable(t)
		ctx := context.Background()
		proxy, err := e.config.ConfigV1().Proxies().Create(ctx, &configv1.Proxy{ObjectMeta: metav1.ObjectMeta{Name: "cluster"},
			Spec: configv1.ProxySpec{HTTPSProxy: "http://127.0.0.1:9"}}, metav1.CreateOptions{})
		if apierrors.IsAlreadyExists(err) {
			proxy, err = e.config.ConfigV1().Proxies().Get(ctx, "cluster", metav1.GetOptions{})
		}
		if err != nil {
			t.Fatal(err)
		}
		proxy.Status.HTTPSProxy = "http://127.0.0.1:9"
		if _, err := e.config.ConfigV1().Proxies().UpdateStatus(ctx, proxy, metav1.UpdateOptions{}); err != nil {
			t.Fatal(err)
		}
		// The direct dial still fails; imports would go through the proxy: Managed, as the
		// install would have decided with the proxy there.
		eventually(t, 30*time.Second, func() (bool, string) {
			cfg := e.getConfig()
			return cfg.Spec.ManagementState == operatorv1.Managed, "spec " + string(cfg.Spec.ManagementState)
		})
		msg, ok := bootstrapstate.Of(e.getConfig()).SwitchedByRegistry()
		if !ok || !strings.Contains(msg, "cluster proxy") {
			t.Errorf("the switch does not say it followed the proxy: %q", msg)
		}
		e.waitManaged(t, x86Inventory(t), "v1")
		if probe.answering {
			t.Error("the registry was made to answer")
		}
	})

	t.Run("an allow-list refusing every registry added after install", func(t *testing.T) {
		parallel(t, aboutAMinute) // 72 s in CI
		e := newEnv(t)
		probe := e.startUnreachable(t)
		e.setImportAllowList(t, "mirror.example.com")
		e.stillRemovedAfterTheNextLook(t, probe, configspec.ReasonImageConfigBlocks, func() { e.setImportAllowList(t, "mirror.example.org") })
		// The list allows the registries again: the next probe switches.
		e.setImportAllowList(t)
		eventually(t, 30*time.Second, func() (bool, string) {
			cfg := e.getConfig()
			return cfg.Spec.ManagementState == operatorv1.Managed, "spec " + string(cfg.Spec.ManagementState)
		})
	})

	t.Run("an admin's Removed after the switch", func(t *testing.T) {
		parallel(t, aboutTwentySecond)
		e := newEnv(t)
		probe := e.startUnreachable(t)
		probe.answer()
		e.waitManaged(t, x86Inventory(t), "v1")
		e.updateConfig(func(c *samplesv1.Config) { c.Spec.ManagementState = operatorv1.Removed })
		eventually(t, 30*time.Second, func() (bool, string) {
			cfg := e.getConfig()
			c := configCondition(cfg, samplesv1.SamplesExist)
			_, annotated := cfg.Annotations[bootstrapstate.ReasonAnnotation]
			return cfg.Status.ManagementState == operatorv1.Removed && c.Reason == configstatus.ReasonCurrentlyRemoved && !annotated,
				fmt.Sprintf("status %s, SamplesExist %s, annotations %v", cfg.Status.ManagementState, c.Reason, cfg.Annotations)
		})
	})
}

func ptrTo[T any](v T) *T { return &v }
