// Package payloadcheck checks the rules a release payload depends on (Check): every image is in
// image-references, each cluster profile of the ClusterOperator has exactly one operator
// Deployment, the Deployments of the profiles differ only where the profiles must, and an
// object's profiles are also those of every object it needs. `make verify` runs it
// (hack/verify-payload), and so do the CVO tests; the operator's binaries never link it.
package payloadcheck

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"reflect"
	"slices"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"

	"github.com/samples-operator-dev/cluster-samples-operator/pkg/payload"
)

// Check reads manifests/ and image-references from fsys and returns every rule they break,
// joined, or nil.
func Check(fsys fs.FS) error {
	objs, err := payload.Read(fsys)
	if err != nil {
		return err
	}
	refs, err := payload.ReadImageReferences(fsys)
	if err != nil {
		return err
	}
	var errs []error
	errs = append(errs, CheckImages(objs, refs)...)
	errs = append(errs, CheckOperatorDeployments(objs)...)
	errs = append(errs, CheckDeploymentVariants(objs)...)
	errs = append(errs, CheckProfiles(objs)...)
	errs = append(errs, CheckMetricsNetworkPolicy(objs)...)
	errs = append(errs, CheckProbesOffTheMetricsPort(objs)...)
	return errors.Join(errs...)
}

// CheckImages reports every image of manifests/ that image-references does not list: the
// release tooling substitutes only those, so any other would ship as the development pull
// spec. An image is any string under an "image" key (containers, initContainers, whatever
// the kind) and the from of an ImageStream tag of kind DockerImage.
func CheckImages(objs []payload.Object, refs []payload.ImageReference) []error {
	listed := map[string]bool{}
	for _, r := range refs {
		listed[r.Image] = true
	}
	var errs []error
	for _, o := range objs {
		images, err := imagesIn(o)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		for _, img := range images {
			if !listed[img.image] {
				errs = append(errs, fmt.Errorf("%s: %s %s is not a from.name of %s, so a release would not replace it", o, img.path, img.image, payload.ImageReferencesFile))
			}
		}
	}
	return errs
}

type imageAt struct{ path, image string }

func imagesIn(o payload.Object) ([]imageAt, error) {
	var doc any
	if err := json.Unmarshal(o.JSON, &doc); err != nil {
		return nil, fmt.Errorf("%s: %w", o, err)
	}
	var out []imageAt
	var walk func(p string, v any)
	walk = func(p string, v any) {
		switch v := v.(type) {
		case map[string]any:
			for _, k := range slices.Sorted(maps.Keys(v)) {
				child := k
				if p != "" {
					child = p + "." + k
				}
				if s, ok := v[k].(string); ok && k == "image" && s != "" {
					out = append(out, imageAt{child, s})
					continue
				}
				walk(child, v[k])
			}
		case []any:
			for i, e := range v {
				walk(fmt.Sprintf("%s[%d]", p, i), e)
			}
		}
	}
	walk("", doc)
	if o.Kind == "ImageStream" {
		var is struct {
			Spec struct {
				Tags []struct {
					From *struct {
						Kind string `json:"kind"`
						Name string `json:"name"`
					} `json:"from"`
				} `json:"tags"`
			} `json:"spec"`
		}
		if err := json.Unmarshal(o.JSON, &is); err != nil {
			return nil, fmt.Errorf("%s: %w", o, err)
		}
		for i, t := range is.Spec.Tags {
			if t.From != nil && t.From.Kind == "DockerImage" && t.From.Name != "" {
				out = append(out, imageAt{fmt.Sprintf("spec.tags[%d].from.name", i), t.From.Name})
			}
		}
	}
	return out, nil
}

// isOperatorDeployment says whether o is (a profile's variant of) the operator's Deployment.
func isOperatorDeployment(o payload.Object) bool {
	return o.Kind == "Deployment" && o.Name == payload.OperatorName && o.Namespace == payload.OperatorNamespace && !o.Deleted()
}

