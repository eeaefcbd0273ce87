package bundle

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"encoding/xml"
	"io/fs"
	"maps"
	"os"
	"reflect"
	"slices"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/operator-framework/api/pkg/operators/v1alpha1"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	"sigs.k8s.io/yaml"

	"github.com/samples-operator-dev/cluster-samples-operator/pkg/inventory"
)

const manifestsDir = "../../manifests"

// fromManifests is what the test reads from manifests/ on its own, to compare the CSV with.
type fromManifests struct {
	deployment     appsv1.Deployment
	operatorImage  string
	clusterRoles   map[string][]rbacv1.PolicyRule
	roles          map[string][]rbacv1.PolicyRule // "namespace/name"
	clusterBinds   []rbacv1.ClusterRoleBinding
	roleBinds      []rbacv1.RoleBinding
	crd            []byte
	serviceAccount string
}

func readFromManifests(t *testing.T) fromManifests {
	t.Helper()
	m := fromManifests{clusterRoles: map[string][]rbacv1.PolicyRule{}, roles: map[string][]rbacv1.PolicyRule{}}
	files, err := os.ReadDir(manifestsDir)
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range files {
		data, err := os.ReadFile(manifestsDir + "/" + f.Name())
		if err != nil {
			t.Fatal(err)
		}
		if f.Name() == "image-references" {
			var refs struct {
				Spec struct {
					Tags []struct {
						Name string
						From struct{ Name string } `json:"from"`
					} `json:"tags"`
				} `json:"spec"`
			}
			if err := yaml.Unmarshal(data, &refs); err != nil {
				t.Fatal(err)
			}
			for _, tag := range refs.Spec.Tags {
				if tag.Name == "cluster-samples-operator" {
					m.operatorImage = tag.From.Name
				}
			}
			if m.operatorImage == "" {
				t.Fatal("image-references has no tag cluster-samples-operator")
			}
			continue
		}
		for _, doc := range bytes.Split(data, []byte("\n---\n")) {
			var h struct {
				Kind     string
				Metadata struct{ Annotations map[string]string }
			}
			if err := yaml.Unmarshal(doc, &h); err != nil {
				t.Fatalf("%s: %v", f.Name(), err)
			}
			// The bundle is what a self-managed cluster gets, less what the payload deletes.
			ann := h.Metadata.Annotations
			if ann["include.release.openshift.io/self-managed-high-availability"] != "true" || ann["release.openshift.io/delete"] == "true" {
				continue
			}
			switch h.Kind {
			case "CustomResourceDefinition":
				m.crd = data
			case "ServiceAccount":
				var sa struct{ Metadata struct{ Name string } }
				mustUnmarshal(t, doc, &sa)
				m.serviceAccount = sa.Metadata.Name
			case "Deployment":
				mustUnmarshal(t, doc, &m.deployment)
			case "ClusterRole":
				var cr rbacv1.ClusterRole
				mustUnmarshal(t, doc, &cr)
				m.clusterRoles[cr.Name] = cr.Rules
			case "Role":
				var r rbacv1.Role
				mustUnmarshal(t, doc, &r)
				m.roles[r.Namespace+"/"+r.Name] = r.Rules
			case "ClusterRoleBinding":
				var b rbacv1.ClusterRoleBinding
				mustUnmarshal(t, doc, &b)
				m.clusterBinds = append(m.clusterBinds, b)
			case "RoleBinding":
				var b rbacv1.RoleBinding
				mustUnmarshal(t, doc, &b)
				m.roleBinds = append(m.roleBinds, b)
			}
		}
	}
	return m
}

func mustUnmarshal(t *testing.T, data []byte, into any) {
	t.Helper()
	if err := yaml.Unmarshal(data, into); err != nil {
		t.Fatal(err)
	}
}

func bindsOperator(subjects []rbacv1.Subject, sa string) bool {
	return slices.ContainsFunc(subjects, func(s rbacv1.Subject) bool {
		return s.Kind == "ServiceAccount" && s.Name == sa && s.Namespace == "openshift-cluster-samples-operator"
	})
}

func generate(t *testing.T, opts Options) map[string][]byte {
	t.Helper()
	files, err := Generate(os.DirFS(manifestsDir), opts)
	if err != nil {
		t.Fatal(err)
	}
	return files
}

// parseCSV decodes the CSV with OLM's own types, strictly: a field OLM does not know fails.
func parseCSV(t *testing.T, files map[string][]byte) *v1alpha1.ClusterServiceVersion {
	t.Helper()
	csv := &v1alpha1.ClusterServiceVersion{}
	if err := yaml.UnmarshalStrict(files[CSVFile], csv); err != nil {
		t.Fatalf("the CSV does not decode as operators.coreos.com/v1alpha1: %v", err)
	}
	return csv
}

func x86Images(t *testing.T) []string {
	t.Helper()
	inv, err := inventory.Embedded(inventory.ArchDirOCPX86_64)
	if err != nil {
		t.Fatal(err)
	}
	return inv.ImagesToMirror()
}

