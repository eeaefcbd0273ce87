package integration

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	configv1 "github.com/openshift/api/config/v1"
	imagev1 "github.com/openshift/api/image/v1"
	samplesv1 "github.com/openshift/api/samples/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/sets"

	"github.com/samples-operator-dev/cluster-samples-operator/pkg/inventory"
)

// setImportAllowList sets images.config.openshift.io/cluster spec.allowedRegistriesForImport.
func (e *env) setImportAllowList(t *testing.T, domains ...string) {
	t.Helper()
	ctx := context.Background()
	var allowed []configv1.RegistryLocation
	for _, d := range domains {
		allowed = append(allowed, configv1.RegistryLocation{DomainName: d})
	}
	// On a cluster the operator sees the new list at once and openshift-apiserver only once its
	// operator has rolled it out: until then the server refuses what the old list left out. The
	// stand-in enforces the new list at once; the real server here is first given both lists, so
	// that it refuses nothing either the old or the new one allows, and the new one after.
	if img, err := e.config.ConfigV1().Images().Get(ctx, "cluster", metav1.GetOptions{}); err == nil && img.Spec.AllowedRegistriesForImport != nil {
		if err := e.cp.RolloutAllowedRegistriesForImport(ctx, append(slices.Clone(img.Spec.AllowedRegistriesForImport), allowed...)); err != nil {
			t.Fatalf("rolling out the union of the old and new allow-lists to openshift-apiserver: %v", err)
		}
	}
	for i := 0; ; i++ {
		img, err := e.config.ConfigV1().Images().Get(ctx, "cluster", metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			img = &configv1.Image{ObjectMeta: metav1.ObjectMeta{Name: "cluster"}, Spec: configv1.ImageSpec{AllowedRegistriesForImport: allowed}}
			if _, err = e.config.ConfigV1().Images().Create(ctx, img, metav1.CreateOptions{}); err == nil {
				break
			}
		} else if err == nil {
			img.Spec.AllowedRegistriesForImport = allowed
			if _, err = e.config.ConfigV1().Images().Update(ctx, img, metav1.UpdateOptions{}); err == nil {
				break
			}
		}
		if i > 10 {
			t.Fatalf("setting the import allow-list: %v", err)
		}
	}
	// On a cluster openshift-apiserver's operator hands the list to the server.
	if err := e.cp.RolloutImageConfig(ctx); err != nil {
		t.Fatalf("rolling the Image config out to openshift-apiserver: %v", err)
	}
}

// streamsFrom names the inventory's imagestreams with a DockerImage tag on a registry in hosts.
func streamsFrom(inv *inventory.Inventory, hosts ...string) sets.Set[string] {
	out := sets.New[string]()
	for _, name := range inv.ImageStreamNames() {
		is, _ := inv.ImageStream(name)
		for _, tag := range is.Spec.Tags {
			if tag.From != nil && tag.From.Kind == "DockerImage" && slices.Contains(hosts, strings.SplitN(tag.From.Name, "/", 2)[0]) {
				out.Insert(name)
			}
		}
	}
	return out
}

