package bootstrapstate

import (
	"errors"
	"maps"
	"slices"
	"strings"
	"testing"
	"time"

	operatorv1 "github.com/openshift/api/operator/v1"
	samplesv1 "github.com/openshift/api/samples/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/samples-operator-dev/cluster-samples-operator/pkg/configspec"
	"github.com/samples-operator-dev/cluster-samples-operator/pkg/inventory"
	"github.com/samples-operator-dev/cluster-samples-operator/pkg/names"
)

func TestDefaultConfig(t *testing.T) {
	cases := []struct {
		name      string
		goarch    string
		decision  configspec.BootstrapDecision
		wantArchs []string
		wantAnno  map[string]string
	}{
		{
			name: "Managed on amd64", goarch: "amd64",
			decision:  configspec.BootstrapDecision{State: operatorv1.Managed},
			wantArchs: []string{"x86_64"},
		},
		{
			name: "Managed on arm64", goarch: "arm64",
			decision:  configspec.BootstrapDecision{State: operatorv1.Managed},
			wantArchs: []string{"arm64"},
		},
		{
			name: "an unprobed Managed decision has no annotations", goarch: "ppc64le",
			decision:  configspec.BootstrapDecision{State: operatorv1.Managed, ProbeRegistry: true},
			wantArchs: []string{"ppc64le"},
		},
		{
			name: "Removed with a reason", goarch: "s390x",
			decision:  configspec.BootstrapDecision{State: operatorv1.Removed, Reason: configspec.ReasonRegistryUnreachable, Message: "unreachable"},
			wantArchs: []string{"s390x"},
			wantAnno:  map[string]string{ReasonAnnotation: configspec.ReasonRegistryUnreachable, MessageAnnotation: "unreachable", AwaitingAnnotation: "true"},
		},
		{
			name: "unknown GOARCH leaves architectures empty", goarch: "riscv64",
			decision: configspec.DecideBootstrap(configspec.BootstrapFacts{GOARCH: "riscv64"}),
			wantAnno: map[string]string{ReasonAnnotation: configspec.ReasonNoInventory, MessageAnnotation: `this operator ships no samples for the cluster's architecture "riscv64"`},
		},
		{
			name: "Removed without a reason has no annotations", goarch: "amd64",
			decision:  configspec.BootstrapDecision{State: operatorv1.Removed},
			wantArchs: []string{"x86_64"},
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			cfg := DefaultConfig(tc.goarch, tc.decision)
			if cfg.Name != "cluster" {
				t.Errorf("name %q, want cluster", cfg.Name)
			}
			if cfg.Namespace != "" {
				t.Errorf("namespace %q, want none (cluster-scoped)", cfg.Namespace)
			}
			if !slices.Equal(cfg.Finalizers, []string{"samples.operator.openshift.io/finalizer"}) {
				t.Errorf("finalizers %q", cfg.Finalizers)
			}
			if cfg.Spec.ManagementState != tc.decision.State {
				t.Errorf("managementState %q, want %q", cfg.Spec.ManagementState, tc.decision.State)
			}
			if !slices.Equal(cfg.Spec.Architectures, tc.wantArchs) {
				t.Errorf("architectures %q, want %q", cfg.Spec.Architectures, tc.wantArchs)
			}
			if cfg.Spec.SkippedImagestreams == nil || len(cfg.Spec.SkippedImagestreams) != 0 ||
				cfg.Spec.SkippedTemplates == nil || len(cfg.Spec.SkippedTemplates) != 0 {
				t.Errorf("skip lists %#v %#v, want empty and non-nil", cfg.Spec.SkippedImagestreams, cfg.Spec.SkippedTemplates)
			}
			if cfg.Spec.SamplesRegistry != "" {
				t.Errorf("samplesRegistry %q", cfg.Spec.SamplesRegistry)
			}
			if !maps.Equal(cfg.Annotations, tc.wantAnno) {
				t.Errorf("annotations %q, want %q", cfg.Annotations, tc.wantAnno)
			}
			if tc.wantAnno == nil && cfg.Annotations != nil {
				t.Errorf("annotations %#v, want nil", cfg.Annotations)
			}

			// The default Config validates whenever it names an architecture.
			if len(tc.wantArchs) > 0 {
				if v := configspec.Validate(cfg, configspec.Environment{HasInventory: func(string) bool { return true }, ValidateRegistry: inventory.ValidateRegistry}); v.Err != nil || v.Warnings != nil {
					t.Errorf("Validate(default Config) = %v, %q", v.Err, v.Warnings)
				}
			}
			// It round-trips through BootstrapRemoval.
			reason, message, ok := Of(cfg).Removal()
			wantOK := tc.decision.State == operatorv1.Removed && tc.decision.Reason != ""
			if ok != wantOK || reason != tc.wantAnno[ReasonAnnotation] || message != tc.wantAnno[MessageAnnotation] {
				t.Errorf("BootstrapRemoval = %q, %q, %v; want %q, %q, %v", reason, message, ok,
					tc.wantAnno[ReasonAnnotation], tc.wantAnno[MessageAnnotation], wantOK)
			}
		})
	}
}

