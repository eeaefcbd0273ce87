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
	"sort"
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
)

// Namespaces that exist on every OpenShift cluster and that the operator works in.
var Namespaces = []string{"openshift", "openshift-config", OperatorNamespace}

var crdResource = schema.GroupVersionResource{Group: "apiextensions.k8s.io", Version: "v1", Resource: "customresourcedefinitions"}

// CRDFiles lists the CRD manifests the control plane serves: the copies of openshift/api's own
// CRDs (test/crds/openshift-api and the Config CRD in manifests/) and the stand-ins for the
// aggregated image and template APIs (test/crds/aggregated).
func CRDFiles() ([]string, error) {
	root := RepoRoot()
	files := []string{filepath.Join(root, "manifests", "00-samples-config.crd.yaml")}
	for _, dir := range []string{"openshift-api", "aggregated"} {
		matches, err := filepath.Glob(filepath.Join(root, "test", "crds", dir, "*.yaml"))
		if err != nil {
			return nil, err
		}
		files = append(files, matches...)
	}
	sort.Strings(files[1:])
	return files, nil
}

// Bootstrap installs the CRDs and creates the namespaces. It is idempotent.
func (cp *ControlPlane) Bootstrap(ctx context.Context) error {
	dyn, err := dynamic.NewForConfig(cp.AdminConfig)
	if err != nil {
		return err
	}
	files, err := CRDFiles()
	if err != nil {
		return err
	}
	var names []string
	for _, file := range files {
		objs, err := ReadManifests(file)
		if err != nil {
			return err
		}
		for _, obj := range objs {
			if _, err := dyn.Resource(crdResource).Create(ctx, obj, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
				return fmt.Errorf("installing CRD from %s: %w", file, err)
			}
			names = append(names, obj.GetName())
		}
	}
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
	for _, name := range names {
		if err := waitEstablished(ctx, dyn, name); err != nil {
			return err
		}
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

// ReadManifests decodes every object of a (multi-document) YAML or JSON file.
func ReadManifests(path string) ([]*unstructured.Unstructured, error) {
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
