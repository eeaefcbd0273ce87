package configstatus

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	configv1 "github.com/openshift/api/config/v1"
	operatorv1 "github.com/openshift/api/operator/v1"
	samplesv1 "github.com/openshift/api/samples/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/samples-operator-dev/cluster-samples-operator/pkg/access"
	"github.com/samples-operator-dev/cluster-samples-operator/pkg/bootstrapstate"
	"github.com/samples-operator-dev/cluster-samples-operator/pkg/configspec"
	"github.com/samples-operator-dev/cluster-samples-operator/pkg/desired"
	"github.com/samples-operator-dev/cluster-samples-operator/pkg/mirrorsets"
	"github.com/samples-operator-dev/cluster-samples-operator/pkg/names"
	"github.com/samples-operator-dev/cluster-samples-operator/pkg/refusal"
	"github.com/samples-operator-dev/cluster-samples-operator/pkg/usability"
)

var (
	t0 = metav1.NewTime(time.Date(2024, 5, 1, 10, 0, 0, 0, time.UTC))
	t1 = metav1.NewTime(t0.Add(time.Minute))
	t2 = metav1.NewTime(t0.Add(2 * time.Minute))
	t3 = metav1.NewTime(t0.Add(3 * time.Minute))
)

const (
	v415 = "4.15.0"
	v416 = "4.16.0"
)

// credsMessage is what the tests' observations say about the pull secret unless a case says otherwise.
const credsMessage = "the cluster pull secret has credentials for registry.redhat.io"

// withCreds gives an observation good credentials unless it says something about them.
func withCreds(o Observed) Observed {
	if !o.CredentialsOK && o.CredentialsMessage == "" {
		o.CredentialsOK, o.CredentialsMessage = true, credsMessage
	}
	return o
}

// anyMessage in a wanted condition skips the message check.
const anyMessage = "\x00any"

type cond struct {
	status  corev1.ConditionStatus
	reason  string
	message string
}

func config(state operatorv1.ManagementState) *samplesv1.Config {
	return &samplesv1.Config{
		ObjectMeta: metav1.ObjectMeta{Name: names.ConfigName},
		Spec: samplesv1.ConfigSpec{
			ManagementState:     state,
			Architectures:       []string{"x86_64"},
			SamplesRegistry:     "mirror.example.com",
			SkippedImagestreams: []string{"ruby"},
			SkippedTemplates:    []string{"rails-postgresql-example"},
		},
	}
}

// step computes the status of cfg for o (at time now) and stores it in cfg, the way the status
// controller's write and the next informer event would.
func step(cfg *samplesv1.Config, o Observed, now metav1.Time) *samplesv1.Config {
	o = withCreds(o)
	o.Config = cfg
	o.Now = now
	out := cfg.DeepCopy()
	out.Status = Compute(o)
	return out
}

// installed is a Managed Config whose samples are all installed at v415, computed at t0.
func installed() *samplesv1.Config {
	return step(config(operatorv1.Managed), Observed{Version: v415, Samples: 10}, t0)
}

// removedDone is installed() taken through Removed with every sample deleted, at t0.
func removedDone() *samplesv1.Config {
	cfg := installed()
	cfg.Spec.ManagementState = operatorv1.Removed
	cfg = step(cfg, Observed{Version: v415, Owned: 3}, t0)
	return step(cfg, Observed{Version: v415}, t0)
}

func withState(cfg *samplesv1.Config, state operatorv1.ManagementState) *samplesv1.Config {
	cfg.Spec.ManagementState = state
	return cfg
}

func deleting(cfg *samplesv1.Config) *samplesv1.Config {
	cfg.DeletionTimestamp = &t0
	return cfg
}

