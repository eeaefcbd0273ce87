package main

import (
	"encoding/json"
	"fmt"
	"slices"
	"sort"
	"strings"

	apiextv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/kube-openapi/pkg/common"
	"k8s.io/kube-openapi/pkg/validation/spec"
)

// converter turns openapi-gen definitions (kube-openapi spec.Schema, linked by $ref) into one
// inlined apiextensions v1 schema that kube-apiserver accepts as structural. No library does this
// (apiextensions-apiserver only converts the other way), and a JSON round trip is not enough:
// CRDs allow no $ref, and the list markers would be lost. The rules:
//
//   - $ref (and the v3 form allOf: [{$ref}]) is inlined; a field's own description wins over its
//     type's. A recursive type is an error (none occurs in these kinds: the pod template of a
//     DeploymentConfig and the Template inside a TemplateInstance nest deeply but never loop).
//   - Types openapi-gen leaves without structure get their CRD form, as controller-gen gives
//     them: RawExtension and FieldsV1 keep unknown fields; Time and MicroTime are date-time
//     strings; IntOrString and Quantity are int-or-string. So Template.objects keeps each object
//     as sent, without x-kubernetes-embedded-resource: that would demand apiVersion and kind and
//     run ObjectMeta validation on objects whose names are "${NAME}", which openshift-apiserver,
//     storing them as raw bytes, never does.
//   - default is dropped: openapi-gen derives it from Go zero values ({} for a struct, "" for a
//     string), openshift-apiserver never applies it (its defaulting is Go code, played here by
//     test/apiserverhooks), and some of those values do not even validate against their own
//     schema ({} for an object with required fields). The one exception is a key of a list-type
//     map that the items do not require (a container port's protocol, an image pull secret's
//     name, in a DeploymentConfig's pod template): a CRD must default it, and keeps the OpenAPI
//     default, which is what the Go defaulting sets too; such a key without one is an error
//     (dropDefaults).
//   - Lists: x-kubernetes-list-type, -list-map-keys and -map-type pass through. image/v1 only
//     carries the strategic-merge markers (patch-strategy merge + patch-merge-key K), which the
//     server-side-apply type converter reads as a map keyed by K (kube-openapi pkg/schemaconv,
//     getListElementRelationship); they become list-type map keyed by K, when K is a required,
//     non-nullable scalar of the items as a CRD demands, and stay atomic with a note otherwise.
//   - A required array or map becomes nullable: see the comment in convert.
//   - Other extensions (x-kubernetes-patch-*, x-kubernetes-unions of the core types, ...) are
//     dropped with a note.
type converter struct {
	defs  map[string]common.OpenAPIDefinition
	notes []string
}

const (
	extListType      = "x-kubernetes-list-type"
	extListMapKeys   = "x-kubernetes-list-map-keys"
	extMapType       = "x-kubernetes-map-type"
	extPatchStrategy = "x-kubernetes-patch-strategy"
	extPatchMergeKey = "x-kubernetes-patch-merge-key"
	extPreserve      = "x-kubernetes-preserve-unknown-fields"
	extEmbedded      = "x-kubernetes-embedded-resource"
	extIntOrString   = "x-kubernetes-int-or-string"
)

func refName(r spec.Ref) string {
	return strings.TrimPrefix(r.String(), "#/definitions/")
}

// special returns the CRD schema of types openapi-gen leaves without usable structure.
func special(name string) (apiextv1.JSONSchemaProps, bool) {
	switch name {
	case runtime.RawExtension{}.OpenAPIModelName(), metav1.FieldsV1{}.OpenAPIModelName():
		return apiextv1.JSONSchemaProps{Type: "object", XPreserveUnknownFields: ptr(true)}, true
	case metav1.Time{}.OpenAPIModelName(), metav1.MicroTime{}.OpenAPIModelName():
		return apiextv1.JSONSchemaProps{Type: "string", Format: "date-time"}, true
	case metav1.Duration{}.OpenAPIModelName():
		return apiextv1.JSONSchemaProps{Type: "string"}, true
	case intstr.IntOrString{}.OpenAPIModelName(), resource.Quantity{}.OpenAPIModelName():
		return apiextv1.JSONSchemaProps{
			XIntOrString: true,
			AnyOf:        []apiextv1.JSONSchemaProps{{Type: "integer"}, {Type: "string"}},
		}, true
	}
	return apiextv1.JSONSchemaProps{}, false
}

