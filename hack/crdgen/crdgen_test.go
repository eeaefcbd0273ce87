package main

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	appsv1 "github.com/openshift/api/apps/v1"
	authorizationv1 "github.com/openshift/api/authorization/v1"
	buildv1 "github.com/openshift/api/build/v1"
	imagev1 "github.com/openshift/api/image/v1"
	templatev1 "github.com/openshift/api/template/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apiextensions-apiserver/pkg/apis/apiextensions"
	apiextinstall "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/install"
	apiextv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	crdvalidation "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/validation"
	structuralschema "k8s.io/apiextensions-apiserver/pkg/apiserver/schema"
	"k8s.io/apiextensions-apiserver/pkg/apiserver/schema/defaulting"
	"k8s.io/apiextensions-apiserver/pkg/apiserver/schema/listtype"
	"k8s.io/apiextensions-apiserver/pkg/apiserver/schema/pruning"
	apiservervalidation "k8s.io/apiextensions-apiserver/pkg/apiserver/validation"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"sigs.k8s.io/yaml"
)

type loaded struct {
	internal   *apiextensions.CustomResourceDefinition
	structural *structuralschema.Structural
	validator  apiservervalidation.SchemaValidator
}

// load takes each generated CRD through what kube-apiserver does with it on create (defaulting,
// conversion, ValidateCustomResourceDefinition) and returns, by kind, what its custom resource
// handler then prunes and validates with.
func load(t *testing.T) map[string]loaded {
	t.Helper()
	scheme := runtime.NewScheme()
	apiextinstall.Install(scheme)
	files, _, err := Generate()
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]loaded{}
	for _, f := range files {
		var v1 apiextv1.CustomResourceDefinition
		if err := yaml.UnmarshalStrict(f.Data, &v1); err != nil {
			t.Fatalf("%s: %v", f.Name, err)
		}
		scheme.Default(&v1) // as the API server does on create
		var in apiextensions.CustomResourceDefinition
		if err := scheme.Convert(&v1, &in, nil); err != nil {
			t.Fatal(err)
		}
		if errs := crdvalidation.ValidateCustomResourceDefinition(context.Background(), &in); len(errs) > 0 {
			for _, e := range errs {
				t.Errorf("%s: %v", f.Name, e)
			}
			continue
		}
		// the internal form hoists a schema shared by all versions to spec.validation
		props := in.Spec.Validation.OpenAPIV3Schema
		s, err := structuralschema.NewStructural(props)
		if err != nil {
			t.Fatal(err)
		}
		val, _, err := apiservervalidation.NewSchemaValidator(props)
		if err != nil {
			t.Fatal(err)
		}
		out[v1.Spec.Names.Kind] = loaded{&in, s, val}
	}
	return out
}

// TestCRDsAreValid runs kube-apiserver's own CRD validation (structural schema, list-type rules,
// defaults, CEL cost) over the generated and the copied CRDs.
func TestCRDsAreValid(t *testing.T) {
	if got := load(t); len(got) != len(kinds)+len(copies) {
		t.Fatalf("loaded %d CRDs", len(got))
	}
}

// admit does what the CRD handler does to a create: prune unknown fields, then validate against the
// schema and the list-type rules. It returns the paths pruned and the errors.
func admit(l loaded, obj map[string]interface{}) ([]string, field.ErrorList) {
	pruned := pruning.PruneWithOptions(obj, l.structural, true, structuralschema.UnknownFieldPathOptions{TrackUnknownFieldPaths: true})
	// the CRD decoder then drops nulls of non-nullable fields (a typed client sends
	// "generation": null for every new tag, "objects": null for a template without objects)
	defaulting.PruneNonNullableNullsWithoutDefaults(obj, l.structural)
	errs := apiservervalidation.ValidateCustomResource(nil, obj, l.validator)
	errs = append(errs, listtype.ValidateListSetsAndMaps(nil, l.structural, obj)...)
	return pruned, errs
}

func toMap(t *testing.T, v interface{}) map[string]interface{} {
	raw, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	m := map[string]interface{}{}
	if err := json.Unmarshal(raw, &m); err != nil {
		t.Fatal(err)
	}
	return m
}

