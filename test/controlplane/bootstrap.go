package controlplane

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/wait"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/util/retry"
)

// Namespaces that exist on every OpenShift cluster and that the operator works in.
var Namespaces = []string{"openshift", "openshift-config", OperatorNamespace}

var crdResource = schema.GroupVersionResource{Group: "apiextensions.k8s.io", Version: "v1", Resource: "customresourcedefinitions"}

// CRDFiles lists the CRD manifests the control plane serves: the copies of openshift/api's own
// CRDs (test/crds/openshift-api and the Config CRD in manifests/), one for prometheus-operator's
// ServiceMonitor (test/crds/monitoring: a cluster's monitoring stack serves it, and the
// operator's manifests and the jenkins "-monitored" sample Templates create one) and the
// stand-ins for the aggregated image, template, build, apps, route and authorization APIs
// (test/crds/aggregated); hack/crdgen writes the last two folders.
func CRDFiles() ([]string, error) {
	return crdFiles("openshift-api", "monitoring", "aggregated")
}

// realServerCRDFiles are the CRD manifests installed with the real openshift-apiserver: those
// of CRDFiles but the stand-ins, and what the server reads (test/crds/openshift-api/
// openshift-apiserver), less the CRDs of a group the server serves itself (aggregatedGroups):
// this kube-apiserver's aggregator routes a whole group and version to one server, so the
// RoleBindingRestriction CRD of authorization.openshift.io is left out and RoleBindingRestrictions
// are not served (the server answers "unsupported" for them).
func (cp *ControlPlane) realServerCRDFiles() ([]string, error) {
	files, err := crdFiles("openshift-api", "monitoring", filepath.Join("openshift-api", "openshift-apiserver"))
	if err != nil {
		return nil, err
	}
	aggregated := cp.aggregatedGroups()
	var out []string
	for _, f := range files {
		objs, err := ReadManifests(f)
		if err != nil {
			return nil, err
		}
		if len(objs) > 0 {
			if group, _, _ := unstructured.NestedString(objs[0].Object, "spec", "group"); slices.Contains(aggregated, group) {
				continue
			}
		}
		out = append(out, f)
	}
	return out, nil
}

func crdFiles(dirs ...string) ([]string, error) {
	root := RepoRoot()
	files := []string{filepath.Join(root, "manifests", "00-samples-config.crd.yaml")}
	for _, dir := range dirs {
		matches, err := filepath.Glob(filepath.Join(root, "test", "crds", dir, "*.yaml"))
		if err != nil {
			return nil, err
		}
		files = append(files, matches...)
	}
	sort.Strings(files[1:])
	return files, nil
}

// Bootstrap installs the CRDs, creates the namespaces and registers the admission webhooks, and
// returns once kube-apiserver calls them; with the real openshift-apiserver, it installs what
// that server reads instead of the aggregated CRDs, starts it and registers its APIServices, and
// returns once kube-apiserver routes to it. It is idempotent.
func (cp *ControlPlane) Bootstrap(ctx context.Context) error {
	cfg := rest.CopyConfig(cp.AdminConfig)
	// Warming the cache of DeploymentConfigs, which are deprecated, gets a warning each start
	// would print.
	cfg.WarningHandler = rest.NoWarnings{}
	dyn, err := dynamic.NewForConfig(cfg)
	if err != nil {
		return err
	}
	files, err := CRDFiles()
	if cp.RealOpenShiftAPIServer() {
		files, err = cp.realServerCRDFiles()
	}
	if err != nil {
		return err
	}
	files = cp.apis.withoutOffCRDs(files)
	kube, err := kubernetes.NewForConfig(cp.AdminConfig)
	if err != nil {
		return err
	}
	for _, ns := range Namespaces {
		_, err := kube.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{})
		if err != nil && !apierrors.IsAlreadyExists(err) {
			return fmt.Errorf("creating namespace %s: %w", ns, err)
		}
	}
	if _, err := installCRDs(ctx, dyn, files); err != nil {
		return err
	}
	if cp.RealOpenShiftAPIServer() {
		return cp.bootstrapOpenShiftAPIServer(ctx, kube, dyn)
	}
	return cp.registerWebhooks(ctx, kube, dyn)
}

