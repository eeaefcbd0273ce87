package clusteroperator

import (
	"fmt"
	"strings"
	"testing"
	"time"

	configv1 "github.com/openshift/api/config/v1"
	operatorv1 "github.com/openshift/api/operator/v1"
	samplesv1 "github.com/openshift/api/samples/v1"
	"github.com/openshift/library-go/pkg/config/clusteroperator/v1helpers"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	clocktesting "k8s.io/utils/clock/testing"

	"github.com/samples-operator-dev/cluster-samples-operator/pkg/bootstrapstate"
	"github.com/samples-operator-dev/cluster-samples-operator/pkg/configspec"
	"github.com/samples-operator-dev/cluster-samples-operator/pkg/configstatus"
	"github.com/samples-operator-dev/cluster-samples-operator/pkg/imports"
)

type cfgOpt func(*samplesv1.Config)

func config(opts ...cfgOpt) *samplesv1.Config {
	c := &samplesv1.Config{
		ObjectMeta: metav1.ObjectMeta{Name: "cluster"},
		Spec:       samplesv1.ConfigSpec{ManagementState: operatorv1.Managed, Architectures: []string{"x86_64"}},
		Status:     samplesv1.ConfigStatus{ManagementState: operatorv1.Managed, Version: "v1"},
	}
	cond(samplesv1.SamplesExist, corev1.ConditionTrue, "SamplesInstalled", "44 samples")(c)
	cond(samplesv1.ConfigurationValid, corev1.ConditionTrue, "", "")(c)
	cond(samplesv1.RemovePending, corev1.ConditionFalse, "", "")(c)
	cond(samplesv1.ImportImageErrorsExist, corev1.ConditionFalse, "", "")(c)
	for _, o := range opts {
		o(c)
	}
	return c
}

func cond(t samplesv1.ConfigConditionType, s corev1.ConditionStatus, reason, message string) cfgOpt {
	return func(c *samplesv1.Config) {
		for i := range c.Status.Conditions {
			if c.Status.Conditions[i].Type == t {
				c.Status.Conditions[i].Status, c.Status.Conditions[i].Reason, c.Status.Conditions[i].Message = s, reason, message
				return
			}
		}
		c.Status.Conditions = append(c.Status.Conditions, samplesv1.ConfigCondition{Type: t, Status: s, Reason: reason, Message: message,
			LastUpdateTime: metav1.NewTime(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))})
	}
}

func state(spec, status operatorv1.ManagementState) cfgOpt {
	return func(c *samplesv1.Config) { c.Spec.ManagementState, c.Status.ManagementState = spec, status }
}

func statusVersion(v string) cfgOpt { return func(c *samplesv1.Config) { c.Status.Version = v } }

type want struct {
	available, progressing, degraded configv1.ConditionStatus
	reasons                          [3]string // available, progressing, degraded; "" = don't care
	messageHas                       string
	version                          string // "" means no versions reported
}

// accessMessage stands for the message the status controller puts on SamplesExist (built by
// pkg/configstatus); the ClusterOperator passes it on as it is.
const accessMessage = "the operator cannot install or manage the samples: grant it with: oc create rolebinding cluster-samples-operator -n openshift ..."

func noSamplesAccess(c *samplesv1.Config) {
	cond(samplesv1.SamplesExist, corev1.ConditionFalse, configstatus.ReasonMissingAccess, accessMessage)(c)
}

func noPullSecretAccess(c *samplesv1.Config) {
	cond(samplesv1.ImportCredentialsExist, corev1.ConditionFalse, configstatus.ReasonMissingAccess,
		"cannot tell whether imports can authenticate: grant it with: oc create rolebinding cluster-samples-operator-pull-secret-reader ...")(c)
}