func TestCSVInstallStrategy(t *testing.T) {
	m := readFromManifests(t)
	csv := parseCSV(t, generate(t, Options{ArchDir: inventory.ArchDirOCPX86_64, Images: x86Images(t)}))

	if csv.APIVersion != "operators.coreos.com/v1alpha1" || csv.Kind != "ClusterServiceVersion" {
		t.Errorf("apiVersion/kind = %s/%s", csv.APIVersion, csv.Kind)
	}
	var version string
	for _, e := range m.deployment.Spec.Template.Spec.Containers[0].Env {
		if e.Name == "RELEASE_VERSION" {
			version = e.Value
		}
	}
	if csv.Name != "cluster-samples-operator.v"+version || csv.Spec.Version.String() != version {
		t.Errorf("name %s version %s, want the Deployment's RELEASE_VERSION %s", csv.Name, csv.Spec.Version.String(), version)
	}
	if csv.Spec.InstallStrategy.StrategyName != v1alpha1.InstallStrategyNameDeployment {
		t.Fatalf("install strategy %q", csv.Spec.InstallStrategy.StrategyName)
	}
	details := csv.Spec.InstallStrategy.StrategySpec
	if len(details.DeploymentSpecs) != 1 || details.DeploymentSpecs[0].Name != m.deployment.Name {
		t.Fatalf("deployments %+v, want one named %s", details.DeploymentSpecs, m.deployment.Name)
	}
	pod := details.DeploymentSpecs[0].Spec.Template.Spec
	if pod.ServiceAccountName != m.serviceAccount {
		t.Errorf("service account %q, want %q", pod.ServiceAccountName, m.serviceAccount)
	}
	op := pod.Containers[0]
	if op.Image != m.operatorImage {
		t.Errorf("image %s, want %s from image-references", op.Image, m.operatorImage)
	}
	env := map[string]string{}
	for _, e := range op.Env {
		env[e.Name] = e.Value
	}
	if env[OperatorImageEnv] != m.operatorImage || env["RELEASE_VERSION"] != version {
		t.Errorf("env %v, want %s=%s and RELEASE_VERSION=%s", env, OperatorImageEnv, m.operatorImage, version)
	}
	// The CVO's Deployment runs on the control plane; the bundle's has no control-plane
	// placement, since a HyperShift guest has no such nodes, and keeps the other tolerations.
	if m.deployment.Spec.Template.Spec.NodeSelector["node-role.kubernetes.io/master"] != "" ||
		!slices.ContainsFunc(m.deployment.Spec.Template.Spec.Tolerations, isMasterToleration) {
		t.Fatal("manifests/06-operator.yaml no longer pins the operator to masters; this test has nothing to check")
	}
	if len(pod.NodeSelector) != 0 || slices.ContainsFunc(pod.Tolerations, isMasterToleration) {
		t.Errorf("the bundle's pod keeps control-plane placement: nodeSelector %v tolerations %v", pod.NodeSelector, pod.Tolerations)
	}
	// Apart from that, the operator's image and its env, the pod is the one of manifests/.
	want := m.deployment.Spec.DeepCopy()
	got := details.DeploymentSpecs[0].Spec.DeepCopy()
	want.Template.Spec.Containers[0].Env, got.Template.Spec.Containers[0].Env = nil, nil
	want.Template.Spec.NodeSelector = nil
	want.Template.Spec.Tolerations = slices.DeleteFunc(want.Template.Spec.Tolerations, isMasterToleration)
	if len(want.Template.Spec.Tolerations) == 0 {
		t.Fatal("manifests/06-operator.yaml has no toleration besides the master one; keep checking that the others survive")
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("the Deployment spec differs from manifests/06-operator.yaml beyond env and control-plane placement:\n%+v\n%+v", got, want)
	}

	// clusterPermissions: the ClusterRoles bound to the operator; permissions: its Roles
	// in its own namespace.
	var wantCluster, wantNS [][]rbacv1.PolicyRule
	for _, b := range m.clusterBinds {
		if bindsOperator(b.Subjects, m.serviceAccount) {
			wantCluster = append(wantCluster, m.clusterRoles[b.RoleRef.Name])
		}
	}
	for _, b := range m.roleBinds {
		if bindsOperator(b.Subjects, m.serviceAccount) && b.Namespace == "openshift-cluster-samples-operator" {
			wantNS = append(wantNS, m.roles[b.Namespace+"/"+b.RoleRef.Name])
		}
	}
	if len(wantCluster) < 2 || len(wantNS) != 1 {
		t.Fatalf("manifests/ changed shape: %d cluster roles and %d roles for the operator", len(wantCluster), len(wantNS))
	}
	for name, perms := range map[string]struct {
		got  []v1alpha1.StrategyDeploymentPermissions
		want [][]rbacv1.PolicyRule
	}{"clusterPermissions": {details.ClusterPermissions, wantCluster}, "permissions": {details.Permissions, wantNS}} {
		var got [][]rbacv1.PolicyRule
		for _, p := range perms.got {
			if p.ServiceAccountName != m.serviceAccount {
				t.Errorf("%s for service account %q", name, p.ServiceAccountName)
			}
			got = append(got, p.Rules)
		}
		if !sameRuleSets(got, perms.want) {
			t.Errorf("%s:\n%+v\nwant\n%+v", name, got, perms.want)
		}
	}
}

func isMasterToleration(t corev1.Toleration) bool {
	return t.Key == "node-role.kubernetes.io/master" || t.Key == "node-role.kubernetes.io/control-plane"
}

func sameRuleSets(a, b [][]rbacv1.PolicyRule) bool {
	key := func(r []rbacv1.PolicyRule) string { j, _ := json.Marshal(r); return string(j) }
	ka, kb := make([]string, 0, len(a)), make([]string, 0, len(b))
	for _, r := range a {
		ka = append(ka, key(r))
	}
	for _, r := range b {
		kb = append(kb, key(r))
	}
	slices.Sort(ka)
	slices.Sort(kb)
	return slices.Equal(ka, kb)
}