func TestCompute(t *testing.T) {
	invalid := configspec.Validation{Err: errors.New("spec.architectures cannot change from [x86_64] to [arm64]")}
	// always holds on every computed status; fresh holds on a Config that had no conditions.
	always := map[samplesv1.ConfigConditionType]cond{
		samplesv1.ImportCredentialsExist: {corev1.ConditionTrue, ReasonCredentials, credsMessage},
		samplesv1.ImageChangesInProgress: {corev1.ConditionFalse, ReasonDeprecated, "this condition is no longer used"},
		samplesv1.MigrationInProgress:    {corev1.ConditionFalse, ReasonDeprecated, "this condition is no longer used"},
	}
	fresh := map[samplesv1.ConfigConditionType]cond{
		samplesv1.ImportImageErrorsExist: {corev1.ConditionFalse, ReasonNoImportErrors, ""},
	}
	importFailed := func() *samplesv1.Config {
		return step(installed(), Observed{Version: v415, Samples: 10, ImportErrors: []string{"python", "ruby"}}, t0)
	}
	const importMessage = "image imports failed for imagestreams python, ruby: each has a ConfigMap of the same name in openshift-cluster-samples-operator whose data gives the error per tag; the imports are retried"
	cases := []struct {
		name     string
		cfg      *samplesv1.Config
		observed Observed // Config and Now are filled in

		wantState             operatorv1.ManagementState
		wantVersion           string
		wantArchs             []string
		wantRegistry          string
		wantSkippedStreams    []string
		wantSkippedTemplates  []string
		wantConds             map[samplesv1.ConfigConditionType]cond
		wantUnchangedFromFrom bool // Changed(current, computed) is false
	}{
		{
			name:               "fresh Managed with samples pending",
			cfg:                config(operatorv1.Managed),
			observed:           Observed{Version: v416, Samples: 10, Pending: 4},
			wantState:          operatorv1.Managed,
			wantVersion:        "",
			wantArchs:          []string{"x86_64"},
			wantRegistry:       "mirror.example.com",
			wantSkippedStreams: []string{"ruby"}, wantSkippedTemplates: []string{"rails-postgresql-example"},
			wantConds: map[samplesv1.ConfigConditionType]cond{
				samplesv1.SamplesExist:       {corev1.ConditionFalse, ReasonPending, "creating and updating the samples of version 4.16.0"},
				samplesv1.ConfigurationValid: {corev1.ConditionTrue, ReasonValidConfiguration, ""},
				samplesv1.RemovePending:      {corev1.ConditionFalse, ReasonNotRemoving, ""},
			},
		},
		{
			name:               "fresh Managed with nothing pending",
			cfg:                config(operatorv1.Managed),
			observed:           Observed{Version: v416, Samples: 10},
			wantState:          operatorv1.Managed,
			wantVersion:        v416,
			wantArchs:          []string{"x86_64"},
			wantRegistry:       "mirror.example.com",
			wantSkippedStreams: []string{"ruby"}, wantSkippedTemplates: []string{"rails-postgresql-example"},
			wantConds: map[samplesv1.ConfigConditionType]cond{
				samplesv1.SamplesExist:       {corev1.ConditionTrue, ReasonInstalled, "10 samples are installed at version 4.16.0"},
				samplesv1.ConfigurationValid: {corev1.ConditionTrue, ReasonValidConfiguration, ""},
				samplesv1.RemovePending:      {corev1.ConditionFalse, ReasonNotRemoving, ""},
			},
		},
		{
			name:      `empty managementState means Managed`,
			cfg:       config(""),
			observed:  Observed{Version: v416, Samples: 1},
			wantState: operatorv1.Managed, wantVersion: v416, wantArchs: []string{"x86_64"}, wantRegistry: "mirror.example.com",
			wantSkippedStreams: []string{"ruby"}, wantSkippedTemplates: []string{"rails-postgresql-example"},
			wantConds: map[samplesv1.ConfigConditionType]cond{samplesv1.SamplesExist: {corev1.ConditionTrue, ReasonInstalled, "1 samples are installed at version 4.16.0"}},
		},
		{
			name:      "Force means Managed",
			cfg:       config(operatorv1.Force),
			observed:  Observed{Version: v416, Samples: 3, Pending: 1},
			wantState: operatorv1.Managed, wantArchs: []string{"x86_64"}, wantRegistry: "mirror.example.com",
			wantSkippedStreams: []string{"ruby"}, wantSkippedTemplates: []string{"rails-postgresql-example"},
			wantConds: map[samplesv1.ConfigConditionType]cond{samplesv1.SamplesExist: {corev1.ConditionFalse, ReasonPending, anyMessage}},
		},
		{
			name: "Managed with empty spec lists copies empty lists",
			cfg: func() *samplesv1.Config {
				c := config(operatorv1.Managed)
				c.Spec.SamplesRegistry, c.Spec.SkippedImagestreams, c.Spec.SkippedTemplates = "", []string{}, nil
				return c
			}(),
			observed:  Observed{Version: v416},
			wantState: operatorv1.Managed, wantVersion: v416, wantArchs: []string{"x86_64"},
			wantConds: map[samplesv1.ConfigConditionType]cond{samplesv1.SamplesExist: {corev1.ConditionTrue, ReasonInstalled, "0 samples are installed at version 4.16.0"}},
		},
		{
			name:      "upgrade in progress keeps the old version",
			cfg:       installed(),
			observed:  Observed{Version: v416, Samples: 10, Pending: 10},
			wantState: operatorv1.Managed, wantVersion: v415, wantArchs: []string{"x86_64"}, wantRegistry: "mirror.example.com",
			wantSkippedStreams: []string{"ruby"}, wantSkippedTemplates: []string{"rails-postgresql-example"},
			wantConds: map[samplesv1.ConfigConditionType]cond{samplesv1.SamplesExist: {corev1.ConditionTrue, ReasonUpdating, "samples are installed at version 4.15.0; updating them to version 4.16.0"}},
		},
		{
			// An admin deleted or edited a sample: it is put back, the others still exist.
			name:      "repair after install keeps SamplesExist True",
			cfg:       step(config(operatorv1.Managed), Observed{Version: v416, Samples: 10}, t0),
			observed:  Observed{Version: v416, Samples: 10, Pending: 1},
			wantState: operatorv1.Managed, wantVersion: v416, wantArchs: []string{"x86_64"}, wantRegistry: "mirror.example.com",
			wantSkippedStreams: []string{"ruby"}, wantSkippedTemplates: []string{"rails-postgresql-example"},
			wantConds: map[samplesv1.ConfigConditionType]cond{samplesv1.SamplesExist: {corev1.ConditionTrue, ReasonUpdating, "samples are installed at version 4.16.0; creating and updating the ones not as the Config asks"}},
		},
		{
			// Managed again after Removed: nothing exists until the samples are written.
			name:      "install after Removed is pending, not updating",
			cfg:       withState(removedDone(), operatorv1.Managed),
			observed:  Observed{Version: v416, Samples: 10, Pending: 10},
			wantState: operatorv1.Managed, wantVersion: v415, wantArchs: []string{"x86_64"}, wantRegistry: "mirror.example.com",
			wantSkippedStreams: []string{"ruby"}, wantSkippedTemplates: []string{"rails-postgresql-example"},
			wantConds: map[samplesv1.ConfigConditionType]cond{samplesv1.SamplesExist: {corev1.ConditionFalse, ReasonPending, "creating and updating the samples of version 4.16.0"}},
		},
		{
			name:      "upgrade done moves the version",
			cfg:       installed(),
			observed:  Observed{Version: v416, Samples: 10},
			wantState: operatorv1.Managed, wantVersion: v416, wantArchs: []string{"x86_64"}, wantRegistry: "mirror.example.com",
			wantSkippedStreams: []string{"ruby"}, wantSkippedTemplates: []string{"rails-postgresql-example"},
			wantConds: map[samplesv1.ConfigConditionType]cond{samplesv1.SamplesExist: {corev1.ConditionTrue, ReasonInstalled, "10 samples are installed at version 4.16.0"}},
		},
		{
			name:      "steady state changes nothing",
			cfg:       installed(),
			observed:  Observed{Version: v415, Samples: 10},
			wantState: operatorv1.Managed, wantVersion: v415, wantArchs: []string{"x86_64"}, wantRegistry: "mirror.example.com",
			wantSkippedStreams: []string{"ruby"}, wantSkippedTemplates: []string{"rails-postgresql-example"},
			wantConds:             map[samplesv1.ConfigConditionType]cond{samplesv1.SamplesExist: {corev1.ConditionTrue, ReasonInstalled, "10 samples are installed at version 4.15.0"}},
			wantUnchangedFromFrom: true,
		},
		{
			name: "spec changes are copied to status",
			cfg: func() *samplesv1.Config {
				c := installed()
				c.Spec.SamplesRegistry = "other.example.com:5000/x"
				c.Spec.SkippedImagestreams = []string{"ruby", "python"}
				c.Spec.SkippedTemplates = nil
				return c
			}(),
			observed:  Observed{Version: v415, Samples: 9},
			wantState: operatorv1.Managed, wantVersion: v415, wantArchs: []string{"x86_64"}, wantRegistry: "other.example.com:5000/x",
			wantSkippedStreams: []string{"ruby", "python"},
			wantConds:          map[samplesv1.ConfigConditionType]cond{samplesv1.SamplesExist: {corev1.ConditionTrue, ReasonInstalled, "9 samples are installed at version 4.15.0"}},
		},
		{
			name:      "warnings are the ConfigurationValid message",
			cfg:       config(operatorv1.Managed),
			observed:  Observed{Version: v416, Validation: configspec.Validation{Warnings: []string{"w1", "w2"}}},
			wantState: operatorv1.Managed, wantVersion: v416, wantArchs: []string{"x86_64"}, wantRegistry: "mirror.example.com",
			wantSkippedStreams: []string{"ruby"}, wantSkippedTemplates: []string{"rails-postgresql-example"},
			wantConds: map[samplesv1.ConfigConditionType]cond{samplesv1.ConfigurationValid: {corev1.ConditionTrue, ReasonValidConfiguration, "w1; w2"}},
		},
		{
			name:     "invalid spec on a fresh Config",
			cfg:      config(operatorv1.Managed),
			observed: Observed{Version: v416, Validation: invalid, Samples: 10, Pending: 10},
			wantConds: map[samplesv1.ConfigConditionType]cond{
				samplesv1.ConfigurationValid: {corev1.ConditionFalse, ReasonInvalidConfiguration, "spec.architectures cannot change from [x86_64] to [arm64]"},
				samplesv1.SamplesExist:       {corev1.ConditionFalse, ReasonPending, ""},
				samplesv1.RemovePending:      {corev1.ConditionFalse, ReasonNotRemoving, ""},
			},
		},
		{
			name: "invalid spec after install leaves status and SamplesExist alone",
			cfg: func() *samplesv1.Config {
				c := installed()
				c.Spec.Architectures = []string{"arm64"}
				c.Spec.SamplesRegistry = "new.example.com"
				return c
			}(),
			observed:  Observed{Version: v416, Validation: invalid, Samples: 10, Pending: 10},
			wantState: operatorv1.Managed, wantVersion: v415, wantArchs: []string{"x86_64"}, wantRegistry: "mirror.example.com",
			wantSkippedStreams: []string{"ruby"}, wantSkippedTemplates: []string{"rails-postgresql-example"},
			wantConds: map[samplesv1.ConfigConditionType]cond{
				samplesv1.ConfigurationValid: {corev1.ConditionFalse, ReasonInvalidConfiguration, "spec.architectures cannot change from [x86_64] to [arm64]"},
				samplesv1.SamplesExist:       {corev1.ConditionTrue, ReasonInstalled, "10 samples are installed at version 4.15.0"},
			},
		},
		{
			name:      "invalid spec while Unmanaged in status keeps Unmanaged",
			cfg:       withState(step(config(operatorv1.Unmanaged), Observed{Version: v415}, t0), operatorv1.Managed),
			observed:  Observed{Version: v416, Validation: invalid},
			wantState: operatorv1.Unmanaged, wantVersion: v415,
			wantConds: map[samplesv1.ConfigConditionType]cond{
				samplesv1.ConfigurationValid: {corev1.ConditionFalse, ReasonInvalidConfiguration, anyMessage},
				samplesv1.SamplesExist:       {corev1.ConditionFalse, ReasonCurrentlyUnmanaged, anyMessage},
			},
		},
		{
			name:      "Removed with samples left: RemovePending, status.managementState unchanged",
			cfg:       withState(installed(), operatorv1.Removed),
			observed:  Observed{Version: v416, Owned: 7},
			wantState: operatorv1.Managed, wantVersion: v415, wantArchs: []string{"x86_64"}, wantRegistry: "mirror.example.com",
			wantSkippedStreams: []string{"ruby"}, wantSkippedTemplates: []string{"rails-postgresql-example"},
			wantConds: map[samplesv1.ConfigConditionType]cond{
				samplesv1.RemovePending:      {corev1.ConditionTrue, ReasonRemoving, "deleting the samples this operator manages"},
				samplesv1.SamplesExist:       {corev1.ConditionTrue, ReasonInstalled, "10 samples are installed at version 4.15.0"},
				samplesv1.ConfigurationValid: {corev1.ConditionTrue, ReasonValidConfiguration, ""},
			},
		},
		{
			name:     "Removed with samples left on a fresh Config",
			cfg:      config(operatorv1.Removed),
			observed: Observed{Version: v416, Owned: 2},
			wantConds: map[samplesv1.ConfigConditionType]cond{
				samplesv1.RemovePending:      {corev1.ConditionTrue, ReasonRemoving, anyMessage},
				samplesv1.SamplesExist:       {corev1.ConditionTrue, ReasonInstalled, ""},
				samplesv1.ConfigurationValid: {corev1.ConditionTrue, ReasonValidConfiguration, ""},
			},
		},
		{
			name:      "Removed and every sample deleted",
			cfg:       step(withState(installed(), operatorv1.Removed), Observed{Version: v416, Owned: 7}, t0),
			observed:  Observed{Version: v416},
			wantState: operatorv1.Removed, wantVersion: v416, wantArchs: nil, wantRegistry: "mirror.example.com",
			wantSkippedStreams: []string{"ruby"}, wantSkippedTemplates: []string{"rails-postgresql-example"},
			wantConds: map[samplesv1.ConfigConditionType]cond{
				samplesv1.RemovePending:          {corev1.ConditionFalse, ReasonNotRemoving, ""},
				samplesv1.SamplesExist:           {corev1.ConditionFalse, ReasonCurrentlyRemoved, "managementState is Removed: the samples were deleted; set it to Managed to install them"},
				samplesv1.ImportImageErrorsExist: {corev1.ConditionFalse, ReasonNoImportErrors, ""},
				samplesv1.ConfigurationValid:     {corev1.ConditionTrue, ReasonValidConfiguration, ""},
			},
		},
		{
			name: "Removed clears import errors",
			cfg: func() *samplesv1.Config {
				c := withState(installed(), operatorv1.Removed)
				Condition(&c.Status, samplesv1.ImportImageErrorsExist).Status = corev1.ConditionTrue
				Condition(&c.Status, samplesv1.ImportImageErrorsExist).Reason = ReasonImportErrors
				return c
			}(),
			observed:  Observed{Version: v415},
			wantState: operatorv1.Removed, wantVersion: v415, wantRegistry: "mirror.example.com",
			wantSkippedStreams: []string{"ruby"}, wantSkippedTemplates: []string{"rails-postgresql-example"},
			wantConds: map[samplesv1.ConfigConditionType]cond{
				samplesv1.ImportImageErrorsExist: {corev1.ConditionFalse, ReasonNoImportErrors, ""},
				samplesv1.SamplesExist:           {corev1.ConditionFalse, ReasonCurrentlyRemoved, anyMessage},
			},
		},
		{
			name:      "Removed ignores an invalid spec",
			cfg:       config(operatorv1.Removed),
			observed:  Observed{Version: v416, Validation: invalid},
			wantState: operatorv1.Removed, wantVersion: v416,
			wantConds: map[samplesv1.ConfigConditionType]cond{
				samplesv1.ConfigurationValid: {corev1.ConditionTrue, ReasonValidConfiguration, ""},
				samplesv1.SamplesExist:       {corev1.ConditionFalse, ReasonCurrentlyRemoved, anyMessage},
			},
		},
		{
			name: "Removed by bootstrap: the reason comes from the annotation",
			cfg: func() *samplesv1.Config {
				c := bootstrapstate.DefaultConfig("amd64", configspec.BootstrapDecision{State: operatorv1.Managed, ProbeRegistry: true}.AfterProbe("registry.redhat.io:443", errors.New("timeout")))
				if c.Spec.ManagementState != operatorv1.Removed {
					panic("the probe failure did not decide Removed")
				}
				return c
			}(),
			observed:  Observed{Version: v416},
			wantState: operatorv1.Removed, wantVersion: v416,
			wantConds: map[samplesv1.ConfigConditionType]cond{
				samplesv1.SamplesExist:  {corev1.ConditionFalse, configspec.ReasonRegistryUnreachable, anyMessage},
				samplesv1.RemovePending: {corev1.ConditionFalse, ReasonNotRemoving, ""},
			},
		},
		{
			name: "Removed by bootstrap: IPv6 reason and message",
			cfg: bootstrapstate.DefaultConfig("amd64", configspec.BootstrapDecision{
				State: operatorv1.Removed, Reason: configspec.ReasonIPv6Only, Message: "the cluster is IPv6-only",
			}),
			observed:  Observed{Version: v416},
			wantState: operatorv1.Removed, wantVersion: v416,
			wantConds: map[samplesv1.ConfigConditionType]cond{
				samplesv1.SamplesExist: {corev1.ConditionFalse, configspec.ReasonIPv6Only, "the cluster is IPv6-only"},
			},
		},
		{
			name: "bootstrap annotation left on a Managed Config is ignored",
			cfg: withState(bootstrapstate.DefaultConfig("amd64", configspec.BootstrapDecision{
				State: operatorv1.Removed, Reason: configspec.ReasonIPv6Only, Message: "m",
			}), operatorv1.Managed),
			observed:  Observed{Version: v416, Samples: 5},
			wantState: operatorv1.Managed, wantVersion: v416, wantArchs: []string{"x86_64"},
			wantConds: map[samplesv1.ConfigConditionType]cond{samplesv1.SamplesExist: {corev1.ConditionTrue, ReasonInstalled, anyMessage}},
		},
		{
			name:     "Managed again after Removed",
			cfg:      withState(removedDone(), operatorv1.Managed),
			observed: Observed{Version: v416, Samples: 10, Pending: 10},
			// The version stays at what Removed set until every sample is back.
			wantState: operatorv1.Managed, wantVersion: v415, wantArchs: []string{"x86_64"}, wantRegistry: "mirror.example.com",
			wantSkippedStreams: []string{"ruby"}, wantSkippedTemplates: []string{"rails-postgresql-example"},
			wantConds: map[samplesv1.ConfigConditionType]cond{
				samplesv1.SamplesExist:  {corev1.ConditionFalse, ReasonPending, anyMessage},
				samplesv1.RemovePending: {corev1.ConditionFalse, ReasonNotRemoving, ""},
			},
		},
		{
			name:      "fresh Unmanaged",
			cfg:       config(operatorv1.Unmanaged),
			observed:  Observed{Version: v416, Owned: 4},
			wantState: operatorv1.Unmanaged, wantVersion: v416,
			wantConds: map[samplesv1.ConfigConditionType]cond{
				samplesv1.SamplesExist:       {corev1.ConditionFalse, ReasonCurrentlyUnmanaged, "managementState is Unmanaged: the operator does not create, update or delete samples"},
				samplesv1.RemovePending:      {corev1.ConditionFalse, ReasonNotRemoving, ""},
				samplesv1.ConfigurationValid: {corev1.ConditionTrue, ReasonValidConfiguration, ""},
			},
		},
		{
			name:      "Unmanaged after install keeps SamplesExist and the status copies",
			cfg:       withState(installed(), operatorv1.Unmanaged),
			observed:  Observed{Version: v416, Validation: invalid},
			wantState: operatorv1.Unmanaged, wantVersion: v416, wantArchs: []string{"x86_64"}, wantRegistry: "mirror.example.com",
			wantSkippedStreams: []string{"ruby"}, wantSkippedTemplates: []string{"rails-postgresql-example"},
			wantConds: map[samplesv1.ConfigConditionType]cond{
				samplesv1.SamplesExist:       {corev1.ConditionTrue, ReasonInstalled, anyMessage},
				samplesv1.ConfigurationValid: {corev1.ConditionTrue, ReasonValidConfiguration, ""},
			},
		},
		{
			name:      "Unmanaged in the middle of a removal clears RemovePending",
			cfg:       withState(step(withState(installed(), operatorv1.Removed), Observed{Version: v415, Owned: 3}, t0), operatorv1.Unmanaged),
			observed:  Observed{Version: v415, Owned: 3},
			wantState: operatorv1.Unmanaged, wantVersion: v415, wantArchs: []string{"x86_64"}, wantRegistry: "mirror.example.com",
			wantSkippedStreams: []string{"ruby"}, wantSkippedTemplates: []string{"rails-postgresql-example"},
			wantConds: map[samplesv1.ConfigConditionType]cond{samplesv1.RemovePending: {corev1.ConditionFalse, ReasonNotRemoving, ""}},
		},
		{
			name:      "being deleted with samples left",
			cfg:       deleting(installed()),
			observed:  Observed{Version: v416, Owned: 5},
			wantState: operatorv1.Managed, wantVersion: v415, wantArchs: []string{"x86_64"}, wantRegistry: "mirror.example.com",
			wantSkippedStreams: []string{"ruby"}, wantSkippedTemplates: []string{"rails-postgresql-example"},
			wantConds: map[samplesv1.ConfigConditionType]cond{
				samplesv1.RemovePending: {corev1.ConditionTrue, ReasonRemoving, anyMessage},
				samplesv1.SamplesExist:  {corev1.ConditionTrue, ReasonInstalled, anyMessage},
			},
		},
		{
			name:      "being deleted with every sample gone",
			cfg:       deleting(installed()),
			observed:  Observed{Version: v416},
			wantState: operatorv1.Removed, wantVersion: v416, wantRegistry: "mirror.example.com",
			wantSkippedStreams: []string{"ruby"}, wantSkippedTemplates: []string{"rails-postgresql-example"},
			wantConds: map[samplesv1.ConfigConditionType]cond{
				samplesv1.RemovePending: {corev1.ConditionFalse, ReasonNotRemoving, ""},
				samplesv1.SamplesExist:  {corev1.ConditionFalse, ReasonCurrentlyRemoved, anyMessage},
			},
		},
		{
			name:      "being deleted while Unmanaged still removes",
			cfg:       deleting(config(operatorv1.Unmanaged)),
			observed:  Observed{Version: v416, Owned: 1},
			wantState: "",
			wantConds: map[samplesv1.ConfigConditionType]cond{samplesv1.RemovePending: {corev1.ConditionTrue, ReasonRemoving, anyMessage}},
		},
		{
			name:      "credentials missing",
			cfg:       config(operatorv1.Managed),
			observed:  Observed{Version: v416, Samples: 10, CredentialsMessage: "the cluster pull secret has no credentials for registry.redhat.io"},
			wantState: operatorv1.Managed, wantVersion: v416, wantArchs: []string{"x86_64"}, wantRegistry: "mirror.example.com",
			wantSkippedStreams: []string{"ruby"}, wantSkippedTemplates: []string{"rails-postgresql-example"},
			wantConds: map[samplesv1.ConfigConditionType]cond{
				samplesv1.ImportCredentialsExist: {corev1.ConditionFalse, ReasonNoCredentials, "the cluster pull secret has no credentials for registry.redhat.io"},
				samplesv1.SamplesExist:           {corev1.ConditionTrue, ReasonInstalled, anyMessage},
			},
		},
		{
			name:      "credentials lost after install",
			cfg:       installed(),
			observed:  Observed{Version: v415, Samples: 10, CredentialsMessage: "no pull secret"},
			wantState: operatorv1.Managed, wantVersion: v415, wantArchs: []string{"x86_64"}, wantRegistry: "mirror.example.com",
			wantSkippedStreams: []string{"ruby"}, wantSkippedTemplates: []string{"rails-postgresql-example"},
			wantConds: map[samplesv1.ConfigConditionType]cond{samplesv1.ImportCredentialsExist: {corev1.ConditionFalse, ReasonNoCredentials, "no pull secret"}},
		},
		{
			name:      "credentials are reported while Removed",
			cfg:       config(operatorv1.Removed),
			observed:  Observed{Version: v416, CredentialsMessage: "no pull secret"},
			wantState: operatorv1.Removed, wantVersion: v416,
			wantConds: map[samplesv1.ConfigConditionType]cond{samplesv1.ImportCredentialsExist: {corev1.ConditionFalse, ReasonNoCredentials, "no pull secret"}},
		},
		{
			name:      "import errors while Managed",
			cfg:       installed(),
			observed:  Observed{Version: v415, Samples: 10, ImportErrors: []string{"python", "ruby"}},
			wantState: operatorv1.Managed, wantVersion: v415, wantArchs: []string{"x86_64"}, wantRegistry: "mirror.example.com",
			wantSkippedStreams: []string{"ruby"}, wantSkippedTemplates: []string{"rails-postgresql-example"},
			wantConds: map[samplesv1.ConfigConditionType]cond{
				samplesv1.ImportImageErrorsExist: {corev1.ConditionTrue, ReasonImportErrors, importMessage},
				samplesv1.SamplesExist:           {corev1.ConditionTrue, ReasonInstalled, anyMessage},
			},
		},
		{
			name:      "import errors on a fresh Config",
			cfg:       config(operatorv1.Managed),
			observed:  Observed{Version: v415, Samples: 10, Pending: 2, ImportErrors: []string{"python", "ruby"}},
			wantState: operatorv1.Managed, wantArchs: []string{"x86_64"}, wantRegistry: "mirror.example.com",
			wantSkippedStreams: []string{"ruby"}, wantSkippedTemplates: []string{"rails-postgresql-example"},
			wantConds: map[samplesv1.ConfigConditionType]cond{samplesv1.ImportImageErrorsExist: {corev1.ConditionTrue, ReasonImportErrors, importMessage}},
		},
		{
			name:      "import errors resolved",
			cfg:       importFailed(),
			observed:  Observed{Version: v415, Samples: 10},
			wantState: operatorv1.Managed, wantVersion: v415, wantArchs: []string{"x86_64"}, wantRegistry: "mirror.example.com",
			wantSkippedStreams: []string{"ruby"}, wantSkippedTemplates: []string{"rails-postgresql-example"},
			wantConds: map[samplesv1.ConfigConditionType]cond{samplesv1.ImportImageErrorsExist: {corev1.ConditionFalse, ReasonNoImportErrors, ""}},
		},
		{
			name:      "import errors are left as they were while the spec is invalid",
			cfg:       importFailed(),
			observed:  Observed{Version: v415, Validation: invalid},
			wantState: operatorv1.Managed, wantVersion: v415, wantArchs: []string{"x86_64"}, wantRegistry: "mirror.example.com",
			wantSkippedStreams: []string{"ruby"}, wantSkippedTemplates: []string{"rails-postgresql-example"},
			wantConds: map[samplesv1.ConfigConditionType]cond{samplesv1.ImportImageErrorsExist: {corev1.ConditionTrue, ReasonImportErrors, importMessage}},
		},
		{
			name:      "import errors are left as they were while Unmanaged",
			cfg:       withState(importFailed(), operatorv1.Unmanaged),
			observed:  Observed{Version: v415},
			wantState: operatorv1.Unmanaged, wantVersion: v415, wantArchs: []string{"x86_64"}, wantRegistry: "mirror.example.com",
			wantSkippedStreams: []string{"ruby"}, wantSkippedTemplates: []string{"rails-postgresql-example"},
			wantConds: map[samplesv1.ConfigConditionType]cond{samplesv1.ImportImageErrorsExist: {corev1.ConditionTrue, ReasonImportErrors, importMessage}},
		},
		{
			name:      "import errors are kept while samples are being removed",
			cfg:       withState(importFailed(), operatorv1.Removed),
			observed:  Observed{Version: v415, Owned: 3},
			wantState: operatorv1.Managed, wantVersion: v415, wantArchs: []string{"x86_64"}, wantRegistry: "mirror.example.com",
			wantSkippedStreams: []string{"ruby"}, wantSkippedTemplates: []string{"rails-postgresql-example"},
			wantConds: map[samplesv1.ConfigConditionType]cond{samplesv1.ImportImageErrorsExist: {corev1.ConditionTrue, ReasonImportErrors, importMessage}},
		},
		{
			name:      "import errors are cleared once Removed",
			cfg:       withState(importFailed(), operatorv1.Removed),
			observed:  Observed{Version: v415},
			wantState: operatorv1.Removed, wantVersion: v415, wantRegistry: "mirror.example.com",
			wantSkippedStreams: []string{"ruby"}, wantSkippedTemplates: []string{"rails-postgresql-example"},
			wantConds: map[samplesv1.ConfigConditionType]cond{samplesv1.ImportImageErrorsExist: {corev1.ConditionFalse, ReasonNoImportErrors, ""}},
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			before := tc.cfg.DeepCopy()
			o := withCreds(tc.observed)
			o.Config, o.Now = tc.cfg, t1
			got := Compute(o)

			if !equality.Semantic.DeepEqual(before, tc.cfg) {
				t.Fatalf("Compute modified its input Config")
			}
			if got.ManagementState != tc.wantState {
				t.Errorf("managementState = %q, want %q", got.ManagementState, tc.wantState)
			}
			if got.Version != tc.wantVersion {
				t.Errorf("version = %q, want %q", got.Version, tc.wantVersion)
			}
			if !slices.Equal(got.Architectures, tc.wantArchs) {
				t.Errorf("architectures = %q, want %q", got.Architectures, tc.wantArchs)
			}
			if got.SamplesRegistry != tc.wantRegistry {
				t.Errorf("samplesRegistry = %q, want %q", got.SamplesRegistry, tc.wantRegistry)
			}
			if !slices.Equal(got.SkippedImagestreams, tc.wantSkippedStreams) {
				t.Errorf("skippedImagestreams = %q, want %q", got.SkippedImagestreams, tc.wantSkippedStreams)
			}
			if !slices.Equal(got.SkippedTemplates, tc.wantSkippedTemplates) {
				t.Errorf("skippedTemplates = %q, want %q", got.SkippedTemplates, tc.wantSkippedTemplates)
			}

			checkConditionOrder(t, &got)
			want := map[samplesv1.ConfigConditionType]cond{}
			for k, v := range always {
				want[k] = v
			}
			if len(tc.cfg.Status.Conditions) == 0 {
				for k, v := range fresh {
					want[k] = v
				}
			}
			for k, v := range tc.wantConds {
				want[k] = v
			}
			for typ, w := range want {
				c := Condition(&got, typ)
				if c == nil {
					continue // reported by checkConditionOrder
				}
				if c.Status != w.status || c.Reason != w.reason || (w.message != anyMessage && c.Message != w.message) {
					t.Errorf("%s = %s/%s/%q, want %s/%s/%q", typ, c.Status, c.Reason, c.Message, w.status, w.reason, w.message)
				}
			}
			for _, c := range got.Conditions {
				if c.LastUpdateTime.IsZero() || c.LastTransitionTime.IsZero() {
					t.Errorf("%s has a zero timestamp: %+v", c.Type, c)
				}
				if c.LastTransitionTime.After(c.LastUpdateTime.Time) {
					t.Errorf("%s transitioned after its last update: %+v", c.Type, c)
				}
			}

			if changed := Changed(&tc.cfg.Status, &got); changed == tc.wantUnchangedFromFrom {
				t.Errorf("Changed(current, computed) = %v, want %v", changed, !tc.wantUnchangedFromFrom)
			}

			// Idempotence: once the computed status is written, the same observation a minute
			// later computes it again exactly, so the controller writes nothing.
			next := tc.cfg.DeepCopy()
			next.Status = got
			o2 := withCreds(tc.observed)
			o2.Config, o2.Now = next, t2
			again := Compute(o2)
			if Changed(&got, &again) {
				t.Errorf("not idempotent:\nfirst  %+v\nsecond %+v", got, again)
			}
			if !equality.Semantic.DeepEqual(got, again) {
				t.Errorf("second Compute differs (timestamps moved?):\nfirst  %+v\nsecond %+v", got, again)
			}
		})
	}
}