func TestStatusTable(t *testing.T) {
	T, F := configv1.ConditionTrue, configv1.ConditionFalse
	now := metav1.Now()
	cases := []struct {
		name string
		cfg  *samplesv1.Config
		want want
	}{
		{"installed and current", config(), want{T, F, F, [3]string{ReasonAsExpected, ReasonAsExpected, ReasonAsExpected}, "v1", "v1"}},
		{"no Config: deleted", nil, want{T, T, F, [3]string{ReasonDeletionInProgress, ReasonDeletionInProgress, ReasonDeletionInProgress}, "", ""}},
		{"Config being deleted", config(func(c *samplesv1.Config) { c.DeletionTimestamp = &now }),
			want{T, T, F, [3]string{ReasonDeletionInProgress, ReasonDeletionInProgress, ReasonDeletionInProgress}, "", "v1"}},
		{"fresh Config, nothing installed yet", config(func(c *samplesv1.Config) { c.Status = samplesv1.ConfigStatus{} }),
			want{F, T, F, [3]string{ReasonSampleUpsertsPending, ReasonMovingToVersion, ReasonAsExpected}, "v1", ""}},
		{"samples pending", config(cond(samplesv1.SamplesExist, corev1.ConditionFalse, "SamplesPending", "creating")),
			want{F, T, F, [3]string{ReasonSampleUpsertsPending, ReasonMovingToVersion, ""}, "installing the samples of version v1", "v1"}},
		{"upgrade: samples still at the old version", config(statusVersion("v0"), cond(samplesv1.SamplesExist, corev1.ConditionFalse, "SamplesPending", "")),
			want{F, T, F, [3]string{ReasonSampleUpsertsPending, ReasonMovingToVersion, ""}, "", "v0"}},
		{"upgrade: installed, status.version not moved yet", config(statusVersion("v0")),
			want{T, T, F, [3]string{"", ReasonMovingToVersion, ""}, "", "v0"}},
		// During an upgrade the samples of the previous version stay installed: Available stays
		// True, Progressing names both versions, and the version moves only once all are written.
		{"upgrade: samples being moved to the new version", config(statusVersion("v0"), cond(samplesv1.SamplesExist, corev1.ConditionTrue, configstatus.ReasonUpdating, "samples are installed at version v0; updating them to version v1")),
			want{T, T, F, [3]string{ReasonAsExpected, ReasonMovingToVersion, ReasonAsExpected}, "moving the samples from version v0 to version v1", "v0"}},
		{"repair: a sample is put back", config(cond(samplesv1.SamplesExist, corev1.ConditionTrue, configstatus.ReasonUpdating, "samples are installed at version v1; creating and updating the ones not as the Config asks")),
			want{T, T, F, [3]string{ReasonAsExpected, ReasonSampleUpsertsPending, ReasonAsExpected}, "creating and updating the ones not as the Config asks", "v1"}},
		{"invalid configuration", config(cond(samplesv1.ConfigurationValid, corev1.ConditionFalse, "InvalidConfiguration", "spec.samplesRegistry \"x y\" is invalid")),
			want{T, T, T, [3]string{"", ReasonInvalidConfiguration, ReasonInvalidConfiguration}, "samplesRegistry", "v1"}},
		{"a condition is Unknown", config(cond(samplesv1.SamplesExist, corev1.ConditionUnknown, "APIServerInternalError", "create failed")),
			want{F, T, T, [3]string{ReasonSampleUpsertsPending, "APIServerInternalError", "APIServerInternalError"}, "create failed", "v1"}},
		{"removal in progress", config(cond(samplesv1.RemovePending, corev1.ConditionTrue, "RemovingSamples", ""), state(operatorv1.Removed, operatorv1.Managed)),
			want{T, T, F, [3]string{"", ReasonRemovingSamples, ""}, "deleting", "v1"}},
		{"Removed", config(state(operatorv1.Removed, operatorv1.Removed), cond(samplesv1.SamplesExist, corev1.ConditionFalse, "CurrentlyRemoved", "")),
			want{T, F, F, [3]string{ReasonCurrentlyRemoved, ReasonCurrentlyRemoved, ReasonCurrentlyRemoved}, "Removed", "v1"}},
		{"Unmanaged", config(state(operatorv1.Unmanaged, operatorv1.Unmanaged)),
			want{T, F, F, [3]string{ReasonCurrentlyUnmanaged, ReasonCurrentlyUnmanaged, ReasonCurrentlyUnmanaged}, "Unmanaged", "v1"}},
		{"Unmanaged before any sample was installed", config(state(operatorv1.Unmanaged, operatorv1.Unmanaged), statusVersion("")),
			want{T, F, F, [3]string{ReasonCurrentlyUnmanaged, ReasonCurrentlyUnmanaged, ReasonCurrentlyUnmanaged}, "samples were installed at version (none yet)", ""}},
		{"bootstrapped Removed: registry unreachable", config(state(operatorv1.Removed, ""), func(c *samplesv1.Config) {
			c.Annotations = map[string]string{bootstrapstate.ReasonAnnotation: configspec.ReasonRegistryUnreachable, bootstrapstate.MessageAnnotation: "registry.redhat.io:443 could not be reached"}
		}), want{T, F, F, [3]string{ReasonRegistryUnreachable, ReasonRegistryUnreachable, ReasonRegistryUnreachable}, "could not be reached", "v1"}},
		{"bootstrapped Removed: IPv6-only", config(state(operatorv1.Removed, operatorv1.Removed), func(c *samplesv1.Config) {
			c.Annotations = map[string]string{bootstrapstate.ReasonAnnotation: configspec.ReasonIPv6Only, bootstrapstate.MessageAnnotation: "IPv6-only"}
		}), want{T, F, F, [3]string{ReasonCurrentlyRemoved, ReasonCurrentlyRemoved, ReasonCurrentlyRemoved}, "IPv6OnlyCluster", "v1"}},
		// Without the bootstrap's reason, Removed is the admin's choice, not one since installation.
		{"Removed by an admin", config(state(operatorv1.Removed, operatorv1.Removed), cond(samplesv1.SamplesExist, corev1.ConditionFalse, "CurrentlyRemoved", "")),
			want{T, F, F, [3]string{ReasonCurrentlyRemoved, ReasonCurrentlyRemoved, ReasonCurrentlyRemoved}, "samples were installed at version v1; managementState is now Removed", "v1"}},
		{"unsupported architecture", config(func(c *samplesv1.Config) { c.Spec.Architectures = []string{"riscv64"} }),
			want{T, F, F, [3]string{ReasonUnsupportedArchitecture, ReasonUnsupportedArchitecture, ReasonUnsupportedArchitecture}, "riscv64", "v1"}},
		{"import errors", config(cond(samplesv1.ImportImageErrorsExist, corev1.ConditionTrue, "FailedImageImports", "image imports failed for imagestreams python, ruby")),
			want{T, F, F, [3]string{ReasonAsExpected, ReasonFailedImageImports, ReasonAsExpected}, "python, ruby", "v1"}},

		// Missing access: Degraded always; without the samples also not Available, not Progressing.
		{"no access to the samples, nothing installed yet", config(func(c *samplesv1.Config) { c.Status = samplesv1.ConfigStatus{} }, noSamplesAccess),
			want{F, F, T, [3]string{ReasonMissingAccess, ReasonMissingAccess, ReasonMissingAccess}, accessMessage, ""}},
		{"no access to the samples after they were installed", config(noSamplesAccess),
			want{F, F, T, [3]string{ReasonMissingAccess, ReasonMissingAccess, ReasonMissingAccess}, accessMessage, "v1"}},
		{"no access to the samples beats an invalid configuration", config(noSamplesAccess, cond(samplesv1.ConfigurationValid, corev1.ConditionFalse, "InvalidConfiguration", "bad registry")),
			want{F, F, T, [3]string{ReasonMissingAccess, ReasonMissingAccess, ReasonMissingAccess}, accessMessage, "v1"}},
		{"no access to the samples while Removed", config(state(operatorv1.Removed, operatorv1.Removed), noSamplesAccess),
			want{F, F, T, [3]string{ReasonMissingAccess, ReasonMissingAccess, ReasonMissingAccess}, accessMessage, "v1"}},
		{"no access to the samples while the Config is deleted", config(noSamplesAccess, func(c *samplesv1.Config) { c.DeletionTimestamp = &now }),
			want{F, F, T, [3]string{ReasonMissingAccess, ReasonMissingAccess, ReasonMissingAccess}, accessMessage, "v1"}},
		{"no access to the pull secret only: samples still kept", config(noPullSecretAccess),
			want{T, F, T, [3]string{ReasonAsExpected, ReasonAsExpected, ReasonMissingAccess}, "pull-secret-reader", "v1"}},
		// Degraded gives the first cause Inputs lists, not the last.
		{"no access to the pull secret beats an invalid configuration", config(noPullSecretAccess, cond(samplesv1.ConfigurationValid, corev1.ConditionFalse, "InvalidConfiguration", "bad registry")),
			want{T, T, T, [3]string{ReasonAsExpected, ReasonInvalidConfiguration, ReasonMissingAccess}, "pull-secret-reader", "v1"}},
		{"no access to the pull secret while installing", config(noPullSecretAccess, cond(samplesv1.SamplesExist, corev1.ConditionFalse, "SamplesPending", "")),
			want{F, T, T, [3]string{ReasonSampleUpsertsPending, ReasonMovingToVersion, ReasonMissingAccess}, "pull-secret-reader", "v1"}},
		{"no access to the pull secret while Unmanaged", config(state(operatorv1.Unmanaged, operatorv1.Unmanaged), noPullSecretAccess),
			want{T, F, T, [3]string{ReasonCurrentlyUnmanaged, ReasonCurrentlyUnmanaged, ReasonMissingAccess}, "pull-secret-reader", "v1"}},
	}
	clk := clocktesting.NewFakePassiveClock(time.Date(2026, 11, 23, 1, 0, 0, 0, time.UTC))
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			st := Status(configv1.ClusterOperatorStatus{}, tc.cfg, "v1", Observed{}, clk)
			got := [3]*configv1.ClusterOperatorStatusCondition{
				v1helpers.FindStatusCondition(st.Conditions, configv1.OperatorAvailable),
				v1helpers.FindStatusCondition(st.Conditions, configv1.OperatorProgressing),
				v1helpers.FindStatusCondition(st.Conditions, configv1.OperatorDegraded),
			}
			wantStatus := [3]configv1.ConditionStatus{tc.want.available, tc.want.progressing, tc.want.degraded}
			messages := ""
			for i, c := range got {
				if c == nil {
					t.Fatalf("condition %d missing: %+v", i, st.Conditions)
				}
				if c.Status != wantStatus[i] {
					t.Errorf("%s = %s, want %s (%s: %s)", c.Type, c.Status, wantStatus[i], c.Reason, c.Message)
				}
				if tc.want.reasons[i] != "" && c.Reason != tc.want.reasons[i] {
					t.Errorf("%s reason = %q, want %q", c.Type, c.Reason, tc.want.reasons[i])
				}
				messages += c.Message + "\n"
			}
			if !strings.Contains(messages, tc.want.messageHas) {
				t.Errorf("no message contains %q:\n%s", tc.want.messageHas, messages)
			}
			if v1helpers.FindStatusCondition(st.Conditions, configv1.OperatorUpgradeable) != nil {
				t.Errorf("Upgradeable is set; this operator never sets it")
			}
			switch {
			case tc.want.version == "" && len(st.Versions) != 0:
				t.Errorf("versions = %v, want none until the samples reach a version", st.Versions)
			case tc.want.version != "" && (len(st.Versions) != 1 || st.Versions[0].Name != "operator" || st.Versions[0].Version != tc.want.version):
				t.Errorf("versions = %v, want [operator %s]", st.Versions, tc.want.version)
			}
			if len(st.RelatedObjects) != 4 {
				t.Errorf("relatedObjects = %v", st.RelatedObjects)
			}
			// Computing again from the result changes nothing: no write at steady state.
			later := clocktesting.NewFakePassiveClock(clk.Now().Add(time.Hour))
			if again := Status(st, tc.cfg, "v1", Observed{}, later); Changed(st, again) {
				t.Errorf("a second computation changed the status: %s", v1helpers.GetStatusDiff(st, again))
			}
		})
	}
}