// CheckOperatorDeployments reports each profile of ClusterOperator openshift-samples that
// has no operator Deployment, or more than one, and each operator Deployment in a profile
// the ClusterOperator is not in (the CVO would run an operator it does not wait for).
func CheckOperatorDeployments(objs []payload.Object) []error {
	var co *payload.Object
	var deps []payload.Object
	for _, o := range objs {
		switch {
		case o.Kind == "ClusterOperator" && o.Name == payload.ClusterOperatorName && !o.Deleted():
			co = &o
		case isOperatorDeployment(o):
			deps = append(deps, o)
		}
	}
	if co == nil {
		return []error{fmt.Errorf("no ClusterOperator %s in manifests/", payload.ClusterOperatorName)}
	}
	var errs []error
	for _, p := range co.Profiles() {
		var in []string
		for _, d := range deps {
			if d.InProfile(p) {
				in = append(in, d.File)
			}
		}
		if len(in) != 1 {
			where := ""
			if len(in) > 0 {
				where = " (" + strings.Join(in, ", ") + ")"
			}
			errs = append(errs, fmt.Errorf("%s is in profile %s, which has %d Deployments %s/%s%s; it needs exactly one",
				co, p, len(in), payload.OperatorNamespace, payload.OperatorName, where))
		}
	}
	for _, d := range deps {
		for _, p := range d.Profiles() {
			if !co.InProfile(p) {
				errs = append(errs, fmt.Errorf("%s is in profile %s, but %s is not", d, p, co))
			}
		}
	}
	return errs
}

// masterRole is the label, taint and node selector key of control-plane nodes.
const masterRole = "node-role.kubernetes.io/master"

// Profiles whose clusters have no control-plane nodes of their own: a pod that selects
// them would never be scheduled.
var hostedControlPlaneProfiles = []string{payload.IBMCloudManaged}

// CheckDeploymentVariants reports a Deployment that several profiles define differently
// beyond their profile annotations and the selection and toleration of control-plane nodes,
// and a Deployment of a hosted-control-plane profile that selects or tolerates them. A
// variant is compared with the self-managed-high-availability one, or else the first.
func CheckDeploymentVariants(objs []payload.Object) []error {
	byKey := map[string][]payload.Object{}
	var keys []string
	var errs []error
	for _, o := range objs {
		if o.Kind != "Deployment" || o.Deleted() {
			continue
		}
		k := o.Namespace + "/" + o.Name
		if byKey[k] == nil {
			keys = append(keys, k)
		}
		byKey[k] = append(byKey[k], o)
		for _, p := range hostedControlPlaneProfiles {
			if o.InProfile(p) && schedulesOnMasters(o) {
				errs = append(errs, fmt.Errorf("%s is in profile %s, whose clusters have no control-plane nodes, but selects or tolerates %s", o, p, masterRole))
			}
		}
	}
	for _, k := range keys {
		variants := byKey[k]
		ref := variants[0]
		if i := slices.IndexFunc(variants, func(o payload.Object) bool { return o.InProfile(payload.SelfManagedHA) }); i >= 0 {
			ref = variants[i]
		}
		want, err := normalizedDeployment(ref)
		if err != nil {
			return append(errs, err)
		}
		for _, v := range variants {
			if v.File == ref.File {
				continue
			}
			got, err := normalizedDeployment(v)
			if err != nil {
				return append(errs, err)
			}
			if p, differ := firstDifference("", want, got); differ {
				errs = append(errs, fmt.Errorf("%s differs from the one in %s at %s; the profiles' Deployments may differ only in their %s annotations and in scheduling on %s nodes",
					v, ref.File, p, payload.ProfileAnnotationPrefix, masterRole))
			}
		}
	}
	return errs
}

