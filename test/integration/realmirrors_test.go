package integration

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/google/go-containerregistry/pkg/name"
	configv1 "github.com/openshift/api/config/v1"
	imagev1 "github.com/openshift/api/image/v1"
	samplesv1 "github.com/openshift/api/samples/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/samples-operator-dev/cluster-samples-operator/pkg/bootstrapstate"
	"github.com/samples-operator-dev/cluster-samples-operator/pkg/clusteroperator"
	"github.com/samples-operator-dev/cluster-samples-operator/pkg/configspec"
	"github.com/samples-operator-dev/cluster-samples-operator/pkg/imports"
	"github.com/samples-operator-dev/cluster-samples-operator/pkg/inventory"
	"github.com/samples-operator-dev/cluster-samples-operator/pkg/samplereport"
	"github.com/samples-operator-dev/cluster-samples-operator/test/controlplane"
)

// TestRealFirstStartOnAMirroredCluster is a disconnected cluster set up as OpenShift 4.13+ sets
// one up, on the real stack: openshift-apiserver, openshift-controller-manager's import
// controllers, and a loopback registry serving TLS under a CA the server trusts (as a cluster's
// additionalTrustedCA makes it), holding every image of the inventory but one; an
// ImageTagMirrorSet mirrors both registries of the inventory to it; the registries themselves are
// out of reach (the server's proxy is a closed port, the operator's probe refuses them).
//
// The operator's first start installs the samples Managed with their registry.redhat.io
// references, and every tag imports from the mirror; the missing image is that stream's import
// error; once all is imported nothing is written; with the mirror set deleted, SamplesExist says
// what can no longer import. It logs how long the first start takes to Available with every tag
// imported.
func TestRealFirstStartOnAMirroredCluster(t *testing.T) {
	parallel(t, aboutAMinute)
	e, ctx := newEnvRealMirror(t)
	mirror, err := e.cp.StartTLSRegistry(ctx)
	if err != nil {
		t.Fatalf("starting the mirror: %v", err)
	}
	inv := x86Inventory(t)

	// The admin mirrors every image but one: ruby's, used by no other tag.
	images := map[string]string{} // inventory reference -> its name on the mirror
	users := map[string]int{}
	var rubyTag, rubyRef string
	for _, stream := range inv.ImageStreamNames() {
		is, _ := inv.ImageStream(stream)
		for _, tag := range is.Spec.Tags {
			if tag.From != nil && tag.From.Kind == "DockerImage" {
				onMirror := normalizedRef(mirrorOf(tag.From.Name, mirror))
				images[tag.From.Name] = onMirror
				users[onMirror]++
			}
		}
	}
	ruby, _ := inv.ImageStream("ruby")
	for _, tag := range ruby.Spec.Tags {
		if tag.From != nil && tag.From.Kind == "DockerImage" && users[images[tag.From.Name]] == 1 {
			rubyTag, rubyRef = tag.Name, tag.From.Name
			break
		}
	}
	if rubyTag == "" {
		t.Fatalf("ruby has no tag whose image no other tag uses")
	}
	var refs []string
	for _, onMirror := range images {
		if onMirror != images[rubyRef] && !slices.Contains(refs, onMirror) {
			refs = append(refs, onMirror)
		}
	}
	sort.Strings(refs)
	pushed := pushAllVia(t, refs, e.cp.RegistryTransport())
	t.Logf("mirrored %d images to %s; missing: ruby:%s (%s)", len(pushed), mirror, rubyTag, images[rubyRef])
	e.createTagMirrorSet(t, tagMirrorSet("samples-mirror", mirror, redHatRegistry, accessRegistry))

	probes := &mirrorProbes{}
	opts := disconnectedOptions(t, probes, false)
	opts.ImportRetryInterval = 3 * time.Second
	start := time.Now()
	e.startOperator(opts)

	// Available, and every mirrored tag imported from the mirror.
	var managedAt, availableAt time.Duration
	eventuallyEvery(t, 180*time.Second, time.Second, func() (bool, string) {
		if managedAt == 0 {
			if cfg, err := e.samples.SamplesV1().Configs().Get(ctx, samplesv1.ConfigName, metav1.GetOptions{}); err == nil && cfg.Spec.ManagementState == "Managed" {
				managedAt = time.Since(start)
			}
		}
		if availableAt == 0 {
			if co, err := e.config.ConfigV1().ClusterOperators().Get(ctx, clusteroperator.Name, metav1.GetOptions{}); err == nil && coCondition(co, configv1.OperatorAvailable) == configv1.ConditionTrue {
				availableAt = time.Since(start)
			}
		}
		pending := e.tagsNotImported(inv.ImageStreamNames(), func(stream, tag string) string {
			return pushed[images[fromOf(inv, stream, tag)]]
		})
		return availableAt > 0 && len(pending) == 0, fmt.Sprintf("Available after %s; %d tags not imported from the mirror, e.g. %.300v", availableAt, len(pending), pending)
	})
	allImported := time.Since(start)
	t.Logf("first start on a mirrored cluster: Config Managed %s, ClusterOperator Available %s, every mirrored tag imported %s after the operator started",
		managedAt.Round(10*time.Millisecond), availableAt.Round(10*time.Millisecond), allImported.Round(100*time.Millisecond))

	// oc samples status names, for each tag, the mirror it came through and the architectures
	// of the image the server recorded.
	status := e.kubectlSamplesQuiet("status", "-o", "json")
	var report samplereport.Report
	if err := json.Unmarshal([]byte(status.out), &report); err != nil {
		t.Fatalf("status -o json: %v: %s%s", err, status.out, status.errOut)
	}
	mirrored, withArchitectures := 0, 0
	for _, s := range report.Samples {
		for _, tag := range s.Tags {
			if tag.State != samplereport.TagImported {
				continue
			}
			if strings.HasPrefix(tag.Mirror, mirror+"/") && slices.Contains(tag.MirroredBy, "ImageTagMirrorSet/samples-mirror") {
				mirrored++
			} else {
				t.Errorf("status says %s:%s came through %q (%v), not the mirror %s", s.Name, tag.Name, tag.Mirror, tag.MirroredBy, mirror)
			}
			if slices.Equal(tag.Architectures, []string{"amd64"}) {
				withArchitectures++
			}
		}
	}
	t.Logf("status: %d imported tags through %s, %d with the architectures of their image", mirrored, mirror, withArchitectures)
	if mirrored == 0 || withArchitectures != mirrored {
		t.Errorf("status names the mirror of %d tags and the architecture (amd64) of %d: %v", mirrored, withArchitectures, report.NotSeen)
	}

	cfg := e.getConfig()
	if cfg.Spec.ManagementState != "Managed" || cfg.Spec.SamplesRegistry != "" || cfg.Annotations[bootstrapstate.ReasonAnnotation] != configspec.ReasonThroughMirrorSets {
		t.Errorf("Config: managementState %s, samplesRegistry %q, bootstrap reason %q; want Managed, none, %s",
			cfg.Spec.ManagementState, cfg.Spec.SamplesRegistry, cfg.Annotations[bootstrapstate.ReasonAnnotation], configspec.ReasonThroughMirrorSets)
	}
	probes.assertOnly(t, mirror)
	for stream, tags := range e.dockerImageTags(t) {
		for tag, ref := range tags {
			if !strings.HasPrefix(ref, redHatRegistry+"/") && !strings.HasPrefix(ref, accessRegistry+"/") {
				t.Errorf("%s:%s names %s, want the inventory's own reference", stream, tag, ref)
			}
		}
	}
	cond := e.waitSamplesExistSays(t, 10*time.Second, "imported through the cluster's mirror sets (ImageTagMirrorSet/samples-mirror)")
	t.Logf("SamplesExist: %s", cond.Message)

	// The image missing from the mirror is ruby's import error, in the server's words, naming the
	// mirror it was looked for on.
	eventually(t, 30*time.Second, func() (bool, string) {
		cm, err := e.configMap("ruby")
		if err != nil {
			return false, err.Error()
		}
		return cm.Labels[imports.ErrorLabel] == "true" && len(cm.Data) == 1 && strings.Contains(cm.Data[rubyTag], mirror),
			fmt.Sprintf("ruby's record %v, want only %s, naming %s", cm.Data, rubyTag, mirror)
	})
	eventually(t, 30*time.Second, func() (bool, string) {
		c := configCondition(e.getConfig(), samplesv1.ImportImageErrorsExist)
		return c != nil && c.Status == corev1.ConditionTrue && strings.Contains(c.Message, "ruby") && !strings.Contains(c.Message, "python"),
			fmt.Sprintf("ImportImageErrorsExist %+v", c)
	})
	cm, _ := e.configMap("ruby")
	t.Logf("ruby:%s: %s", rubyTag, cm.Data[rubyTag])

	// Steady state: ruby's import is retried (the operator is at work), and no sample is written.
	e.assertNoSampleWritesWhileRetrying(t, "ruby")

	// The mirror set removed: the operator says what can no longer import.
	if err := e.config.ConfigV1().ImageTagMirrorSets().Delete(ctx, "samples-mirror", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	cond = e.waitSamplesExistSays(t, 20*time.Second, "no mirror set serves their images any more", "can no longer import")
	t.Logf("SamplesExist without the mirror set: %s", cond.Message)
	e.waitEvent(t, "SamplesWithoutMirror", "can no longer import")
}

// newEnvRealMirror is a cluster with the real openshift-apiserver and import controllers, and
// nothing else that imports; the caller starts the mirror (StartTLSRegistry). Unlike
// newEnvRealImports, no registry is made trusted through insecureRegistries: the mirror must be
// trusted by its CA, as on a cluster.
func newEnvRealMirror(t *testing.T) (*env, context.Context) {
	t.Helper()
	requireReal(t, "import controllers", os.Getenv(controlplane.OpenShiftBinDirEnv) != "",
		fmt.Sprintf("set %s to a folder holding the real openshift-apiserver and openshift-controller-manager to import through a mirror", controlplane.OpenShiftBinDirEnv))
	e, ctx := newEnvWithoutImporter(t, applyManifests)
	ok, why := e.cp.CanImport()
	requireReal(t, "import controllers", ok, why)
	ok, why = e.cp.CanServeRegistry()
	requireReal(t, "test registry", ok, why)
	if err := e.cp.StartImportControllers(ctx, scheduledImportInterval); err != nil {
		e.cp.DumpLogTail(t, 30)
		t.Fatalf("starting the import controllers: %v", err)
	}
	return e, ctx
}

// tagsNotImported lists the DockerImage tags of streams whose newest image is not
// want(stream, tag) (a tag for which want is "" is not waited for), and the streams missing.
func (e *env) tagsNotImported(streams []string, want func(stream, tag string) string) []string {
	list, err := e.images.ImageV1().ImageStreams("openshift").List(context.Background(), metav1.ListOptions{})
	if err != nil {
		return []string{err.Error()}
	}
	live := map[string]*imagev1.ImageStream{}
	for i := range list.Items {
		live[list.Items[i].Name] = &list.Items[i]
	}
	var pending []string
	for _, stream := range streams {
		is := live[stream]
		if is == nil {
			pending = append(pending, stream+" missing")
			continue
		}
		for _, tag := range is.Spec.Tags {
			image := want(stream, tag.Name)
			if tag.From == nil || tag.From.Kind != "DockerImage" || image == "" {
				continue
			}
			if got := importedImage(is, tag.Name); got != image {
				pending = append(pending, fmt.Sprintf("%s:%s has %q, want %s", stream, tag.Name, got, image))
			}
		}
	}
	sort.Strings(pending)
	return pending
}

// fromOf is the image a tag of the inventory names ("" for none).
func fromOf(inv *inventory.Inventory, stream, tag string) string {
	is, _ := inv.ImageStream(stream)
	for _, t := range is.Spec.Tags {
		if t.Name == tag && t.From != nil && t.From.Kind == "DockerImage" {
			return t.From.Name
		}
	}
	return ""
}

// normalizedRef names ref as the registry does: a reference without a tag is :latest.
func normalizedRef(ref string) string {
	if r, err := name.ParseReference(ref, name.Insecure); err == nil {
		return r.Name()
	}
	return ref
}

func coCondition(co *configv1.ClusterOperator, t configv1.ClusterStatusConditionType) configv1.ConditionStatus {
	for _, c := range co.Status.Conditions {
		if c.Type == t {
			return c.Status
		}
	}
	return ""
}