func TestTransitionTimesMoveOnlyOnStatusChange(t *testing.T) {
	t0 := time.Date(2026, 11, 23, 1, 0, 0, 0, time.UTC)
	pending := Status(configv1.ClusterOperatorStatus{}, config(cond(samplesv1.SamplesExist, corev1.ConditionFalse, "SamplesPending", "")), "v1", Observed{}, clocktesting.NewFakePassiveClock(t0))
	installed := Status(pending, config(), "v1", Observed{}, clocktesting.NewFakePassiveClock(t0.Add(time.Minute)))
	for _, ct := range []configv1.ClusterStatusConditionType{configv1.OperatorAvailable, configv1.OperatorProgressing} {
		if c := v1helpers.FindStatusCondition(installed.Conditions, ct); !c.LastTransitionTime.Time.Equal(t0.Add(time.Minute)) {
			t.Errorf("%s changed status but kept its transition time %s", ct, c.LastTransitionTime)
		}
	}
	if c := v1helpers.FindStatusCondition(installed.Conditions, configv1.OperatorDegraded); !c.LastTransitionTime.Time.Equal(t0) {
		t.Errorf("Degraded stayed False but its transition time moved to %s", c.LastTransitionTime)
	}
}

func TestNothingToReportBeforeTheFirstConfig(t *testing.T) {
	if !NothingToReport(configv1.ClusterOperatorStatus{}, nil) {
		t.Errorf("a fresh ClusterOperator with no Config should wait for the bootstrap")
	}
	reported := Status(configv1.ClusterOperatorStatus{}, config(), "v1", Observed{}, clocktesting.NewFakePassiveClock(time.Now()))
	if NothingToReport(reported, nil) {
		t.Errorf("a deleted Config after a report must be reported as a deletion")
	}
	now := time.Now()
	if Degraded(config(), "v1", Observed{}, now) || !Degraded(config(cond(samplesv1.ConfigurationValid, corev1.ConditionFalse, "", "bad")), "v1", Observed{}, now) ||
		!Degraded(config(noSamplesAccess), "v1", Observed{}, now) || !Degraded(config(noPullSecretAccess), "v1", Observed{}, now) {
		t.Errorf("Degraded() disagrees with the Degraded condition")
	}
}