func checkConditionOrder(t *testing.T, st *samplesv1.ConfigStatus) {
	t.Helper()
	var types []samplesv1.ConfigConditionType
	for _, c := range st.Conditions {
		types = append(types, c.Type)
	}
	if !slices.Equal(types, ConditionTypes) {
		t.Errorf("condition types = %q, want all seven in order %q", types, ConditionTypes)
	}
}

func TestConditionTypes(t *testing.T) {
	want := []samplesv1.ConfigConditionType{"SamplesExist", "ImportCredentialsExist", "ConfigurationValid", "ImageChangesInProgress", "RemovePending", "MigrationInProgress", "ImportImageErrorsExist"}
	if !slices.Equal(ConditionTypes, want) {
		t.Errorf("ConditionTypes = %q, want %q", ConditionTypes, want)
	}
}

func TestComputeTimestamps(t *testing.T) {
	type times struct{ update, transition metav1.Time }
	cases := []struct {
		name  string
		cfg   func() *samplesv1.Config // status computed at t0
		o     Observed                 // computed at t1
		typ   samplesv1.ConfigConditionType
		want  times
		other metav1.Time // every other condition's two times
	}{
		{
			name: "unchanged condition keeps both times",
			cfg:  installed,
			o:    Observed{Version: v415, Samples: 10},
			typ:  samplesv1.SamplesExist, want: times{t0, t0}, other: t0,
		},
		{
			name: "message-only change moves lastUpdateTime only",
			cfg: func() *samplesv1.Config {
				return step(config(operatorv1.Managed), Observed{Version: v415, Samples: 10, Pending: 3}, t0)
			},
			o:   Observed{Version: v416, Samples: 10, Pending: 3},
			typ: samplesv1.SamplesExist, want: times{t1, t0}, other: t0,
		},
		{
			name: "reason-only change moves lastUpdateTime only",
			cfg:  func() *samplesv1.Config { return withState(removedDone(), operatorv1.Managed) },
			o:    Observed{Version: v415, Samples: 10, Pending: 10},
			typ:  samplesv1.SamplesExist, want: times{t1, t0},
		},
		{
			name: "status change moves both times",
			cfg: func() *samplesv1.Config {
				return step(config(operatorv1.Managed), Observed{Version: v415, Samples: 10, Pending: 3}, t0)
			},
			o:   Observed{Version: v415, Samples: 10},
			typ: samplesv1.SamplesExist, want: times{t1, t1}, other: t0,
		},
		{
			name: "spec becoming invalid moves both times of ConfigurationValid",
			cfg:  installed,
			o:    Observed{Version: v415, Samples: 10, Validation: configspec.Validation{Err: errors.New("bad")}},
			typ:  samplesv1.ConfigurationValid, want: times{t1, t1}, other: t0,
		},
		{
			name: "a different validation message moves lastUpdateTime only",
			cfg: func() *samplesv1.Config {
				return step(config(operatorv1.Managed), Observed{Version: v415, Validation: configspec.Validation{Err: errors.New("bad")}}, t0)
			},
			o:   Observed{Version: v415, Validation: configspec.Validation{Err: errors.New("worse")}},
			typ: samplesv1.ConfigurationValid, want: times{t1, t0}, other: t0,
		},
		{
			name: "a new warning moves lastUpdateTime only",
			cfg:  installed,
			o:    Observed{Version: v415, Samples: 10, Validation: configspec.Validation{Warnings: []string{"w"}}},
			typ:  samplesv1.ConfigurationValid, want: times{t1, t0}, other: t0,
		},
		{
			name: "a different credentials message moves lastUpdateTime only",
			cfg:  installed,
			o:    Observed{Version: v415, Samples: 10, CredentialsOK: true, CredentialsMessage: "credentials found in another way"},
			typ:  samplesv1.ImportCredentialsExist, want: times{t1, t0}, other: t0,
		},
		{
			name: "credentials lost moves both times",
			cfg:  installed,
			o:    Observed{Version: v415, Samples: 10, CredentialsMessage: "no pull secret"},
			typ:  samplesv1.ImportCredentialsExist, want: times{t1, t1}, other: t0,
		},
		{
			name: "import errors appearing move both times",
			cfg:  installed,
			o:    Observed{Version: v415, Samples: 10, ImportErrors: []string{"ruby"}},
			typ:  samplesv1.ImportImageErrorsExist, want: times{t1, t1}, other: t0,
		},
		{
			name: "a different set of import errors moves lastUpdateTime only",
			cfg: func() *samplesv1.Config {
				return step(installed(), Observed{Version: v415, Samples: 10, ImportErrors: []string{"ruby"}}, t0)
			},
			o:   Observed{Version: v415, Samples: 10, ImportErrors: []string{"python", "ruby"}},
			typ: samplesv1.ImportImageErrorsExist, want: times{t1, t0}, other: t0,
		},
		{
			name: "RemovePending turning True moves both times",
			cfg:  func() *samplesv1.Config { return withState(installed(), operatorv1.Removed) },
			o:    Observed{Version: v415, Owned: 1},
			typ:  samplesv1.RemovePending, want: times{t1, t1}, other: t0,
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			cfg := tc.cfg()
			o := withCreds(tc.o)
			o.Config, o.Now = cfg, t1
			got := Compute(o)
			c := Condition(&got, tc.typ)
			if c == nil {
				t.Fatalf("no %s condition", tc.typ)
			}
			if !c.LastUpdateTime.Equal(&tc.want.update) || !c.LastTransitionTime.Equal(&tc.want.transition) {
				t.Errorf("%s: lastUpdateTime %v, lastTransitionTime %v; want %v, %v", tc.typ,
					c.LastUpdateTime.Time, c.LastTransitionTime.Time, tc.want.update.Time, tc.want.transition.Time)
			}
			if tc.other.IsZero() {
				return
			}
			for _, oc := range got.Conditions {
				if oc.Type == tc.typ {
					continue
				}
				if !oc.LastUpdateTime.Equal(&tc.other) || !oc.LastTransitionTime.Equal(&tc.other) {
					t.Errorf("%s moved: lastUpdateTime %v, lastTransitionTime %v; want both %v", oc.Type,
						oc.LastUpdateTime.Time, oc.LastTransitionTime.Time, tc.other.Time)
				}
			}
		})
	}
}