// installCRDs creates the CRDs of files (those that exist already stay), waits until each is
// Established, lists each kind once to warm its watch cache, and returns the CRDs' names.
func installCRDs(ctx context.Context, dyn dynamic.Interface, files []string) ([]string, error) {
	var names []string
	var kinds []schema.GroupVersionResource
	for _, file := range files {
		objs, err := ReadManifests(file)
		if err != nil {
			return nil, err
		}
		for _, obj := range objs {
			if _, err := dyn.Resource(crdResource).Create(ctx, obj, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
				return nil, fmt.Errorf("installing CRD from %s: %w", file, err)
			}
			names = append(names, obj.GetName())
			kinds = append(kinds, servedResource(obj))
		}
	}
	for _, name := range names {
		if err := waitEstablished(ctx, dyn, name); err != nil {
			return nil, err
		}
	}
	// On a running cluster other components already watch every one of these kinds, so the
	// server's watch cache of each is ready. Here nobody has asked yet: a first request builds the
	// cache, and until it is ready the server answers a streaming list (client-go's default since
	// 1.35) 429, retried after a second. One list of each kind now spares the tests that second.
	for _, gvr := range kinds {
		if gvr.Resource == "" {
			continue
		}
		if err := warmWatchCache(ctx, dyn, gvr); err != nil {
			return nil, err
		}
	}
	return names, nil
}

// registerWebhooks points kube-apiserver at this control plane's webhook server, replacing the
// configuration of an earlier one, and waits until both the mutating and the validating hooks
// act on requests: kube-apiserver picks configurations up asynchronously, and a test's first
// write must already meet them.
func (cp *ControlPlane) registerWebhooks(ctx context.Context, kube kubernetes.Interface, dyn dynamic.Interface) error {
	if cp.hooks == nil {
		return nil
	}
	mutating := kube.AdmissionregistrationV1().MutatingWebhookConfigurations()
	m := cp.hooks.MutatingWebhookConfiguration()
	if _, err := mutating.Create(ctx, m, metav1.CreateOptions{}); apierrors.IsAlreadyExists(err) {
		err = retry.RetryOnConflict(retry.DefaultRetry, func() error {
			cur, err := mutating.Get(ctx, m.Name, metav1.GetOptions{})
			if err != nil {
				return err
			}
			cur.Webhooks = m.Webhooks
			_, err = mutating.Update(ctx, cur, metav1.UpdateOptions{})
			return err
		})
		if err != nil {
			return fmt.Errorf("updating MutatingWebhookConfiguration %s: %w", m.Name, err)
		}
	} else if err != nil {
		return fmt.Errorf("creating MutatingWebhookConfiguration %s: %w", m.Name, err)
	}
	validating := kube.AdmissionregistrationV1().ValidatingWebhookConfigurations()
	v := cp.hooks.ValidatingWebhookConfiguration()
	if _, err := validating.Create(ctx, v, metav1.CreateOptions{}); apierrors.IsAlreadyExists(err) {
		err = retry.RetryOnConflict(retry.DefaultRetry, func() error {
			cur, err := validating.Get(ctx, v.Name, metav1.GetOptions{})
			if err != nil {
				return err
			}
			cur.Webhooks = v.Webhooks
			_, err = validating.Update(ctx, cur, metav1.UpdateOptions{})
			return err
		})
		if err != nil {
			return fmt.Errorf("updating ValidatingWebhookConfiguration %s: %w", v.Name, err)
		}
	} else if err != nil {
		return fmt.Errorf("creating ValidatingWebhookConfiguration %s: %w", v.Name, err)
	}
	return waitWebhooksActive(ctx, dyn)
}

var imageStreamResource = schema.GroupVersionResource{Group: "image.openshift.io", Version: "v1", Resource: "imagestreams"}

// waitWebhooksActive dry-runs the create of a stream whose tag has no reference policy (the
// mutating hook defaults it to Source) and one whose name the validating hook rejects, until both
// answers show the hooks.
func waitWebhooksActive(ctx context.Context, dyn dynamic.Interface) error {
	probe := func(name string) *unstructured.Unstructured {
		return &unstructured.Unstructured{Object: map[string]any{
			"apiVersion": "image.openshift.io/v1", "kind": "ImageStream",
			"metadata": map[string]any{"name": name, "namespace": "openshift"},
			"spec": map[string]any{"tags": []any{map[string]any{
				"name": "probe", "from": map[string]any{"kind": "DockerImage", "name": "registry.invalid/probe:1"},
			}}},
		}}
	}
	streams := dyn.Resource(imageStreamResource).Namespace("openshift")
	dryRun := metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}}
	var last string
	err := wait.PollUntilContextTimeout(ctx, 20*time.Millisecond, 30*time.Second, true, func(ctx context.Context) (bool, error) {
		got, err := streams.Create(ctx, probe("webhook-probe"), dryRun)
		if err != nil {
			last = err.Error()
			return false, nil
		}
		tags, _, _ := unstructured.NestedSlice(got.Object, "spec", "tags")
		if len(tags) != 1 {
			last = "the mutating webhook is not called yet"
			return false, nil
		}
		if policy, _, _ := unstructured.NestedString(tags[0].(map[string]any), "referencePolicy", "type"); policy != "Source" {
			last = "the mutating webhook is not called yet"
			return false, nil
		}
		// "a--b" is a valid object name, but not a valid image stream name.
		_, err = streams.Create(ctx, probe("webhook--probe"), dryRun)
		if !apierrors.IsInvalid(err) {
			last = fmt.Sprintf("the validating webhook is not called yet (create of an invalid name: %v)", err)
			return false, nil
		}
		return true, nil
	})
	if err != nil {
		return fmt.Errorf("the admission webhooks do not act on requests: %s (%w)", last, err)
	}
	return nil
}

