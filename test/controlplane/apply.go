package controlplane

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/discovery/cached/memory"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/restmapper"
)

// ApplyResult says what ApplyDir did with each object.
type ApplyResult struct {
	Applied []string
	// Skipped lists objects whose kind this control plane does not serve (for example the
	// monitoring.coreos.com ServiceMonitor and PrometheusRule, served on a cluster by the
	// Prometheus operator).
	Skipped []string
}

// ApplyDir server-side applies every manifest file in dir (sorted by name, as the CVO orders
// them) with the given identity.
func ApplyDir(ctx context.Context, cfg *rest.Config, dir string) (*ApplyResult, error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	var files []string
	for _, e := range entries {
		if !e.IsDir() && (strings.HasSuffix(e.Name(), ".yaml") || strings.HasSuffix(e.Name(), ".yml")) {
			files = append(files, filepath.Join(dir, e.Name()))
		}
	}
	sort.Strings(files)
	var objs []*unstructured.Unstructured
	for _, f := range files {
		fileObjs, err := ReadManifests(f)
		if err != nil {
			return nil, err
		}
		objs = append(objs, fileObjs...)
	}
	return Apply(ctx, cfg, objs)
}

// Apply server-side applies objects with field manager "local-control-plane".
func Apply(ctx context.Context, cfg *rest.Config, objs []*unstructured.Unstructured) (*ApplyResult, error) {
	disco, err := discovery.NewDiscoveryClientForConfig(cfg)
	if err != nil {
		return nil, err
	}
	mapper := restmapper.NewDeferredDiscoveryRESTMapper(memory.NewMemCacheClient(disco))
	dyn, err := dynamic.NewForConfig(cfg)
	if err != nil {
		return nil, err
	}
	result := &ApplyResult{}
	for _, obj := range objs {
		gvk := obj.GroupVersionKind()
		id := fmt.Sprintf("%s %s", gvk.Kind, objectKey(obj))
		mapping, err := mapper.RESTMapping(gvk.GroupKind(), gvk.Version)
		if meta.IsNoMatchError(err) {
			result.Skipped = append(result.Skipped, id)
			continue
		}
		if err != nil {
			return result, fmt.Errorf("%s: %w", id, err)
		}
		var client dynamic.ResourceInterface = dyn.Resource(mapping.Resource)
		if mapping.Scope.Name() == meta.RESTScopeNameNamespace {
			client = dyn.Resource(mapping.Resource).Namespace(obj.GetNamespace())
		}
		if _, err := client.Apply(ctx, obj.GetName(), obj, metav1.ApplyOptions{FieldManager: "local-control-plane", Force: true}); err != nil {
			return result, fmt.Errorf("applying %s: %w", id, err)
		}
		result.Applied = append(result.Applied, id)
	}
	return result, nil
}

func objectKey(obj *unstructured.Unstructured) string {
	if obj.GetNamespace() == "" {
		return obj.GetName()
	}
	return obj.GetNamespace() + "/" + obj.GetName()
}
