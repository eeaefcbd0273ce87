package integration

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
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
	"k8s.io/client-go/util/retry"

	"github.com/samples-operator-dev/cluster-samples-operator/pkg/desired"
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

	// redhat.io is no match for registry.redhat.io on the server: it would refuse to create those
	// streams. The installed ones it lets the operator update (they name their repositories
	// already), so they are not blocked; one deleted is, and is not created again. The operator
	// still sends nothing the server refuses.
	e.setImportAllowList(t, "redhat.io", "quay.io")
	redhat := streamsFrom(inv, "registry.redhat.io").Difference(access)
	if redhat.Len() == 0 {
		t.Fatal("the inventory has no imagestream from registry.redhat.io alone")
	}
	gone := sets.List(redhat)[0]
	e.deleteUntilBlocked(t, gone)
	waitInstalledExcept(access.Clone().Insert(gone))
	if c := configCondition(e.getConfig(), samplesv1.SamplesExist); c != nil {
		for _, name := range sets.List(redhat) {
			if name != gone && namesBlocked(c.Message, name) {
				t.Errorf("SamplesExist names %s, installed and updatable: %s", name, c.Message)
			}
		}
	}

	// Entries with the port the references imply allow everything.
	e.setImportAllowList(t, "registry.redhat.io:443", "registry.access.redhat.com:443", "quay.io")
	waitInstalledExcept(sets.New[string]())

	for _, line := range describe(e.operatorRequests(t, on("imagestreams"), answered(422))) {
		t.Errorf("the server refused the operator's request (422): %s", line)
	}
}