func TestRemoval(t *testing.T) {
	anno := func(reason, message string) map[string]string {
		return map[string]string{ReasonAnnotation: reason, MessageAnnotation: message}
	}
	cases := []struct {
		name                    string
		state                   operatorv1.ManagementState
		annotations             map[string]string
		wantReason, wantMessage string
		wantOK                  bool
	}{
		{name: "Removed by bootstrap", state: operatorv1.Removed, annotations: anno(configspec.ReasonIPv6Only, "ipv6 only"), wantReason: configspec.ReasonIPv6Only, wantMessage: "ipv6 only", wantOK: true},
		{name: "reason without message", state: operatorv1.Removed, annotations: map[string]string{ReasonAnnotation: configspec.ReasonNoInventory}, wantReason: configspec.ReasonNoInventory, wantOK: true},
		{name: "admin set Managed since", state: operatorv1.Managed, annotations: anno(configspec.ReasonIPv6Only, "ipv6 only")},
		{name: "admin set Unmanaged since", state: operatorv1.Unmanaged, annotations: anno(configspec.ReasonIPv6Only, "ipv6 only")},
		{name: "empty state", state: "", annotations: anno(configspec.ReasonIPv6Only, "ipv6 only")},
		{name: "Removed by the admin", state: operatorv1.Removed},
		{name: "Removed with other annotations", state: operatorv1.Removed, annotations: map[string]string{"a": "b"}},
		{name: "Removed with an empty reason", state: operatorv1.Removed, annotations: anno("", "message")},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			cfg := &samplesv1.Config{
				ObjectMeta: metav1.ObjectMeta{Name: names.ConfigName, Annotations: tc.annotations},
				Spec:       samplesv1.ConfigSpec{ManagementState: tc.state},
			}
			reason, message, ok := Of(cfg).Removal()
			if reason != tc.wantReason || message != tc.wantMessage || ok != tc.wantOK {
				t.Errorf("BootstrapRemoval = %q, %q, %v; want %q, %q, %v", reason, message, ok, tc.wantReason, tc.wantMessage, tc.wantOK)
			}
		})
	}
}

func TestAwaitingRegistry(t *testing.T) {
	unreachable := DefaultConfig("amd64", configspec.BootstrapDecision{ProbeRegistry: true}.AfterProbe("registry.redhat.io:443", errors.New("timeout")))
	unreachable.Generation = 1
	edit := func(f func(*samplesv1.Config)) *samplesv1.Config { c := unreachable.DeepCopy(); f(c); return c }
	now := metav1.Now()
	for _, tc := range []struct {
		name string
		cfg  *samplesv1.Config
		want bool
	}{
		{"created Removed because the registry did not answer", unreachable, true},
		{"an admin's label only (no spec change)", edit(func(c *samplesv1.Config) { c.Labels = map[string]string{"team": "x"} }), true},
		{"any spec change by an admin (generation 2)", edit(func(c *samplesv1.Config) { c.Generation = 2 }), false},
		{"an admin set it back to exactly the default (generation 3)", edit(func(c *samplesv1.Config) { c.Generation = 3 }), false},
		{"Managed", edit(func(c *samplesv1.Config) { c.Spec.ManagementState = operatorv1.Managed }), false},
		{"removed at install for another reason", edit(func(c *samplesv1.Config) {
			c.Annotations = map[string]string{ReasonAnnotation: configspec.ReasonIPv6Only, MessageAnnotation: "ipv6 only"}
		}), false},
		{"a later look found another gate", func() *samplesv1.Config {
			c, _ := StillRemoved(unreachable, configspec.ReasonImageConfigBlocks, "the allow-list refuses registry.redhat.io")
			return c
		}(), true},
		{"written before the awaiting annotation", edit(func(c *samplesv1.Config) { delete(c.Annotations, AwaitingAnnotation) }), true},
		{"created Removed by an admin (no bootstrap reason)", edit(func(c *samplesv1.Config) { c.Annotations = nil }), false},
		{"being deleted", edit(func(c *samplesv1.Config) { c.DeletionTimestamp = &now }), false},
	} {
		if got := Of(tc.cfg).AwaitingRegistry(); got != tc.want {
			t.Errorf("%s: AwaitingRegistry = %v, want %v", tc.name, got, tc.want)
		}
	}
}