// TestComputeSequence walks one Config through its life, checking at every step that a second
// Compute with a later time is a no-op (no status write at steady state).
func TestComputeSequence(t *testing.T) {
	cfg := config(operatorv1.Managed)
	now := t0
	apply := func(o Observed) samplesv1.ConfigStatus {
		t.Helper()
		now = metav1.NewTime(now.Add(time.Minute))
		o = withCreds(o)
		o.Config, o.Now = cfg, now
		got := Compute(o)
		cfg = cfg.DeepCopy()
		cfg.Status = got
		later := o
		later.Config, later.Now = cfg, metav1.NewTime(now.Add(30*time.Second))
		if again := Compute(later); Changed(&got, &again) {
			t.Errorf("at %v: not idempotent:\n%+v\n%+v", now.Time, got, again)
		}
		checkConditionOrder(t, &got)
		return got
	}
	exist := func(st samplesv1.ConfigStatus) corev1.ConditionStatus {
		return Condition(&st, samplesv1.SamplesExist).Status
	}

	st := apply(Observed{Version: v415, Samples: 5, Pending: 5})
	if exist(st) != corev1.ConditionFalse || st.Version != "" {
		t.Errorf("installing: %+v", st)
	}
	st = apply(Observed{Version: v415, Samples: 5})
	if exist(st) != corev1.ConditionTrue || st.Version != v415 {
		t.Errorf("installed: %+v", st)
	}
	cfg.Spec.ManagementState = operatorv1.Removed
	st = apply(Observed{Version: v415, Owned: 5})
	if Condition(&st, samplesv1.RemovePending).Status != corev1.ConditionTrue || st.ManagementState != operatorv1.Managed {
		t.Errorf("removing: %+v", st)
	}
	st = apply(Observed{Version: v416})
	if exist(st) != corev1.ConditionFalse || st.ManagementState != operatorv1.Removed || st.Version != v416 || st.Architectures != nil ||
		Condition(&st, samplesv1.RemovePending).Status != corev1.ConditionFalse {
		t.Errorf("removed: %+v", st)
	}
	cfg.Spec.ManagementState = operatorv1.Managed
	cfg.Spec.Architectures = []string{"arm64"} // allowed: status.architectures was cleared
	st = apply(Observed{Version: v416, Samples: 4, Pending: 4})
	if exist(st) != corev1.ConditionFalse || st.ManagementState != operatorv1.Managed || !slices.Equal(st.Architectures, []string{"arm64"}) {
		t.Errorf("reinstalling: %+v", st)
	}
	st = apply(Observed{Version: v416, Samples: 4})
	if exist(st) != corev1.ConditionTrue {
		t.Errorf("reinstalled: %+v", st)
	}
	cfg.Spec.ManagementState = operatorv1.Unmanaged
	st = apply(Observed{Version: v416, Owned: 4})
	if st.ManagementState != operatorv1.Unmanaged || exist(st) != corev1.ConditionTrue {
		t.Errorf("unmanaged: %+v", st)
	}
}

