package integration

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	configv1 "github.com/openshift/api/config/v1"
	operatorv1 "github.com/openshift/api/operator/v1"
	samplesv1 "github.com/openshift/api/samples/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/sets"

	"github.com/samples-operator-dev/cluster-samples-operator/pkg/controller/ownwrites"
	"github.com/samples-operator-dev/cluster-samples-operator/pkg/desired"
	"github.com/samples-operator-dev/cluster-samples-operator/pkg/imports"
	"github.com/samples-operator-dev/cluster-samples-operator/test/controlplane"
)

// Upstream's e2e scenarios (test/e2e/cluster_samples_operator_test.go) that the other tests do
// not play: an upgrade while Removed and while Unmanaged (TestUpgradeRemoved,
// TestUpgradeUnmanaged), and the Config deleted three times in quick succession
// (TestRecreateConfigAfterDelete). What upstream reports is written out by hand from its
// behaviour, not taken from this operator's packages.

// TestUpgradeWhileRemovedOrUnmanaged: v1 installs the samples, an admin sets Removed (or
// Unmanaged), then an operator of v2 starts, as an upgrade does. As upstream, status.version moves
// to v2 at once (there is nothing to bring up to date) and the ClusterOperator reports v2, never
// before the Config does, with Available=True, Progressing=False and Degraded=False, each with
// reason Currently<State>, in every state it passes through. v2 writes no sample and imports
// nothing: Removed stays empty, Unmanaged keeps v1's samples as they are. Set Managed afterwards,
// the same operator installs v2: it was running, and held back only by the state.
//
// What v2 writes is recorded until it has converged and then for longer than anything it may
// still act on later (a resync, a retry, a grace).
//
// Mutations that fail it: the status controller keeping status.version until the samples carry
// it whatever the state (the version never moves); the samples controller treating Unmanaged as
// Managed (v1's samples rewritten to v2), or Removed as Managed (samples created), also when it
// does so only at a later look at a sample, a resync's seconds after its first.
func TestUpgradeWhileRemovedOrUnmanaged(t *testing.T) {
	parallelParent(t)
	for _, state := range []operatorv1.ManagementState{operatorv1.Removed, operatorv1.Unmanaged} {
		t.Run(string(state), func(t *testing.T) {
			parallel(t, aboutHalfAMinute)
			upgradeWhile(t, state)
		})
	}
}