// TestStillRemovedNamesTheGateOfTheLatestLook: a Config awaiting its registry says what keeps
// the samples out now (an allow-list added since install, say), not what did at install; a look
// that finds the same cause writes nothing.
func TestStillRemovedNamesTheGateOfTheLatestLook(t *testing.T) {
	unreachable := DefaultConfig("amd64", configspec.BootstrapDecision{ProbeRegistry: true}.AfterProbe("registry.redhat.io:443", errors.New("timeout")))
	unreachable.Generation = 1
	if _, changed := StillRemoved(unreachable, unreachable.Annotations[ReasonAnnotation], unreachable.Annotations[MessageAnnotation]); changed {
		t.Error("the same cause again is a change")
	}
	// The same gate, met with another error, is news: the message says what the latest look saw.
	again, changed := StillRemoved(unreachable, unreachable.Annotations[ReasonAnnotation], "registry.redhat.io:443: connection refused")
	if !changed || again.Annotations[MessageAnnotation] != "registry.redhat.io:443: connection refused" {
		t.Errorf("the same reason with a new message: changed %v, message %q", changed, again.Annotations[MessageAnnotation])
	}
	blocked, changed := StillRemoved(unreachable, configspec.ReasonImageConfigBlocks, "the allow-list refuses registry.redhat.io")
	if !changed || unreachable.Annotations[ReasonAnnotation] != configspec.ReasonRegistryUnreachable {
		t.Fatalf("changed %v; the input's reason %q", changed, unreachable.Annotations[ReasonAnnotation])
	}
	reason, message, ok := Of(blocked).Removal()
	if !ok || reason != configspec.ReasonImageConfigBlocks || message != "the allow-list refuses registry.redhat.io" {
		t.Errorf("Removal = %q, %q, %v", reason, message, ok)
	}
	if Of(blocked).Stale() {
		t.Error("the annotations of a Config awaiting its registry are stale")
	}
	switched := SwitchedToManaged(blocked, "registry.redhat.io:443", false, time.Now())
	if _, still := switched.Annotations[AwaitingAnnotation]; still || Of(switched).AwaitingRegistry() {
		t.Errorf("still awaiting after the switch: %v", switched.Annotations)
	}
}

func TestSwitchedToManaged(t *testing.T) {
	cfg := DefaultConfig("amd64", configspec.BootstrapDecision{ProbeRegistry: true}.AfterProbe("registry.redhat.io:443", errors.New("timeout")))
	cfg.Generation = 1
	at := time.Date(2026, 11, 23, 10, 0, 0, 0, time.UTC)
	out := SwitchedToManaged(cfg, "registry.redhat.io:443", false, at)
	if cfg.Spec.ManagementState != operatorv1.Removed {
		t.Fatalf("the input was changed")
	}
	if out.Spec.ManagementState != operatorv1.Managed || out.Annotations[ReasonAnnotation] != configspec.ReasonRegistryReachable {
		t.Fatalf("switched Config: %s %v", out.Spec.ManagementState, out.Annotations)
	}
	out.Generation = 2 // the switch
	msg, ok := Of(out).SwitchedByRegistry()
	if !ok || !strings.Contains(msg, "registry.redhat.io:443") || !strings.Contains(msg, "2026-11-23T10:00:00Z") {
		t.Errorf("SwitchedByRegistry = %q, %v", msg, ok)
	}
	if _, _, ok := Of(out).Removal(); ok {
		t.Errorf("a Managed Config reports a bootstrap removal")
	}
	out.Generation = 3 // an admin's edit after the switch
	if _, ok := Of(out).SwitchedByRegistry(); ok {
		t.Errorf("the switch is still reported after an admin's edit")
	}
}