func TestChanged(t *testing.T) {
	base := installed().Status
	cases := []struct {
		name   string
		mutate func(*samplesv1.ConfigStatus)
		want   bool
	}{
		{name: "identical", mutate: func(*samplesv1.ConfigStatus) {}},
		{name: "architectures dropped", mutate: func(s *samplesv1.ConfigStatus) { s.Architectures = nil }, want: true},
		{name: "skipped imagestreams dropped", mutate: func(s *samplesv1.ConfigStatus) { s.SkippedImagestreams = nil }, want: true},
		{name: "skipped templates dropped", mutate: func(s *samplesv1.ConfigStatus) { s.SkippedTemplates = nil }, want: true},
		{name: "version", mutate: func(s *samplesv1.ConfigStatus) { s.Version = v416 }, want: true},
		{name: "managementState", mutate: func(s *samplesv1.ConfigStatus) { s.ManagementState = operatorv1.Removed }, want: true},
		{name: "samplesRegistry", mutate: func(s *samplesv1.ConfigStatus) { s.SamplesRegistry = "" }, want: true},
		{name: "condition status", mutate: func(s *samplesv1.ConfigStatus) { s.Conditions[0].Status = corev1.ConditionUnknown }, want: true},
		{name: "condition message", mutate: func(s *samplesv1.ConfigStatus) { s.Conditions[0].Message += "." }, want: true},
		{name: "condition time", mutate: func(s *samplesv1.ConfigStatus) { s.Conditions[0].LastUpdateTime = t3 }, want: true},
		{name: "condition dropped", mutate: func(s *samplesv1.ConfigStatus) { s.Conditions = s.Conditions[1:] }, want: true},
		{
			name: "same instant in another zone",
			mutate: func(s *samplesv1.ConfigStatus) {
				s.Conditions[0].LastUpdateTime = metav1.NewTime(s.Conditions[0].LastUpdateTime.In(time.FixedZone("X", 3600)))
			},
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			computed := *base.DeepCopy()
			tc.mutate(&computed)
			if got := Changed(&base, &computed); got != tc.want {
				t.Errorf("Changed = %v, want %v", got, tc.want)
			}
			if got := Changed(&computed, &base); got != tc.want {
				t.Errorf("Changed (reversed) = %v, want %v", got, tc.want)
			}
		})
	}

	// nil and empty slices are the same status.
	empty := []samplesv1.ConfigStatus{
		{Architectures: []string{}, SkippedImagestreams: []string{}, SkippedTemplates: []string{}, Conditions: []samplesv1.ConfigCondition{}},
		{},
	}
	if Changed(&empty[0], &empty[1]) || Changed(&empty[1], &empty[0]) {
		t.Errorf("Changed treats empty and nil slices as different")
	}
	mixed := installed().Status
	mixed.SkippedTemplates = []string{}
	other := *mixed.DeepCopy()
	other.SkippedTemplates = nil
	if Changed(&mixed, &other) {
		t.Errorf("Changed treats an empty and a nil skippedTemplates as different")
	}
	// Changed leaves its arguments alone.
	if mixed.SkippedTemplates == nil {
		t.Errorf("Changed replaced an empty slice with nil in its argument")
	}
}

// TestComputeFromEmptyListsIsNoChange: a status read back from the API server may carry empty
// lists where Compute produces nil (or the reverse); that must not cause a write.
func TestComputeFromEmptyListsIsNoChange(t *testing.T) {
	cfg := installed()
	cfg.Spec.SkippedImagestreams, cfg.Spec.SkippedTemplates = []string{}, []string{}
	cfg.Status.SkippedImagestreams, cfg.Status.SkippedTemplates = []string{}, []string{}
	got := Compute(withCreds(Observed{Config: cfg, Version: v415, Samples: 10, Now: t1}))
	if Changed(&cfg.Status, &got) {
		t.Errorf("empty lists in status and spec caused a change:\n%+v\n%+v", cfg.Status, got)
	}

	removed := removedDone()
	removed.Status.Architectures = []string{}
	got = Compute(withCreds(Observed{Config: removed, Version: v415, Now: t1}))
	if Changed(&removed.Status, &got) {
		t.Errorf("Removed with empty status.architectures caused a change")
	}
}

func TestComputeConditionOrder(t *testing.T) {
	t.Run("unknown condition types are kept, after the seven", func(t *testing.T) {
		cfg := config(operatorv1.Managed)
		cfg.Status.Conditions = []samplesv1.ConfigCondition{{Type: "Custom", Status: corev1.ConditionTrue, LastUpdateTime: t0, LastTransitionTime: t0}}
		got := Compute(withCreds(Observed{Config: cfg, Version: v415, Now: t1}))
		if n := len(got.Conditions); n != 8 || got.Conditions[7].Type != "Custom" {
			t.Fatalf("conditions %+v, want the seven then Custom", got.Conditions)
		}
		got.Conditions = got.Conditions[:7]
		checkConditionOrder(t, &got)
	})
	t.Run("a partial status is completed in order", func(t *testing.T) {
		cfg := config(operatorv1.Managed)
		cfg.Status.Conditions = []samplesv1.ConfigCondition{
			{Type: samplesv1.RemovePending, Status: corev1.ConditionFalse, LastUpdateTime: t0, LastTransitionTime: t0},
			{Type: samplesv1.SamplesExist, Status: corev1.ConditionTrue, LastUpdateTime: t0, LastTransitionTime: t0},
		}
		got := Compute(withCreds(Observed{Config: cfg, Version: v415, Now: t1}))
		checkConditionOrder(t, &got)
	})
	t.Run("all seven out of order are put in order", func(t *testing.T) {
		cfg := installed()
		slices.Reverse(cfg.Status.Conditions)
		got := Compute(withCreds(Observed{Config: cfg, Version: v415, Samples: 10, Now: t1}))
		checkConditionOrder(t, &got)
	})
}