// TestRestrictedImportAllowListInstallsWhatItAllows: a cluster that allows imports from
// registry.redhat.io and quay.io only (the real inventory also uses registry.access.redhat.com).
// The samples the server would refuse are neither created nor named in a write: they are named in
// SamplesExist's message and an event (and a gauge, pkg/metrics), the rest install, the Config stays valid, the
// ClusterOperator is not Degraded, and the server (the test API server plays openshift-apiserver's
// allow-list) refuses none of the operator's writes. Then the allow-list changes as an admin would
// get it wrong (redhat.io: the server matches whole hosts) and right (host:443 entries).
func TestRestrictedImportAllowListInstallsWhatItAllows(t *testing.T) {
	parallel(t, 0)
	e := newEnv(t)
	inv := x86Inventory(t)
	ctx := context.Background()
	e.setImportAllowList(t, "registry.redhat.io", "quay.io")
	e.startOperator(defaultOptions())

	access := streamsFrom(inv, "registry.access.redhat.com")
	if access.Len() == 0 {
		t.Fatal("the inventory has no imagestream from registry.access.redhat.com: the test needs another registry")
	}
	waitInstalledExcept := func(blocked sets.Set[string]) {
		t.Helper()
		eventually(t, 60*time.Second, func() (bool, string) {
			cfg, err := e.samples.SamplesV1().Configs().Get(ctx, "cluster", metav1.GetOptions{})
			if err != nil {
				return false, err.Error()
			}
			c := configCondition(cfg, samplesv1.SamplesExist)
			if c == nil || c.Status != corev1.ConditionTrue {
				return false, fmt.Sprintf("SamplesExist %+v", c)
			}
			for _, name := range sets.List(blocked) {
				if !strings.Contains(c.Message, name) {
					return false, "SamplesExist does not name " + name + ": " + c.Message
				}
			}
			if blocked.Len() == 0 && strings.Contains(c.Message, "allowedRegistriesForImport") {
				return false, "SamplesExist still names blocked streams: " + c.Message
			}
			return e.samplesInPlace(inv, "v1", blocked, sets.New[string]())
		})
	}
	waitInstalledExcept(access)
	for _, name := range sets.List(access) {
		if _, err := e.images.ImageV1().ImageStreams("openshift").Get(ctx, name, metav1.GetOptions{}); !apierrors.IsNotFound(err) {
			t.Errorf("imagestream %s, whose registry is not allowed, exists: %v", name, err)
		}
	}
	cfg := e.getConfig()
	if c := configCondition(cfg, samplesv1.ConfigurationValid); c == nil || c.Status != corev1.ConditionTrue {
		t.Errorf("ConfigurationValid %+v, want True", c)
	}
	eventually(t, 10*time.Second, func() (bool, string) {
		co, err := e.config.ConfigV1().ClusterOperators().Get(ctx, "openshift-samples", metav1.GetOptions{})
		if err != nil {
			return false, err.Error()
		}
		for _, c := range co.Status.Conditions {
			if c.Type == configv1.OperatorDegraded {
				return c.Status == configv1.ConditionFalse, fmt.Sprintf("Degraded %s: %s", c.Status, c.Message)
			}
		}
		return false, "no Degraded condition"
	})
	eventually(t, 10*time.Second, func() (bool, string) {
		for _, ev := range e.operatorEvents(t) {
			if ev.Reason == "SamplesBlockedByImportAllowList" && strings.Contains(ev.Message, "registry.access.redhat.com") {
				return true, ""
			}
		}
		return false, "no SamplesBlockedByImportAllowList event"
	})

	// The test API server does refuse what the operator kept out (positive control).
	probe := &imagev1.ImageStream{ObjectMeta: metav1.ObjectMeta{Name: "allowlist-probe"}, Spec: imagev1.ImageStreamSpec{Tags: []imagev1.TagReference{{
		Name: "1", From: &corev1.ObjectReference{Kind: "DockerImage", Name: "registry.access.redhat.com/ubi8/openjdk-17:1.20"},
	}}}}
	if _, err := e.images.ImageV1().ImageStreams("openshift").Create(ctx, probe, metav1.CreateOptions{}); !apierrors.IsInvalid(err) || !strings.Contains(err.Error(), "not allowed by whitelist") {
		t.Errorf("creating an imagestream from a registry the allow-list leaves out: %v, want 422 not allowed by whitelist", err)
	}

	// redhat.io is no match for registry.redhat.io on the server: those streams go too (the
	// installed ones stay as they are, unwritten), and the operator still sends nothing the server
	// refuses.
	e.setImportAllowList(t, "redhat.io", "quay.io")
	both := streamsFrom(inv, "registry.access.redhat.com", "registry.redhat.io")
	eventually(t, 30*time.Second, func() (bool, string) {
		c := configCondition(e.getConfig(), samplesv1.SamplesExist)
		if c == nil {
			return false, "no SamplesExist"
		}
		for _, name := range sets.List(both) {
			if !strings.Contains(c.Message, name) {
				return false, "SamplesExist does not name " + name + ": " + c.Message
			}
		}
		return true, ""
	})

	// Entries with the port the references imply allow everything.
	e.setImportAllowList(t, "registry.redhat.io:443", "registry.access.redhat.com:443", "quay.io")
	waitInstalledExcept(sets.New[string]())

	for _, line := range describe(e.operatorRequests(t, on("imagestreams"), answered(422))) {
		t.Errorf("the server refused the operator's request (422): %s", line)
	}
}
