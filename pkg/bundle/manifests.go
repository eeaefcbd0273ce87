package bundle

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
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"sigs.k8s.io/yaml"

	"github.com/samples-operator-dev/cluster-samples-operator/pkg/configstatus"
)

// imageReferencesFile names, for the CVO, the images the release payload substitutes.
const imageReferencesFile = "image-references"

// object is one YAML document of manifests/.
type object struct {
	file       string // file name within manifests/
	apiVersion string
	kind       string
	name       string
	namespace  string
	json       []byte // the document as JSON
}

func (o object) String() string {
	if o.namespace != "" {
		return fmt.Sprintf("%s %s/%s (%s)", o.kind, o.namespace, o.name, o.file)
	}
	return fmt.Sprintf("%s %s (%s)", o.kind, o.name, o.file)
}

// decode unmarshals the object into a typed value, rejecting unknown fields so that a typo
// in manifests/ does not silently disappear from the bundle.
func (o object) decode(into any) error {
	dec := json.NewDecoder(bytes.NewReader(o.json))
	dec.DisallowUnknownFields()
	if err := dec.Decode(into); err != nil {
		return fmt.Errorf("%s: %w", o, err)
	}
	return nil
}

// crdFile is a CustomResourceDefinition file, copied into the bundle byte for byte.
type crdFile struct {
	object
	data []byte
}

// readManifests parses every *.yaml file at the top of fsys, in name order, into its
// documents; documents that hold only comments are skipped. A file holding a
// CustomResourceDefinition must hold nothing else, since it is copied as it is.
func readManifests(fsys fs.FS) (objs []object, crds []crdFile, err error) {
	entries, err := fs.ReadDir(fsys, ".")
	if err != nil {
		return nil, nil, err
	}
	var errs []error
	for _, e := range entries {
		if e.IsDir() || path.Ext(e.Name()) != ".yaml" {
			continue
		}
		data, err := fs.ReadFile(fsys, e.Name())
		if err != nil {
			return nil, nil, err
		}
		docs, err := splitDocuments(e.Name(), data)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		for _, o := range docs {
			if o.kind == "CustomResourceDefinition" {
				if len(docs) != 1 {
					errs = append(errs, fmt.Errorf("%s: a CustomResourceDefinition must be alone in its file, which the bundle copies as it is", e.Name()))
					continue
				}
				crds = append(crds, crdFile{object: o, data: data})
				continue
			}
			objs = append(objs, o)
		}
	}
	if len(errs) > 0 {
		return nil, nil, errors.Join(errs...)
	}
	return objs, crds, nil
}

func splitDocuments(file string, data []byte) ([]object, error) {
	r := utilyaml.NewYAMLReader(bufio.NewReader(bytes.NewReader(data)))
	var objs []object
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
				Name      string `json:"name"`
				Namespace string `json:"namespace"`
			} `json:"metadata"`
		}
		if err := json.Unmarshal(j, &h); err != nil {
			return nil, fmt.Errorf("%s, document %d: %w", file, i, err)
		}
		if h.APIVersion == "" || h.Kind == "" || h.Metadata.Name == "" {
			return nil, fmt.Errorf("%s, document %d: apiVersion, kind and metadata.name are required", file, i)
		}
		objs = append(objs, object{file: file, apiVersion: h.APIVersion, kind: h.Kind, name: h.Metadata.Name, namespace: h.Metadata.Namespace, json: j})
	}
}

// operatorImageFromReferences returns the one image that image-references names: the
// operator's own. The CVO substitutes it in the Deployment; the bundle takes it from here
// too, so that it is written down once.
func operatorImageFromReferences(fsys fs.FS) (string, error) {
	data, err := fs.ReadFile(fsys, imageReferencesFile)
	if err != nil {
		return "", err
	}
	var is imagev1.ImageStream
	if err := yaml.UnmarshalStrict(data, &is); err != nil {
		return "", fmt.Errorf("%s: %w", imageReferencesFile, err)
	}
	var images []string
	for _, t := range is.Spec.Tags {
		if t.From != nil && t.From.Kind == "DockerImage" && t.From.Name != "" {
			images = append(images, t.From.Name)
		}
	}
	if len(images) != 1 {
		return "", fmt.Errorf("%s names %d images; the bundle expects exactly one, the operator's", imageReferencesFile, len(images))
	}
	return images[0], nil
}

// Annotations that only mean something to the cluster-version operator.
var cvoAnnotationPrefixes = []string{
	"include.release.openshift.io/",
	"exclude.release.openshift.io/",
	"release.openshift.io/",
	"capability.openshift.io/",
}

