// Package payload reads manifests/ as the cluster-version operator and `oc adm release new`
// consume it (test/payloadcheck checks the rules a release payload depends on).
//
// Everything here is pure: manifests/ is read through an fs.FS and nothing is written.
package payload

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"path"
	"slices"
	"strings"

	imagev1 "github.com/openshift/api/image/v1"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"sigs.k8s.io/yaml"

	"github.com/samples-operator-dev/cluster-samples-operator/pkg/clusteroperator"
	"github.com/samples-operator-dev/cluster-samples-operator/pkg/names"
)

const (
	// ImageReferencesFile lists the payload images that manifests/ refers to.
	ImageReferencesFile = "image-references"
	// OperatorImageTag is the tag of image-references that names the operator's own image.
	OperatorImageTag = "cluster-samples-operator"

	// ProfileAnnotationPrefix + a cluster profile, set to "true", includes a manifest in the
	// payload of clusters of that profile.
	ProfileAnnotationPrefix = "include.release.openshift.io/"
	// DeleteAnnotation, set to "true", makes the CVO delete the object instead of applying it.
	DeleteAnnotation = "release.openshift.io/delete"

	// SelfManagedHA is the profile of a self-managed cluster, the usual one.
	SelfManagedHA = "self-managed-high-availability"
	// IBMCloudManaged is the profile of IBM Cloud clusters, whose control plane is hosted
	// elsewhere.
	IBMCloudManaged = "ibm-cloud-managed"

	// The operator's ClusterOperator, Deployment and namespace.
	ClusterOperatorName = clusteroperator.Name
	OperatorName        = "cluster-samples-operator"
	OperatorNamespace   = names.OperatorNamespace
)

// Object is one YAML document of manifests/.
type Object struct {
	File        string // file name within manifests/
	APIVersion  string
	Kind        string
	Name        string
	Namespace   string
	Labels      map[string]string
	Annotations map[string]string
	JSON        []byte // the document as JSON
}

func (o Object) String() string {
	if o.Namespace != "" {
		return fmt.Sprintf("%s %s/%s (%s)", o.Kind, o.Namespace, o.Name, o.File)
	}
	return fmt.Sprintf("%s %s (%s)", o.Kind, o.Name, o.File)
}

// Decode unmarshals the object into a typed value, rejecting unknown fields so that a typo
// in manifests/ does not silently disappear.
func (o Object) Decode(into any) error {
	dec := json.NewDecoder(bytes.NewReader(o.JSON))
	dec.DisallowUnknownFields()
	if err := dec.Decode(into); err != nil {
		return fmt.Errorf("%s: %w", o, err)
	}
	return nil
}

// Group is the API group of the object ("" for the core group).
func (o Object) Group() string {
	g, _, ok := strings.Cut(o.APIVersion, "/")
	if !ok {
		return ""
	}
	return g
}

// Profiles are the cluster profiles the object is included in, sorted.
func (o Object) Profiles() []string {
	var out []string
	for k, v := range o.Annotations {
		if p, ok := strings.CutPrefix(k, ProfileAnnotationPrefix); ok && v == "true" {
			out = append(out, p)
		}
	}
	slices.Sort(out)
	return out
}

// InProfile says whether the object is included in profile p.
func (o Object) InProfile(p string) bool {
	return o.Annotations[ProfileAnnotationPrefix+p] == "true"
}

// Deleted says whether the CVO deletes the object rather than applies it.
func (o Object) Deleted() bool {
	return o.Annotations[DeleteAnnotation] == "true"
}

// Read parses every *.yaml file at the top of fsys, in name order (the CVO's order), into its
// documents; documents that hold only comments are skipped.
func Read(fsys fs.FS) ([]Object, error) {
	entries, err := fs.ReadDir(fsys, ".")
	if err != nil {
		return nil, err
	}
	var objs []Object
	var errs []error
	for _, e := range entries {
		if e.IsDir() || path.Ext(e.Name()) != ".yaml" {
			continue
		}
		data, err := fs.ReadFile(fsys, e.Name())
		if err != nil {
			return nil, err
		}
		docs, err := splitDocuments(e.Name(), data)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		objs = append(objs, docs...)
	}
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	return objs, nil
}