// managedBy is a managedFields entry of manager owning these fields of the main resource (or of
// a subresource).
func managedBy(manager, subresource, fields string) metav1.ManagedFieldsEntry {
	return metav1.ManagedFieldsEntry{Manager: manager, Operation: metav1.ManagedFieldsOperationUpdate, APIVersion: "samples.operator.openshift.io/v1",
		FieldsType: "FieldsV1", FieldsV1: &metav1.FieldsV1{Raw: []byte(fields)}, Subresource: subresource}
}

const (
	operatorCreate = `{"f:metadata":{"f:annotations":{".":{},"f:samples.operator.openshift.io/bootstrap-message":{},"f:samples.operator.openshift.io/bootstrap-reason":{}},"f:finalizers":{".":{},"v:\"samples.operator.openshift.io/finalizer\"":{}}},"f:spec":{".":{},"f:architectures":{},"f:managementState":{},"f:skippedImagestreams":{},"f:skippedTemplates":{}}}`
	specState      = `{"f:spec":{"f:managementState":{}}}`
	labelsOnly     = `{"f:metadata":{"f:labels":{".":{},"f:team":{}}}}`
	statusFields   = `{"f:status":{".":{},"f:conditions":{}}}`
)

// TestWhoSetTheSpecDecides: an admin or a tool that sets the spec, even to the value it had (a
// re-apply changes no generation), has decided; the operator never overrules it.
func TestWhoSetTheSpecDecides(t *testing.T) {
	unreachable := DefaultConfig("amd64", configspec.BootstrapDecision{ProbeRegistry: true}.AfterProbe("registry.redhat.io:443", errors.New("timeout")))
	unreachable.Generation = 1
	unreachable.ManagedFields = []metav1.ManagedFieldsEntry{managedBy(FieldManager, "", operatorCreate), managedBy(FieldManager, "status", statusFields)}
	with := func(f func(*samplesv1.Config)) *samplesv1.Config { c := unreachable.DeepCopy(); f(c); return c }
	for _, tc := range []struct {
		name     string
		cfg      *samplesv1.Config
		awaiting bool
	}{
		{"as the operator created it", unreachable, true},
		{"an admin's label", with(func(c *samplesv1.Config) {
			c.ManagedFields = append(c.ManagedFields, managedBy("kubectl-edit", "", labelsOnly))
		}), true},
		{"a monitoring tool writing status", with(func(c *samplesv1.Config) {
			c.ManagedFields = append(c.ManagedFields, managedBy("someone", "status", statusFields))
		}), true},
		{"a GitOps tool re-applying Removed server-side (generation unchanged)", with(func(c *samplesv1.Config) {
			c.ManagedFields = append(c.ManagedFields, metav1.ManagedFieldsEntry{Manager: "argocd-controller", Operation: metav1.ManagedFieldsOperationApply,
				FieldsType: "FieldsV1", FieldsV1: &metav1.FieldsV1{Raw: []byte(specState)}})
		}), false},
		{"an admin's client-side apply of Removed (generation unchanged)", with(func(c *samplesv1.Config) {
			c.Annotations["kubectl.kubernetes.io/last-applied-configuration"] = `{"apiVersion":"samples.operator.openshift.io/v1","kind":"Config","metadata":{"name":"cluster"},"spec":{"managementState":"Removed"}}`
		}), false},
		{"a client-side apply of metadata only", with(func(c *samplesv1.Config) {
			c.Annotations["kubectl.kubernetes.io/last-applied-configuration"] = `{"metadata":{"labels":{"team":"x"}}}`
		}), true},
		{"an admin's oc edit of the skip list", with(func(c *samplesv1.Config) {
			c.ManagedFields = append(c.ManagedFields, managedBy("kubectl-edit", "", `{"f:spec":{"f:skippedImagestreams":{}}}`))
			c.Generation = 2
		}), false},
		{"unreadable managedFields", with(func(c *samplesv1.Config) {
			c.ManagedFields = append(c.ManagedFields, managedBy("x", "", `not json`))
		}), false},
	} {
		state := Of(tc.cfg)
		if got := state.AwaitingRegistry(); got != tc.awaiting {
			t.Errorf("%s: AwaitingRegistry = %v, want %v", tc.name, got, tc.awaiting)
		}
		// While awaiting, the Removed is the operator's and says why; once someone else set the
		// spec, the Removed is theirs and the annotations are stale.
		if _, _, removal := state.Removal(); removal != tc.awaiting || state.Stale() == tc.awaiting {
			t.Errorf("%s: Removal %v, Stale %v", tc.name, removal, state.Stale())
		}
	}
}