func (c *converter) convert(s spec.Schema, path string, stack []string) (apiextv1.JSONSchemaProps, error) {
	ref := s.Ref
	if ref.String() == "" && len(s.AllOf) == 1 && s.AllOf[0].Ref.String() != "" {
		ref = s.AllOf[0].Ref
	}
	if ref.String() != "" {
		name := refName(ref)
		var out apiextv1.JSONSchemaProps
		if sp, ok := special(name); ok {
			out = sp // the type's own description is generic (RawExtension's is a tutorial)
		} else {
			for _, n := range stack {
				if n == name {
					return out, fmt.Errorf("%s: recursive type %s cannot be inlined", path, name)
				}
			}
			def, ok := c.defs[name]
			if !ok {
				return out, fmt.Errorf("%s: no definition for %s", path, name)
			}
			var err error
			if out, err = c.convert(def.Schema, path, append(stack, name)); err != nil {
				return out, err
			}
		}
		if s.Description != "" {
			out.Description = s.Description
		}
		if err := c.applyExtensions(&out, s.Extensions, path); err != nil {
			return out, err
		}
		return out, nil
	}
	if len(s.AllOf)+len(s.OneOf)+len(s.AnyOf) > 0 || s.Not != nil {
		return apiextv1.JSONSchemaProps{}, fmt.Errorf("%s: allOf/oneOf/anyOf/not not supported here", path)
	}

	out := apiextv1.JSONSchemaProps{
		Description: s.Description,
		Format:      s.Format,
		Nullable:    s.Nullable,
		Required:    append([]string(nil), s.Required...),
		Pattern:     s.Pattern,
		MaxLength:   s.MaxLength,
		MinLength:   s.MinLength,
		MaxItems:    s.MaxItems,
		MinItems:    s.MinItems,
		Maximum:     s.Maximum,
		Minimum:     s.Minimum,
	}
	switch len(s.Type) {
	case 0:
	case 1:
		out.Type = s.Type[0]
	default:
		return out, fmt.Errorf("%s: several types %v", path, s.Type)
	}
	if s.Default != nil {
		// kept for now; dropDefaults removes all but the ones a CRD needs
		raw, err := json.Marshal(s.Default)
		if err != nil {
			return out, err
		}
		out.Default = &apiextv1.JSON{Raw: raw}
	}
	for _, e := range s.Enum {
		raw, err := json.Marshal(e)
		if err != nil {
			return out, err
		}
		out.Enum = append(out.Enum, apiextv1.JSON{Raw: raw})
	}
	if len(s.Properties) > 0 {
		out.Properties = map[string]apiextv1.JSONSchemaProps{}
		names := make([]string, 0, len(s.Properties))
		for n := range s.Properties {
			names = append(names, n)
		}
		sort.Strings(names)
		for _, n := range names {
			p, err := c.convert(s.Properties[n], path+"."+n, stack)
			if err != nil {
				return out, err
			}
			out.Properties[n] = p
		}
	}
	// Go marshals a nil slice or map of a field without omitempty as null. openapi-gen lists such
	// fields as required, the CRD decoder drops a null of a non-nullable field, and the required
	// check then fails, where openshift-apiserver (typed Go decoding) simply sees an empty list.
	// Making exactly those fields nullable keeps the required check for clients that omit them
	// and accepts what every typed client sends.
	for _, r := range out.Required {
		p, ok := out.Properties[r]
		if ok && (p.Type == "array" || (p.Type == "object" && p.Properties == nil && p.AdditionalProperties != nil)) {
			p.Nullable = true
			out.Properties[r] = p
			c.notes = append(c.notes, fmt.Sprintf("%s.%s: required %s made nullable (nil in Go is null on the wire)", path, r, p.Type))
		}
	}
	if s.Items != nil {
		if s.Items.Schema == nil {
			return out, fmt.Errorf("%s: tuple items not supported", path)
		}
		items, err := c.convert(*s.Items.Schema, path+"[]", stack)
		if err != nil {
			return out, err
		}
		out.Items = &apiextv1.JSONSchemaPropsOrArray{Schema: &items}
	}
	if ap := s.AdditionalProperties; ap != nil {
		if ap.Schema != nil {
			v, err := c.convert(*ap.Schema, path+"{}", stack)
			if err != nil {
				return out, err
			}
			out.AdditionalProperties = &apiextv1.JSONSchemaPropsOrBool{Allows: true, Schema: &v}
		} else if ap.Allows {
			out.XPreserveUnknownFields = ptr(true)
		}
	}
	if out.Format == "int-or-string" {
		out = apiextv1.JSONSchemaProps{Description: out.Description, XIntOrString: true,
			AnyOf: []apiextv1.JSONSchemaProps{{Type: "integer"}, {Type: "string"}}}
	}
	if out.Type == "" && !out.XIntOrString {
		// interface{} or an unstructured type: keep whatever is sent, as the server would.
		out.XPreserveUnknownFields = ptr(true)
		c.notes = append(c.notes, fmt.Sprintf("%s: no type, kept as x-kubernetes-preserve-unknown-fields", path))
	}
	if out.Type == "object" && out.Properties == nil && out.AdditionalProperties == nil && out.XPreserveUnknownFields == nil {
		out.XPreserveUnknownFields = ptr(true)
		c.notes = append(c.notes, fmt.Sprintf("%s: object without properties, kept as x-kubernetes-preserve-unknown-fields", path))
	}
	if err := c.applyExtensions(&out, s.Extensions, path); err != nil {
		return out, err
	}
	return out, nil
}