func splitDocuments(file string, data []byte) ([]Object, error) {
	r := utilyaml.NewYAMLReader(bufio.NewReader(bytes.NewReader(data)))
	var objs []Object
	for i := 1; ; i++ {
		doc, err := r.Read()
		if err == io.EOF {
			return objs, nil
		}
		if err != nil {
			return nil, fmt.Errorf("%s: %w", file, err)
		}
		j, err := yaml.YAMLToJSON(doc)
		if err != nil {
			return nil, fmt.Errorf("%s, document %d: %w", file, i, err)
		}
		if string(bytes.TrimSpace(j)) == "null" {
			continue // comments only
		}
		var h struct {
			APIVersion string `json:"apiVersion"`
			Kind       string `json:"kind"`
			Metadata   struct {
				Name        string            `json:"name"`
				Namespace   string            `json:"namespace"`
				Labels      map[string]string `json:"labels"`
				Annotations map[string]string `json:"annotations"`
			} `json:"metadata"`
		}
		if err := json.Unmarshal(j, &h); err != nil {
			return nil, fmt.Errorf("%s, document %d: %w", file, i, err)
		}
		if h.APIVersion == "" || h.Kind == "" || h.Metadata.Name == "" {
			return nil, fmt.Errorf("%s, document %d: apiVersion, kind and metadata.name are required", file, i)
		}
		objs = append(objs, Object{
			File: file, APIVersion: h.APIVersion, Kind: h.Kind, Name: h.Metadata.Name, Namespace: h.Metadata.Namespace,
			Labels: h.Metadata.Labels, Annotations: h.Metadata.Annotations, JSON: j,
		})
	}
}

// ImageReference is one tag of image-references: the release's image named Tag replaces
// every occurrence of Image in manifests/.
type ImageReference struct {
	Tag   string
	Image string
}

// ReadImageReferences parses image-references. Every tag must name a DockerImage, and
// neither tag names nor images may repeat: the release tooling maps each image to one tag.
func ReadImageReferences(fsys fs.FS) ([]ImageReference, error) {
	data, err := fs.ReadFile(fsys, ImageReferencesFile)
	if err != nil {
		return nil, err
	}
	var is imagev1.ImageStream
	if err := yaml.UnmarshalStrict(data, &is); err != nil {
		return nil, fmt.Errorf("%s: %w", ImageReferencesFile, err)
	}
	var refs []ImageReference
	var errs []error
	tags, images := map[string]bool{}, map[string]bool{}
	for i, t := range is.Spec.Tags {
		switch {
		case t.Name == "":
			errs = append(errs, fmt.Errorf("%s: tag %d has no name", ImageReferencesFile, i))
		case t.From == nil || t.From.Kind != "DockerImage" || t.From.Name == "":
			errs = append(errs, fmt.Errorf("%s: tag %s must be from a DockerImage with a name", ImageReferencesFile, t.Name))
		case tags[t.Name]:
			errs = append(errs, fmt.Errorf("%s: tag %s is listed twice", ImageReferencesFile, t.Name))
		case images[t.From.Name]:
			errs = append(errs, fmt.Errorf("%s: image %s is listed under two tags; the release can replace it with only one", ImageReferencesFile, t.From.Name))
		default:
			tags[t.Name], images[t.From.Name] = true, true
			refs = append(refs, ImageReference{Tag: t.Name, Image: t.From.Name})
		}
	}
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	return refs, nil
}

// OperatorImage returns the image of the operator's own tag, OperatorImageTag.
func OperatorImage(refs []ImageReference) (string, error) {
	for _, r := range refs {
		if r.Tag == OperatorImageTag {
			return r.Image, nil
		}
	}
	return "", fmt.Errorf("%s has no tag %s, the operator's own image", ImageReferencesFile, OperatorImageTag)
}