func isCVOAnnotation(key string) bool {
	return slices.ContainsFunc(cvoAnnotationPrefixes, func(p string) bool { return strings.HasPrefix(key, p) })
}

// genericForBundle returns the object as a generic map, without the CVO's annotations and,
// when dropNamespace is set, without metadata.namespace (OLM creates namespaced bundle
// objects in the namespace the operator is installed into, whatever they say).
func genericForBundle(o object, dropNamespace bool) (map[string]any, error) {
	var m map[string]any
	if err := json.Unmarshal(o.json, &m); err != nil {
		return nil, fmt.Errorf("%s: %w", o, err)
	}
	meta, _ := m["metadata"].(map[string]any)
	if dropNamespace {
		delete(meta, "namespace")
	}
	if ann, ok := meta["annotations"].(map[string]any); ok {
		for k := range ann {
			if isCVOAnnotation(k) {
				delete(ann, k)
			}
		}
		if len(ann) == 0 {
			delete(meta, "annotations")
		}
	}
	return m, nil
}

func withoutCVOAnnotations(in map[string]string) map[string]string {
	out := map[string]string{}
	for k, v := range in {
		if !isCVOAnnotation(k) {
			out[k] = v
		}
	}
	if len(out) == 0 {
		return nil
	}
	return out
}

// operatorManifests are the objects of manifests/ sorted by what the bundle does with them.
type operatorManifests struct {
	namespace      *corev1.Namespace // nil when manifests/ has none
	serviceAccount *corev1.ServiceAccount
	deployment     *appsv1.Deployment
	rbac           []object // Roles, ClusterRoles and their bindings, for planRBAC
	extras         []object // shipped as they are
}

// sortManifests sorts the objects of manifests/ (CRDs aside) by kind, and checks that the
// operator's ServiceAccount, Deployment and Namespace are in the namespace the operator
// keeps its state in.
func sortManifests(objs []object) (*operatorManifests, error) {
	var (
		namespaces []*corev1.Namespace
		sas        []*corev1.ServiceAccount
		deps       []*appsv1.Deployment
		m          operatorManifests
	)
	for _, o := range objs {
		switch o.kind {
		case "Namespace":
			ns := &corev1.Namespace{}
			if err := o.decode(ns); err != nil {
				return nil, err
			}
			namespaces = append(namespaces, ns)
		case "ServiceAccount":
			sa := &corev1.ServiceAccount{}
			if err := o.decode(sa); err != nil {
				return nil, err
			}
			sas = append(sas, sa)
		case "Deployment":
			d := &appsv1.Deployment{}
			if err := o.decode(d); err != nil {
				return nil, err
			}
			deps = append(deps, d)
		case "ClusterRole", "ClusterRoleBinding", "Role", "RoleBinding":
			m.rbac = append(m.rbac, o)
		case "Service", "ServiceMonitor", "PrometheusRule":
			if o.namespace != configstatus.OperatorNamespace {
				return nil, fmt.Errorf("%s: OLM creates bundle objects in the operator's namespace %s only", o, configstatus.OperatorNamespace)
			}
			m.extras = append(m.extras, o)
		case "ClusterOperator", "ImageStream":
			// The operator creates its ClusterOperator when missing; the in-payload
			// imagestreams are the CVO's, not the samples operator's.
		default:
			return nil, fmt.Errorf("%s: no rule for kind %s in the bundle; decide in pkg/bundle whether OLM should create it", o, o.kind)
		}
	}
	if len(sas) != 1 || len(deps) != 1 || len(namespaces) > 1 {
		return nil, fmt.Errorf("manifests/ must hold one ServiceAccount, one Deployment and at most one Namespace; found %d, %d and %d", len(sas), len(deps), len(namespaces))
	}
	m.serviceAccount, m.deployment = sas[0], deps[0]
	if len(namespaces) == 1 {
		m.namespace = namespaces[0]
	}
	ns := configstatus.OperatorNamespace
	if m.serviceAccount.Namespace != ns || m.deployment.Namespace != ns || (m.namespace != nil && m.namespace.Name != ns) {
		return nil, fmt.Errorf("the ServiceAccount, Deployment and Namespace must all be in %s, where the operator keeps its state", ns)
	}
	if got := m.deployment.Spec.Template.Spec.ServiceAccountName; got != m.serviceAccount.Name {
		return nil, fmt.Errorf("Deployment %s runs as service account %q, not %q", m.deployment.Name, got, m.serviceAccount.Name)
	}
	return &m, nil
}
