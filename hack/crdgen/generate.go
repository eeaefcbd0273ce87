package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"

	"github.com/openshift/api/openapi/generated_openapi"
	apiextv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/kube-openapi/pkg/validation/spec"
	"sigs.k8s.io/yaml"
)

// kind is one CRD: the OpenAPI definition of the root type, and the envelope, which follows how
// openshift-apiserver registers the resource (osa pkg/image/apiserver/registry/imagestream/etcd
// etcd.go: short name "is", category "all"; a status subresource for imagestreams only; the
// discovery documents of a real server show the same for the other groups).
type kind struct {
	// def is the OpenAPI definition name: Go package path + "." + type. Empty for a kind that no
	// OpenAPI definition this module can pin describes: its CRD keeps every field of spec and
	// status as sent (see keepsEveryField).
	def        string
	dir        string // the folder below -out the CRD goes to (kindDir when empty)
	group      string
	kind       string
	plural     string
	singular   string
	shortNames []string
	categories []string
	status     bool // served with a status subresource
	scale      bool // served with a scale subresource on spec.replicas and status.replicas
	// deprecation is the warning openshift-apiserver sends with every response for the kind.
	deprecation string
	// descriptions keeps the field documentation (for `kubectl explain`). ImageStreamImport's
	// would make its CRD four times larger, nearly all of it below status, where every Image and
	// ImageStream it can report is spelled out again; nobody explains a create-only request.
	// DeploymentConfig's would triple its CRD (800 kB), nearly all of it the pod template's,
	// which every control plane of the tests installs.
	descriptions bool
	about        string // why this CRD exists, for the file header
}