// TestInventoryAdmitted sends every sample of the operator's inventory, both as written in the asset
// files and as the typed client serialises it, through pruning and validation.
func TestInventoryAdmitted(t *testing.T) {
	crds := load(t)
	paths, _ := filepath.Glob("../../assets/operator/*/*/*/*.json")
	if len(paths) == 0 {
		t.Fatal("no inventory under ../../assets/operator")
	}
	n := 0
	for _, p := range paths {
		raw, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		var typed interface{}
		var l loaded
		switch {
		case strings.Contains(p, "/imagestreams/"):
			is := &imagev1.ImageStream{}
			if err := json.Unmarshal(raw, is); err != nil {
				t.Fatal(err)
			}
			typed, l = is, crds["ImageStream"]
		case strings.Contains(p, "/templates/"):
			tp := &templatev1.Template{}
			if err := json.Unmarshal(raw, tp); err != nil {
				t.Fatal(err)
			}
			typed, l = tp, crds["Template"]
		default:
			continue
		}
		for _, form := range []string{"file", "typed"} {
			var obj map[string]interface{}
			if form == "file" {
				if err := json.Unmarshal(raw, &obj); err != nil {
					t.Fatal(err)
				}
			} else {
				obj = toMap(t, typed)
			}
			before := toMap(t, obj)
			defaulting.PruneNonNullableNullsWithoutDefaults(before, l.structural)
			pruned, errs := admit(l, obj)
			if len(pruned) > 0 {
				t.Errorf("%s (%s): pruned %v", p, form, pruned)
			}
			for _, e := range errs {
				t.Errorf("%s (%s): %v", p, form, e)
			}
			if len(pruned) == 0 && !reflect.DeepEqual(before, obj) {
				t.Errorf("%s (%s): changed without a pruned path", p, form)
			}
		}
		n++
	}
	t.Logf("%d samples admitted unchanged", n)
}

// TestSchemaBehaviour shows what the typed CRDs change compared to the permissive ones.
func TestSchemaBehaviour(t *testing.T) {
	crds := load(t)
	is := func() map[string]interface{} {
		return map[string]interface{}{
			"apiVersion": "image.openshift.io/v1", "kind": "ImageStream",
			"metadata": map[string]interface{}{"name": "x"},
			"spec": map[string]interface{}{"tags": []interface{}{
				map[string]interface{}{"name": "a", "from": map[string]interface{}{"kind": "DockerImage", "name": "r/a:1"}},
			}},
		}
	}
	tag := func(o map[string]interface{}) map[string]interface{} {
		return o["spec"].(map[string]interface{})["tags"].([]interface{})[0].(map[string]interface{})
	}

	o := is()
	tag(o)["bogus"] = 1
	tag(o)["from"].(map[string]interface{})["extra"] = "y"
	pruned, errs := admit(crds["ImageStream"], o)
	t.Logf("unknown fields: pruned=%v errs=%v", pruned, errs)
	if len(pruned) != 2 || len(errs) != 0 {
		t.Errorf("want two pruned paths, no error")
	}

	o = is()
	tag(o)["generation"] = "7"
	_, errs = admit(crds["ImageStream"], o)
	t.Logf("wrong type: %v", errs)
	if len(errs) == 0 {
		t.Errorf("string generation accepted")
	}

	o = is()
	o["spec"].(map[string]interface{})["tags"] = append(o["spec"].(map[string]interface{})["tags"].([]interface{}), tag(is()))
	_, errs = admit(crds["ImageStream"], o)
	t.Logf("duplicate tag name: %v", errs)
	if len(errs) == 0 {
		t.Errorf("duplicate tag accepted (list-map keyed by name expected)")
	}

	o = is()
	tag(o)["generation"] = nil
	_, errs = admit(crds["ImageStream"], o)
	if _, ok := tag(o)["generation"]; ok || len(errs) != 0 {
		t.Errorf("generation: null not dropped: %v", errs)
	}

	typed := &imagev1.ImageStream{}
	typed.Name = "x"
	typed.Status.Tags = []imagev1.NamedTagEventList{{Tag: "a", Conditions: []imagev1.TagEventCondition{{Type: imagev1.ImportSuccess, Status: "False", Generation: 2}}}}
	_, errs = admit(crds["ImageStream"], toMap(t, typed))
	if len(errs) != 0 {
		t.Errorf("typed status tag with conditions only (items: null): %v", errs)
	}

	tpl := map[string]interface{}{"apiVersion": "template.openshift.io/v1", "kind": "Template",
		"metadata": map[string]interface{}{"name": "t"}, "objects": nil}
	_, errs = admit(crds["Template"], tpl)
	if len(errs) != 0 {
		t.Errorf("template with objects: null (typed client, no objects; openshift-apiserver accepts it): %v", errs)
	}

	o = is()
	tag(o)["referencePolicy"] = map[string]interface{}{}
	_, errs = admit(crds["ImageStream"], o)
	t.Logf("referencePolicy {} (openshift-apiserver would default type=Source): %v", errs)

	tp := map[string]interface{}{
		"apiVersion": "template.openshift.io/v1", "kind": "Template", "metadata": map[string]interface{}{"name": "t"},
		"objects": []interface{}{map[string]interface{}{"apiVersion": "v1", "kind": "Service",
			"metadata": map[string]interface{}{"name": "${NAME}", "labels": map[string]interface{}{"app": "${NAME}"}, "x": 1},
			"spec":     map[string]interface{}{"ports": []interface{}{map[string]interface{}{"port": "${PORT}"}}}}},
		"unknownTop": true,
	}
	pruned, errs = admit(crds["Template"], tp)
	t.Logf("template: pruned=%v errs=%v", pruned, errs)
	if md := tp["objects"].([]interface{})[0].(map[string]interface{})["metadata"].(map[string]interface{}); md["x"] != 1 {
		t.Errorf("template object metadata was changed: %v", md)
	}
	if len(pruned) != 1 || len(errs) != 0 {
		t.Errorf("want only unknownTop pruned and objects kept verbatim")
	}
}