// TestComputeMissingAccess: what the Config says while an administrator has not granted the
// operator access to the samples or to the pull secret, in every management state, and that it
// goes back to the ordinary status once granted.
func TestComputeMissingAccess(t *testing.T) {
	both := []access.Grant{access.Samples, access.PullSecret}
	samplesOnly := []access.Grant{access.Samples}
	pullOnly := []access.Grant{access.PullSecret}
	samplesMessage := func(missing []access.Grant) string {
		return "the operator cannot install or manage the samples: " + access.Message(missing, true)
	}
	credsMissing := cond{corev1.ConditionFalse, ReasonMissingAccess, "cannot tell whether imports can authenticate: " + access.Message(pullOnly, true)}
	credsOK := cond{corev1.ConditionTrue, ReasonCredentials, credsMessage}
	invalid := configspec.Validation{Err: errors.New("spec.samplesRegistry is not a registry")}

	cases := []struct {
		name       string
		cfg        *samplesv1.Config
		observed   Observed
		cvo        bool // installed by the cluster-version operator, not by OLM
		want       map[samplesv1.ConfigConditionType]cond
		wantState  operatorv1.ManagementState
		wantStatus func(*samplesv1.ConfigStatus) string // "" when fine
	}{
		{
			name:     "fresh Managed, nothing granted",
			cfg:      config(operatorv1.Managed),
			observed: Observed{Version: v416, MissingAccess: both},
			want: map[samplesv1.ConfigConditionType]cond{
				samplesv1.SamplesExist:           {corev1.ConditionFalse, ReasonMissingAccess, samplesMessage(both)},
				samplesv1.ImportCredentialsExist: credsMissing,
				samplesv1.ConfigurationValid:     {corev1.ConditionTrue, ReasonValidConfiguration, ""},
				samplesv1.RemovePending:          {corev1.ConditionFalse, ReasonNotRemoving, ""},
				samplesv1.ImportImageErrorsExist: {corev1.ConditionFalse, ReasonNoImportErrors, ""},
			},
			// Nothing was applied: the status records no management state and no spec yet.
			wantState: "",
			wantStatus: func(st *samplesv1.ConfigStatus) string {
				if st.Version != "" || len(st.Architectures) != 0 || st.SamplesRegistry != "" {
					return "the status records applied spec fields while nothing was applied"
				}
				return ""
			},
		},
		{
			name:     "installed, then the samples access is revoked",
			cfg:      installed(),
			observed: Observed{Version: v415, MissingAccess: samplesOnly},
			want: map[samplesv1.ConfigConditionType]cond{
				samplesv1.SamplesExist:           {corev1.ConditionFalse, ReasonMissingAccess, samplesMessage(samplesOnly)},
				samplesv1.ImportCredentialsExist: credsOK,
				samplesv1.ConfigurationValid:     {corev1.ConditionTrue, ReasonValidConfiguration, ""},
			},
			wantState: operatorv1.Managed,
			wantStatus: func(st *samplesv1.ConfigStatus) string {
				if st.Version != v415 {
					return "the version of the installed samples was dropped"
				}
				return ""
			},
		},
		{
			name:     "installed, only the pull secret missing: the samples are still managed",
			cfg:      installed(),
			observed: Observed{Version: v415, Samples: 10, MissingAccess: pullOnly},
			want: map[samplesv1.ConfigConditionType]cond{
				samplesv1.SamplesExist:           {corev1.ConditionTrue, ReasonInstalled, "10 samples are installed at version 4.15.0"},
				samplesv1.ImportCredentialsExist: credsMissing,
			},
			wantState: operatorv1.Managed,
		},
		{
			name:     "invalid spec and no access: both are said",
			cfg:      config(operatorv1.Managed),
			observed: Observed{Version: v416, Validation: invalid, MissingAccess: samplesOnly},
			want: map[samplesv1.ConfigConditionType]cond{
				samplesv1.SamplesExist:       {corev1.ConditionFalse, ReasonMissingAccess, samplesMessage(samplesOnly)},
				samplesv1.ConfigurationValid: {corev1.ConditionFalse, ReasonInvalidConfiguration, invalid.Err.Error()},
			},
		},
		{
			name:     "Removed: the samples cannot be deleted",
			cfg:      withState(installed(), operatorv1.Removed),
			observed: Observed{Version: v415, Validation: invalid, MissingAccess: both},
			want: map[samplesv1.ConfigConditionType]cond{
				samplesv1.SamplesExist:           {corev1.ConditionFalse, ReasonMissingAccess, samplesMessage(both)},
				samplesv1.ConfigurationValid:     {corev1.ConditionTrue, ReasonValidConfiguration, ""},
				samplesv1.RemovePending:          {corev1.ConditionFalse, ReasonNotRemoving, ""},
				samplesv1.ImportCredentialsExist: credsMissing,
			},
			wantState: operatorv1.Managed, // not Removed until the samples are gone
		},
		{
			name:     "Unmanaged",
			cfg:      config(operatorv1.Unmanaged),
			observed: Observed{Version: v416, MissingAccess: samplesOnly},
			want: map[samplesv1.ConfigConditionType]cond{
				samplesv1.SamplesExist:       {corev1.ConditionFalse, ReasonMissingAccess, samplesMessage(samplesOnly)},
				samplesv1.ConfigurationValid: {corev1.ConditionTrue, ReasonValidConfiguration, ""},
			},
		},
		{
			name:     "a CVO install gets the payload's commands",
			cfg:      config(operatorv1.Managed),
			observed: Observed{Version: v416, MissingAccess: samplesOnly},
			cvo:      true,
			want: map[samplesv1.ConfigConditionType]cond{
				samplesv1.SamplesExist: {corev1.ConditionFalse, ReasonMissingAccess, "the operator cannot install or manage the samples: " + access.Message(samplesOnly, false)},
			},
		},
	}
	for _, c := range cases {
		o := c.observed
		o.InstalledByOLM = !c.cvo
		if !slices.Contains(o.MissingAccess, access.PullSecret) {
			o.CredentialsOK, o.CredentialsMessage = true, credsMessage
		}
		o.Config, o.Now = c.cfg, t1
		st := Compute(o)
		for typ, w := range c.want {
			got := Condition(&st, typ)
			if got == nil || got.Status != w.status || got.Reason != w.reason || got.Message != w.message {
				t.Errorf("%s: %s = %+v, want %+v", c.name, typ, got, w)
			}
		}
		if len(st.Conditions) != len(ConditionTypes) {
			t.Errorf("%s: %d conditions, want all %d", c.name, len(st.Conditions), len(ConditionTypes))
		}
		checkConditionOrder(t, &st)
		if c.wantState != "" && st.ManagementState != c.wantState {
			t.Errorf("%s: status.managementState = %q, want %q", c.name, st.ManagementState, c.wantState)
		}
		if c.wantStatus != nil {
			if msg := c.wantStatus(&st); msg != "" {
				t.Errorf("%s: %s", c.name, msg)
			}
		}
		// Computed again from its own result nothing changes: a steady missing access costs no write.
		again := c.cfg.DeepCopy()
		again.Status = st
		o.Config, o.Now = again, t2
		if next := Compute(o); Changed(&st, &next) {
			t.Errorf("%s: recomputing the same observation changes the status", c.name)
		}
	}
}

// TestComputeAccessGrantedAgain: once granted, the conditions go back to what the samples show,
// with the transition times of the change.
func TestComputeAccessGrantedAgain(t *testing.T) {
	cfg := step(config(operatorv1.Managed), Observed{Version: v416, MissingAccess: []access.Grant{access.Samples, access.PullSecret}, CredentialsMessage: "x"}, t0)
	if c := Condition(&cfg.Status, samplesv1.SamplesExist); c.Reason != ReasonMissingAccess {
		t.Fatalf("SamplesExist %+v", c)
	}
	cfg = step(cfg, Observed{Version: v416, Samples: 10, Pending: 10}, t1)
	if c := Condition(&cfg.Status, samplesv1.SamplesExist); c.Status != corev1.ConditionFalse || c.Reason != ReasonPending || !c.LastUpdateTime.Equal(&t1) || !c.LastTransitionTime.Equal(&t0) {
		t.Errorf("SamplesExist once granted: %+v", c)
	}
	if c := Condition(&cfg.Status, samplesv1.ImportCredentialsExist); c.Status != corev1.ConditionTrue || c.Reason != ReasonCredentials || !c.LastTransitionTime.Equal(&t1) {
		t.Errorf("ImportCredentialsExist once granted: %+v", c)
	}
	cfg = step(cfg, Observed{Version: v416, Samples: 10}, t2)
	if c := Condition(&cfg.Status, samplesv1.SamplesExist); c.Status != corev1.ConditionTrue || cfg.Status.Version != v416 {
		t.Errorf("SamplesExist once installed: %+v (version %q)", c, cfg.Status.Version)
	}
}

func TestHeldBackSamplesAreNamedInSamplesExist(t *testing.T) {
	cfg := step(config(operatorv1.Managed), Observed{Version: v416, Samples: 10}, t0)
	o := withCreds(Observed{Version: v416, Samples: 10, HeldBack: []string{"ImageStream/python"}})
	o.Config, o.Now = cfg, t1
	st := Compute(o)
	c := Condition(&st, samplesv1.SamplesExist)
	if c.Status != corev1.ConditionTrue || c.Reason != ReasonInstalled ||
		!strings.Contains(c.Message, "1 samples keep being changed after each revert") || !strings.HasSuffix(c.Message, ": ImageStream/python") {
		t.Errorf("SamplesExist = %s/%s %q", c.Status, c.Reason, c.Message)
	}
	o.HeldBack = nil
	o.Config = &samplesv1.Config{ObjectMeta: cfg.ObjectMeta, Spec: cfg.Spec, Status: st}
	if c := Condition(&[]samplesv1.ConfigStatus{Compute(o)}[0], samplesv1.SamplesExist); strings.Contains(c.Message, "revert") {
		t.Errorf("the message still names held-back samples once none is: %q", c.Message)
	}
}

// quotaRefusals are n imagestreams refused by one quota, as the server words it, sorted as the
// refusal store reports them.
func quotaRefusals(n int) []refusal.Record {
	var out []refusal.Record
	for i := 0; i < n; i++ {
		name := fmt.Sprintf("stream-%02d", i)
		r := refusal.Refusal{Code: 403, Reason: metav1.StatusReasonForbidden,
			Message: `imagestreams.image.openshift.io "` + name + `" is forbidden: exceeded quota: samples, requested: count/imagestreams.image.openshift.io=1, used: count/imagestreams.image.openshift.io=10, limited: count/imagestreams.image.openshift.io=10`}
		out = append(out, refusal.Record{Kind: "ImageStream", Name: name, Verb: "create", Refusal: r, Cause: refusal.Cause(name, r)})
	}
	return out
}

