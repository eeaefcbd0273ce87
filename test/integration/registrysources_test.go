package integration

import (
	"context"
	"encoding/json"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	configv1 "github.com/openshift/api/config/v1"
	samplesv1 "github.com/openshift/api/samples/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/sets"

	"github.com/samples-operator-dev/cluster-samples-operator/assets"
	"github.com/samples-operator-dev/cluster-samples-operator/pkg/inventory"
)

// setRegistrySources sets images.config.openshift.io/cluster spec.registrySources, which is the
// nodes' pull policy: openshift-apiserver has nothing to roll out.
func (e *env) setRegistrySources(t *testing.T, sources configv1.RegistrySources) {
	t.Helper()
	ctx := context.Background()
	for i := 0; ; i++ {
		img, err := e.config.ConfigV1().Images().Get(ctx, "cluster", metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			img = &configv1.Image{ObjectMeta: metav1.ObjectMeta{Name: "cluster"}, Spec: configv1.ImageSpec{RegistrySources: sources}}
			_, err = e.config.ConfigV1().Images().Create(ctx, img, metav1.CreateOptions{})
		} else if err == nil {
			img.Spec.RegistrySources = sources
			_, err = e.config.ConfigV1().Images().Update(ctx, img, metav1.UpdateOptions{})
		}
		if err == nil {
			return
		}
		if i > 10 {
			t.Fatalf("setting spec.registrySources: %v", err)
		}
	}
}

// writeInventoryWithSourceTags writes the shipped x86_64 inventory to a directory for
// --inventory-dir, with every DockerImage tag of the streams named in source given
// referencePolicy Source (nodes pull it from its registry, not through the internal one).
func writeInventoryWithSourceTags(t *testing.T, source sets.Set[string]) string {
	t.Helper()
	dir := t.TempDir()
	root := path.Join("operator", inventory.ArchDirOCPX86_64)
	err := fs.WalkDir(assets.Operator, root, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		data, err := fs.ReadFile(assets.Operator, p)
		if err != nil {
			return err
		}
		if path.Base(path.Dir(p)) == "imagestreams" {
			if data, err = withSourceTags(data, source); err != nil {
				return fmt.Errorf("%s: %w", p, err)
			}
		}
		out := filepath.Join(dir, filepath.FromSlash(strings.TrimPrefix(p, "operator/")))
		if err := os.MkdirAll(filepath.Dir(out), 0o755); err != nil {
			return err
		}
		return os.WriteFile(out, data, 0o644)
	})
	if err != nil {
		t.Fatal(err)
	}
	return dir
}

// withSourceTags gives every DockerImage tag of an imagestream file referencePolicy Source when
// source names the stream, and returns other files as they are.
func withSourceTags(data []byte, source sets.Set[string]) ([]byte, error) {
	var is struct{ Metadata struct{ Name string } }
	if err := json.Unmarshal(data, &is); err != nil || !source.Has(is.Metadata.Name) {
		return data, err
	}
	var raw map[string]any
	if err := json.Unmarshal(data, &raw); err != nil {
		return nil, err
	}
	for _, tag := range raw["spec"].(map[string]any)["tags"].([]any) {
		tag := tag.(map[string]any)
		if from, _ := tag["from"].(map[string]any); from["kind"] == "DockerImage" {
			tag["referencePolicy"] = map[string]any{"type": "Source"}
		}
	}
	return json.Marshal(raw)
}