// TestAvailableThroughAnUpgrade walks the Config status, as pkg/configstatus computes it, from
// samples installed at v0 through an upgrade to v1 in which every sample is rewritten, and checks
// the ClusterOperator at each step: OpenShift's upgrade tests fail an operator that goes
// Available=False during an upgrade, and the CVO waits for the new version.
func TestAvailableThroughAnUpgrade(t *testing.T) {
	clk := clocktesting.NewFakePassiveClock(time.Date(2026, 11, 23, 1, 0, 0, 0, time.UTC))
	cfg := &samplesv1.Config{
		ObjectMeta: metav1.ObjectMeta{Name: "cluster"},
		Spec:       samplesv1.ConfigSpec{ManagementState: operatorv1.Managed, Architectures: []string{"x86_64"}},
	}
	observe := func(version string, pending int) {
		cfg.Status = configstatus.Compute(configstatus.Observed{
			Config: cfg, Version: version, Samples: 103, Pending: pending, CredentialsOK: true, Now: metav1.NewTime(clk.Now()),
		})
	}
	// Installed at v0.
	observe("v0", 103)
	observe("v0", 0)
	var co configv1.ClusterOperatorStatus
	steps := []struct {
		pending         int
		wantProgressing configv1.ConditionStatus
		wantVersion     string
	}{{103, configv1.ConditionTrue, "v0"}, {50, configv1.ConditionTrue, "v0"}, {1, configv1.ConditionTrue, "v0"}, {0, configv1.ConditionFalse, "v1"}}
	for _, step := range steps {
		observe("v1", step.pending)
		co = Status(co, cfg, "v1", Observed{}, clk)
		available := v1helpers.FindStatusCondition(co.Conditions, configv1.OperatorAvailable)
		progressing := v1helpers.FindStatusCondition(co.Conditions, configv1.OperatorProgressing)
		degraded := v1helpers.FindStatusCondition(co.Conditions, configv1.OperatorDegraded)
		if available.Status != configv1.ConditionTrue {
			t.Errorf("%d samples pending: Available = %s (%s: %s), want True throughout the upgrade", step.pending, available.Status, available.Reason, available.Message)
		}
		if degraded.Status != configv1.ConditionFalse {
			t.Errorf("%d samples pending: Degraded = %s (%s)", step.pending, degraded.Status, degraded.Reason)
		}
		if progressing.Status != step.wantProgressing {
			t.Errorf("%d samples pending: Progressing = %s (%s), want %s", step.pending, progressing.Status, progressing.Message, step.wantProgressing)
		}
		if step.pending > 0 && (!strings.Contains(progressing.Message, "v0") || !strings.Contains(progressing.Message, "v1")) {
			t.Errorf("%d samples pending: Progressing message %q does not name both versions", step.pending, progressing.Message)
		}
		if len(co.Versions) != 1 || co.Versions[0].Version != step.wantVersion {
			t.Errorf("%d samples pending: versions = %v, want operator %s", step.pending, co.Versions, step.wantVersion)
		}
	}
}