func TestRefusedWritesAreNamedWithTheServersWords(t *testing.T) {
	const quotaWords = `403 Forbidden: imagestreams.image.openshift.io "stream-00" is forbidden: exceeded quota: samples, requested: count/imagestreams.image.openshift.io=1, used: count/imagestreams.image.openshift.io=10, limited: count/imagestreams.image.openshift.io=10`
	webhook := refusal.Refusal{Code: 400, Reason: "Bad Request", Message: `admission webhook "deny.example.com" denied the request: no`}
	mixed := append(quotaRefusals(2), refusal.Record{Kind: "Template", Name: "rails", Verb: "update", Refusal: webhook, Cause: refusal.Cause("rails", webhook)})

	for _, tc := range []struct {
		name        string
		cfg         *samplesv1.Config
		refused     []refusal.Record
		pending     int
		unwatched   bool
		wantStatus  corev1.ConditionStatus
		wantReason  string
		wantMessage string
	}{{
		name: "never installed", cfg: config(operatorv1.Managed), refused: quotaRefusals(43), pending: 43,
		wantStatus: corev1.ConditionFalse, wantReason: ReasonWritesRefused,
		wantMessage: "creating the samples of version 4.16.0; the API server refuses to create 43 samples (ImageStream/stream-00, ImageStream/stream-01, ImageStream/stream-02, and 40 more): " +
			quotaWords + "; the operator retries each at least once a minute, and at once when a ResourceQuota or LimitRange in openshift or its own access changes",
	}, {
		name: "installed before", cfg: installed(), refused: quotaRefusals(1), pending: 1,
		wantStatus: corev1.ConditionTrue, wantReason: ReasonWritesRefused,
		wantMessage: "samples are installed at version 4.15.0; the API server refuses to create 1 samples (ImageStream/stream-00): " + quotaWords +
			"; the operator retries each at least once a minute, and at once when a ResourceQuota or LimitRange in openshift or its own access changes",
	}, {
		name: "two causes", cfg: config(operatorv1.Managed), refused: mixed, pending: 3,
		wantStatus: corev1.ConditionFalse, wantReason: ReasonWritesRefused,
		wantMessage: "creating the samples of version 4.16.0; the API server refuses to create 2 samples (ImageStream/stream-00, ImageStream/stream-01): " + quotaWords +
			`; the API server refuses to update 1 samples (Template/rails): 400 Bad Request: admission webhook "deny.example.com" denied the request: no` +
			"; the operator retries each at least once a minute, and at once when a ResourceQuota or LimitRange in openshift or its own access changes",
	}, {
		// Without RBAC on the quotas and LimitRanges of openshift their changes are not seen:
		// no promise of an immediate retry on them.
		name: "quota watch without RBAC", cfg: installed(), refused: quotaRefusals(1), pending: 1, unwatched: true,
		wantStatus: corev1.ConditionTrue, wantReason: ReasonWritesRefused,
		wantMessage: "samples are installed at version 4.15.0; the API server refuses to create 1 samples (ImageStream/stream-00): " + quotaWords +
			"; the operator retries each at least once a minute, and at once when its own access changes (it cannot watch the ResourceQuotas and LimitRanges of openshift: grant it list and watch on them to have their changes retried at once)",
	}, {
		name: "refusals gone", cfg: config(operatorv1.Managed), refused: nil, pending: 3,
		wantStatus: corev1.ConditionFalse, wantReason: ReasonPending, wantMessage: "creating and updating the samples of version 4.16.0",
	}} {
		t.Run(tc.name, func(t *testing.T) {
			cfg := step(tc.cfg, Observed{Version: v416, Samples: 53, Pending: tc.pending, Refused: tc.refused, RefusalTriggersWatched: !tc.unwatched}, t1)
			c := Condition(&cfg.Status, samplesv1.SamplesExist)
			if c.Status != tc.wantStatus || c.Reason != tc.wantReason || c.Message != tc.wantMessage {
				t.Errorf("SamplesExist = %s/%s\n%q\nwant %s/%s\n%q", c.Status, c.Reason, c.Message, tc.wantStatus, tc.wantReason, tc.wantMessage)
			}
		})
	}
}

func TestRefusedDeletesAreNamedInRemovePending(t *testing.T) {
	cfg := withState(installed(), operatorv1.Removed)
	cfg = step(cfg, Observed{Version: v415, Owned: 1, Refused: quotaRefusals(1)}, t1)
	c := Condition(&cfg.Status, samplesv1.RemovePending)
	if c.Status != corev1.ConditionTrue || !strings.Contains(c.Message, "refuses to create 1 samples (ImageStream/stream-00)") {
		t.Errorf("RemovePending = %s %q", c.Status, c.Message)
	}
	// The refusal is added to what the operator is doing, not said instead of it.
	if !strings.HasPrefix(c.Message, "deleting the samples this operator manages; the API server refuses") {
		t.Errorf("RemovePending's message %q does not say first that the samples are being deleted", c.Message)
	}
}

// TestComputeRewritesAReasonAnotherVersionWrote: a condition with the status and message this
// version would write but another reason (a status written by another version of the operator)
// takes this version's reason, and its update time moves.
func TestComputeRewritesAReasonAnotherVersionWrote(t *testing.T) {
	cfg := installed()
	for i := range cfg.Status.Conditions {
		if cfg.Status.Conditions[i].Type == samplesv1.ImageChangesInProgress {
			cfg.Status.Conditions[i].Reason = "OlderReason"
		}
	}
	cfg = step(cfg, Observed{Version: v415, Samples: 10}, t1)
	c := Condition(&cfg.Status, samplesv1.ImageChangesInProgress)
	if c.Status != corev1.ConditionFalse || c.Reason != ReasonDeprecated || c.Message != "this condition is no longer used" || !c.LastUpdateTime.Equal(&t1) {
		t.Errorf("ImageChangesInProgress = %+v, want False %s updated at %s", *c, ReasonDeprecated, t1)
	}
}

// TestSamplesExistNamesTheMirrorSets: on a cluster whose mirror sets serve the samples' images,
// SamplesExist names them and the imagestreams none serves; once the mirror sets that the install
// relied on are gone, it says what can no longer import.
func TestSamplesExistNamesTheMirrorSets(t *testing.T) {
	rh := &configv1.ImageTagMirrorSet{ObjectMeta: metav1.ObjectMeta{Name: "rh"}, Spec: configv1.ImageTagMirrorSetSpec{
		ImageTagMirrors: []configv1.ImageTagMirrors{{Source: "registry.redhat.io", Mirrors: []configv1.ImageMirror{"127.0.0.1:5000/rh"}}}}}
	quay := &configv1.ImageTagMirrorSet{ObjectMeta: metav1.ObjectMeta{Name: "quay"}, Spec: configv1.ImageTagMirrorSetSpec{
		ImageTagMirrors: []configv1.ImageTagMirrors{{Source: "quay.io", Mirrors: []configv1.ImageMirror{"127.0.0.1:5000/quay"}}}}}
	streams := map[string][]string{"python": {"registry.redhat.io/ubi9/python-311:1"}, "ruby": {"quay.io/fedora/ruby-33:1"}}
	cover := func(sets mirrorsets.Sets) *mirrorsets.Coverage { c := mirrorsets.Cover(sets, streams); return &c }
	throughMirrors := bootstrapstate.DefaultConfig("amd64", configspec.BootstrapDecision{State: operatorv1.Managed, Reason: configspec.ReasonThroughMirrorSets, Message: "imported through the cluster's mirror sets (ImageTagMirrorSet/rh)"})
	throughMirrors.Generation = 1
	for _, tc := range []struct {
		name    string
		cfg     *samplesv1.Config
		mirrors *mirrorsets.Coverage
		reason  string
		want    []string
		not     []string
	}{
		{name: "no mirror set says nothing of them", cfg: config(operatorv1.Managed), mirrors: cover(mirrorsets.Sets{}),
			reason: ReasonInstalled, not: []string{"mirror"}},
		{name: "mirror sets serve some images", cfg: config(operatorv1.Managed), mirrors: cover(mirrorsets.Sets{Tag: []*configv1.ImageTagMirrorSet{rh}}),
			reason: ReasonInstalled, want: []string{
				"2 samples are installed at version 4.15.0; their images are imported through the cluster's mirror sets (ImageTagMirrorSet/rh)",
				"no mirror set serves the images of 1 imagestreams (registry quay.io): ruby, which will not import unless the cluster reaches those registries"}},
		{name: "mirror sets serve every image", cfg: config(operatorv1.Managed), mirrors: cover(mirrorsets.Sets{Tag: []*configv1.ImageTagMirrorSet{rh, quay}}),
			reason: ReasonInstalled, want: []string{"their images are imported through the cluster's mirror sets (ImageTagMirrorSet/quay, ImageTagMirrorSet/rh)"},
			not: []string{"no mirror set serves"}},
		{name: "the mirror sets the install relied on are gone, with every stream skipped", cfg: throughMirrors,
			mirrors: func() *mirrorsets.Coverage { c := mirrorsets.Cover(mirrorsets.Sets{}, nil); return &c }(),
			reason:  ReasonInstalled, not: []string{"mirror"}},
		{name: "the install relied on mirror sets that are gone", cfg: throughMirrors, mirrors: cover(mirrorsets.Sets{}),
			reason: ReasonInstalled, want: []string{"the samples were installed to import through the cluster's mirror sets, but no mirror set serves their images any more: 2 imagestreams (registries quay.io, registry.redhat.io): python, ruby can no longer import"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg := step(tc.cfg, Observed{Version: v415, Samples: 2, Mirrors: tc.mirrors}, t0)
			c := Condition(&cfg.Status, samplesv1.SamplesExist)
			if c.Reason != tc.reason {
				t.Errorf("reason %s, want %s (%s)", c.Reason, tc.reason, c.Message)
			}
			for _, w := range tc.want {
				if !strings.Contains(c.Message, w) {
					t.Errorf("message %q lacks %q", c.Message, w)
				}
			}
			for _, n := range tc.not {
				if strings.Contains(c.Message, n) {
					t.Errorf("message %q has %q", c.Message, n)
				}
			}
		})
	}
	pending := step(throughMirrors, Observed{Version: v415, Samples: 2, Pending: 2, Mirrors: cover(mirrorsets.Sets{Tag: []*configv1.ImageTagMirrorSet{rh}})}, t0)
	if c := Condition(&pending.Status, samplesv1.SamplesExist); c.Status != corev1.ConditionFalse || c.Reason != configspec.ReasonThroughMirrorSets || !strings.Contains(c.Message, "ImageTagMirrorSet/rh") {
		t.Errorf("while installing through mirror sets: %+v", c)
	}
}

// TestUnusableMessageNamesEverySampleWithItsReasonsAndThePartialTags: a few of each, by kind and
// name (TestSampleListsInMessagesAreBounded has more).
func TestUnusableMessageNamesEverySampleWithItsReasonsAndThePartialTags(t *testing.T) {
	if got := UnusableMessage(nil, nil); got != "" {
		t.Errorf("no verdict: %q, want none", got)
	}
	verdicts := []usability.Verdict{
		{Kind: usability.KindTemplate, Name: "rails", Reasons: []usability.Reason{
			{Code: usability.KindNotServed, Message: "creates build.openshift.io/v1 BuildConfig, which this cluster does not serve"},
			{Code: usability.ImageSkipped, Message: "image openshift/ruby:3.3-ubi9 is skipped by the Config"}}},
		{Kind: usability.KindImageStreamTag, Name: "ruby:3.3-ubi9", Reasons: []usability.Reason{{Code: usability.NoImageForNodes, Message: "no image for node architecture s390x"}}},
		{Kind: usability.KindImageStreamTag, Name: "python:3.12", MissingArchitectures: []string{"arm64", "s390x"}},
	}
	offered := func(kind, name string) bool { return kind == usability.KindImageStreamTag && name == "ruby:3.3-ubi9" }
	got := UnusableMessage(verdicts, offered)
	want := "; 2 samples cannot work on this cluster and are hidden from the catalog unless annotation " + configspec.OfferedAnnotation +
		" keeps them offered (annotation " + desired.UnusableAnnotation + "): imagestreamtag/ruby:3.3-ubi9 (no image for node architecture s390x, offered all the same), " +
		"template/rails (creates build.openshift.io/v1 BuildConfig, which this cluster does not serve; image openshift/ruby:3.3-ubi9 is skipped by the Config)" +
		"; 1 imagestream tags have images for some of the nodes' architectures only: imagestreamtag/python:3.12 (none for arm64, s390x)"
	if got != want {
		t.Errorf("UnusableMessage =\n%s\nwant\n%s", got, want)
	}
}