func schedulesOnMasters(o payload.Object) bool {
	var d struct {
		Spec struct {
			Template struct {
				Spec struct {
					NodeSelector map[string]string `json:"nodeSelector"`
					Tolerations  []toleration      `json:"tolerations"`
				} `json:"spec"`
			} `json:"template"`
		} `json:"spec"`
	}
	if json.Unmarshal(o.JSON, &d) != nil {
		return false
	}
	pod := d.Spec.Template.Spec
	_, selects := pod.NodeSelector[masterRole]
	return selects || slices.ContainsFunc(pod.Tolerations, func(t toleration) bool { return t.Key == masterRole })
}

type toleration struct {
	Key string `json:"key"`
}

// normalizedDeployment returns the Deployment as generic JSON without what its profile may
// change.
func normalizedDeployment(o payload.Object) (map[string]any, error) {
	var m map[string]any
	if err := json.Unmarshal(o.JSON, &m); err != nil {
		return nil, fmt.Errorf("%s: %w", o, err)
	}
	if meta, ok := m["metadata"].(map[string]any); ok {
		if ann, ok := meta["annotations"].(map[string]any); ok {
			for k := range ann {
				if strings.HasPrefix(k, payload.ProfileAnnotationPrefix) {
					delete(ann, k)
				}
			}
		}
	}
	spec, _ := m["spec"].(map[string]any)
	tmpl, _ := spec["template"].(map[string]any)
	pod, _ := tmpl["spec"].(map[string]any)
	if pod == nil {
		return m, nil
	}
	if sel, ok := pod["nodeSelector"].(map[string]any); ok {
		delete(sel, masterRole)
		if len(sel) == 0 {
			delete(pod, "nodeSelector")
		}
	}
	if tols, ok := pod["tolerations"].([]any); ok {
		tols = slices.DeleteFunc(tols, func(t any) bool {
			tm, _ := t.(map[string]any)
			return tm["key"] == masterRole
		})
		if len(tols) == 0 {
			delete(pod, "tolerations")
		} else {
			pod["tolerations"] = tols
		}
	}
	return m, nil
}

// firstDifference returns the path of the first place where a and b (generic JSON) differ.
func firstDifference(p string, a, b any) (string, bool) {
	join := func(k string) string {
		if p == "" {
			return k
		}
		return p + "." + k
	}
	switch av := a.(type) {
	case map[string]any:
		bv, ok := b.(map[string]any)
		if !ok {
			return p, true
		}
		keys := slices.Sorted(maps.Keys(av))
		for k := range bv {
			if _, ok := av[k]; !ok {
				keys = append(keys, k)
			}
		}
		for _, k := range keys {
			if q, differ := firstDifference(join(k), av[k], bv[k]); differ {
				return q, true
			}
		}
		return "", false
	case []any:
		bv, ok := b.([]any)
		if !ok {
			return p, true
		}
		for i := range min(len(av), len(bv)) {
			if q, differ := firstDifference(fmt.Sprintf("%s[%d]", p, i), av[i], bv[i]); differ {
				return q, true
			}
		}
		if len(av) != len(bv) {
			return fmt.Sprintf("%s[%d]", p, min(len(av), len(bv))), true
		}
		return "", false
	}
	if !reflect.DeepEqual(a, b) {
		return p, true
	}
	return "", false
}