var kinds = []kind{
	{
		def: "github.com/openshift/api/image/v1.ImageStream", group: "image.openshift.io",
		kind: "ImageStream", plural: "imagestreams", singular: "imagestream",
		shortNames: []string{"is"}, categories: []string{"all"}, status: true, descriptions: true,
		about: "openshift-apiserver serves image.openshift.io on a cluster; the local control plane serves the same\n" +
			"group, version and kind with this CRD.",
	},
	{
		def: "github.com/openshift/api/image/v1.ImageStreamImport", group: "image.openshift.io",
		kind: "ImageStreamImport", plural: "imagestreamimports", singular: "imagestreamimport",
		about: "ImageStreamImport is a create-only virtual resource of openshift-apiserver (`oc import-image` creates\n" +
			"one); a CRD cannot restrict verbs, so here it is stored, and the test tree's import emulator acts on\n" +
			"it and deletes it.",
	},
	{
		def: "github.com/openshift/api/template/v1.Template", group: "template.openshift.io",
		kind: "Template", plural: "templates", singular: "template", descriptions: true,
		about: "openshift-apiserver serves template.openshift.io on a cluster; the local control plane serves the\n" +
			"same group, version and kind with this CRD. The objects of a template stay as sent: they are\n" +
			"parameterised and never validated (see convert.go).",
	},
	{
		def: "github.com/openshift/api/build/v1.BuildConfig", group: "build.openshift.io",
		kind: "BuildConfig", plural: "buildconfigs", singular: "buildconfig",
		shortNames: []string{"bc"}, categories: []string{"all"}, descriptions: true,
		about: "openshift-apiserver serves build.openshift.io on a cluster; the local control plane serves\n" +
			"BuildConfigs with this CRD, for clients that list them. No status subresource, as the real\n" +
			"server's discovery shows: status is written with the object. Nothing builds.",
	},
	{
		def: "github.com/openshift/api/apps/v1.DeploymentConfig", group: "apps.openshift.io",
		kind: "DeploymentConfig", plural: "deploymentconfigs", singular: "deploymentconfig",
		shortNames: []string{"dc"}, categories: []string{"all"}, status: true, scale: true,
		deprecation: "apps.openshift.io/v1 DeploymentConfig is deprecated in v4.14+, unavailable in v4.10000+",
		about: "openshift-apiserver serves apps.openshift.io on a cluster; the local control plane serves\n" +
			"DeploymentConfigs with this CRD, for clients that list them (status and scale subresources and the\n" +
			"deprecation warning, as there; scale answers an autoscaling/v1 Scale where openshift-apiserver\n" +
			"answers extensions/v1beta1). Nothing deploys.",
	},
	{
		def: "github.com/openshift/api/template/v1.TemplateInstance", group: "template.openshift.io",
		kind: "TemplateInstance", plural: "templateinstances", singular: "templateinstance", status: true, descriptions: true,
		about: "openshift-apiserver serves template.openshift.io on a cluster; the local control plane serves\n" +
			"TemplateInstances with this CRD, for clients that list them. No controller instantiates them,\n" +
			"and spec.requester is not filled in from the creating user as openshift-apiserver does.",
	},
	{
		def: "github.com/openshift/api/authorization/v1.RoleBinding", group: "authorization.openshift.io",
		kind: "RoleBinding", plural: "rolebindings", singular: "rolebinding", descriptions: true,
		about: "openshift-apiserver serves authorization.openshift.io on a cluster; the local control plane serves\n" +
			"its RoleBindings with this CRD, as every cluster serves them and the jenkins sample Templates\n" +
			"create one. openshift-apiserver stores none: it turns each into an rbac.authorization.k8s.io\n" +
			"RoleBinding (userNames and groupNames into subjects, a roleRef without a namespace into a\n" +
			"ClusterRole) and reads them back from there (userNames filled in from subjects). This CRD\n" +
			"stores them as sent, apart from RBAC: nothing is granted, and an RBAC RoleBinding does not\n" +
			"show here. Its names must be DNS subdomains, where RBAC takes any path segment: the jenkins\n" +
			"Templates' ${JENKINS_SERVICE_NAME}_edit is refused here and taken by openshift-apiserver.",
	},
	{
		// Names as prometheus-operator's own CRD gives them.
		group: "monitoring.coreos.com", dir: "monitoring",
		kind: "ServiceMonitor", plural: "servicemonitors", singular: "servicemonitor",
		shortNames: []string{"smon"}, categories: []string{"prometheus-operator"}, status: true,
		about: "A cluster's monitoring stack (prometheus-operator) serves ServiceMonitors; every local control\n" +
			"plane serves them with this CRD, as the operator's manifests ship one and the jenkins\n" +
			"\"-monitored\" sample Templates create one. Nothing scrapes. Its spec and status keep every\n" +
			"field as sent: openshift/api does not carry the kind, and the one prometheus-operator CRD at\n" +
			"hand (v0.85.0's, the newest release the module proxy serves) lacks spec.serviceDiscoveryRole,\n" +
			"which manifests/06-servicemonitor.yaml sets and a server-side apply would then refuse. The\n" +
			"fields of the operator's ServiceMonitor are exercised against a real Prometheus instead\n" +
			"(test/integration/prometheus_test.go).",
	},
}

// kindDir is where the stand-ins for openshift-apiserver's kinds go, below -out.
const kindDir = "aggregated"

// copied is a CRD that github.com/openshift/api ships itself, written as shipped below a header.
// Route's defaults (spec.to.kind Service, weight 100, wildcardPolicy None) and validation rules
// restate openshift-apiserver's route defaulting and validation for a CRD: closer to the real
// server than a schema derived from the OpenAPI definitions, which carry neither.
type copied struct {
	path  string // in the github.com/openshift/api module
	name  string // the file written
	about string
}

var copies = []copied{
	{
		path: "route/v1/zz_generated.crd-manifests/routes.crd.yaml", name: "routes.crd.yaml",
		about: "openshift-apiserver serves route.openshift.io on a cluster; the local control plane serves\n" +
			"Routes with this CRD, as every cluster serves them and 38 of the 50 x86_64 sample Templates\n" +
			"create one. No router admits a route, and none without a host gets one generated.",
	},
}