// warmWatchCache lists one object of a kind whose CRD has just become Established. Such a list
// can meet the CRD's storage being rebuilt after the server's own status updates; the server then
// resets the stream (HTTP/2 INTERNAL_ERROR). A list that is only there to warm a cache is tried
// again rather than failing the control plane's start.
func warmWatchCache(ctx context.Context, dyn dynamic.Interface, gvr schema.GroupVersionResource) error {
	var last error
	err := wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, 30*time.Second, true, func(ctx context.Context) (bool, error) {
		_, last = dyn.Resource(gvr).List(ctx, metav1.ListOptions{Limit: 1})
		return last == nil, nil
	})
	if err != nil && last != nil {
		err = last
	}
	if err != nil {
		return fmt.Errorf("listing %s: %w", gvr, err)
	}
	return nil
}

func waitEstablished(ctx context.Context, dyn dynamic.Interface, name string) error {
	return wait.PollUntilContextTimeout(ctx, 20*time.Millisecond, 30*time.Second, true, func(ctx context.Context) (bool, error) {
		crd, err := dyn.Resource(crdResource).Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return false, nil
		}
		conditions, _, _ := unstructured.NestedSlice(crd.Object, "status", "conditions")
		for _, c := range conditions {
			cond, _ := c.(map[string]interface{})
			if cond["type"] == "Established" && cond["status"] == "True" {
				return true, nil
			}
		}
		return false, nil
	})
}

// ReadManifests decodes every object of a (multi-document) YAML or JSON file. The objects are
// the caller's to change.
func ReadManifests(path string) ([]*unstructured.Unstructured, error) {
	info, err := os.Stat(path)
	if err != nil {
		return nil, err
	}
	key := manifestKey{path: path, size: info.Size(), modified: info.ModTime()}
	decoded, cached := manifestCache.Load(key)
	if !cached {
		objs, err := decodeManifests(path)
		if err != nil {
			return nil, err
		}
		decoded, _ = manifestCache.LoadOrStore(key, objs)
	}
	objs := decoded.([]*unstructured.Unstructured)
	out := make([]*unstructured.Unstructured, len(objs))
	for i, obj := range objs {
		out[i] = obj.DeepCopy()
	}
	return out, nil
}

// manifestCache keeps each manifest file decoded, by path, size and modification time: every
// control plane a test binary starts installs the same CRDs and applies the same manifests/, and
// turning their YAML into objects took 4.5 s of the integration tests' CPU under the race detector.
var manifestCache sync.Map // manifestKey -> []*unstructured.Unstructured

type manifestKey struct {
	path     string
	size     int64
	modified time.Time
}

func decodeManifests(path string) ([]*unstructured.Unstructured, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	decoder := utilyaml.NewYAMLOrJSONDecoder(bytes.NewReader(data), 4096)
	var objs []*unstructured.Unstructured
	for {
		obj := &unstructured.Unstructured{}
		if err := decoder.Decode(&obj.Object); err != nil {
			if err == io.EOF {
				return objs, nil
			}
			return nil, fmt.Errorf("%s: %w", path, err)
		}
		if len(obj.Object) == 0 {
			continue
		}
		objs = append(objs, obj)
	}
}

func randomToken() string {
	b := make([]byte, 16)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

// servedResource is the resource of a CRD at its storage version (empty if it has none).
func servedResource(crd *unstructured.Unstructured) schema.GroupVersionResource {
	group, _, _ := unstructured.NestedString(crd.Object, "spec", "group")
	plural, _, _ := unstructured.NestedString(crd.Object, "spec", "names", "plural")
	versions, _, _ := unstructured.NestedSlice(crd.Object, "spec", "versions")
	for _, v := range versions {
		version, _ := v.(map[string]interface{})
		if storage, _ := version["storage"].(bool); storage {
			name, _ := version["name"].(string)
			return schema.GroupVersionResource{Group: group, Version: name, Resource: plural}
		}
	}
	return schema.GroupVersionResource{}
}