// TestTypedImageStreamImport admits an ImageStreamImport as the operator creates it and with a
// status as an importer fills it in (including a nested ImageStream with full metadata).
func TestTypedImageStreamImport(t *testing.T) {
	crds := load(t)
	isi := &imagev1.ImageStreamImport{}
	isi.APIVersion, isi.Kind = "image.openshift.io/v1", "ImageStreamImport"
	isi.Name, isi.Namespace = "ruby", "openshift"
	isi.Spec.Import = true
	isi.Spec.Images = []imagev1.ImageImportSpec{{
		From:            corev1.ObjectReference{Kind: "DockerImage", Name: "registry.example/ruby:3"},
		To:              &corev1.LocalObjectReference{Name: "3"},
		ReferencePolicy: imagev1.TagReferencePolicy{Type: imagev1.LocalTagReferencePolicy},
	}}
	pruned, errs := admit(crds["ImageStreamImport"], toMap(t, isi))
	if len(pruned)+len(errs) != 0 {
		t.Errorf("create: pruned=%v errs=%v", pruned, errs)
	}
	is := &imagev1.ImageStream{}
	is.Name, is.Namespace, is.UID, is.Generation = "ruby", "openshift", "u-1", 3
	is.CreationTimestamp = metav1.Now()
	is.Annotations = map[string]string{imagev1.DockerImageRepositoryCheckAnnotation: "2026-01-01T00:00:00Z"}
	is.Status.Tags = []imagev1.NamedTagEventList{{Tag: "3", Items: []imagev1.TagEvent{{Created: metav1.Now(), DockerImageReference: "registry.example/ruby@sha256:00", Image: "sha256:00", Generation: 3}}}}
	isi.Status.Import = is
	isi.Status.Images = []imagev1.ImageImportStatus{{Tag: "3", Status: metav1.Status{Status: metav1.StatusFailure, Reason: metav1.StatusReasonNotFound, Code: 404, Message: "not found"}, Image: &imagev1.Image{DockerImageReference: "registry.example/ruby@sha256:00"}}}
	pruned, errs = admit(crds["ImageStreamImport"], toMap(t, isi))
	if len(pruned)+len(errs) != 0 {
		t.Errorf("status: pruned=%v errs=%v", pruned, errs)
	}
}