// The operator's Roles in openshift and openshift-config cannot be CSV permissions; they
// ship as unbound ClusterRoles with the same rules, and the description says how to bind them.
func TestRolesOutsideTheOperatorNamespace(t *testing.T) {
	m := readFromManifests(t)
	files := generate(t, Options{ArchDir: inventory.ArchDirOCPX86_64, Images: x86Images(t)})
	csv := parseCSV(t, files)
	outside := 0
	for _, b := range m.roleBinds {
		if !bindsOperator(b.Subjects, m.serviceAccount) || b.Namespace == "openshift-cluster-samples-operator" {
			continue
		}
		outside++
		name := b.RoleRef.Name + "-" + b.Namespace
		data, ok := files[manifestFile(name, "rbac.authorization.k8s.io/v1", "ClusterRole")]
		if !ok {
			t.Errorf("no ClusterRole %s in the bundle for Role %s/%s", name, b.Namespace, b.RoleRef.Name)
			continue
		}
		var cr rbacv1.ClusterRole
		mustUnmarshal(t, data, &cr)
		if !reflect.DeepEqual(cr.Rules, m.roles[b.Namespace+"/"+b.RoleRef.Name]) {
			t.Errorf("ClusterRole %s rules differ from Role %s/%s", name, b.Namespace, b.RoleRef.Name)
		}
		cmd := "oc create rolebinding " + b.Name + " -n " + b.Namespace + " --clusterrole=" + name + " --serviceaccount=openshift-cluster-samples-operator:" + m.serviceAccount
		if !strings.Contains(csv.Spec.Description, cmd) {
			t.Errorf("the description does not say %q", cmd)
		}
	}
	if outside != 2 {
		t.Errorf("%d operator Roles outside its namespace, want 2 (openshift, openshift-config)", outside)
	}
	// Nothing in the bundle binds them, and no bundle object asks for a namespace OLM would ignore.
	for name, data := range files {
		if !strings.HasPrefix(name, "manifests/") || name == CSVFile {
			continue
		}
		var obj struct {
			Kind     string
			Metadata struct{ Namespace string }
			RoleRef  struct{ Name string } `json:"roleRef"`
		}
		mustUnmarshal(t, data, &obj)
		if obj.Metadata.Namespace != "" {
			t.Errorf("%s sets metadata.namespace %q", name, obj.Metadata.Namespace)
		}
		if strings.HasSuffix(obj.RoleRef.Name, "-openshift") || strings.HasSuffix(obj.RoleRef.Name, "-openshift-config") {
			t.Errorf("%s binds %s", name, obj.RoleRef.Name)
		}
	}
}

func TestCSVOwnedCRDAnnotationsAndInstallModes(t *testing.T) {
	m := readFromManifests(t)
	files := generate(t, Options{ArchDir: inventory.ArchDirOCPX86_64, Images: x86Images(t)})
	csv := parseCSV(t, files)

	owned := csv.Spec.CustomResourceDefinitions.Owned
	if len(owned) != 1 || owned[0].Name != "configs.samples.operator.openshift.io" || owned[0].Version != "v1" || owned[0].Kind != "Config" {
		t.Errorf("owned CRDs %+v", owned)
	}
	if !bytes.Equal(files["manifests/samples.operator.openshift.io_configs.yaml"], m.crd) {
		t.Error("the bundle's CRD is not a copy of manifests/00-samples-config.crd.yaml")
	}

	ann := csv.Annotations
	if ann["features.operators.openshift.io/disconnected"] != "false" {
		t.Errorf("disconnected feature annotation = %q, want \"false\": the images are tags", ann["features.operators.openshift.io/disconnected"])
	}
	if v, ok := ann["operators.openshift.io/infrastructure-features"]; ok {
		t.Errorf("the deprecated infrastructure-features annotation is set (%q)", v)
	}
	if ann["operatorframework.io/suggested-namespace"] != "openshift-cluster-samples-operator" || ann["containerImage"] != m.operatorImage {
		t.Errorf("annotations %v", ann)
	}
	var examples []map[string]any
	if err := json.Unmarshal([]byte(ann["alm-examples"]), &examples); err != nil || len(examples) != 1 || examples[0]["kind"] != "Config" {
		t.Errorf("alm-examples %q (%v)", ann["alm-examples"], err)
	}
	var nsTemplate struct {
		Kind     string
		Metadata struct {
			Name        string
			Labels      map[string]string
			Annotations map[string]string
		}
	}
	if err := json.Unmarshal([]byte(ann["operatorframework.io/suggested-namespace-template"]), &nsTemplate); err != nil ||
		nsTemplate.Metadata.Name != "openshift-cluster-samples-operator" || nsTemplate.Metadata.Labels["openshift.io/cluster-monitoring"] != "true" {
		t.Errorf("suggested-namespace-template %q (%v)", ann["operatorframework.io/suggested-namespace-template"], err)
	}
	for k := range nsTemplate.Metadata.Annotations {
		if isCVOAnnotation(k) {
			t.Errorf("the namespace template keeps the CVO annotation %s", k)
		}
	}
	// The annotations that are not the CVO's stay: they keep the operator's pods on the
	// nodes and in the workload partition its namespace asks for.
	if nsTemplate.Metadata.Annotations["openshift.io/node-selector"] != "" || nsTemplate.Metadata.Annotations["workload.openshift.io/allowed"] != "management" {
		t.Errorf("the namespace template's annotations %v, want those of manifests/01-namespace.yaml that are not the CVO's", nsTemplate.Metadata.Annotations)
	}
	if _, ok := nsTemplate.Metadata.Annotations["openshift.io/node-selector"]; !ok {
		t.Errorf("the namespace template lost openshift.io/node-selector: %v", nsTemplate.Metadata.Annotations)
	}
	if csv.Labels["operatorframework.io/arch.amd64"] != "supported" || len(csv.Labels) != 2 {
		t.Errorf("labels %v, want amd64 and linux only", csv.Labels)
	}

	modes := map[v1alpha1.InstallModeType]bool{}
	for _, im := range csv.Spec.InstallModes {
		modes[im.Type] = im.Supported
	}
	if !modes[v1alpha1.InstallModeTypeOwnNamespace] || modes[v1alpha1.InstallModeTypeAllNamespaces] || len(modes) != 4 {
		t.Errorf("install modes %v, want OwnNamespace only, all four declared", modes)
	}
}