func (c *converter) applyExtensions(out *apiextv1.JSONSchemaProps, ext spec.Extensions, path string) error {
	for k, v := range ext {
		switch k {
		case extListType:
			s := v.(string)
			out.XListType = &s
		case extListMapKeys:
			out.XListMapKeys = toStrings(v)
		case extMapType:
			s := v.(string)
			out.XMapType = &s
		case extPreserve:
			if b, _ := v.(bool); b {
				out.XPreserveUnknownFields = ptr(true)
			}
		case extEmbedded:
			out.XEmbeddedResource, _ = v.(bool)
		case extIntOrString:
			out.XIntOrString, _ = v.(bool)
		case extPatchStrategy, extPatchMergeKey:
			// handled below
		default:
			c.notes = append(c.notes, fmt.Sprintf("%s: extension %s dropped", path, k))
		}
	}
	if out.XListType != nil || out.Type != "array" {
		return nil
	}
	strategy, _ := ext[extPatchStrategy].(string)
	if strategy != "merge" && strategy != "merge,retainKeys" {
		return nil
	}
	key, hasKey := ext[extPatchMergeKey].(string)
	items := out.Items.Schema
	switch {
	case hasKey && items.Type == "object" && isRequiredScalar(items, key):
		out.XListType, out.XListMapKeys = ptr("map"), []string{key}
	case !hasKey && items.Type != "object" && items.Type != "array":
		out.XListType = ptr("set")
	default:
		c.notes = append(c.notes, fmt.Sprintf("%s: patch-merge-key %q is not a required scalar property of the items; list left atomic", path, key))
	}
	return nil
}

// dropDefaults removes the defaults convert kept from s and below it, except on the keys of a
// list-type map that its items do not require: a CRD demands that such a key have a default, and
// the one openapi-gen gives it is what the Go defaulting of the real server applies
// (ContainerPort.protocol TCP, LocalObjectReference.name ""). keep names the properties of s whose
// default stays.
func (c *converter) dropDefaults(s *apiextv1.JSONSchemaProps, path string, keep []string) error {
	for name, p := range s.Properties {
		if !slices.Contains(keep, name) {
			p.Default = nil
		}
		if err := c.dropDefaults(&p, path+"."+name, nil); err != nil {
			return err
		}
		s.Properties[name] = p
	}
	if s.Items != nil && s.Items.Schema != nil {
		keys, err := c.optionalListMapKeys(s, path)
		if err != nil {
			return err
		}
		s.Items.Schema.Default = nil
		if err := c.dropDefaults(s.Items.Schema, path+"[]", keys); err != nil {
			return err
		}
	}
	var others []*apiextv1.JSONSchemaProps
	if s.AdditionalProperties != nil && s.AdditionalProperties.Schema != nil {
		others = append(others, s.AdditionalProperties.Schema)
	}
	for i := range s.AnyOf {
		others = append(others, &s.AnyOf[i])
	}
	for _, o := range others {
		o.Default = nil
		if err := c.dropDefaults(o, path+"{}", nil); err != nil {
			return err
		}
	}
	return nil
}

// optionalListMapKeys returns the keys of the list-type map s that its items do not require; each
// must have a default.
func (c *converter) optionalListMapKeys(s *apiextv1.JSONSchemaProps, path string) ([]string, error) {
	if s.XListType == nil || *s.XListType != "map" {
		return nil, nil
	}
	items := s.Items.Schema
	var keys []string
	for _, key := range s.XListMapKeys {
		if slices.Contains(items.Required, key) {
			continue
		}
		p, ok := items.Properties[key]
		if !ok || p.Default == nil {
			return nil, fmt.Errorf("%s: list-map key %q is neither required nor defaulted", path, key)
		}
		keys = append(keys, key)
		c.notes = append(c.notes, fmt.Sprintf("%s[].%s: default %s kept (a list-map key the items do not require)", path, key, p.Default.Raw))
	}
	return keys, nil
}

func isRequiredScalar(s *apiextv1.JSONSchemaProps, key string) bool {
	p, ok := s.Properties[key]
	if !ok || p.Type == "object" || p.Type == "array" || p.Type == "" || p.Nullable {
		return false
	}
	for _, r := range s.Required {
		if r == key {
			return true
		}
	}
	return false
}

func toStrings(v interface{}) []string {
	switch t := v.(type) {
	case []string:
		return t
	case []interface{}:
		var out []string
		for _, x := range t {
			out = append(out, fmt.Sprint(x))
		}
		return out
	}
	return nil
}

func ptr[T any](v T) *T { return &v }