// TestAnAdminsRemovedAfterTheSwitchIsTheAdmins: after the operator switched to Managed, an
// admin's Removed is not reported as anything the registry did.
func TestAnAdminsRemovedAfterTheSwitchIsTheAdmins(t *testing.T) {
	cfg := DefaultConfig("amd64", configspec.BootstrapDecision{ProbeRegistry: true}.AfterProbe("registry.redhat.io:443", errors.New("timeout")))
	cfg.ManagedFields = []metav1.ManagedFieldsEntry{managedBy(FieldManager, "", operatorCreate)}
	switched := SwitchedToManaged(cfg, "registry.redhat.io:443", false, time.Date(2026, 11, 25, 10, 0, 0, 0, time.UTC))
	if _, ok := Of(switched).SwitchedByRegistry(); !ok || Of(switched).Stale() {
		t.Fatalf("the operator's switch is not reported")
	}
	removed := switched.DeepCopy()
	removed.Spec.ManagementState = operatorv1.Removed
	removed.ManagedFields = append(removed.ManagedFields, managedBy("kubectl-edit", "", specState))
	state := Of(removed)
	if reason, _, ok := state.Removal(); ok {
		t.Errorf("an admin's Removed is reported as the operator's (%s)", reason)
	}
	if _, ok := state.SwitchedByRegistry(); ok {
		t.Error("an admin's Removed still says RegistryReachable")
	}
	if !state.Stale() {
		t.Error("the annotations are not dropped")
	}
	// Even without managedFields: a Removed after the switch is not the operator's.
	removed.ManagedFields = nil
	if _, _, ok := Of(removed).Removal(); ok {
		t.Error("without managedFields, a Removed after the switch is reported as the operator's")
	}
}

func TestSwitchedByAProxySaysSo(t *testing.T) {
	cfg := DefaultConfig("amd64", configspec.BootstrapDecision{ProbeRegistry: true}.AfterProbe("registry.redhat.io:443", errors.New("timeout")))
	msg, ok := Of(SwitchedToManaged(cfg, "registry.redhat.io:443", true, time.Now())).SwitchedByRegistry()
	if !ok || !strings.Contains(msg, "cluster proxy") {
		t.Errorf("SwitchedByRegistry = %q, %v", msg, ok)
	}
}

// TestThroughMirrorSets: a Config created Managed, or switched to Managed, because the mirrors of
// the cluster's mirror sets answered says so for as long as it is the operator's Managed; an
// admin's edit of the spec makes it the admin's, and the annotations stale.
func TestThroughMirrorSets(t *testing.T) {
	decision := configspec.BootstrapDecision{State: operatorv1.Managed, Reason: configspec.ReasonThroughMirrorSets, Message: "imported through the cluster's mirror sets (ImageTagMirrorSet/rh)"}
	created := DefaultConfig("amd64", decision)
	created.Generation = 1
	created.ManagedFields = []metav1.ManagedFieldsEntry{managedBy(FieldManager, "", operatorCreate)}
	if created.Spec.ManagementState != operatorv1.Managed || created.Annotations[ReasonAnnotation] != configspec.ReasonThroughMirrorSets {
		t.Fatalf("created: %s %v", created.Spec.ManagementState, created.Annotations)
	}
	if msg, ok := Of(created).ThroughMirrorSets(); !ok || msg != decision.Message {
		t.Errorf("ThroughMirrorSets = %q, %v", msg, ok)
	}
	if Of(created).Stale() || Of(created).AwaitingRegistry() {
		t.Errorf("a Config created through mirror sets is stale (%v) or awaiting its registry (%v)", Of(created).Stale(), Of(created).AwaitingRegistry())
	}
	if _, _, ok := Of(created).Removal(); ok {
		t.Errorf("a Config created through mirror sets reports a removal")
	}
	edited := created.DeepCopy()
	edited.ManagedFields = append(edited.ManagedFields, managedBy("kubectl-edit", "", `{"f:spec":{"f:skippedImagestreams":{}}}`))
	if _, ok := Of(edited).ThroughMirrorSets(); ok || !Of(edited).Stale() {
		t.Errorf("after an admin's edit: ThroughMirrorSets %v, Stale %v", ok, Of(edited).Stale())
	}

	unreachable := DefaultConfig("amd64", configspec.BootstrapDecision{ProbeRegistry: true}.AfterProbe("registry.redhat.io:443", errors.New("timeout")))
	unreachable.Generation = 1
	at := time.Date(2026, 11, 25, 23, 0, 0, 0, time.UTC)
	switched := SwitchedToManagedThroughMirrors(unreachable, decision, at)
	if unreachable.Spec.ManagementState != operatorv1.Removed {
		t.Fatalf("the input was changed")
	}
	switched.Generation = 2
	msg, ok := Of(switched).ThroughMirrorSets()
	if !ok || !strings.Contains(msg, "2026-11-25T23:00:00Z") || !strings.Contains(msg, "ImageTagMirrorSet/rh") || !strings.Contains(msg, "switched managementState to Managed") {
		t.Errorf("switched: ThroughMirrorSets = %q, %v", msg, ok)
	}
	if Of(switched).AwaitingRegistry() {
		t.Errorf("a switched Config still awaits its registry")
	}
}