// CheckProfiles reports:
//   - an object in no profile: the CVO applies it on no cluster;
//   - an object annotated for deletion that is not in every profile of the payload: the
//     CVO would leave it behind on clusters of the missing profiles;
//   - an object in profile P that needs an object of manifests/ which is not in P, or which
//     the payload deletes.
//
// What an object needs: its Namespace; the CRD of its kind; for a pod template, its
// ServiceAccount, the ConfigMaps it mounts, and the Service whose serving certificate it
// mounts; for a binding, its role and its ServiceAccount subjects; for a ServiceMonitor, the
// Services it selects. Objects that manifests/ does not define (the openshift namespace, the
// built-in roles) are the cluster's and are not checked. Objects annotated for deletion
// satisfy no one's needs, and need nothing themselves.
func CheckProfiles(objs []payload.Object) []error {
	idx := newIndex(objs)
	all := map[string]bool{}
	for _, o := range objs {
		for _, p := range o.Profiles() {
			all[p] = true
		}
	}
	allProfiles := slices.Sorted(maps.Keys(all))

	var errs []error
	for _, o := range objs {
		profiles := o.Profiles()
		if len(profiles) == 0 {
			errs = append(errs, fmt.Errorf("%s is in no cluster profile (no %s<profile>: \"true\"), so no cluster gets it", o, payload.ProfileAnnotationPrefix))
			continue
		}
		if o.Deleted() {
			// Deleting needs nothing else to exist, so only the profiles matter.
			for _, p := range allProfiles {
				if !o.InProfile(p) {
					errs = append(errs, fmt.Errorf("%s is deleted by the payload but is not in profile %s, so clusters of that profile keep it", o, p))
				}
			}
			continue
		}
		needs, err := idx.needs(o)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		for _, n := range needs {
			live, deleted := idx.lookup(n.key)
			if len(live) == 0 {
				if len(deleted) > 0 {
					errs = append(errs, fmt.Errorf("%s needs %s (%s), which the payload deletes", o, n.key, n.why))
				}
				continue
			}
			for _, p := range profiles {
				if !slices.ContainsFunc(live, func(d payload.Object) bool { return d.InProfile(p) }) {
					errs = append(errs, fmt.Errorf("%s is in profile %s but %s, which it needs (%s), is not: add %s%s: \"true\" to %s",
						o, p, n.key, n.why, payload.ProfileAnnotationPrefix, p, files(live)))
				}
			}
		}
	}
	return errs
}

func files(objs []payload.Object) string {
	var out []string
	for _, o := range objs {
		if !slices.Contains(out, o.File) {
			out = append(out, o.File)
		}
	}
	return strings.Join(out, ", ")
}

// key names an object: "Kind name" or "Kind namespace/name".
type key string

func keyOf(kind, namespace, name string) key {
	if namespace == "" {
		return key(kind + " " + name)
	}
	return key(kind + " " + namespace + "/" + name)
}

type need struct {
	key key
	why string
}

type index struct {
	objs     map[key][]payload.Object
	crds     map[string]key // "group/Kind" -> the CRD
	services []payload.Object
}

func newIndex(objs []payload.Object) *index {
	idx := &index{objs: map[key][]payload.Object{}, crds: map[string]key{}}
	for _, o := range objs {
		k := keyOf(o.Kind, o.Namespace, o.Name)
		idx.objs[k] = append(idx.objs[k], o)
		switch o.Kind {
		case "CustomResourceDefinition":
			var crd struct {
				Spec struct {
					Group string `json:"group"`
					Names struct {
						Kind string `json:"kind"`
					} `json:"names"`
				} `json:"spec"`
			}
			if json.Unmarshal(o.JSON, &crd) == nil {
				idx.crds[crd.Spec.Group+"/"+crd.Spec.Names.Kind] = k
			}
		case "Service":
			if !o.Deleted() {
				idx.services = append(idx.services, o)
			}
		}
	}
	return idx
}

// lookup returns the objects of manifests/ named k, those applied and those deleted.
func (idx *index) lookup(k key) (live, deleted []payload.Object) {
	for _, o := range idx.objs[k] {
		if o.Deleted() {
			deleted = append(deleted, o)
		} else {
			live = append(live, o)
		}
	}
	return live, deleted
}

// servingCertAnnotation names the secret into which the service CA writes a Service's
// serving certificate.
const servingCertAnnotation = "service.beta.openshift.io/serving-cert-secret-name"