// TestWorkloadKindsAdmitted admits a BuildConfig, a DeploymentConfig and a TemplateInstance as a
// typed client sends them (nil slices and maps as null, zero times as null), with the triggers and
// strategies that a client listing them reads.
func TestWorkloadKindsAdmitted(t *testing.T) {
	crds := load(t)
	bc := &buildv1.BuildConfig{}
	bc.APIVersion, bc.Kind, bc.Name, bc.Namespace = "build.openshift.io/v1", "BuildConfig", "ruby-app", "openshift"
	bc.Spec.Source.Git = &buildv1.GitBuildSource{URI: "https://example.com/ruby-ex.git"}
	bc.Spec.Strategy = buildv1.BuildStrategy{Type: buildv1.SourceBuildStrategyType, SourceStrategy: &buildv1.SourceBuildStrategy{
		From: corev1.ObjectReference{Kind: "ImageStreamTag", Namespace: "openshift", Name: "ruby:3.3-ubi9"},
	}}
	bc.Spec.Triggers = []buildv1.BuildTriggerPolicy{{Type: buildv1.ImageChangeBuildTriggerType, ImageChange: &buildv1.ImageChangeTrigger{}}}
	bc.Status.ImageChangeTriggers = []buildv1.ImageChangeTriggerStatus{{LastTriggeredImageID: "sha256:00",
		From: buildv1.ImageStreamTagReference{Namespace: "openshift", Name: "ruby:3.3-ubi9"}}}

	dc := &appsv1.DeploymentConfig{}
	dc.APIVersion, dc.Kind, dc.Name, dc.Namespace = "apps.openshift.io/v1", "DeploymentConfig", "ruby-app", "openshift"
	dc.Spec.Replicas = 1
	dc.Spec.Selector = map[string]string{"app": "ruby-app"}
	dc.Spec.Template = &corev1.PodTemplateSpec{
		ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": "ruby-app"}},
		Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "app", Image: " ",
			Ports: []corev1.ContainerPort{{ContainerPort: 8080}}}}},
	}
	dc.Spec.Triggers = appsv1.DeploymentTriggerPolicies{{Type: appsv1.DeploymentTriggerOnImageChange,
		ImageChangeParams: &appsv1.DeploymentTriggerImageChangeParams{Automatic: true, ContainerNames: []string{"app"},
			From: corev1.ObjectReference{Kind: "ImageStreamTag", Namespace: "openshift", Name: "ruby-app:latest"}}}}

	ti := &templatev1.TemplateInstance{}
	ti.APIVersion, ti.Kind, ti.Name, ti.Namespace = "template.openshift.io/v1", "TemplateInstance", "ruby-app", "openshift"
	ti.Spec.Template.Name = "small"
	ti.Spec.Template.Parameters = []templatev1.Parameter{{Name: "NAME", Value: "x"}}
	ti.Spec.Template.Objects = []runtime.RawExtension{{Raw: []byte(`{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"${NAME}"}}`)}}
	ti.Status.Conditions = []templatev1.TemplateInstanceCondition{{Type: templatev1.TemplateInstanceReady, Status: corev1.ConditionTrue, LastTransitionTime: metav1.Now()}}

	for kind, obj := range map[string]interface{}{"BuildConfig": bc, "DeploymentConfig": dc, "TemplateInstance": ti} {
		m := toMap(t, obj)
		pruned, errs := admit(crds[kind], m)
		if len(pruned)+len(errs) != 0 {
			t.Errorf("%s: pruned=%v errs=%v", kind, pruned, errs)
		}
	}

	// The one default a CRD keeps: a container port's protocol, a key of the ports list-map.
	m := toMap(t, dc)
	defaulting.Default(m, crds["DeploymentConfig"].structural)
	port := m["spec"].(map[string]interface{})["template"].(map[string]interface{})["spec"].(map[string]interface{})["containers"].([]interface{})[0].(map[string]interface{})["ports"].([]interface{})[0]
	if got := port.(map[string]interface{})["protocol"]; got != "TCP" {
		t.Errorf("container port protocol defaulted to %v, want TCP", got)
	}
	if _, ok := m["spec"].(map[string]interface{})["strategy"].(map[string]interface{})["type"]; ok {
		t.Errorf("spec.strategy.type was defaulted: only list-map keys keep their defaults")
	}
}