func TestRelatedImagesAreTheInventoryAndTheOperator(t *testing.T) {
	m := readFromManifests(t)
	for _, archDir := range inventory.ArchDirs() {
		inv, err := inventory.Embedded(archDir)
		if err != nil {
			t.Fatal(err)
		}
		images := inv.ImagesToMirror()
		csv := parseCSV(t, generate(t, Options{ArchDir: archDir, Images: images}))
		var got []string
		names := map[string]bool{}
		for _, ri := range csv.Spec.RelatedImages {
			got = append(got, ri.Image)
			if ri.Name == "" || names[ri.Name] {
				t.Errorf("%s: relatedImages name %q empty or repeated", archDir, ri.Name)
			}
			names[ri.Name] = true
		}
		want := append([]string{m.operatorImage}, images...)
		if !slices.Equal(got, want) {
			t.Errorf("%s: relatedImages (%d)\n%v\nwant the operator and ImagesToMirror (%d)\n%v", archDir, len(got), got, len(want), want)
		}
		if csv.Spec.RelatedImages[0].Name != OperatorRelatedImage {
			t.Errorf("%s: the operator's related image is named %q", archDir, csv.Spec.RelatedImages[0].Name)
		}
	}
}

func TestPinnedImagesAndOperatorOverride(t *testing.T) {
	const d1 = "sha256:1111111111111111111111111111111111111111111111111111111111111111"
	const d2 = "sha256:2222222222222222222222222222222222222222222222222222222222222222"
	op := "quay.io/openshift/origin-cluster-samples-operator@" + d1
	images := []string{
		"registry.redhat.io/ubi9/ruby-33@" + d1,
		"registry.redhat.io/ubi9/ruby-33@" + d2,
		"mirror.example:5000/ubi9/ruby-33@" + d1, // same name once the host is gone
		"other.example/ubi9/ruby-33@" + d1,       // and a third
	}
	files := generate(t, Options{ArchDir: inventory.ArchDirOCPAarch64, Images: images, OperatorImage: op, Version: "4.20.1"})
	csv := parseCSV(t, files)
	if csv.Name != "cluster-samples-operator.v4.20.1" {
		t.Errorf("name %s", csv.Name)
	}
	c := csv.Spec.InstallStrategy.StrategySpec.DeploymentSpecs[0].Spec.Template.Spec.Containers[0]
	if c.Image != op || c.Env[len(c.Env)-1].Name != OperatorImageEnv || c.Env[len(c.Env)-1].Value != op {
		t.Errorf("operator container image %s env %v, want %s in both", c.Image, c.Env, op)
	}
	var names []string
	for _, ri := range csv.Spec.RelatedImages {
		names = append(names, ri.Name)
	}
	want := []string{"operator", "ubi9-ruby-33-111111111111", "ubi9-ruby-33-222222222222", "ubi9-ruby-33-111111111111-2", "ubi9-ruby-33-111111111111-3"}
	if !slices.Equal(names, want) {
		t.Errorf("names %v, want %v", names, want)
	}
	if csv.Labels["operatorframework.io/arch.arm64"] != "supported" {
		t.Errorf("labels %v", csv.Labels)
	}
	if got := csv.Annotations["features.operators.openshift.io/disconnected"]; got != "true" {
		t.Errorf("every image is a digest, yet disconnected is %q", got)
	}
	if !strings.Contains(csv.Spec.Description, "Every image is named by digest.") {
		t.Errorf("the description does not say the images are digests:\n%s", csv.Spec.Description)
	}
}

// Disconnected support is declared only when the operator's image and every sample image
// are digests; a single tag, wherever it is, takes it away.
func TestDisconnectedOnlyWithDigests(t *testing.T) {
	const d = "@sha256:" + "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"
	op := "quay.io/openshift/origin-cluster-samples-operator" + d
	pinned := []string{"registry.redhat.io/ubi9/ruby-33" + d, "registry.redhat.io/ubi9/nodejs-22" + d}
	for name, tc := range map[string]struct {
		operator string
		images   []string
		want     string
	}{
		"all digests":                 {op, pinned, "true"},
		"operator by tag":             {"", pinned, "false"},
		"a sample by tag":             {op, append(slices.Clone(pinned), "registry.redhat.io/ubi9/php-82:latest"), "false"},
		"a malformed digest":          {op, []string{"registry.redhat.io/ubi9/ruby-33@sha256:abc"}, "false"},
		"tag and digest":              {op, []string{"registry.redhat.io/ubi9/ruby-33:latest" + d}, "true"},
		"an upper-case digest":        {op, []string{"registry.redhat.io/ubi9/ruby-33" + strings.ToUpper(d)}, "false"},
		"a digest with no repository": {op, []string{d}, "false"},
		"the embedded x86 inventory":  {op, x86Images(t), "false"},
	} {
		t.Run(name, func(t *testing.T) {
			csv := parseCSV(t, generate(t, Options{ArchDir: inventory.ArchDirOCPX86_64, Images: tc.images, OperatorImage: tc.operator}))
			if got := csv.Annotations["features.operators.openshift.io/disconnected"]; got != tc.want {
				t.Errorf("disconnected = %q, want %q", got, tc.want)
			}
		})
	}
}