// TestRegistrySourcesWarnOfTheSamplesNodesCannotPull: images.config.openshift.io/cluster
// spec.registrySources is the container runtime's policy for pods and builds, not
// openshift-apiserver's for imports. Whatever it allows or blocks, with or without
// samplesRegistry, the Config stays valid, the samples stay managed (a deleted one comes back) and
// the ClusterOperator is not Degraded; ConfigurationValid's message names the imagestreams whose
// images nodes would pull directly (referencePolicy Source) from a registry the list refuses, and
// only those: the shipped streams pull through the internal registry (Local), except the latest
// tags of the two SSO streams, whose images are on registry.redhat.io. Two streams on
// registry.access.redhat.com are given Source tags here.
func TestRegistrySourcesWarnOfTheSamplesNodesCannotPull(t *testing.T) {
	parallel(t, aboutAMinute)
	// Two streams whose every image is on registry.access.redhat.com.
	var access []string
	shipped := x86Inventory(t)
	for _, name := range shipped.ImageStreamNames() {
		is, _ := shipped.ImageStream(name)
		onlyAccess := true
		for _, tag := range is.Spec.Tags {
			if tag.From.Kind == "DockerImage" {
				onlyAccess = onlyAccess && inventory.RegistryHost(tag.From.Name) == "registry.access.redhat.com"
			}
		}
		if onlyAccess && len(access) < 2 {
			access = append(access, name)
		}
	}
	if len(access) != 2 {
		t.Fatalf("the shipped inventory has %d imagestreams whose images are all on registry.access.redhat.com, the test needs 2", len(access))
	}
	dir := writeInventoryWithSourceTags(t, sets.New(access...))
	inv, err := inventory.LoadDir(dir, inventory.ArchDirOCPX86_64)
	if err != nil {
		t.Fatal(err)
	}

	e := newEnv(t)
	ctx := context.Background()
	opts := defaultOptions()
	opts.InventoryDir = dir
	e.startOperator(opts)
	e.waitManaged(t, inv, opts.Version)

	const where = "images.config.openshift.io/cluster spec.registrySources."
	warning := func(refusal, streams, fix string) string {
		return where + refusal + ", from which nodes would pull the images of " + streams +
			" directly (tags with referencePolicy Source): they are installed, but pods and builds that use them cannot pull; " + fix + ", or skip them"
	}
	const (
		allowFix = "add it there, point spec.samplesRegistry at a mirror it allows"
		blockFix = "remove it there, point spec.samplesRegistry at another mirror"
	)
	sso := "sso75-openshift-rhel8, sso76-openshift-rhel8"
	both := strings.Join(access, ", ")
	steps := []struct {
		name            string
		sources         configv1.RegistrySources
		samplesRegistry string
		want            string
	}{
		{
			name:    "allowed registry.redhat.io and quay.io",
			sources: configv1.RegistrySources{AllowedRegistries: []string{"registry.redhat.io", "quay.io"}},
			want:    warning("allowedRegistries does not include registry.access.redhat.com", "2 imagestreams: "+both, allowFix),
		},
		{
			name:    "blocked registry.access.redhat.com",
			sources: configv1.RegistrySources{BlockedRegistries: []string{"registry.access.redhat.com"}},
			want:    warning("blockedRegistries blocks registry.access.redhat.com", "2 imagestreams: "+both, blockFix),
		},
		{
			name:    "blocked registry.redhat.io",
			sources: configv1.RegistrySources{BlockedRegistries: []string{"registry.redhat.io"}},
			want:    warning("blockedRegistries blocks registry.redhat.io", "2 imagestreams: "+sso, blockFix),
		},
		{
			name:            "blocked registry.access.redhat.com, samplesRegistry a mirror",
			sources:         configv1.RegistrySources{BlockedRegistries: []string{"registry.access.redhat.com"}},
			samplesRegistry: "mirror.example.com:5000",
		},
		{
			name:            "allowed registry.redhat.io and quay.io, samplesRegistry a mirror",
			sources:         configv1.RegistrySources{AllowedRegistries: []string{"registry.redhat.io", "quay.io"}},
			samplesRegistry: "mirror.example.com:5000",
			want:            warning("allowedRegistries does not include mirror.example.com:5000", "4 imagestreams: "+strings.Join(slices.Sorted(slices.Values(append(slices.Clone(access), "sso75-openshift-rhel8", "sso76-openshift-rhel8"))), ", "), allowFix),
		},
		{
			name:            "allowed the mirror",
			sources:         configv1.RegistrySources{AllowedRegistries: []string{"mirror.example.com:5000"}},
			samplesRegistry: "mirror.example.com:5000",
		},
		{name: "no registrySources"},
	}
	for _, step := range steps {
		t.Logf("step: %s", step.name)
		e.setRegistrySources(t, step.sources)
		if e.getConfig().Spec.SamplesRegistry != step.samplesRegistry {
			e.updateConfig(func(c *samplesv1.Config) { c.Spec.SamplesRegistry = step.samplesRegistry })
		}
		eventually(t, 20*time.Second, func() (bool, string) {
			cfg := e.getConfig()
			c := configCondition(cfg, samplesv1.ConfigurationValid)
			if c == nil || c.Status != corev1.ConditionTrue || c.Message != step.want {
				return false, fmt.Sprintf("%s: ConfigurationValid %+v, want True with message %q", step.name, c, step.want)
			}
			return cfg.Status.SamplesRegistry == step.samplesRegistry, fmt.Sprintf("%s: status.samplesRegistry %q", step.name, cfg.Status.SamplesRegistry)
		})
		e.waitClusterOperator(t, configv1.ConditionTrue, configv1.ConditionFalse, configv1.ConditionFalse, "", opts.Version)

		// Still managed: a deleted sample comes back as the Config asks.
		victim := access[0]
		if err := e.images.ImageV1().ImageStreams("openshift").Delete(ctx, victim, metav1.DeleteOptions{}); err != nil {
			t.Fatalf("%s: deleting imagestream %s: %v", step.name, victim, err)
		}
		eventually(t, 20*time.Second, func() (bool, string) {
			is, err := e.images.ImageV1().ImageStreams("openshift").Get(ctx, victim, metav1.GetOptions{})
			if err != nil {
				return false, fmt.Sprintf("%s: imagestream %s: %v", step.name, victim, err)
			}
			for _, tag := range is.Spec.Tags {
				if tag.From.Kind == "DockerImage" && step.samplesRegistry != "" && !strings.HasPrefix(tag.From.Name, step.samplesRegistry+"/") {
					return false, fmt.Sprintf("%s: imagestream %s tag %s is %s, not on the mirror", step.name, victim, tag.Name, tag.From.Name)
				}
			}
			return true, ""
		})
	}
	e.waitManaged(t, inv, opts.Version)
}
