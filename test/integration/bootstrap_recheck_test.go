package integration

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	operatorv1 "github.com/openshift/api/operator/v1"
	samplesv1 "github.com/openshift/api/samples/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/samples-operator-dev/cluster-samples-operator/pkg/bootstrapstate"
	"github.com/samples-operator-dev/cluster-samples-operator/pkg/configspec"
)

// switchableProbe is a registry probe that fails until answering is set, and records when it ran.
type switchableProbe struct {
	mu        sync.Mutex
	answering bool
	calls     []time.Time
}

func (p *switchableProbe) probe(context.Context) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.calls = append(p.calls, time.Now())
	if p.answering {
		return nil
	}
	return errors.New("dial tcp: i/o timeout")
}

func (p *switchableProbe) answer() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.answering = true
}

func (p *switchableProbe) probes() []time.Time {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]time.Time(nil), p.calls...)
}

// TestRegistryUnreachableAtInstallIsProbedUntilItAnswers: the registry does not answer at install,
// so the default Config is created Removed; the operator keeps probing with growing waits and,
// once the registry answers, switches the Config to Managed, says why (an event, SamplesExist's
// reason while installing, the Config's annotation) and installs the samples.
func TestRegistryUnreachableAtInstallIsProbedUntilItAnswers(t *testing.T) {
	parallel(t, 0)
	e := newEnv(t)
	inv := x86Inventory(t)
	probe := &switchableProbe{}
	opts := defaultOptions()
	opts.RegistryProbe = probe.probe
	opts.RegistryRecheckInterval = 100 * time.Millisecond
	e.startOperator(opts)
	e.waitBootstrappedRemoved(t, 20*time.Second, configspec.ReasonRegistryUnreachable)

	// Probes after install: 100 ms, 200 ms, 400 ms apart ...
	eventually(t, 10*time.Second, func() (bool, string) {
		n := len(probe.probes())
		return n >= 4, fmt.Sprintf("%d probes", n)
	})
	// Judged by lower bounds, which a loaded machine can only exceed: a wait that did not grow
	// would leave the third gap near 100 ms.
	calls := probe.probes()
	for i := 1; i < 4; i++ {
		least := opts.RegistryRecheckInterval << (i - 1) * 9 / 10
		if gap := calls[i].Sub(calls[i-1]); gap < least {
			t.Errorf("probe %d came %s after the previous one, want at least %s: the wait does not grow", i, gap, least)
		}
	}
	if cfg := e.getConfig(); cfg.Spec.ManagementState != operatorv1.Removed {
		t.Fatalf("switched while the registry still did not answer: %s", cfg.Spec.ManagementState)
	}

	// Every status the operator writes from now on is seen: a poll could miss the short while the
	// samples install.
	sawReason := watchConfigFor(t, e, func(c *samplesv1.Config) bool {
		cond := configCondition(c, samplesv1.SamplesExist)
		return cond != nil && cond.Status == corev1.ConditionFalse && cond.Reason == configspec.ReasonRegistryReachable
	})
	probe.answer()
	e.waitManaged(t, inv, "v1")
	eventually(t, 5*time.Second, func() (bool, string) { // the watch may trail the reads
		return sawReason(), fmt.Sprintf("SamplesExist never said %s while the samples installed", configspec.ReasonRegistryReachable)
	})
	cfg := e.getConfig()
	if cfg.Annotations[bootstrapstate.ReasonAnnotation] != configspec.ReasonRegistryReachable {
		t.Errorf("the Config does not say why it was switched: %v", cfg.Annotations)
	}
	found := false
	for _, ev := range e.operatorEvents(t) {
		if ev.Reason == "ConfigManagedRegistryReachable" && ev.Type == corev1.EventTypeNormal {
			found = true
		}
	}
	if !found {
		t.Errorf("no ConfigManagedRegistryReachable event")
	}
}

// nextProbeDue is when an operator that went on probing on its schedule would have probed again
// at the latest: each wait doubles the one before (configspec.RegistryRecheckDelay), so the next
// probe comes twice the last gap after the last probe; after a single probe (the one at install),
// first after one base.
func nextProbeDue(calls []time.Time, base time.Duration) time.Time {
	switch n := len(calls); n {
	case 0:
		return time.Now().Add(base)
	case 1:
		return calls[0].Add(base)
	default:
		return calls[n-1].Add(2 * calls[n-1].Sub(calls[n-2]))
	}
}

// TestAnAdminsRemovedIsNeverOverridden: the registry does not answer at install; an admin then
// changes the Config's spec (here: skips a sample, keeping Removed), or had created the Config
// Removed before the operator ran. When the registry answers, the Config stays Removed.
func TestAnAdminsRemovedIsNeverOverridden(t *testing.T) {
	parallel(t, aboutTwentySecond)
	for _, tc := range []struct {
		name  string
		setup func(t *testing.T, e *env, probe *switchableProbe)
	}{
		{"spec changed after install", func(t *testing.T, e *env, probe *switchableProbe) {
			e.waitBootstrappedRemoved(t, 20*time.Second, configspec.ReasonRegistryUnreachable)
			// The operator is probing again (so it would switch, were the spec still its own).
			eventually(t, 10*time.Second, func() (bool, string) {
				return len(probe.probes()) >= 3, fmt.Sprintf("%d probes", len(probe.probes()))
			})
			e.updateConfig(func(c *samplesv1.Config) { c.Spec.SkippedTemplates = []string{"jenkins-ephemeral"} })
		}},
		{"created Removed by the admin", nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t)
			probe := &switchableProbe{}
			opts := defaultOptions()
			opts.RegistryProbe = probe.probe
			opts.RegistryRecheckInterval = 100 * time.Millisecond
			if tc.setup == nil {
				cfg := &samplesv1.Config{ObjectMeta: metav1.ObjectMeta{Name: "cluster"}, Spec: samplesv1.ConfigSpec{ManagementState: operatorv1.Removed}}
				if _, err := e.samples.SamplesV1().Configs().Create(context.Background(), cfg, metav1.CreateOptions{}); err != nil {
					t.Fatal(err)
				}
			}
			e.startOperator(opts)
			if tc.setup != nil {
				tc.setup(t, e, probe)
			}
			eventually(t, 20*time.Second, func() (bool, string) {
				cfg := e.getConfig()
				return cfg.Status.ManagementState == operatorv1.Removed, "status " + string(cfg.Status.ManagementState)
			})
			time.Sleep(500 * time.Millisecond) // a probe under way when the admin edited may still end
			calls := probe.probes()
			if tc.setup == nil && len(calls) > 0 {
				t.Errorf("the operator probed the registry %d times for a Config an admin created", len(calls))
			}
			probe.answer()
			// Wait past the probe that would have come had the operator gone on probing: by now
			// the backoff may be seconds long. The slack is the operator's own latency under load.
			wait := time.Until(nextProbeDue(calls, opts.RegistryRecheckInterval)) + 2*time.Second
			t.Logf("%d probes before the admin's edit; waiting %s, past when the next would have come", len(calls), wait.Round(time.Millisecond))
			idle(t, wait)
			if cfg := e.getConfig(); cfg.Spec.ManagementState != operatorv1.Removed {
				t.Errorf("the admin's Removed was overridden: %s", cfg.Spec.ManagementState)
			}
			if n := len(probe.probes()) - len(calls); n > 0 {
				t.Errorf("the operator probed the registry %d times after the admin's edit", n)
			}
		})
	}
}