// What an OpenShift catalog reads besides the install strategy.
func TestCatalogMetadata(t *testing.T) {
	files := generate(t, Options{ArchDir: inventory.ArchDirOCPX86_64, Images: x86Images(t)})
	csv := parseCSV(t, files)
	ann := csv.Annotations

	var subs []string
	if err := json.Unmarshal([]byte(ann["operators.openshift.io/valid-subscription"]), &subs); err != nil ||
		!slices.Equal(subs, []string{"OpenShift Container Platform", "OpenShift Platform Plus"}) {
		t.Errorf("valid-subscription %q (%v)", ann["operators.openshift.io/valid-subscription"], err)
	}
	if ann["capabilities"] != "Seamless Upgrades" || ann["categories"] != "Developer Tools,OpenShift Optional" {
		t.Errorf("capabilities %q categories %q", ann["capabilities"], ann["categories"])
	}
	if ann["repository"] != "https://github.com/samples-operator-dev/cluster-samples-operator" || ann["support"] == "" {
		t.Errorf("repository %q support %q", ann["repository"], ann["support"])
	}
	if ann["createdAt"] != DefaultCreatedAt {
		t.Errorf("createdAt %q, want the default %q", ann["createdAt"], DefaultCreatedAt)
	}
	if ann["olm.skipRange"] != ">=0.0.0 <"+csv.Spec.Version.String() {
		t.Errorf("olm.skipRange %q", ann["olm.skipRange"])
	}

	// Every infrastructure feature is declared; only proxy-aware, and disconnected for a
	// pinned bundle, are true.
	want := map[string]string{
		"disconnected": "false", "fips-compliant": "false", "proxy-aware": "true", "tls-profiles": "true",
		"token-auth-aws": "false", "token-auth-azure": "false", "token-auth-gcp": "false",
		"cnf": "false", "cni": "false", "csi": "false",
	}
	got := map[string]string{}
	for k, v := range ann {
		if f, ok := strings.CutPrefix(k, "features.operators.openshift.io/"); ok {
			got[f] = v
		}
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("feature annotations %v, want %v", got, want)
	}
	keys := FeatureKeys()
	slices.Sort(keys)
	if wantKeys := slices.Sorted(maps.Keys(want)); !slices.Equal(keys, wantKeys) {
		t.Errorf("FeatureKeys %v, want %v", keys, wantKeys)
	}

	spec := csv.Spec
	if spec.Provider.Name == "" || spec.Provider.URL == "" {
		t.Errorf("provider %+v", spec.Provider)
	}
	if spec.MinKubeVersion != "1.29.0" {
		t.Errorf("minKubeVersion %q", spec.MinKubeVersion)
	}
	if len(spec.Links) != 1 || spec.Links[0].URL != Repository {
		t.Errorf("links %+v", spec.Links)
	}
	if len(spec.Icon) != 1 || spec.Icon[0].MediaType != "image/svg+xml" {
		t.Fatalf("icon %+v", spec.Icon)
	}
	svg, err := base64.StdEncoding.DecodeString(spec.Icon[0].Data)
	if err != nil || !bytes.Equal(svg, iconSVG) || !bytes.HasPrefix(svg, []byte("<svg ")) {
		t.Errorf("the icon is not icon.svg (%v)", err)
	}
	if err := xml.Unmarshal(svg, new(struct{})); err != nil {
		t.Errorf("icon.svg is not well-formed XML: %v", err)
	}
}

func TestCreatedAt(t *testing.T) {
	for in, want := range map[string]string{
		"2027-03-04":                "2027-03-04T00:00:00Z",
		"2027-03-04T05:06:07Z":      "2027-03-04T05:06:07Z",
		"2027-03-04T05:06:07+02:00": "2027-03-04T03:06:07Z",
	} {
		csv := parseCSV(t, generate(t, Options{ArchDir: inventory.ArchDirOCPX86_64, CreatedAt: in}))
		if got := csv.Annotations["createdAt"]; got != want {
			t.Errorf("createdAt %q: %q, want %q", in, got, want)
		}
	}
}

func TestMetadataAndDockerfileAgree(t *testing.T) {
	files := generate(t, Options{ArchDir: inventory.ArchDirOCPX86_64, Images: x86Images(t)})
	var meta struct{ Annotations map[string]string }
	if err := yaml.UnmarshalStrict(files[AnnotationsFile], &meta); err != nil {
		t.Fatal(err)
	}
	want := map[string]string{
		"operators.operatorframework.io.bundle.mediatype.v1":       "registry+v1",
		"operators.operatorframework.io.bundle.manifests.v1":       "manifests/",
		"operators.operatorframework.io.bundle.metadata.v1":        "metadata/",
		"operators.operatorframework.io.bundle.package.v1":         "cluster-samples-operator",
		"operators.operatorframework.io.bundle.channels.v1":        "stable",
		"operators.operatorframework.io.bundle.channel.default.v1": "stable",
	}
	if !reflect.DeepEqual(meta.Annotations, want) {
		t.Errorf("annotations.yaml %v", meta.Annotations)
	}
	df := string(files[DockerfileFile])
	for k, v := range want {
		if !strings.Contains(df, "\nLABEL "+k+"="+v+"\n") {
			t.Errorf("bundle.Dockerfile lacks LABEL %s=%s", k, v)
		}
	}
	for _, line := range []string{"FROM scratch", "COPY manifests /manifests/", "COPY metadata /metadata/"} {
		if !strings.Contains(df, "\n"+line+"\n") {
			t.Errorf("bundle.Dockerfile lacks %q", line)
		}
	}
	// Every file is the same on a second run.
	again := generate(t, Options{ArchDir: inventory.ArchDirOCPX86_64, Images: x86Images(t)})
	if !reflect.DeepEqual(files, again) {
		t.Error("two runs differ")
	}
}