// TestEachSwitchAnswersOnlyItsOwnQuestion: a Config the mirror sets made Managed is not one the
// registry's answer switched, nor the other way round (SamplesExist would give the wrong cause);
// a Config without bootstrap annotations has nothing stale to drop, and one being deleted keeps
// them until it is gone.
func TestEachSwitchAnswersOnlyItsOwnQuestion(t *testing.T) {
	unreachable := DefaultConfig("amd64", configspec.BootstrapDecision{ProbeRegistry: true}.AfterProbe("registry.redhat.io:443", errors.New("timeout")))
	at := time.Date(2026, 11, 23, 10, 0, 0, 0, time.UTC)
	byRegistry := SwitchedToManaged(unreachable, "registry.redhat.io:443", false, at)
	byRegistry.Generation = 2 // the switch
	byMirrors := SwitchedToManagedThroughMirrors(unreachable, configspec.BootstrapDecision{State: operatorv1.Managed, Reason: configspec.ReasonThroughMirrorSets, Message: "imported through the cluster's mirror sets"}, at)
	byMirrors.Generation = 2
	if _, ok := Of(byRegistry).ThroughMirrorSets(); ok {
		t.Error("a Config the registry's answer switched reports a switch through mirror sets")
	}
	if _, ok := Of(byMirrors).SwitchedByRegistry(); ok {
		t.Error("a Config the mirror sets switched reports a switch by the registry")
	}

	admins := &samplesv1.Config{ObjectMeta: metav1.ObjectMeta{Name: names.ConfigName, Generation: 1}, Spec: samplesv1.ConfigSpec{ManagementState: operatorv1.Removed}}
	if Of(admins).Stale() {
		t.Error("a Config without bootstrap annotations has stale ones")
	}
	now := metav1.Now()
	deleting := byRegistry.DeepCopy()
	deleting.Generation = 3 // an admin's edit: stale, were it not being deleted
	deleting.DeletionTimestamp = &now
	if Of(deleting).Stale() {
		t.Error("the annotations of a Config being deleted are stale")
	}
}

// The operator's annotations go beside the Config's others (an admin's, the payload's), never in
// place of them.
func TestTheBootstrapAnnotationsKeepTheOthers(t *testing.T) {
	cfg := DefaultConfig("amd64", configspec.BootstrapDecision{ProbeRegistry: true}.AfterProbe("registry.redhat.io:443", errors.New("timeout")))
	cfg.Annotations["team"] = "samples"
	at := time.Date(2026, 11, 23, 10, 0, 0, 0, time.UTC)
	still, _ := StillRemoved(cfg, configspec.ReasonImageConfigBlocks, "the allow-list refuses registry.redhat.io")
	mirrors := configspec.BootstrapDecision{State: operatorv1.Managed, Reason: configspec.ReasonThroughMirrorSets, Message: "imported through the cluster's mirror sets"}
	for name, out := range map[string]*samplesv1.Config{
		"StillRemoved":                    still,
		"SwitchedToManaged":               SwitchedToManaged(cfg, "registry.redhat.io:443", false, at),
		"SwitchedToManagedThroughMirrors": SwitchedToManagedThroughMirrors(cfg, mirrors, at),
	} {
		if out.Annotations["team"] != "samples" {
			t.Errorf("%s dropped the Config's other annotations: %v", name, out.Annotations)
		}
	}
}