// TestRefusalsProgressAtOnceAndDegradeAfterTheGrace follows a quota refusing creates at install
// and a refusal after install through the grace, and an API outage shorter and longer than it.
func TestRefusalsProgressAtOnceAndDegradeAfterTheGrace(t *testing.T) {
	t0 := time.Date(2026, 11, 25, 12, 0, 0, 0, time.UTC)
	const refusedMessage = `creating the samples of version v1; the API server refuses to create 43 samples (...): 403 Forbidden: exceeded quota`
	neverInstalled := config(cond(samplesv1.SamplesExist, corev1.ConditionFalse, configstatus.ReasonWritesRefused, refusedMessage), statusVersion(""))
	wasInstalled := config(cond(samplesv1.SamplesExist, corev1.ConditionTrue, configstatus.ReasonWritesRefused, "samples are installed at version v1; "+refusedMessage))
	refused := Observed{RefusedSince: t0}
	outage := Observed{Outages: []Outage{{API: "image.openshift.io/v1", Since: t0, Message: "service unavailable"}}}
	get := func(st configv1.ClusterOperatorStatus, ct configv1.ClusterStatusConditionType) configv1.ClusterOperatorStatusCondition {
		return *v1helpers.FindStatusCondition(st.Conditions, ct)
	}
	for _, tc := range []struct {
		name                             string
		cfg                              *samplesv1.Config
		trouble                          Observed
		after                            time.Duration
		available, progressing, degraded configv1.ConditionStatus
		progressingReason, degradedHas   string
	}{
		{"never installed, at once", neverInstalled, refused, time.Second, configv1.ConditionFalse, configv1.ConditionTrue, configv1.ConditionFalse, ReasonWritesRefused, ""},
		{"never installed, within the grace", neverInstalled, refused, DegradedGrace - time.Second, configv1.ConditionFalse, configv1.ConditionTrue, configv1.ConditionFalse, ReasonWritesRefused, ""},
		{"never installed, past the grace", neverInstalled, refused, DegradedGrace, configv1.ConditionFalse, configv1.ConditionTrue, configv1.ConditionTrue, ReasonWritesRefused, "exceeded quota"},
		{"installed, at once", wasInstalled, refused, time.Second, configv1.ConditionTrue, configv1.ConditionTrue, configv1.ConditionFalse, ReasonWritesRefused, ""},
		{"installed, past the grace", wasInstalled, refused, 3 * time.Minute, configv1.ConditionTrue, configv1.ConditionTrue, configv1.ConditionTrue, ReasonWritesRefused, "since 2026-11-25T12:00:00Z (3m0s)"},
		// A Config still saying so after a restart, with no refusal seen since: no grace has run.
		{"stale Config, no refusal known", wasInstalled, Observed{}, time.Hour, configv1.ConditionTrue, configv1.ConditionTrue, configv1.ConditionFalse, ReasonWritesRefused, ""},
		{"outage within the grace", config(), outage, time.Minute, configv1.ConditionTrue, configv1.ConditionFalse, configv1.ConditionFalse, ReasonAsExpected, ""},
		{"outage at the end of the grace", config(), outage, DegradedGrace, configv1.ConditionTrue, configv1.ConditionFalse, configv1.ConditionTrue, ReasonAsExpected,
			"the image.openshift.io/v1 API has answered the operator 503 since 2026-11-25T12:00:00Z (2m0s)"},
		{"outage past the grace", config(), outage, DegradedGrace + time.Second, configv1.ConditionTrue, configv1.ConditionFalse, configv1.ConditionTrue, ReasonAsExpected,
			"the image.openshift.io/v1 API has answered the operator 503 since 2026-11-25T12:00:00Z (2m1s): service unavailable"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			st := Status(configv1.ClusterOperatorStatus{}, tc.cfg, "v1", tc.trouble, clocktesting.NewFakePassiveClock(t0.Add(tc.after)))
			a, p, d := get(st, configv1.OperatorAvailable), get(st, configv1.OperatorProgressing), get(st, configv1.OperatorDegraded)
			if a.Status != tc.available || p.Status != tc.progressing || d.Status != tc.degraded {
				t.Fatalf("Available %s, Progressing %s, Degraded %s; want %s, %s, %s (%s: %s)", a.Status, p.Status, d.Status, tc.available, tc.progressing, tc.degraded, d.Reason, d.Message)
			}
			if p.Reason != tc.progressingReason {
				t.Errorf("Progressing reason %s, want %s", p.Reason, tc.progressingReason)
			}
			if tc.progressingReason == ReasonWritesRefused && !strings.Contains(p.Message, "exceeded quota") {
				t.Errorf("Progressing does not quote the server: %q", p.Message)
			}
			if tc.degraded == configv1.ConditionTrue && !strings.Contains(d.Message, tc.degradedHas) {
				t.Errorf("Degraded message %q lacks %q", d.Message, tc.degradedHas)
			}
			if got := Degraded(tc.cfg, "v1", tc.trouble, t0.Add(tc.after)); got != (tc.degraded == configv1.ConditionTrue) {
				t.Errorf("Degraded() = %v", got)
			}
		})
	}
	if wait := NextChange(wasInstalled, "v1", refused, t0.Add(30*time.Second)); wait != DegradedGrace-30*time.Second {
		t.Errorf("NextChange = %s", wait)
	}
	if wait := NextChange(wasInstalled, "v1", refused, t0.Add(DegradedGrace)); wait != 0 {
		t.Errorf("NextChange after the grace = %s", wait)
	}
	// The next change is the earliest grace still running; one that ran out just now is past.
	now := t0.Add(time.Hour)
	several := Observed{RefusedSince: now.Add(10*time.Second - DegradedGrace), Outages: []Outage{
		{API: "image.openshift.io/v1", Since: now.Add(5*time.Second - DegradedGrace)},
		{API: "template.openshift.io/v1", Since: now.Add(-DegradedGrace)},
	}}
	if wait := NextChange(wasInstalled, "v1", several, now); wait != 5*time.Second {
		t.Errorf("NextChange with graces ending in 10 s, 5 s and now = %s, want 5s", wait)
	}
	// A shorter grace (tests set one) runs out sooner, for refusals and outages alike.
	short := refused
	short.Grace = 10 * time.Second
	if wait := NextChange(wasInstalled, "v1", short, t0.Add(4*time.Second)); wait != 6*time.Second {
		t.Errorf("NextChange with a 10 s grace = %s", wait)
	}
	if !Degraded(config(), "v1", Observed{Outages: outage.Outages, Grace: time.Second}, outage.Outages[0].Since.Add(2*time.Second)) {
		t.Error("an outage past a 1 s grace is not Degraded")
	}
}

