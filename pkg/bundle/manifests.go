package bundle

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"slices"
	"strings"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"

	"github.com/samples-operator-dev/cluster-samples-operator/pkg/names"
	"github.com/samples-operator-dev/cluster-samples-operator/pkg/payload"
)

// object is one YAML document of manifests/.
type object = payload.Object

// crdFile is a CustomResourceDefinition file, copied into the bundle byte for byte.
type crdFile struct {
	object
	data []byte
}

// readManifests returns the objects of manifests/ that a self-managed cluster gets, the
// profile OLM installs on: a Deployment of another profile is the same operator scheduled
// differently, and an object the payload deletes on upgrade was never created by a bundle.
// A file holding a CustomResourceDefinition must hold nothing else, since it is copied as
// it is.
func readManifests(fsys fs.FS) (objs []object, crds []crdFile, err error) {
	all, err := payload.Read(fsys)
	if err != nil {
		return nil, nil, err
	}
	perFile := map[string]int{}
	for _, o := range all {
		perFile[o.File]++
	}
	var errs []error
	for _, o := range all {
		if o.Deleted() || !o.InProfile(payload.SelfManagedHA) {
			continue
		}
		if o.Kind != "CustomResourceDefinition" {
			objs = append(objs, o)
			continue
		}
		if perFile[o.File] != 1 {
			errs = append(errs, fmt.Errorf("%s: a CustomResourceDefinition must be alone in its file, which the bundle copies as it is", o.File))
			continue
		}
		data, err := fs.ReadFile(fsys, o.File)
		if err != nil {
			return nil, nil, err
		}
		crds = append(crds, crdFile{object: o, data: data})
	}
	if len(errs) > 0 {
		return nil, nil, errors.Join(errs...)
	}
	return objs, crds, nil
}

// operatorImageFromReferences returns the operator's image as image-references names it. The
// CVO substitutes it in the Deployment; the bundle takes it from there too, so that it is
// written down once.
func operatorImageFromReferences(fsys fs.FS) (string, error) {
	refs, err := payload.ReadImageReferences(fsys)
	if err != nil {
		return "", err
	}
	return payload.OperatorImage(refs)
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
	if err := json.Unmarshal(o.JSON, &m); err != nil {
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
		switch o.Kind {
		case "Namespace":
			ns := &corev1.Namespace{}
			if err := o.Decode(ns); err != nil {
				return nil, err
			}
			namespaces = append(namespaces, ns)
		case "ServiceAccount":
			sa := &corev1.ServiceAccount{}
			if err := o.Decode(sa); err != nil {
				return nil, err
			}
			sas = append(sas, sa)
		case "Deployment":
			d := &appsv1.Deployment{}
			if err := o.Decode(d); err != nil {
				return nil, err
			}
			deps = append(deps, d)
		case "ClusterRole", "ClusterRoleBinding", "Role", "RoleBinding":
			m.rbac = append(m.rbac, o)
		case "Service", "ServiceMonitor", "PrometheusRule", "NetworkPolicy":
			// OLM creates NetworkPolicies from a bundle since v0.32.0 (OpenShift 4.12 and later
			// since their 2025 z-streams); an older one fails the install plan on them. Without
			// the policy any pod can hold the metrics port's connections and cause a TokenReview
			// per request.
			if o.Namespace != names.OperatorNamespace {
				return nil, fmt.Errorf("%s: OLM creates bundle objects in the operator's namespace %s only", o, names.OperatorNamespace)
			}
			m.extras = append(m.extras, o)
		case "ClusterOperator", "ImageStream":
			// The operator creates its ClusterOperator when missing; the in-payload
			// imagestreams are the CVO's, not the samples operator's.
		default:
			return nil, fmt.Errorf("%s: no rule for kind %s in the bundle; decide in pkg/bundle whether OLM should create it", o, o.Kind)
		}
	}
	if len(sas) != 1 || len(deps) != 1 || len(namespaces) > 1 {
		return nil, fmt.Errorf("manifests/ must hold, in profile %s, one ServiceAccount, one Deployment and at most one Namespace; found %d, %d and %d", payload.SelfManagedHA, len(sas), len(deps), len(namespaces))
	}
	m.serviceAccount, m.deployment = sas[0], deps[0]
	if len(namespaces) == 1 {
		m.namespace = namespaces[0]
	}
	ns := names.OperatorNamespace
	if m.serviceAccount.Namespace != ns || m.deployment.Namespace != ns || (m.namespace != nil && m.namespace.Name != ns) {
		return nil, fmt.Errorf("the ServiceAccount, Deployment and Namespace must all be in %s, where the operator keeps its state", ns)
	}
	if got := m.deployment.Spec.Template.Spec.ServiceAccountName; got != m.serviceAccount.Name {
		return nil, fmt.Errorf("Deployment %s runs as service account %q, not %q", m.deployment.Name, got, m.serviceAccount.Name)
	}
	return &m, nil
}