func upgradeWhile(t *testing.T, state operatorv1.ManagementState) {
	e := newEnv(t)
	inv := x86Inventory(t)
	T, F := configv1.ConditionTrue, configv1.ConditionFalse
	reason := "Currently" + string(state)
	none := sets.New[string]()

	v1 := e.startOperator(defaultOptions())
	e.waitManaged(t, inv, "v1")
	e.updateConfig(func(c *samplesv1.Config) { c.Spec.ManagementState = state })
	eventuallyEvery(t, 20*time.Second, 200*time.Millisecond, func() (bool, string) {
		c := e.getConfig()
		left := len(e.managedSamples(t))
		return c.Status.ManagementState == state && conditionIs(c, samplesv1.RemovePending, "False") && (state != operatorv1.Removed || left == 0),
			fmt.Sprintf("status %q, RemovePending %v, %d managed samples left", c.Status.ManagementState, configCondition(c, samplesv1.RemovePending), left)
	})
	e.waitClusterOperator(t, T, F, F, reason, "v1")
	v1.stop(t)

	rec := e.recordUpgrade(t, "v2")
	upgraded := time.Now()
	opts := defaultOptions()
	opts.Version = "v2"
	// What v2 may do later on its own comes within seconds, not the defaults' ten minutes (the
	// informers' resync, which brings every sample back to the samples controller) and fifteen
	// (the retries of failed imports).
	opts.Resync, opts.ImportRetryInterval = time.Second, 2*time.Second
	e.startOperator(opts)
	// Converged: v2 has done all it has to in this state. The Config's status and the
	// ClusterOperator say v2, and so does the tag-to-image map; the samples are where v1 left
	// them (in the checks below: v2 must not touch them, so no sample is to carry v2).
	eventually(t, 20*time.Second, func() (bool, string) {
		c := e.getConfig()
		return c.Status.Version == "v2" && c.Status.ManagementState == state,
			fmt.Sprintf("status.version %q, status.managementState %q", c.Status.Version, c.Status.ManagementState)
	})
	e.waitClusterOperator(t, T, F, F, reason, "v2")
	eventually(t, 20*time.Second, func() (bool, string) {
		cm, err := e.configMap(imports.TagToImageName)
		if err != nil {
			return false, err.Error()
		}
		return cm.Annotations[desired.VersionAnnotation] == "v2", fmt.Sprintf("%s carries version %q", imports.TagToImageName, cm.Annotations[desired.VersionAnnotation])
	})
	// Then the record goes on for longer than anything v2 may still act on after waiting: a
	// resync, an import retry, the look a controller takes again at its own create once
	// ownwrites.Recheck has passed. (Longer waits follow only troubles: refused writes, unavailable
	// APIs, missing grants, none of which this test has.)
	longest := max(opts.Resync, opts.ImportRetryInterval, ownwrites.Recheck)
	idle(t, 2*longest)
	rec.stop()
	t.Logf("recorded until %s after the upgrade began: converged, then %s more", time.Since(upgraded).Round(100*time.Millisecond), 2*longest)

	// What v2 may write in these states: the Config's status and the ClusterOperator's, and the
	// tag-to-image map, which carries the operator's version in every state (docs/admin-guide.md). Not a
	// sample, not an import.
	allowed := sets.New("update configs/status cluster", "update clusteroperators/status openshift-samples", "update configmaps "+imports.TagToImageName)
	if bad := e.operatorRequests(t, stateWrites, not(on("leases")), receivedAfter(upgraded), func(ev controlplane.AuditEvent) bool {
		return !allowed.Has(byVerbAndResource(ev) + " " + ev.Name)
	}); len(bad) != 0 {
		t.Errorf("v2 wrote %d times while %s: %v", len(bad), state, describe(bad))
	}
	if len(rec.sampleAt) != 0 {
		t.Errorf("samples were written at v2 while %s: %v", state, rec.sampleAt)
	}
	for _, co := range rec.operators {
		at, version := revision(t, co), operatorVersion(co)
		for _, c := range co.Status.Conditions {
			want := map[configv1.ClusterStatusConditionType]configv1.ConditionStatus{
				configv1.OperatorAvailable: T, configv1.OperatorProgressing: F, configv1.OperatorDegraded: F}[c.Type]
			if want != "" && (c.Status != want || c.Reason != reason) {
				t.Errorf("ClusterOperator at revision %d: %s=%s (%s: %s), want %s (%s) throughout the upgrade", at, c.Type, c.Status, c.Reason, c.Message, want, reason)
			}
		}
		switch {
		case version != "v1" && version != "v2":
			t.Errorf("ClusterOperator at revision %d reported versions %v", at, co.Status.Versions)
		case version == "v2" && at < rec.configAt:
			t.Errorf("ClusterOperator reported v2 at revision %d, before the Config's status.version (revision %d)", at, rec.configAt)
		}
	}

	switch state {
	case operatorv1.Removed:
		if left := e.managedSamples(t); len(left) != 0 {
			t.Errorf("samples exist after the upgrade while Removed: %v", left)
		}
	case operatorv1.Unmanaged:
		if ok, why := e.samplesInPlace(inv, "v1", none, none); !ok {
			t.Errorf("v1's samples changed during the upgrade while Unmanaged: %s", why)
		}
	}

	e.updateConfig(func(c *samplesv1.Config) { c.Spec.ManagementState = operatorv1.Managed })
	e.waitManaged(t, inv, "v2")
	e.waitClusterOperator(t, T, F, F, "AsExpected", "v2")
}

// managedSamples is every imagestream and template in openshift labelled managed=true, as
// "imagestreams/python" (byObject's keys), with its creation time.
func (e *env) managedSamples(t *testing.T) map[string]metav1.Time {
	t.Helper()
	ctx := context.Background()
	owned := metav1.ListOptions{LabelSelector: desired.ManagedLabel + "=true"}
	out := map[string]metav1.Time{}
	streams, err := e.images.ImageV1().ImageStreams("openshift").List(ctx, owned)
	if err != nil {
		t.Fatalf("listing imagestreams: %v", err)
	}
	for _, is := range streams.Items {
		out["imagestreams/"+is.Name] = is.CreationTimestamp
	}
	templates, err := e.tmpl.TemplateV1().Templates("openshift").List(ctx, owned)
	if err != nil {
		t.Fatalf("listing templates: %v", err)
	}
	for _, tp := range templates.Items {
		out["templates/"+tp.Name] = tp.CreationTimestamp
	}
	return out
}