// TestNextChangeWaitsOnlyForAGraceRunning: causes that degrade at once or never bring no change
// with time, even when stamped ahead of the operator's clock, and do not hide a grace that runs
// after them; a refusal the Config does not name is not a cause at all.
func TestNextChangeWaitsOnlyForAGraceRunning(t *testing.T) {
	t0 := time.Date(2026, 11, 25, 12, 0, 0, 0, time.UTC)
	ahead := func(c *samplesv1.Config) {
		for i := range c.Status.Conditions {
			c.Status.Conditions[i].LastTransitionTime = metav1.NewTime(t0.Add(time.Minute))
		}
	}
	refusing := config(noPullSecretAccess, cond(samplesv1.SamplesExist, corev1.ConditionTrue, configstatus.ReasonWritesRefused, "403 Forbidden"), ahead)
	if wait := NextChange(refusing, "v1", Observed{RefusedSince: t0}, t0.Add(30*time.Second)); wait != DegradedGrace-30*time.Second {
		t.Errorf("NextChange with missing access stamped ahead, then a refusal = %s, want the refusal's %s", wait, DegradedGrace-30*time.Second)
	}
	if in := Inputs(config(), "v1", Observed{RefusedSince: t0}); len(in) != 0 {
		t.Errorf("a refusal the Config does not name is an input: %+v", in)
	}
}

// TestDegradedNamesEveryOutagePastTheGrace: a refusal still within its grace does not hide an
// outage past it, and Degraded names every API past the grace and none within it.
func TestDegradedNamesEveryOutagePastTheGrace(t *testing.T) {
	now := time.Date(2026, 11, 25, 12, 0, 0, 0, time.UTC)
	cfg := config(cond(samplesv1.SamplesExist, corev1.ConditionTrue, configstatus.ReasonWritesRefused, "403 Forbidden"))
	observed := Observed{RefusedSince: now.Add(-time.Minute), Outages: []Outage{
		{API: "image.openshift.io/v1", Since: now.Add(-3 * time.Minute), Message: "a"},
		{API: "template.openshift.io/v1", Since: now.Add(-time.Minute), Message: "b"},
		{API: "apps.openshift.io/v1", Since: now.Add(-5 * time.Minute), Message: "c"},
	}}
	st := Status(configv1.ClusterOperatorStatus{}, cfg, "v1", observed, clocktesting.NewFakePassiveClock(now))
	d := v1helpers.FindStatusCondition(st.Conditions, configv1.OperatorDegraded)
	const want = "the image.openshift.io/v1 API has answered the operator 503 since 2026-11-25T11:57:00Z (3m0s): a; " +
		"the apps.openshift.io/v1 API has answered the operator 503 since 2026-11-25T11:55:00Z (5m0s): c; " +
		"until it answers the operator can neither see nor repair the samples (is openshift-apiserver running?)"
	if d.Status != configv1.ConditionTrue || d.Reason != ReasonAPIUnavailable || d.Message != want {
		t.Errorf("Degraded %s %s %q; want True %s %q", d.Status, d.Reason, d.Message, ReasonAPIUnavailable, want)
	}
}