// manifestsFS returns manifests/ in memory, for tests that break it.
func manifestsFS(t *testing.T) fstest.MapFS {
	t.Helper()
	m := fstest.MapFS{}
	err := fs.WalkDir(os.DirFS(manifestsDir), ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		data, err := os.ReadFile(manifestsDir + "/" + p)
		m[p] = &fstest.MapFile{Data: data}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return m
}

func TestGenerateErrors(t *testing.T) {
	opts := Options{ArchDir: inventory.ArchDirOCPX86_64}
	for name, tc := range map[string]struct {
		edit func(fstest.MapFS)
		opts Options
		want string
	}{
		"unknown kind": {
			edit: func(m fstest.MapFS) {
				m["99-x.yaml"] = &fstest.MapFile{Data: []byte("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: x\n  namespace: openshift-cluster-samples-operator\n" + selfManaged)}
			},
			want: "no rule for kind ConfigMap",
		},
		"operator image drift": {
			edit: func(m fstest.MapFS) {
				m["image-references"].Data = bytes.ReplaceAll(m["image-references"].Data, []byte(":latest"), []byte(":v2"))
			},
			want: "no container runs quay.io/openshift/origin-cluster-samples-operator:v2",
		},
		"no operator tag": {
			edit: replaceIn("image-references", "- name: cluster-samples-operator\n", "- name: samples-operator\n"),
			want: "image-references has no tag cluster-samples-operator",
		},
		"no self-managed Deployment": {
			edit: replaceIn("06-operator.yaml", "self-managed-high-availability", "single-node-developer"),
			want: "found 1, 0 and 1",
		},
		"mixed subjects": {
			edit: replaceIn("03-rbac.yaml", "subjects:\n", "subjects:\n- kind: User\n  name: someone\n"),
			want: "together with other subjects",
		},
		"unbound role": {
			edit: func(m fstest.MapFS) {
				m["99-x.yaml"] = &fstest.MapFile{Data: []byte("apiVersion: rbac.authorization.k8s.io/v1\nkind: ClusterRole\nmetadata:\n  name: lonely\n" + selfManaged + "rules: []\n")}
			},
			want: "bound to nobody",
		},
		"another service account beside the operator's": {
			edit: replaceIn("03-rbac.yaml", "subjects:\n", "subjects:\n- kind: ServiceAccount\n  name: default\n  namespace: openshift-cluster-samples-operator\n"),
			want: "together with other subjects",
		},
		"the operator's name in another namespace": {
			edit: replaceIn("03-rbac.yaml", "subjects:\n", "subjects:\n- kind: ServiceAccount\n  name: cluster-samples-operator\n  namespace: elsewhere\n"),
			want: "together with other subjects",
		},
		"a role bound to the operator and to others": {
			edit: func(m fstest.MapFS) {
				m["99-x.yaml"] = &fstest.MapFile{Data: []byte("apiVersion: rbac.authorization.k8s.io/v1\nkind: ClusterRoleBinding\nmetadata:\n  name: someone\n" + selfManaged +
					"roleRef:\n  apiGroup: rbac.authorization.k8s.io\n  kind: ClusterRole\n  name: cluster-samples-operator\nsubjects:\n- kind: User\n  name: someone\n")}
			},
			want: "bound both to the operator and to other subjects",
		},
		"an aggregation label set to false": {
			edit: func(m fstest.MapFS) {
				m["99-x.yaml"] = &fstest.MapFile{Data: []byte("apiVersion: rbac.authorization.k8s.io/v1\nkind: ClusterRole\nmetadata:\n  name: lonely\n" +
					"  labels:\n    rbac.authorization.k8s.io/aggregate-to-view: \"false\"\n" + selfManaged + "rules: []\n")}
			},
			want: "bound to nobody",
		},
		"a role elsewhere for others": {
			edit: func(m fstest.MapFS) {
				m["99-x.yaml"] = &fstest.MapFile{Data: []byte("apiVersion: rbac.authorization.k8s.io/v1\nkind: Role\nmetadata:\n  name: reader\n  namespace: openshift\n" + selfManaged + "rules: []\n" +
					"---\napiVersion: rbac.authorization.k8s.io/v1\nkind: RoleBinding\nmetadata:\n  name: reader\n  namespace: openshift\n" + selfManaged +
					"roleRef:\n  apiGroup: rbac.authorization.k8s.io\n  kind: Role\n  name: reader\nsubjects:\n- kind: User\n  name: someone\n")}
			},
			want: "a Role outside openshift-cluster-samples-operator for other subjects cannot be shipped",
		},
		"a CRD without its group": {
			edit: replaceIn("00-samples-config.crd.yaml", "  group: samples.operator.openshift.io\n", ""),
			want: "spec.group, spec.names.kind and spec.names.plural are required",
		},
		"a CRD without its plural": {
			edit: replaceIn("00-samples-config.crd.yaml", "    plural: configs\n", ""),
			want: "spec.group, spec.names.kind and spec.names.plural are required",
		},
		"the service account elsewhere": {
			edit: replaceIn("02-sa.yaml", "namespace: openshift-cluster-samples-operator", "namespace: elsewhere"),
			want: "must all be in openshift-cluster-samples-operator",
		},
		"the Deployment elsewhere": {
			edit: replaceIn("06-operator.yaml", "namespace: openshift-cluster-samples-operator", "namespace: elsewhere"),
			want: "must all be in openshift-cluster-samples-operator",
		},
		"the Namespace named otherwise": {
			edit: replaceIn("01-namespace.yaml", "name: openshift-cluster-samples-operator", "name: elsewhere"),
			want: "must all be in openshift-cluster-samples-operator",
		},
		"typo in a manifest": {
			edit: func(m fstest.MapFS) {
				m["02-sa.yaml"].Data = append(m["02-sa.yaml"].Data, []byte("automountServiceAccountTokens: false\n")...)
			},
			want: `unknown field "automountServiceAccountTokens"`,
		},
		"bad version":  {opts: Options{ArchDir: inventory.ArchDirOCPX86_64, Version: "4.20"}, want: "not a semantic version"},
		"build suffix": {opts: Options{ArchDir: inventory.ArchDirOCPX86_64, Version: "4.20.0+abc"}, want: "not a semantic version"},
		"bad arch":     {opts: Options{ArchDir: "x86_64"}, want: "unknown inventory architecture directory"},
		"bad date":     {opts: Options{ArchDir: inventory.ArchDirOCPX86_64, CreatedAt: "yesterday"}, want: `created-at "yesterday" is neither`},
	} {
		t.Run(name, func(t *testing.T) {
			m := manifestsFS(t)
			if tc.edit != nil {
				tc.edit(m)
			}
			o := opts
			if tc.opts.ArchDir != "" {
				o = tc.opts
			}
			_, err := Generate(m, o)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error %v, want one containing %q", err, tc.want)
			}
		})
	}
}