// unusableTemplates are n templates that cannot work here, named template-000 on.
func unusableTemplates(n int) []usability.Verdict {
	out := make([]usability.Verdict, n)
	for i := range out {
		out[i] = usability.Verdict{Kind: usability.KindTemplate, Name: fmt.Sprintf("template-%03d", i), Reasons: []usability.Reason{
			{Code: usability.KindNotServed, Message: "creates apps.openshift.io/v1 DeploymentConfig, which this cluster does not serve"}}}
	}
	return out
}

// partialTags are n imagestream tags with images for some of the nodes only, named stream:tag-000 on.
func partialTags(n int) []usability.Verdict {
	out := make([]usability.Verdict, n)
	for i := range out {
		out[i] = usability.Verdict{Kind: usability.KindImageStreamTag, Name: fmt.Sprintf("stream:tag-%03d", i), MissingArchitectures: []string{"s390x"}}
	}
	return out
}

// Issue 56: every list of samples in a condition's message names the first few, sorted, and counts
// the rest, so that its size does not grow with the cluster's samples, and a change past the
// named ones does not rewrite it.
func TestSampleListsInMessagesAreBounded(t *testing.T) {
	reversed := func(v []usability.Verdict) []usability.Verdict { v = slices.Clone(v); slices.Reverse(v); return v }
	why := " (creates apps.openshift.io/v1 DeploymentConfig, which this cluster does not serve)"
	unusablePrefix := "; %d samples cannot work on this cluster and are hidden from the catalog unless annotation " + configspec.OfferedAnnotation +
		" keeps them offered (annotation " + desired.UnusableAnnotation + "): "
	for _, tc := range []struct {
		name string
		got  string
		want string
	}{{
		name: "five unusable samples are all named",
		got:  UnusableMessage(unusableTemplates(5), nil),
		want: fmt.Sprintf(unusablePrefix, 5) + "template/template-000" + why + ", template/template-001" + why + ", template/template-002" + why +
			", template/template-003" + why + ", template/template-004" + why,
	}, {
		name: "six: five named, one counted, and where to see it",
		got:  UnusableMessage(unusableTemplates(6), nil),
		want: fmt.Sprintf(unusablePrefix, 6) + "template/template-000" + why + ", template/template-001" + why + ", template/template-002" + why +
			", template/template-003" + why + ", template/template-004" + why + " and 1 more (`oc samples status` lists them all)",
	}, {
		name: "named in sorted order whatever the order given",
		got:  UnusableMessage(reversed(unusableTemplates(300)), nil),
		want: UnusableMessage(unusableTemplates(300), nil),
	}, {
		name: "partial tags",
		got:  UnusableMessage(partialTags(40), nil),
		want: "; 40 imagestream tags have images for some of the nodes' architectures only: imagestreamtag/stream:tag-000 (none for s390x), imagestreamtag/stream:tag-001 (none for s390x), " +
			"imagestreamtag/stream:tag-002 (none for s390x), imagestreamtag/stream:tag-003 (none for s390x), imagestreamtag/stream:tag-004 (none for s390x) and 35 more (`oc samples status -o wide` lists them all)",
	}, {
		name: "retired samples",
		got: RetiredMessage([]desired.Retired{{Kind: "ImageStream", Name: "ruby", Version: v416}, {Kind: "Template", Name: "a", Version: v415}, {Kind: "ImageStream", Name: "b", Version: v415},
			{Kind: "ImageStream", Name: "c", Version: v415}, {Kind: "ImageStream", Name: "d", Version: v415}, {Kind: "ImageStream", Name: "e", Version: v415}, {Kind: "ImageStream", Name: "f", Version: v415}}),
		want: "; 7 samples the inventory no longer has are kept for their users, hidden from the catalog (annotation " + desired.RetiredAnnotation + "): " +
			"ImageStream b (retired in 4.15.0), ImageStream c (retired in 4.15.0), ImageStream d (retired in 4.15.0), ImageStream e (retired in 4.15.0), ImageStream f (retired in 4.15.0) and 2 more (`oc samples status` lists them all)",
	}, {
		name: "held-back samples",
		got:  HeldBackMessage([]string{"ImageStream/g", "ImageStream/f", "ImageStream/e", "ImageStream/d", "ImageStream/c", "ImageStream/b", "ImageStream/a"}),
		want: "; 7 samples keep being changed after each revert, so the operator reverts them again only once its budget allows (see the SampleRevertBudgetExceeded events): " +
			"ImageStream/a, ImageStream/b, ImageStream/c, ImageStream/d, ImageStream/e and 2 more (the SampleRevertBudgetExceeded events name them all)",
	}} {
		if tc.got != tc.want {
			t.Errorf("%s:\n%s\nwant\n%s", tc.name, tc.got, tc.want)
		}
	}
}

// Issue 56: hundreds of unusable samples and partial tags keep SamplesExist under a fixed size,
// and a verdict that changes on a sample past the named ones leaves it as it was (no status
// write), while one on a named sample, or a new one, does not.
func TestSamplesExistStaysShortAndStillWithManyUnusableSamples(t *testing.T) {
	const maxMessage = 2048
	exist := func(unusable []usability.Verdict) string {
		o := withCreds(Observed{Version: v416, Samples: 900, Unusable: unusable})
		o.Config, o.Now = installed(), t1
		st := Compute(o)
		return Condition(&st, samplesv1.SamplesExist).Message
	}
	many := append(unusableTemplates(400), partialTags(500)...)
	message := exist(many)
	if len(message) > maxMessage {
		t.Errorf("SamplesExist is %d bytes with 400 unusable samples and 500 partial tags, want at most %d:\n%s", len(message), maxMessage, message)
	}
	for _, want := range []string{"400 samples cannot work", "and 395 more", "500 imagestream tags", "and 495 more"} {
		if !strings.Contains(message, want) {
			t.Errorf("SamplesExist lacks %q: %s", want, message)
		}
	}

	pastNamed := slices.Clone(many)
	pastNamed[300].Reasons = []usability.Reason{{Code: usability.ImageSkipped, Message: "image openshift/ruby:3.3-ubi9 is skipped by the Config"}}
	pastNamed[700].MissingArchitectures = []string{"arm64", "s390x"}
	if got := exist(pastNamed); got != message {
		t.Errorf("a verdict changed past the named samples rewrote SamplesExist:\n%s\nwas\n%s", got, message)
	}
	named := slices.Clone(many)
	named[0].Reasons = pastNamed[300].Reasons
	if got := exist(named); got == message {
		t.Errorf("a verdict changed on a named sample left SamplesExist as it was: %s", got)
	}
	if got := exist(append(slices.Clone(many), unusableTemplates(401)[400])); got == message {
		t.Errorf("one more unusable sample left SamplesExist as it was: %s", got)
	}
}

// Issue 56: ImportImageErrorsExist names the first few failing imagestreams and counts the others.
func TestImportErrorsAreBounded(t *testing.T) {
	var failing []string
	for i := range 60 {
		failing = append(failing, fmt.Sprintf("stream-%02d", i))
	}
	o := withCreds(Observed{Version: v416, Samples: 60, ImportErrors: failing})
	o.Config, o.Now = installed(), t1
	st := Compute(o)
	want := "image imports failed for imagestreams stream-00, stream-01, stream-02, stream-03, stream-04 and 55 more (`oc samples status` lists them all): " +
		"each has a ConfigMap of the same name in openshift-cluster-samples-operator whose data gives the error per tag; the imports are retried"
	if c := Condition(&st, samplesv1.ImportImageErrorsExist); c.Message != want {
		t.Errorf("ImportImageErrorsExist = %q\nwant %q", c.Message, want)
	}
}

// TestAVerdictChangeIsNotProgress: samples that differ from what they should be only in their
// usability marks keep SamplesExist from saying installed only until the samples were installed
// at this version: an install, an upgrade and a refused write still count them, a verdict change
// on installed samples does not.
func TestAVerdictChangeIsNotProgress(t *testing.T) {
	refusing := step(installed(), Observed{Version: v415, Samples: 10, Pending: 2, Refused: quotaRefusals(2)}, t0)
	for _, tc := range []struct {
		name          string
		cfg           *samplesv1.Config
		observed      Observed
		want          int
		samplesExist  corev1.ConditionStatus
		samplesReason string
	}{
		{"installed, only marks pending", installed(), Observed{Version: v415, Samples: 10, Pending: 3, MarksPending: 3}, 0, corev1.ConditionTrue, ReasonInstalled},
		{"installed, marks and a repair pending", installed(), Observed{Version: v415, Samples: 10, Pending: 4, MarksPending: 3}, 1, corev1.ConditionTrue, ReasonUpdating},
		{"installed, a repair pending", installed(), Observed{Version: v415, Samples: 10, Pending: 1}, 1, corev1.ConditionTrue, ReasonUpdating},
		{"an upgrade, only marks pending", installed(), Observed{Version: v416, Samples: 10, Pending: 3, MarksPending: 3}, 3, corev1.ConditionTrue, ReasonUpdating},
		{"an install, only marks pending", config(operatorv1.Managed), Observed{Version: v415, Samples: 10, Pending: 3, MarksPending: 3}, 3, corev1.ConditionFalse, ReasonPending},
		{"an install under way, only marks pending", step(config(operatorv1.Managed), Observed{Version: v415, Samples: 10, Pending: 10}, t0), Observed{Version: v415, Samples: 10, Pending: 3, MarksPending: 3}, 3, corev1.ConditionFalse, ReasonPending},
		{"installed, marks refused", refusing, Observed{Version: v415, Samples: 10, Pending: 2, MarksPending: 2, Refused: quotaRefusals(2)}, 2, corev1.ConditionTrue, ReasonWritesRefused},
	} {
		t.Run(tc.name, func(t *testing.T) {
			o := tc.observed
			if got := Outstanding(&tc.cfg.Status, o); got != tc.want {
				t.Errorf("Outstanding = %d, want %d", got, tc.want)
			}
			st := step(tc.cfg, o, t1).Status
			if c := Condition(&st, samplesv1.SamplesExist); c.Status != tc.samplesExist || c.Reason != tc.samplesReason {
				t.Errorf("SamplesExist = %s %s (%s), want %s %s", c.Status, c.Reason, c.Message, tc.samplesExist, tc.samplesReason)
			}
		})
	}
}