// Available passes on what SamplesExist says holds the samples back, unless that is only that they
// are pending or it says nothing; then it says what is being installed.
func TestAvailableSaysWhatHoldsTheSamplesBack(t *testing.T) {
	for _, tc := range []struct {
		reason, message, want string
	}{
		{configstatus.ReasonPending, "creating", "installing the samples of version v1"},
		{"SamplesBlocked", "3 imagestreams are blocked", "3 imagestreams are blocked"},
		{"SamplesBlocked", "", "installing the samples of version v1"},
	} {
		cfg := config(cond(samplesv1.SamplesExist, corev1.ConditionFalse, tc.reason, tc.message))
		st := Status(configv1.ClusterOperatorStatus{}, cfg, "v1", Observed{}, clocktesting.NewFakePassiveClock(time.Now()))
		if a := v1helpers.FindStatusCondition(st.Conditions, configv1.OperatorAvailable); a.Message != tc.want {
			t.Errorf("SamplesExist False %s %q: Available says %q, want %q", tc.reason, tc.message, a.Message, tc.want)
		}
	}
}

// Degraded takes the reason of the first Unknown Config condition (its type's when it has none)
// and the messages of all that have one.
func TestDegradedNamesTheUnknownConditions(t *testing.T) {
	cfg := config(cond(samplesv1.RemovePending, corev1.ConditionUnknown, "", ""),
		cond(samplesv1.ImportImageErrorsExist, corev1.ConditionUnknown, "APIServerInternalError", "list failed"))
	st := Status(configv1.ClusterOperatorStatus{}, cfg, "v1", Observed{}, clocktesting.NewFakePassiveClock(time.Now()))
	d := v1helpers.FindStatusCondition(st.Conditions, configv1.OperatorDegraded)
	if d.Status != configv1.ConditionTrue || d.Reason != "RemovePendingUnknown" || d.Message != "list failed" {
		t.Errorf("Degraded %s %s %q; want True RemovePendingUnknown %q", d.Status, d.Reason, d.Message, "list failed")
	}
}

// TestAVerdictChangeKeepsProgressingFalse walks the Config status, as pkg/configstatus computes
// it, through an install, a verdict change that marks 40 templates (a group switched off) and
// one that unmarks them, and an upgrade: Progressing is True for the install and the upgrade
// only, however many marks are still to be written.
func TestAVerdictChangeKeepsProgressingFalse(t *testing.T) {
	clk := clocktesting.NewFakePassiveClock(time.Date(2026, 11, 29, 1, 0, 0, 0, time.UTC))
	cfg := &samplesv1.Config{
		ObjectMeta: metav1.ObjectMeta{Name: "cluster"},
		Spec:       samplesv1.ConfigSpec{ManagementState: operatorv1.Managed, Architectures: []string{"x86_64"}},
	}
	var co configv1.ClusterOperatorStatus
	for _, step := range []struct {
		name                  string
		version               string
		pending, marksPending int
		wantProgressing       configv1.ConditionStatus
	}{
		{"installing, the first marks with the samples", "v0", 103, 40, configv1.ConditionTrue},
		{"installing, only marks left", "v0", 40, 40, configv1.ConditionTrue},
		{"installed", "v0", 0, 0, configv1.ConditionFalse},
		{"a group switched off: marks to write", "v0", 40, 40, configv1.ConditionFalse},
		{"half of them written", "v0", 20, 20, configv1.ConditionFalse},
		{"marked", "v0", 0, 0, configv1.ConditionFalse},
		{"the group switched on: marks to take away", "v0", 40, 40, configv1.ConditionFalse},
		{"unmarked", "v0", 0, 0, configv1.ConditionFalse},
		{"an upgrade, with marks to write", "v1", 103, 40, configv1.ConditionTrue},
		{"an upgrade, only marks left", "v1", 40, 40, configv1.ConditionTrue},
		{"upgraded", "v1", 0, 0, configv1.ConditionFalse},
	} {
		clk.SetTime(clk.Now().Add(time.Second))
		cfg.Status = configstatus.Compute(configstatus.Observed{
			Config: cfg, Version: step.version, Samples: 103, Pending: step.pending, MarksPending: step.marksPending,
			CredentialsOK: true, Now: metav1.NewTime(clk.Now()),
		})
		co = Status(co, cfg, step.version, Observed{}, clk)
		if p := v1helpers.FindStatusCondition(co.Conditions, configv1.OperatorProgressing); p.Status != step.wantProgressing {
			t.Errorf("%s: Progressing = %s (%s: %s), want %s", step.name, p.Status, p.Reason, p.Message, step.wantProgressing)
		}
		if a := v1helpers.FindStatusCondition(co.Conditions, configv1.OperatorAvailable); step.pending == 0 && a.Status != configv1.ConditionTrue {
			t.Errorf("%s: Available = %s (%s)", step.name, a.Status, a.Message)
		}
	}
}