// replaceIn is a TestGenerateErrors edit: the first old in file becomes new.
func replaceIn(file, old, new string) func(fstest.MapFS) {
	return func(m fstest.MapFS) {
		m[file].Data = bytes.Replace(m[file].Data, []byte(old), []byte(new), 1)
	}
}

// selfManaged is the metadata.annotations of a manifest in the self-managed profile, for
// fixtures.
const selfManaged = "  annotations:\n    include.release.openshift.io/self-managed-high-availability: \"true\"\n"

// The bundle is what a self-managed cluster gets: objects of other profiles only (another
// profile's Deployment of the operator, say) and objects the payload deletes on upgrade are
// left out, whatever their kind.
func TestOtherProfilesAndDeletionsAreLeftOut(t *testing.T) {
	opts := Options{ArchDir: inventory.ArchDirOCPX86_64}
	want, err := Generate(manifestsFS(t), opts)
	if err != nil {
		t.Fatal(err)
	}
	m := manifestsFS(t)
	m["06-operator-single-node.yaml"] = &fstest.MapFile{Data: bytes.Replace(m["06-operator.yaml"].Data,
		[]byte("self-managed-high-availability"), []byte("single-node-developer"), 1)}
	m["99-gone.yaml"] = &fstest.MapFile{Data: []byte("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: gone\n  namespace: openshift-cluster-samples-operator\n" +
		selfManaged + "    release.openshift.io/delete: \"true\"\n")}
	got, err := Generate(m, opts)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, want) {
		t.Error("the bundle changed")
	}
}

// A ClusterRole aggregated into others needs no binding: it ships as it is.
func TestAggregatedClusterRoleShipsAsItIs(t *testing.T) {
	m := manifestsFS(t)
	m["99-reader.yaml"] = &fstest.MapFile{Data: []byte("apiVersion: rbac.authorization.k8s.io/v1\nkind: ClusterRole\nmetadata:\n  name: system:samples-reader\n" +
		"  labels:\n    rbac.authorization.k8s.io/aggregate-to-view: \"true\"\n" + selfManaged +
		"rules:\n- apiGroups: [samples.operator.openshift.io]\n  resources: [configs]\n  verbs: [get]\n")}
	files, err := Generate(m, Options{ArchDir: inventory.ArchDirOCPX86_64})
	if err != nil {
		t.Fatal(err)
	}
	data, ok := files["manifests/system-samples-reader_rbac.authorization.k8s.io_v1_clusterrole.yaml"]
	if !ok {
		t.Fatal("the aggregated ClusterRole is not in the bundle, or its file name keeps a colon")
	}
	var cr rbacv1.ClusterRole
	mustUnmarshal(t, data, &cr)
	if cr.Name != "system:samples-reader" || cr.Labels["rbac.authorization.k8s.io/aggregate-to-view"] != "true" || len(cr.Rules) != 1 || len(cr.Annotations) != 0 {
		t.Errorf("ClusterRole %+v, want its label and rule without the CVO's annotations", cr)
	}
}

