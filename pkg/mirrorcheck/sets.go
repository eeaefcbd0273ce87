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

	"github.com/samples-operator-dev/cluster-samples-operator/pkg/mirrorsets"
)

// ParseSets reads the mirror sets of a YAML or JSON stream (as mirrorsets.Sets, which resolve
// images as openshift-apiserver imports them): documents of the three kinds, or
// Lists of them. Documents of other kinds (oc-mirror writes CatalogSources and others next to the
// mirror sets) are skipped.
func ParseSets(data []byte) (mirrorsets.Sets, error) {
	var s mirrorsets.Sets
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
		if err := add(&s, &u); err != nil {
			return s, err
		}
	}
}

func add(s *mirrorsets.Sets, u *unstructured.Unstructured) error {
	if u.IsList() {
		return u.EachListItem(func(item runtime.Object) error { return add(s, item.(*unstructured.Unstructured)) })
	}
	gvk := u.GroupVersionKind()
	var into any
	switch {
	case gvk.Group == configv1.GroupName && gvk.Kind == mirrorsets.KindTag:
		o := &configv1.ImageTagMirrorSet{}
		s.Tag, into = append(s.Tag, o), o
	case gvk.Group == configv1.GroupName && gvk.Kind == mirrorsets.KindDigest:
		o := &configv1.ImageDigestMirrorSet{}
		s.Digest, into = append(s.Digest, o), o
	case gvk.Group == operatorv1alpha1.GroupName && gvk.Kind == mirrorsets.KindContentPolicy:
		o := &operatorv1alpha1.ImageContentSourcePolicy{}
		s.ContentPolicy, into = append(s.ContentPolicy, o), o
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
func LoadSets(paths []string) (mirrorsets.Sets, error) {
	var all mirrorsets.Sets
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
			all.Tag = append(all.Tag, s.Tag...)
			all.Digest = append(all.Digest, s.Digest...)
			all.ContentPolicy = append(all.ContentPolicy, s.ContentPolicy...)
		}
	}
	if all.Empty() {
		return all, fmt.Errorf("no ImageTagMirrorSet, ImageDigestMirrorSet or ImageContentSourcePolicy in %s", strings.Join(paths, ", "))
	}
	return all, nil
}