// TestInputsAreOneOrderedList: every cause of Degraded is one Input, in the order Degraded
// prefers them, each with when it began and its grace; failed imports are inputs that never
// degrade.
func TestInputsAreOneOrderedList(t *testing.T) {
	t0 := time.Date(2026, 11, 29, 8, 0, 0, 0, time.UTC)
	record := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "python", Annotations: map[string]string{imports.FailingSinceAnnotation: "2026-11-28T07:00:00Z"}}}
	cfg := config(noPullSecretAccess, cond(samplesv1.ConfigurationValid, corev1.ConditionFalse, "InvalidConfiguration", "bad"),
		cond(samplesv1.SamplesExist, corev1.ConditionTrue, configstatus.ReasonWritesRefused, "refused"))
	got := Inputs(cfg, "v1", Observed{RefusedSince: t0, Outages: []Outage{{API: "image.openshift.io/v1", Since: t0.Add(time.Minute), Message: "503"}},
		ImportErrors: []*corev1.ConfigMap{record}, Grace: time.Minute})
	var listed string
	for _, in := range got {
		listed += fmt.Sprintf("%s/%s/%s/%s/%s\n", in.Kind, in.Source, in.Reason, in.Since.Format(time.RFC3339), in.Grace)
	}
	// The helper sets no transition time on the Config's conditions.
	const want = `MissingAccess/ImportCredentialsExist/MissingAccess/0001-01-01T00:00:00Z/0s
Config/ConfigurationValid/InvalidConfiguration/0001-01-01T00:00:00Z/0s
WritesRefused/SamplesExist/SampleWritesRefused/2026-11-29T08:00:00Z/1m0s
APIUnavailable/image.openshift.io/v1/APIServerServiceUnavailableError/2026-11-29T08:01:00Z/1m0s
FailedImageImports/python/FailedImageImports/2026-11-28T07:00:00Z/-1ns
`
	if listed != want {
		t.Errorf("inputs:\n%swant:\n%s", listed, want)
	}
	if Inputs(nil, "v1", Observed{RefusedSince: t0}) != nil {
		t.Error("inputs without a Config")
	}
	for _, in := range got {
		if in.Kind == KindImports && in.due(t0.Add(24*365*time.Hour)) {
			t.Error("a failed import made the ClusterOperator Degraded")
		}
	}
}

// TestImportFailingSinceSurvivesARestart: a new operator process knows nothing of the failures
// the last one saw; when the stream began failing comes from its error record alone (the
// annotation, or the record's creation when it predates the annotation), so Progressing says the
// same before and after the restart.
func TestImportFailingSinceSurvivesARestart(t *testing.T) {
	cfg := config(cond(samplesv1.ImportImageErrorsExist, corev1.ConditionTrue, "FailedImageImports", "image imports failed for imagestreams python"))
	annotated := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "python",
		CreationTimestamp: metav1.NewTime(time.Date(2026, 11, 29, 7, 0, 0, 0, time.UTC)),
		Annotations:       map[string]string{imports.FailingSinceAnnotation: "2026-11-28T06:00:00Z"}}}
	older := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "ruby", CreationTimestamp: metav1.NewTime(time.Date(2026, 11, 29, 5, 0, 0, 0, time.UTC))}}
	for _, tc := range []struct {
		name    string
		records []*corev1.ConfigMap
		want    string
		outages []Outage
	}{
		{"the annotation", []*corev1.ConfigMap{annotated}, "failing since 2026-11-28T06:00:00Z", nil},
		{"the earliest record", []*corev1.ConfigMap{older, annotated}, "failing since 2026-11-28T06:00:00Z", nil},
		{"a record without the annotation", []*corev1.ConfigMap{older}, "failing since 2026-11-29T05:00:00Z", nil},
		{"the Config's last change with it", []*corev1.ConfigMap{annotated}, "(last change 2026-01-01T00:00:00Z, failing since 2026-11-28T06:00:00Z)", nil},
		{"the earliest record listed first", []*corev1.ConfigMap{annotated, older}, "failing since 2026-11-28T06:00:00Z", nil},
		{"no record yet: an outage is not when the imports began failing", nil, "(last change 2026-01-01T00:00:00Z)",
			[]Outage{{API: "image.openshift.io/v1", Since: time.Date(2026, 11, 28, 5, 0, 0, 0, time.UTC)}}},
	} {
		var messages []string
		for _, started := range []time.Time{time.Date(2026, 11, 29, 8, 0, 0, 0, time.UTC), time.Date(2026, 11, 30, 8, 0, 0, 0, time.UTC)} {
			st := Status(configv1.ClusterOperatorStatus{}, cfg, "v1", Observed{ImportErrors: tc.records, Outages: tc.outages}, clocktesting.NewFakePassiveClock(started))
			p := v1helpers.FindStatusCondition(st.Conditions, configv1.OperatorProgressing)
			messages = append(messages, p.Message)
			if p.Reason != ReasonFailedImageImports || !strings.Contains(p.Message, tc.want) {
				t.Errorf("%s: Progressing %s %q lacks %q", tc.name, p.Reason, p.Message, tc.want)
			}
		}
		if messages[0] != messages[1] {
			t.Errorf("%s: the message changed across a restart: %q, then %q", tc.name, messages[0], messages[1])
		}
	}
}