// TestRestrictedImportAllowListUpdatesWhatTheServerAccepts: openshift-apiserver judges an update
// of an imagestream by a wider list than a create (ValidateImageStreamUpdateWithWhitelister; the
// rule itself is TestAllowListOnImageStreamUpdatesAsOpenShiftAPIServer's): a reference to a
// repository the stream already names, in its spec or its status, is admitted even where
// allowedRegistriesForImport no longer allows its registry. So samples installed before an
// admin narrows the list keep being reverted and upgraded, and are not reported blocked; a create,
// and an update that brings in a repository the stream did not name, stay refused, and those
// samples are left as they are and named. On the stand-ins and on the real server alike.
func TestRestrictedImportAllowListUpdatesWhatTheServerAccepts(t *testing.T) {
	parallel(t, 0)
	e := newEnv(t)
	inv := x86Inventory(t)
	ctx := context.Background()
	streams := e.images.ImageV1().ImageStreams("openshift")
	op, scrape := e.startOperatorWithScrape(t, defaultOptions())
	e.waitManaged(t, inv, "v1")

	access := streamsFrom(inv, "registry.access.redhat.com")
	const (
		reverted = "ubi8-openjdk-17"         // an admin edits it; the operator reverts it
		deleted  = "ubi8-openjdk-8"          // deleted: a create, refused
		moved    = "ubi8-openjdk-17-runtime" // v2 moves a tag to another tag of its repository
		grown    = "ubi8-openjdk-11-runtime" // v2 adds a tag from a repository it did not name
	)
	for _, name := range []string{reverted, deleted, moved, grown} {
		if !access.Has(name) {
			t.Fatalf("%s does not pull from registry.access.redhat.com in the inventory: the test needs another stream", name)
		}
	}
	e.setImportAllowList(t, "registry.redhat.io", "quay.io")

	// blockedNow waits until SamplesExist and the gauge name exactly blocked, and the samples
	// not blocked are in place at version.
	blockedNow := func(inv *inventory.Inventory, version string, blocked ...string) {
		t.Helper()
		want := sets.New(blocked...)
		eventually(t, 60*time.Second, func() (bool, string) {
			c := configCondition(e.getConfig(), samplesv1.SamplesExist)
			if c == nil || c.Status != corev1.ConditionTrue {
				return false, fmt.Sprintf("SamplesExist %+v", c)
			}
			for _, name := range sets.List(access) {
				if named := namesBlocked(c.Message, name); named != want.Has(name) {
					return false, fmt.Sprintf("SamplesExist names %s: %v, want %v: %s", name, named, want.Has(name), c.Message)
				}
			}
			if want.Len() == 0 && strings.Contains(c.Message, "allowedRegistriesForImport") {
				return false, "SamplesExist names blocked streams: " + c.Message
			}
			return e.samplesInPlace(inv, version, want, sets.New[string]())
		})
		got := sets.New[string]()
		for series := range scrape(t) {
			if strings.HasPrefix(series, "openshift_samples_import_allowlist_blocked_imagestream_info{") {
				for _, name := range sets.List(access) {
					if strings.Contains(series, `name="`+name+`"`) {
						got.Insert(name)
					}
				}
			}
		}
		if !got.Equal(want) {
			t.Errorf("the blocked-imagestream gauge names %v, want %v", sets.List(got), sets.List(want))
		}
	}
	// Installed before the list narrowed, none is blocked, though a create of any would be
	// refused: one deleted would be created, so it stays away and is named (which also shows the
	// operator judging by the new list), the others are not.
	e.deleteUntilBlocked(t, deleted)
	blockedNow(inv, "v1", deleted)

	// The server's rule, shown directly: a create from the registry is refused, an update may move
	// a tag to another tag of a repository the stream names, not to another repository.
	probe := &imagev1.ImageStream{ObjectMeta: metav1.ObjectMeta{Name: "allowlist-update-probe"}, Spec: imagev1.ImageStreamSpec{Tags: []imagev1.TagReference{{
		Name: "1", From: &corev1.ObjectReference{Kind: "DockerImage", Name: "registry.access.redhat.com/ubi8/openjdk-17:1.20"},
	}}}}
	if _, err := streams.Create(ctx, probe, metav1.CreateOptions{}); !apierrors.IsInvalid(err) || !strings.Contains(err.Error(), "not allowed by whitelist") {
		t.Errorf("creating an imagestream from a registry the allow-list leaves out: %v, want 422 not allowed by whitelist", err)
	}
	// The operator's import retries (at once when the image configuration changes, and when its
	// rollout ends) write the stream too: an admin's client sends each update again on a conflict,
	// from the stream as it now is.
	var i int
	var tag, original string
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		is := e.imageStream(reverted)
		i = slices.IndexFunc(is.Spec.Tags, func(tag imagev1.TagReference) bool { return tag.From != nil && tag.From.Kind == "DockerImage" })
		tag, original = is.Spec.Tags[i].Name, is.Spec.Tags[i].From.Name
		is.Spec.Tags[i].From.Name = "registry.access.redhat.com/ubi9/not-in-this-stream:1"
		_, err := streams.Update(ctx, is, metav1.UpdateOptions{})
		return err
	})
	repo, _, _ := strings.Cut(original, ":")
	if !apierrors.IsInvalid(err) || !strings.Contains(err.Error(), "not allowed by whitelist") {
		t.Errorf("an admin's update of %s to a repository it did not name: %v, want 422 not allowed by whitelist", reverted, err)
	}

	// An admin's edit within the repository is accepted, and the operator reverts it.
	err = retry.RetryOnConflict(retry.DefaultRetry, func() error {
		is := e.imageStream(reverted)
		is.Spec.Tags[i].From.Name = repo + ":edited-by-an-admin"
		_, err := streams.Update(ctx, is, metav1.UpdateOptions{})
		return err
	})
	if err != nil {
		t.Fatalf("an admin's update of %s to another tag of %s: %v, want it accepted", reverted, repo, err)
	}
	eventually(t, 30*time.Second, func() (bool, string) {
		for _, tr := range e.imageStream(reverted).Spec.Tags {
			if tr.Name == tag {
				return tr.From != nil && tr.From.Name == original, fmt.Sprintf("tag %s of %s is %+v, want %s back", tag, reverted, tr.From, original)
			}
		}
		return false, fmt.Sprintf("tag %s of %s is gone", tag, reverted)
	})

	// An upgrade: moving a tag within its repository is accepted, adding one from a repository
	// the stream did not name is not, and that stream stays at v1, named.
	v2Dir := t.TempDir()
	if err := os.CopyFS(filepath.Join(v2Dir, "ocp-x86_64"), os.DirFS(filepath.Join(testInventoryDir(), "ocp-x86_64"))); err != nil {
		t.Fatal(err)
	}
	editInventoryStream(t, v2Dir, moved, func(is *imagev1.ImageStream) {
		ref := &is.Spec.Tags[0].From.Name
		*ref += "-v2"
	})
	editInventoryStream(t, v2Dir, grown, func(is *imagev1.ImageStream) {
		is.Spec.Tags = append(is.Spec.Tags, imagev1.TagReference{Name: "from-a-new-repository",
			From: &corev1.ObjectReference{Kind: "DockerImage", Name: "registry.access.redhat.com/ubi9/a-repository-new-in-v2:1"}})
	})
	v2, err := inventory.LoadDir(v2Dir, "ocp-x86_64")
	if err != nil {
		t.Fatal(err)
	}
	op.stop(t)
	opts := defaultOptions()
	opts.Version, opts.InventoryDir = "v2", v2Dir
	_, scrape = e.startOperatorWithScrape(t, opts)
	blockedNow(v2, "v2", deleted, grown)
	if got := e.imageStream(grown).Annotations[desired.VersionAnnotation]; got != "v1" {
		t.Errorf("%s, whose v2 the server refuses, is at version %q, want v1 as installed", grown, got)
	}
	want, _ := v2.ImageStream(moved)
	if got := e.imageStream(moved).Spec.Tags[0].From.Name; got != want.Spec.Tags[0].From.Name {
		t.Errorf("%s's first tag is %s after the upgrade, want %s", moved, got, want.Spec.Tags[0].From.Name)
	}

	for _, line := range describe(e.operatorRequests(t, on("imagestreams"), answered(422))) {
		t.Errorf("the server refused the operator's request (422): %s", line)
	}
}