func (idx *index) needs(o payload.Object) ([]need, error) {
	var out []need
	if o.Namespace != "" {
		out = append(out, need{keyOf("Namespace", "", o.Namespace), "its namespace"})
	}
	if k, ok := idx.crds[o.Group()+"/"+o.Kind]; ok {
		out = append(out, need{k, "the definition of its kind"})
	}
	switch o.Kind {
	case "Deployment", "DaemonSet", "StatefulSet", "ReplicaSet", "Job":
		var w struct {
			Spec struct {
				Template struct {
					Spec struct {
						ServiceAccountName string `json:"serviceAccountName"`
						Volumes            []struct {
							Secret *struct {
								SecretName string `json:"secretName"`
							} `json:"secret"`
							ConfigMap *struct {
								Name string `json:"name"`
							} `json:"configMap"`
						} `json:"volumes"`
					} `json:"spec"`
				} `json:"template"`
			} `json:"spec"`
		}
		if err := json.Unmarshal(o.JSON, &w); err != nil {
			return nil, fmt.Errorf("%s: %w", o, err)
		}
		pod := w.Spec.Template.Spec
		if pod.ServiceAccountName != "" {
			out = append(out, need{keyOf("ServiceAccount", o.Namespace, pod.ServiceAccountName), "the service account it runs as"})
		}
		for _, v := range pod.Volumes {
			switch {
			case v.ConfigMap != nil:
				out = append(out, need{keyOf("ConfigMap", o.Namespace, v.ConfigMap.Name), "a volume"})
			case v.Secret != nil:
				for _, s := range idx.services {
					if s.Namespace == o.Namespace && s.Annotations[servingCertAnnotation] == v.Secret.SecretName {
						out = append(out, need{keyOf("Service", s.Namespace, s.Name), "its serving certificate secret " + v.Secret.SecretName + " is a volume"})
					}
				}
			}
		}
	case "RoleBinding", "ClusterRoleBinding":
		var b struct {
			RoleRef struct {
				Kind string `json:"kind"`
				Name string `json:"name"`
			} `json:"roleRef"`
			Subjects []struct {
				Kind      string `json:"kind"`
				Name      string `json:"name"`
				Namespace string `json:"namespace"`
			} `json:"subjects"`
		}
		if err := json.Unmarshal(o.JSON, &b); err != nil {
			return nil, fmt.Errorf("%s: %w", o, err)
		}
		roleNS := ""
		if b.RoleRef.Kind == "Role" {
			roleNS = o.Namespace
		}
		out = append(out, need{keyOf(b.RoleRef.Kind, roleNS, b.RoleRef.Name), "its roleRef"})
		for _, s := range b.Subjects {
			if s.Kind != "ServiceAccount" {
				continue
			}
			ns := s.Namespace
			if ns == "" {
				ns = o.Namespace
			}
			out = append(out, need{keyOf("ServiceAccount", ns, s.Name), "a subject"})
		}
	case "ServiceMonitor":
		var sm struct {
			Spec struct {
				Selector          metav1.LabelSelector `json:"selector"`
				NamespaceSelector struct {
					Any        bool     `json:"any"`
					MatchNames []string `json:"matchNames"`
				} `json:"namespaceSelector"`
			} `json:"spec"`
		}
		if err := json.Unmarshal(o.JSON, &sm); err != nil {
			return nil, fmt.Errorf("%s: %w", o, err)
		}
		sel, err := metav1.LabelSelectorAsSelector(&sm.Spec.Selector)
		if err != nil {
			return nil, fmt.Errorf("%s: spec.selector: %w", o, err)
		}
		namespaces := sm.Spec.NamespaceSelector.MatchNames
		if len(namespaces) == 0 {
			namespaces = []string{o.Namespace}
		}
		for _, s := range idx.services {
			if (sm.Spec.NamespaceSelector.Any || slices.Contains(namespaces, s.Namespace)) && sel.Matches(labels.Set(s.Labels)) {
				out = append(out, need{keyOf("Service", s.Namespace, s.Name), "the Service it scrapes"})
			}
		}
	}
	return out, nil
}
