// Package mirrorcheck checks a mirror before a disconnected cluster relies on it: it maps each
// image of the inventory to where the cluster's importer will look for it (a samplesRegistry
// value, or the mirror sets oc-mirror wrote), asks the mirror for each, and reports which images
// are present and which are missing. The mapping and the report are pure; the registry is reached
// only through the Lookup a caller gives (Remote, for the command).
package mirrorcheck

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"

	configv1 "github.com/openshift/api/config/v1"
	operatorv1alpha1 "github.com/openshift/api/operator/v1alpha1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
)

// Sets are the mirror configuration of a cluster: the three kinds openshift-apiserver resolves
// every ImageStreamImport through.
type Sets struct {
	TagMirrorSets         []configv1.ImageTagMirrorSet
	DigestMirrorSets      []configv1.ImageDigestMirrorSet
	ContentSourcePolicies []operatorv1alpha1.ImageContentSourcePolicy
}

// Empty reports whether s holds no mirror set at all.
func (s Sets) Empty() bool {
	return len(s.TagMirrorSets) == 0 && len(s.DigestMirrorSets) == 0 && len(s.ContentSourcePolicies) == 0
}

// ParseSets reads the mirror sets of a YAML or JSON stream: documents of the three kinds, or
// Lists of them. Documents of other kinds (oc-mirror writes CatalogSources and others next to the
// mirror sets) are skipped.
func ParseSets(data []byte) (Sets, error) {
	var s Sets
	dec := utilyaml.NewYAMLOrJSONDecoder(bytes.NewReader(data), 4096)
	for {
		var u unstructured.Unstructured
		if err := dec.Decode(&u.Object); errors.Is(err, io.EOF) {
			return s, nil
		} else if err != nil {
			return s, err
		}
		if len(u.Object) == 0 {
			continue
		}
		if err := s.add(&u); err != nil {
			return s, err
		}
	}
}

func (s *Sets) add(u *unstructured.Unstructured) error {
	if u.IsList() {
		return u.EachListItem(func(item runtime.Object) error { return s.add(item.(*unstructured.Unstructured)) })
	}
	gvk := u.GroupVersionKind()
	var into any
	switch {
	case gvk.Group == configv1.GroupName && gvk.Kind == "ImageTagMirrorSet":
		s.TagMirrorSets = append(s.TagMirrorSets, configv1.ImageTagMirrorSet{})
		into = &s.TagMirrorSets[len(s.TagMirrorSets)-1]
	case gvk.Group == configv1.GroupName && gvk.Kind == "ImageDigestMirrorSet":
		s.DigestMirrorSets = append(s.DigestMirrorSets, configv1.ImageDigestMirrorSet{})
		into = &s.DigestMirrorSets[len(s.DigestMirrorSets)-1]
	case gvk.Group == operatorv1alpha1.GroupName && gvk.Kind == "ImageContentSourcePolicy":
		s.ContentSourcePolicies = append(s.ContentSourcePolicies, operatorv1alpha1.ImageContentSourcePolicy{})
		into = &s.ContentSourcePolicies[len(s.ContentSourcePolicies)-1]
	default:
		return nil
	}
	if err := runtime.DefaultUnstructuredConverter.FromUnstructuredWithValidation(u.Object, into, false); err != nil {
		return fmt.Errorf("%s %s: %w", gvk.Kind, u.GetName(), err)
	}
	return nil
}

// LoadSets reads the mirror sets of files and directories (every *.yaml, *.yml and *.json
// directly in a directory, as oc-mirror leaves them in its cluster-resources folder). It fails
// when they hold no mirror set at all.
func LoadSets(paths []string) (Sets, error) {
	var all Sets
	for _, p := range paths {
		files := []string{p}
		if fi, err := os.Stat(p); err != nil {
			return all, err
		} else if fi.IsDir() {
			entries, err := os.ReadDir(p)
			if err != nil {
				return all, err
			}
			files = files[:0]
			for _, e := range entries {
				if ext := strings.ToLower(filepath.Ext(e.Name())); !e.IsDir() && slices.Contains([]string{".yaml", ".yml", ".json"}, ext) {
					files = append(files, filepath.Join(p, e.Name()))
				}
			}
		}
		for _, f := range files {
			data, err := os.ReadFile(f)
			if err != nil {
				return all, err
			}
			s, err := ParseSets(data)
			if err != nil {
				return all, fmt.Errorf("%s: %w", f, err)
			}
			all.TagMirrorSets = append(all.TagMirrorSets, s.TagMirrorSets...)
			all.DigestMirrorSets = append(all.DigestMirrorSets, s.DigestMirrorSets...)
			all.ContentSourcePolicies = append(all.ContentSourcePolicies, s.ContentSourcePolicies...)
		}
	}
	if all.Empty() {
		return all, fmt.Errorf("no ImageTagMirrorSet, ImageDigestMirrorSet or ImageContentSourcePolicy in %s", strings.Join(paths, ", "))
	}
	return all, nil
}