// File is one generated CRD manifest: Dir/Name below -out.
type File struct {
	Dir  string
	Name string
	Data []byte
}

// Generate returns the CRD files in a fixed order, byte for byte reproducible, and notes on the
// schema parts that needed a choice (sorted, without duplicates).
func Generate() ([]File, []string, error) {
	defs := generated_openapi.GetOpenAPIDefinitions(func(name string) spec.Ref {
		return spec.MustCreateRef("#/definitions/" + name)
	})
	c := &converter{defs: defs}
	var files []File
	for _, k := range kinds {
		crd, err := c.crd(k)
		if err != nil {
			return nil, nil, fmt.Errorf("%s.%s: %w", k.kind, k.group, err)
		}
		data, err := yaml.Marshal(crd)
		if err != nil {
			return nil, nil, err
		}
		var header strings.Builder
		if k.def == "" {
			header.WriteString("# Code generated by hack/crdgen (no schema: spec and status keep every field). DO NOT EDIT: run make update.\n#\n")
		} else {
			fmt.Fprintf(&header, "# Code generated by hack/crdgen from github.com/openshift/api %s\n", apiVersion())
			fmt.Fprintf(&header, "# (openapi/generated_openapi, %s). DO NOT EDIT: run make update.\n#\n", k.def)
		}
		for _, line := range strings.Split(k.about, "\n") {
			header.WriteString("# " + line + "\n")
		}
		if k.def != "" && !k.descriptions {
			header.WriteString("# Field descriptions are left out to keep the CRD small.\n")
		}
		dir := k.dir
		if dir == "" {
			dir = kindDir
		}
		files = append(files, File{Dir: dir, Name: k.plural + ".crd.yaml", Data: append([]byte(header.String()), data...)})
	}
	if len(copies) > 0 {
		dir, version, err := apiModule()
		if err != nil {
			return nil, nil, err
		}
		for _, cf := range copies {
			data, err := os.ReadFile(filepath.Join(dir, filepath.FromSlash(cf.path)))
			if err != nil {
				return nil, nil, err
			}
			var header strings.Builder
			fmt.Fprintf(&header, "# Copied by hack/crdgen from github.com/openshift/api %s\n", version)
			fmt.Fprintf(&header, "# (%s). DO NOT EDIT: run make update.\n#\n", cf.path)
			for _, line := range strings.Split(cf.about, "\n") {
				header.WriteString("# " + line + "\n")
			}
			files = append(files, File{Dir: kindDir, Name: cf.name, Data: append([]byte(header.String()), data...)})
		}
	}
	slices.Sort(c.notes)
	return files, slices.Compact(c.notes), nil
}

// apiModule is the folder and version of the github.com/openshift/api this module requires, as
// the go command resolves it (crdgen runs with `go run`, so the module is downloaded).
func apiModule() (dir, version string, err error) {
	out, err := exec.Command("go", "list", "-m", "-f", "{{.Dir}} {{.Version}}", "github.com/openshift/api").Output()
	if err != nil {
		var stderr string
		if ee, ok := err.(*exec.ExitError); ok {
			stderr = string(ee.Stderr)
		}
		return "", "", fmt.Errorf("locating github.com/openshift/api: %v %s", err, stderr)
	}
	dir, version, _ = strings.Cut(strings.TrimSpace(string(out)), " ")
	if dir == "" {
		return "", "", fmt.Errorf("github.com/openshift/api %s is not downloaded (go mod download)", version)
	}
	return dir, version, nil
}

// crdDoc is a CRD without status and creationTimestamp, which a manifest must not carry.
type crdDoc struct {
	APIVersion string                                `json:"apiVersion"`
	Kind       string                                `json:"kind"`
	Metadata   map[string]string                     `json:"metadata"`
	Spec       apiextv1.CustomResourceDefinitionSpec `json:"spec"`
}