// deleteUntilBlocked deletes the sample imagestream name, which the import allow-list the test
// just set keeps the operator from creating, until SamplesExist names it: a create sent from the
// operator's view of the list before the change reached it brings it back once.
func (e *env) deleteUntilBlocked(t *testing.T, name string) {
	t.Helper()
	streams := e.images.ImageV1().ImageStreams("openshift")
	eventually(t, 30*time.Second, func() (bool, string) {
		if err := streams.Delete(context.Background(), name, metav1.DeleteOptions{}); err == nil {
			return false, "deleted " + name
		} else if !apierrors.IsNotFound(err) {
			return false, err.Error()
		}
		c := configCondition(e.getConfig(), samplesv1.SamplesExist)
		return c != nil && namesBlocked(c.Message, name), fmt.Sprintf("SamplesExist does not name %s: %+v", name, c)
	})
}

// namesBlocked reports whether a SamplesExist message names the imagestream among those the
// allow-list keeps out (configstatus.BlockedMessage: "...: a, b, c; allow it there...").
func namesBlocked(message, name string) bool {
	return strings.Contains(message, " "+name+",") || strings.Contains(message, " "+name+";")
}

// editInventoryStream rewrites the imagestream name of the inventory under dir/ocp-x86_64.
func editInventoryStream(t *testing.T, dir, name string, edit func(*imagev1.ImageStream)) {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(dir, "ocp-x86_64", "*", "imagestreams", "*.json"))
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		var is imagev1.ImageStream
		if err := json.Unmarshal(data, &is); err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		if is.Name != name {
			continue
		}
		edit(&is)
		if data, err = json.Marshal(&is); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(f, data, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	t.Fatalf("no imagestream %s in the inventory under %s", name, dir)
}