// operatorConfigMaps is the ConfigMaps of the operator namespace by name, with their creation times.
func (e *env) operatorConfigMaps(t *testing.T) map[string]metav1.Time {
	t.Helper()
	list, err := e.kube.CoreV1().ConfigMaps(operatorNamespace).List(context.Background(), metav1.ListOptions{})
	if err != nil {
		t.Fatalf("listing the ConfigMaps of %s: %v", operatorNamespace, err)
	}
	out := map[string]metav1.Time{}
	for _, cm := range list.Items {
		out[cm.Name] = cm.CreationTimestamp
	}
	return out
}

// TestConfigDeletedThriceInQuickSuccession plays upstream's TestRecreateConfigAfterDelete: the
// Config is deleted, the first time during the initial install, and each time again as soon as
// the operator has created the next one. Each deletion must run its course as upstream's does:
// the operator deletes the managed samples and the import error ConfigMaps of that Config's life
// (the finalizer holds the Config until then), removes the finalizer, then creates a new
// default Config and installs every sample again. In the end: one Config, cluster, with its
// finalizer, the one the operator created last; every sample once, created during that
// Config's life; the operator namespace holding only what it held before, the tag-to-image map
// and the import error record of the current life. The operator's audited requests show each
// life: each sample created at most once in it and deleted in it unless it is the last, every
// sample created exactly once in the last, no sample ever updated, one finalizer removal per
// deleted Config and no other write of a Config's metadata or spec.
//
// That the first deletion comes during the install is made so, not hoped for: a ResourceQuota
// in openshift leaves room for all but one imagestream until the first deletion (on a machine
// whose cores were busy the operator once created all 21 samples before the test deleted).
//
// Mutations that fail it: the bootstrap controller not creating a new Config after a deletion
// (none comes). A finalizer dropped before the samples or the import error records are gone
// fails it only when the operator's deletions happen to be slower than the finalizer's update:
// TestADeletedConfigIsHeldUntilItsLastSampleAndImportRecordAreGone holds one back and fails
// every time.
func TestConfigDeletedThriceInQuickSuccession(t *testing.T) {
	parallel(t, aboutHalfAMinute)
	e := newEnv(t)
	inv := x86Inventory(t)
	ctx := context.Background()
	// A failing import gives each life that gets as far an import error record to clean up.
	python, _ := inv.ImageStream("python")
	e.importer.FailReference(python.Spec.Tags[0].From.Name, "manifest unknown")
	before := e.operatorConfigMaps(t)
	samples := len(inv.ImageStreamNames()) + len(inv.TemplateNames())
	e.forbiddenOnlyByQuota(t)
	e.limitImageStreams(t, len(inv.ImageStreamNames())-1)

	e.startOperator(defaultOptions())
	sampleCreates := func(filters ...requestFilter) []controlplane.AuditEvent {
		return e.operatorRequests(t, append([]requestFilter{verb("create"), onSamples, carriedOut}, filters...)...)
	}
	eventually(t, 20*time.Second, func() (bool, string) {
		return len(sampleCreates()) > 0, "the operator has created no sample yet"
	})

	// Each deletion names the Config it means (a precondition on its uid), and the next one waits
	// for the Config the operator creates after it.
	var lives []types.UID
	var deleted []time.Time
	for i := 0; i < 4; i++ {
		var cfg *samplesv1.Config
		eventually(t, 20*time.Second, func() (bool, string) {
			var err error
			cfg, err = e.samples.SamplesV1().Configs().Get(ctx, "cluster", metav1.GetOptions{})
			if err != nil {
				return false, err.Error()
			}
			return !slices.Contains(lives, cfg.UID), fmt.Sprintf("no new Config after %d deletions", i)
		})
		lives = append(lives, cfg.UID)
		if i == 3 {
			break
		}
		deleted = append(deleted, time.Now())
		if err := e.samples.SamplesV1().Configs().Delete(ctx, "cluster", metav1.DeleteOptions{Preconditions: &metav1.Preconditions{UID: &cfg.UID}}); err != nil {
			t.Fatalf("deletion %d: %v", i+1, err)
		}
		if i == 0 {
			if err := e.kube.CoreV1().ResourceQuotas("openshift").Delete(ctx, "samples", metav1.DeleteOptions{}); err != nil {
				t.Fatal(err)
			}
		}
	}
	if n := len(sampleCreates(receivedBefore(deleted[0]))); n >= samples {
		t.Errorf("the first deletion came after the initial install had created all %d samples", n)
	}

	e.waitManaged(t, inv, "v1")
	eventually(t, 30*time.Second, func() (bool, string) {
		_, ok := e.operatorConfigMaps(t)["python"]
		return ok, "python's import error record is not there"
	})
	e.waitClusterOperator(t, configv1.ConditionTrue, configv1.ConditionFalse, configv1.ConditionFalse, "", "v1")
	e.waitQuiet(t, time.Second)

	// The state: one Config, the last one the operator created, as upstream's "Samples added".
	configs, err := e.samples.SamplesV1().Configs().List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(configs.Items) != 1 {
		t.Fatalf("%d Configs after the deletions, want 1", len(configs.Items))
	}
	cfg := configs.Items[0]
	if cfg.Name != "cluster" || cfg.UID != lives[3] || cfg.DeletionTimestamp != nil ||
		!slices.Equal(cfg.Finalizers, []string{samplesv1.ConfigFinalizer}) || cfg.Spec.ManagementState != operatorv1.Managed {
		t.Errorf("the Config left: %s uid %s (the Configs: %v), deletionTimestamp %v, finalizers %v, managementState %q; want cluster, the last, not deleted, [%s], Managed",
			cfg.Name, cfg.UID, lives, cfg.DeletionTimestamp, cfg.Finalizers, cfg.Spec.ManagementState, samplesv1.ConfigFinalizer)
	}
	for cond, want := range map[samplesv1.ConfigConditionType]string{
		samplesv1.SamplesExist: "True", samplesv1.ConfigurationValid: "True", samplesv1.ImportCredentialsExist: "True", samplesv1.ImageChangesInProgress: "False",
	} {
		if !conditionIs(&cfg, cond, want) {
			t.Errorf("%s = %+v, want %s", cond, configCondition(&cfg, cond), want)
		}
	}
	want := sets.New[string]()
	for _, name := range inv.ImageStreamNames() {
		want.Insert("imagestreams/" + name)
	}
	for _, name := range inv.TemplateNames() {
		want.Insert("templates/" + name)
	}
	live := e.managedSamples(t)
	if got := sets.KeySet(live); !got.Equal(want) {
		t.Errorf("managed samples: extra %v, missing %v", sets.List(got.Difference(want)), sets.List(want.Difference(got)))
	}
	for key, created := range live {
		if created.Before(&cfg.CreationTimestamp) {
			t.Errorf("%s was created at %s, before the last Config (%s): left over from an earlier life", key, created, cfg.CreationTimestamp)
		}
	}
	cms := e.operatorConfigMaps(t)
	wantCMs := sets.KeySet(before).Insert(imports.TagToImageName, "python")
	if got := sets.KeySet(cms); !got.Equal(wantCMs) {
		t.Errorf("ConfigMaps in %s: extra %v, missing %v", operatorNamespace, sets.List(got.Difference(wantCMs)), sets.List(wantCMs.Difference(got)))
	}
	if created := cms["python"]; created.Before(&cfg.CreationTimestamp) {
		t.Errorf("python's import error record was created at %s, before the last Config (%s)", created, cfg.CreationTimestamp)
	}

	// The lives, from the operator's requests: life i runs from the API server's receipt of the
	// operator's i-th create of a Config to that of the next. Receipt, not completion: the server
	// sends the new Config to watchers before it logs the create's response, so under load a
	// sample create of the new life can be received before the Config create's completion is
	// logged. A request that follows from a Config cannot be received before the Config's create
	// was, and every request of an earlier life is received before it: the finalizer holds the
	// Config until its samples are gone, and the next Config is created only after it went.
	var born, bornLogged []time.Time
	for _, ev := range e.operatorRequests(t, verb("create"), on("configs"), carriedOut) {
		born = append(born, ev.Received)
		bornLogged = append(bornLogged, ev.Time)
	}
	if len(born) != 4 {
		t.Fatalf("the operator created %d Configs, want 4: the first and one after each deletion", len(born))
	}
	for i := range born {
		var first time.Time
		for _, ev := range sampleCreates(receivedAfter(born[i])) {
			if first.IsZero() || ev.Received.Before(first) {
				first = ev.Received
			}
		}
		if !first.IsZero() {
			t.Logf("Config %d: create received %s, its completion logged %s later, the first sample create after it received %s later",
				i+1, born[i].Format(time.StampMicro), bornLogged[i].Sub(born[i]), first.Sub(born[i]))
		}
	}
	lifeOf := func(ev controlplane.AuditEvent) int {
		life := -1
		for i, at := range born {
			if ev.Received.After(at) {
				life = i
			}
		}
		return life
	}
	type count struct{ created, deleted int }
	perLife := make([]map[string]*count, len(born))
	for i := range perLife {
		perLife[i] = map[string]*count{}
	}
	for _, ev := range e.operatorRequests(t, verb("create", "delete"), carriedOut, func(ev controlplane.AuditEvent) bool {
		return onSamples(ev) || ev.Resource == "configmaps" && ev.Name == "python"
	}) {
		life := lifeOf(ev)
		if life < 0 {
			t.Errorf("the operator wrote before it created a Config: %s", describe([]controlplane.AuditEvent{ev})[0])
			continue
		}
		c := perLife[life][byObject(ev)]
		if c == nil {
			c = &count{}
			perLife[life][byObject(ev)] = c
		}
		if ev.Verb == "create" {
			c.created++
		} else {
			c.deleted++
		}
	}
	for life, objects := range perLife {
		last := life == len(perLife)-1
		for key, c := range objects {
			switch {
			case c.created > 1:
				t.Errorf("life %d: %s created %d times", life+1, key, c.created)
			case c.deleted > c.created:
				t.Errorf("life %d: %s deleted, not created in it: left over from an earlier life", life+1, key)
			case !last && c.deleted < c.created:
				t.Errorf("life %d: %s created, and not deleted before the next Config was created: left over", life+1, key)
			case last && c.deleted != 0:
				t.Errorf("the last life: %s deleted %d times", key, c.deleted)
			}
		}
		if last {
			for key := range want.Clone().Insert("configmaps/python") {
				if c := objects[key]; c == nil || c.created != 1 {
					t.Errorf("the last life did not create %s once: %+v", key, c)
				}
			}
		}
		t.Logf("life %d: %d objects created", life+1, len(objects))
	}
	if updates := e.operatorRequests(t, verb("update", "patch"), onSamples); len(updates) != 0 {
		t.Errorf("the operator updated samples it had just created: %v", describe(updates))
	}
	// The finalizer: removed once per deleted Config, by the operator, after that deletion and
	// before the next Config. Nothing else of a Config's metadata or spec is the operator's to write.
	metadataWrites := e.operatorRequests(t, verb("update", "patch"), on("configs"), noSubresource, carriedOut)
	if len(metadataWrites) != len(deleted) {
		t.Errorf("the operator wrote Configs (not their status) %d times, want %d finalizer removals: %v", len(metadataWrites), len(deleted), describe(metadataWrites))
	} else {
		for i, ev := range metadataWrites {
			if ev.Received.Before(deleted[i]) || !ev.Received.Before(born[i+1]) {
				t.Errorf("finalizer removal %d at %s, want after deletion %d (%s) and before Config %d (%s)",
					i+1, ev.Received.Format(time.StampMicro), i+1, deleted[i].Format(time.StampMicro), i+2, born[i+1].Format(time.StampMicro))
			}
		}
	}
	tagMap := e.operatorRequests(t, stateWrites, on("configmaps"), named(imports.TagToImageName), carriedOut)
	if len(tagMap) != 1 || tagMap[0].Verb != "create" {
		t.Errorf("the tag-to-image map was written %v, want one create", describe(tagMap))
	}
	if other := e.operatorRequests(t, stateWrites, on("configmaps"), not(named("python")), not(named(imports.TagToImageName))); len(other) != 0 {
		t.Errorf("the operator wrote other ConfigMaps: %v", describe(other))
	}
}
