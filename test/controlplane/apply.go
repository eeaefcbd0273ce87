package controlplane

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/discovery/cached/memory"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/restmapper"
)

const (
	// DefaultProfile is the cluster profile of a self-managed cluster, the one the tests and
	// run-local play.
	DefaultProfile = "self-managed-high-availability"
	// profileAnnotationPrefix + profile marks a manifest as part of that profile's payload.
	profileAnnotationPrefix = "include.release.openshift.io/"
	// DeleteAnnotation asks the cluster-version operator to delete the object instead of
	// applying it: the only way a payload removes what an earlier release created.
	DeleteAnnotation = "release.openshift.io/delete"
)

// ApplyResult says what ApplyDir did with each object.
type ApplyResult struct {
	Applied []string
	// Deleted lists the objects annotated release.openshift.io/delete that existed and were
	// deleted; such an object that did not exist is listed nowhere.
	Deleted []string
	// Skipped lists objects whose kind this control plane does not serve (for example the
	// monitoring.coreos.com ServiceMonitor and PrometheusRule, served on a cluster by the
	// Prometheus operator).
	Skipped []string
	// Excluded lists the objects that the profile does not include.
	Excluded []string
}

// ApplyDir applies manifests/ as the cluster-version operator does on a self-managed cluster:
// see ApplyProfile.
func ApplyDir(ctx context.Context, cfg *rest.Config, dir string) (*ApplyResult, error) {
	return ApplyProfile(ctx, cfg, dir, DefaultProfile)
}

// ApplyProfile applies, in file-name order as the CVO orders them, the objects of every manifest
// file in dir that carry include.release.openshift.io/<profile>: "true", and deletes those of them
// annotated release.openshift.io/delete: "true".
func ApplyProfile(ctx context.Context, cfg *rest.Config, dir, profile string) (*ApplyResult, error) {
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
	var included []*unstructured.Unstructured
	var excluded []string
	for _, f := range files {
		fileObjs, err := ReadManifests(f)
		if err != nil {
			return nil, err
		}
		for _, obj := range fileObjs {
			if obj.GetAnnotations()[profileAnnotationPrefix+profile] == "true" {
				included = append(included, obj)
			} else {
				excluded = append(excluded, fmt.Sprintf("%s %s", obj.GetKind(), objectKey(obj)))
			}
		}
	}
	result, err := Apply(ctx, cfg, included)
	if result != nil {
		result.Excluded = excluded
	}
	return result, err
}

// Apply server-side applies objects with field manager "local-control-plane"; an object
// annotated release.openshift.io/delete: "true" is deleted instead, if it exists.
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
		if obj.GetAnnotations()[DeleteAnnotation] == "true" {
			background := metav1.DeletePropagationBackground
			err := client.Delete(ctx, obj.GetName(), metav1.DeleteOptions{PropagationPolicy: &background})
			switch {
			case apierrors.IsNotFound(err):
			case err != nil:
				return result, fmt.Errorf("deleting %s: %w", id, err)
			default:
				result.Deleted = append(result.Deleted, id)
			}
			continue
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