// TestMetricsNetworkPolicyShips: the metrics port's NetworkPolicy is in the bundle as the
// payload has it, less its namespace (OLM creates it in the install namespace) and the CVO's
// annotations, so that an OLM install admits no pod but Prometheus to the metrics port either.
func TestMetricsNetworkPolicyShips(t *testing.T) {
	files := generate(t, Options{ArchDir: inventory.ArchDirOCPX86_64})
	data, ok := files["manifests/cluster-samples-operator-metrics_networking.k8s.io_v1_networkpolicy.yaml"]
	if !ok {
		t.Fatal("the metrics NetworkPolicy is not in the bundle")
	}
	payload, err := os.ReadFile(manifestsDir + "/06-metrics-networkpolicy.yaml")
	if err != nil {
		t.Fatal(err)
	}
	var got, want networkingv1.NetworkPolicy
	mustUnmarshal(t, data, &got)
	mustUnmarshal(t, payload, &want)
	if got.Namespace != "" || len(got.Annotations) != 0 {
		t.Errorf("the bundle's NetworkPolicy keeps namespace %q and annotations %v", got.Namespace, got.Annotations)
	}
	if !reflect.DeepEqual(got.Spec, want.Spec) || got.Name != want.Name {
		t.Errorf("the bundle's NetworkPolicy %s %+v differs from the payload's %s %+v", got.Name, got.Spec, want.Name, want.Spec)
	}
}

// FeatureKeys are the infrastructure features the CSV declares, each under
// FeatureAnnotationPrefix.
func FeatureKeys() []string {
	var keys []string
	for k := range infrastructureFeatures(false) {
		keys = append(keys, strings.TrimPrefix(k, FeatureAnnotationPrefix))
	}
	return keys
}

// What the bundle takes out of an object is the CVO's and the control plane's; what an admin
// or another component put beside it ships: a node selector that is not the control plane's,
// an annotation that is not the CVO's.
func TestOnlyWhatIsTheCVOsOrTheControlPlanesIsTakenOut(t *testing.T) {
	m := manifestsFS(t)
	m["06-operator.yaml"].Data = bytes.Replace(m["06-operator.yaml"].Data, []byte("      nodeSelector:\n"), []byte("      nodeSelector:\n        kubernetes.io/os: linux\n"), 1)
	m["06-metrics-networkpolicy.yaml"].Data = bytes.Replace(m["06-metrics-networkpolicy.yaml"].Data, []byte("  annotations:\n"), []byte("  annotations:\n    example.com/owner: samples\n"), 1)
	files, err := Generate(m, Options{ArchDir: inventory.ArchDirOCPX86_64})
	if err != nil {
		t.Fatal(err)
	}
	pod := parseCSV(t, files).Spec.InstallStrategy.StrategySpec.DeploymentSpecs[0].Spec.Template.Spec
	if !reflect.DeepEqual(pod.NodeSelector, map[string]string{"kubernetes.io/os": "linux"}) {
		t.Errorf("the bundle's nodeSelector %v, want kubernetes.io/os=linux only", pod.NodeSelector)
	}
	var np networkingv1.NetworkPolicy
	mustUnmarshal(t, files["manifests/cluster-samples-operator-metrics_networking.k8s.io_v1_networkpolicy.yaml"], &np)
	if !reflect.DeepEqual(np.Annotations, map[string]string{"example.com/owner": "samples"}) {
		t.Errorf("the bundle's NetworkPolicy annotations %v, want example.com/owner only", np.Annotations)
	}
}

// With no Role outside the operator's namespace, the description asks for no binding.
func TestNoRoleOutsideAsksForNoBinding(t *testing.T) {
	m := manifestsFS(t)
	delete(m, "04-openshift-rbac.yaml")
	delete(m, "05-openshift-config-rbac.yaml")
	files, err := Generate(m, Options{ArchDir: inventory.ArchDirOCPX86_64})
	if err != nil {
		t.Fatal(err)
	}
	if d := parseCSV(t, files).Spec.Description; strings.Contains(d, "After installing") || strings.Contains(d, "oc create rolebinding") {
		t.Errorf("the description asks for bindings though no Role is outside the operator's namespace:\n%s", d)
	}
}

// A version the CRD does not serve is not owned, and the versions after it still are.
func TestOnlyServedCRDVersionsAreOwned(t *testing.T) {
	m := manifestsFS(t)
	crd := "00-samples-config.crd.yaml"
	m[crd].Data = bytes.Replace(m[crd].Data, []byte("  versions:\n  - name: v1\n"), []byte("  versions:\n  - name: v1alpha1\n    served: false\n    storage: false\n  - name: v1\n"), 1)
	files, err := Generate(m, Options{ArchDir: inventory.ArchDirOCPX86_64})
	if err != nil {
		t.Fatal(err)
	}
	owned := parseCSV(t, files).Spec.CustomResourceDefinitions.Owned
	if len(owned) != 1 || owned[0].Version != "v1" {
		t.Errorf("owned CRDs %+v, want v1 only", owned)
	}
}

// Every CustomResourceDefinition that shares its file is named, not only the first.
func TestEveryCRDThatSharesItsFileIsNamed(t *testing.T) {
	m := manifestsFS(t)
	crd := m["00-samples-config.crd.yaml"].Data
	sa := m["02-sa.yaml"].Data
	delete(m, "00-samples-config.crd.yaml")
	delete(m, "02-sa.yaml")
	m["00-a.yaml"] = &fstest.MapFile{Data: slices.Concat(crd, []byte("---\n"), sa)}
	m["00-b.yaml"] = &fstest.MapFile{Data: slices.Concat(bytes.Replace(crd, []byte("name: configs.samples.operator.openshift.io"), []byte("name: others.samples.operator.openshift.io"), 1), []byte("---\n"), sa)}
	_, err := Generate(m, Options{ArchDir: inventory.ArchDirOCPX86_64})
	for _, file := range []string{"00-a.yaml", "00-b.yaml"} {
		if err == nil || !strings.Contains(err.Error(), file+": a CustomResourceDefinition must be alone in its file") {
			t.Errorf("error %v, want one naming %s", err, file)
		}
	}
}