// TestOnlyListMapKeysKeepDefaults: a list-map key that is neither required nor defaulted is an
// error (kube-apiserver would refuse the CRD); every other default is dropped.
func TestOnlyListMapKeysKeepDefaults(t *testing.T) {
	list := func(keyDefault *apiextv1.JSON) apiextv1.JSONSchemaProps {
		return apiextv1.JSONSchemaProps{Type: "object", Properties: map[string]apiextv1.JSONSchemaProps{
			"ports": {Type: "array", XListType: ptr("map"), XListMapKeys: []string{"port", "protocol"},
				Items: &apiextv1.JSONSchemaPropsOrArray{Schema: &apiextv1.JSONSchemaProps{Type: "object", Required: []string{"port"},
					Properties: map[string]apiextv1.JSONSchemaProps{
						"port":     {Type: "integer", Default: &apiextv1.JSON{Raw: []byte("80")}},
						"protocol": {Type: "string", Default: keyDefault},
						"name":     {Type: "string", Default: &apiextv1.JSON{Raw: []byte(`""`)}},
					}}}},
		}}
	}
	s := list(&apiextv1.JSON{Raw: []byte(`"TCP"`)})
	if err := (&converter{}).dropDefaults(&s, "x", nil); err != nil {
		t.Fatal(err)
	}
	items := s.Properties["ports"].Items.Schema.Properties
	if items["protocol"].Default == nil || items["port"].Default != nil || items["name"].Default != nil {
		t.Errorf("defaults left: protocol %v, port %v, name %v; want only protocol's", items["protocol"].Default, items["port"].Default, items["name"].Default)
	}
	s = list(nil)
	if err := (&converter{}).dropDefaults(&s, "x", nil); err == nil {
		t.Errorf("a list-map key without a default nor required was accepted")
	}
}

// TestRoleBindingAndServiceMonitorAdmitted admits the jenkins Templates' RoleBinding and
// ServiceMonitor as instantiated, a RoleBinding as the typed client sends it (userNames and
// groupNames null), and the operator's own ServiceMonitor, whose every field the schema-less
// ServiceMonitor CRD keeps.
func TestRoleBindingAndServiceMonitorAdmitted(t *testing.T) {
	crds := load(t)
	jenkins := map[string]interface{}{
		"apiVersion": "authorization.openshift.io/v1", "kind": "RoleBinding",
		"metadata":   map[string]interface{}{"name": "jenkins_edit"},
		"groupNames": nil,
		"roleRef":    map[string]interface{}{"name": "edit"},
		"subjects":   []interface{}{map[string]interface{}{"kind": "ServiceAccount", "name": "jenkins"}},
	}
	typed := &authorizationv1.RoleBinding{}
	typed.APIVersion, typed.Kind, typed.Name, typed.Namespace = "authorization.openshift.io/v1", "RoleBinding", "jenkins_edit", "openshift"
	typed.RoleRef = corev1.ObjectReference{Name: "edit"}
	typed.Subjects = []corev1.ObjectReference{{Kind: "ServiceAccount", Name: "jenkins"}}
	for name, obj := range map[string]map[string]interface{}{"jenkins": jenkins, "typed": toMap(t, typed)} {
		pruned, errs := admit(crds["RoleBinding"], obj)
		if len(pruned)+len(errs) != 0 {
			t.Errorf("RoleBinding (%s): pruned=%v errs=%v", name, pruned, errs)
		}
	}
	if _, errs := admit(crds["RoleBinding"], map[string]interface{}{
		"apiVersion": "authorization.openshift.io/v1", "kind": "RoleBinding", "metadata": map[string]interface{}{"name": "x"},
		"roleRef": map[string]interface{}{"name": "edit"},
	}); len(errs) == 0 {
		t.Errorf("a RoleBinding without subjects was admitted: openshift-apiserver's OpenAPI requires them")
	}

	monitor := map[string]interface{}{
		"apiVersion": "monitoring.coreos.com/v1", "kind": "ServiceMonitor",
		"metadata": map[string]interface{}{"name": "cluster-samples-operator"},
		"spec": map[string]interface{}{
			"selector":             map[string]interface{}{"matchLabels": map[string]interface{}{"name": "cluster-samples-operator"}},
			"serviceDiscoveryRole": "EndpointSlice",
			"endpoints":            []interface{}{map[string]interface{}{"targetPort": int64(60000), "interval": "60s", "scheme": "https"}},
		},
	}
	want := toMap(t, monitor)
	pruned, errs := admit(crds["ServiceMonitor"], monitor)
	if len(pruned)+len(errs) != 0 || !reflect.DeepEqual(toMap(t, monitor), want) {
		t.Errorf("ServiceMonitor: pruned=%v errs=%v, kept %v", pruned, errs, monitor)
	}
	if _, errs := admit(crds["ServiceMonitor"], map[string]interface{}{
		"apiVersion": "monitoring.coreos.com/v1", "kind": "ServiceMonitor", "metadata": map[string]interface{}{"name": "x"},
	}); len(errs) == 0 {
		t.Errorf("a ServiceMonitor without spec was admitted: prometheus-operator's CRD requires it")
	}
}