// keepsEveryField is the schema of a kind without an OpenAPI definition: apiVersion, kind,
// metadata as for any kind, a required spec and a status that keep every field as sent (as
// x-kubernetes-preserve-unknown-fields does for an object), and nothing else.
func keepsEveryField() apiextv1.JSONSchemaProps {
	keep := apiextv1.JSONSchemaProps{Type: "object", XPreserveUnknownFields: ptr(true)}
	return apiextv1.JSONSchemaProps{
		Type: "object",
		Properties: map[string]apiextv1.JSONSchemaProps{
			"apiVersion": {Type: "string"},
			"kind":       {Type: "string"},
			"metadata":   {Type: "object"},
			"spec":       keep,
			"status":     keep,
		},
		Required: []string{"spec"},
	}
}

func (c *converter) crd(k kind) (*crdDoc, error) {
	var root apiextv1.JSONSchemaProps
	if k.def == "" {
		root = keepsEveryField()
	} else {
		def, ok := c.defs[k.def]
		if !ok {
			return nil, fmt.Errorf("no OpenAPI definition")
		}
		var err error
		if root, err = c.convert(def.Schema, k.kind, []string{k.def}); err != nil {
			return nil, err
		}
		if err := c.dropDefaults(&root, k.kind, nil); err != nil {
			return nil, err
		}
	}
	// The root metadata belongs to the CRD machinery, which validates it itself: the schema may
	// only say it is an object.
	root.Properties["metadata"] = apiextv1.JSONSchemaProps{Type: "object"}
	root.Required = slices.DeleteFunc(root.Required, func(r string) bool {
		return r == "metadata" || r == "apiVersion" || r == "kind"
	})
	if len(root.Required) == 0 {
		root.Required = nil
	}
	if !k.descriptions {
		dropDescriptions(&root)
	}
	v := apiextv1.CustomResourceDefinitionVersion{
		Name: "v1", Served: true, Storage: true,
		Schema: &apiextv1.CustomResourceValidation{OpenAPIV3Schema: &root},
	}
	if k.deprecation != "" {
		v.Deprecated, v.DeprecationWarning = true, &k.deprecation
	}
	if k.status || k.scale {
		v.Subresources = &apiextv1.CustomResourceSubresources{}
	}
	if k.status {
		v.Subresources.Status = &apiextv1.CustomResourceSubresourceStatus{}
	}
	if k.scale {
		v.Subresources.Scale = &apiextv1.CustomResourceSubresourceScale{
			SpecReplicasPath: ".spec.replicas", StatusReplicasPath: ".status.replicas",
		}
	}
	return &crdDoc{
		APIVersion: "apiextensions.k8s.io/v1",
		Kind:       "CustomResourceDefinition",
		Metadata:   map[string]string{"name": k.plural + "." + k.group},
		Spec: apiextv1.CustomResourceDefinitionSpec{
			Group: k.group,
			Scope: apiextv1.NamespaceScoped,
			Names: apiextv1.CustomResourceDefinitionNames{
				Kind: k.kind, ListKind: k.kind + "List", Plural: k.plural, Singular: k.singular,
				ShortNames: k.shortNames, Categories: k.categories,
			},
			Versions: []apiextv1.CustomResourceDefinitionVersion{v},
		},
	}, nil
}

func dropDescriptions(s *apiextv1.JSONSchemaProps) {
	s.Description = ""
	for name, p := range s.Properties {
		dropDescriptions(&p)
		s.Properties[name] = p
	}
	if s.Items != nil && s.Items.Schema != nil {
		dropDescriptions(s.Items.Schema)
	}
	if s.AdditionalProperties != nil && s.AdditionalProperties.Schema != nil {
		dropDescriptions(s.AdditionalProperties.Schema)
	}
	for i := range s.AnyOf {
		dropDescriptions(&s.AnyOf[i])
	}
}
