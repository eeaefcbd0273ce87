package apiserverhooks

import (
	"encoding/json"
	"fmt"

	imagev1 "github.com/openshift/api/image/v1"
	"github.com/openshift/library-go/pkg/image/reference"
	admissionv1 "k8s.io/api/admission/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

func decodeImport(raw []byte) (*imagev1.ImageStreamImport, error) {
	isi := &imagev1.ImageStreamImport{}
	if err := json.Unmarshal(raw, isi); err != nil {
		return nil, fmt.Errorf("decoding the ImageStreamImport: %w", err)
	}
	return isi, nil
}

func mutateImageStreamImport(req *admissionv1.AdmissionRequest) (map[string]any, field.ErrorList, error) {
	obj, err := decodeObject(req.Object.Raw)
	if err != nil {
		return nil, nil, err
	}
	isi, err := decodeImport(req.Object.Raw)
	if err != nil {
		return nil, nil, err
	}
	DefaultImageStreamImport(isi)
	mutated, err := setTyped(nil, obj, "spec", isi.Spec)
	return mutated, nil, err
}

// DefaultImageStreamImport applies the v1 defaults of an ImageStreamImport's spec (osa
// pkg/image/apis/image/v1/defaults.go, zz_generated.defaults.go): an image without "to" goes to
// the tag its reference names, and empty import modes and reference policies get the defaults
// that tags get.
func DefaultImageStreamImport(isi *imagev1.ImageStreamImport) {
	defaultPolicies := func(ip *imagev1.TagImportPolicy, rp *imagev1.TagReferencePolicy) {
		if ip.ImportMode == "" {
			ip.ImportMode = DefaultImportMode
		}
		if rp.Type == "" {
			rp.Type = imagev1.SourceTagReferencePolicy
		}
	}
	if r := isi.Spec.Repository; r != nil {
		defaultPolicies(&r.ImportPolicy, &r.ReferencePolicy)
	}
	for i := range isi.Spec.Images {
		img := &isi.Spec.Images[i]
		if img.To == nil {
			if ref, err := reference.Parse(img.From.Name); err == nil && ref.Tag != "" {
				img.To = &corev1.LocalObjectReference{Name: ref.Tag}
			}
		}
		defaultPolicies(&img.ImportPolicy, &img.ReferencePolicy)
	}
}

func validateImageStreamImportRequest(req *admissionv1.AdmissionRequest) (map[string]any, field.ErrorList, error) {
	isi, err := decodeImport(req.Object.Raw)
	if err != nil {
		return nil, nil, err
	}
	return nil, ValidateImageStreamImport(isi), nil
}

// ValidateImageStreamImport is openshift-apiserver's validation of an import request (osa
// pkg/image/apis/image/validation/validation.go ValidateImageStreamImport).
func ValidateImageStreamImport(isi *imagev1.ImageStreamImport) field.ErrorList {
	var errs field.ErrorList
	images := field.NewPath("spec", "images")
	for i, img := range isi.Spec.Images {
		p := images.Index(i)
		if img.From.Kind != "DockerImage" {
			errs = append(errs, field.Invalid(p.Child("from", "kind"), img.From.Kind, "only DockerImage is supported"))
		} else {
			if img.To != nil && img.To.Name == "" {
				errs = append(errs, field.Invalid(p.Child("to", "name"), img.To.Name, "the name of the target tag must be specified"))
			}
			switch {
			case img.From.Name == "":
				errs = append(errs, field.Required(p.Child("from", "name"), ""))
			case img.From.Name == "*":
				continue // legacy clients' wildcard, still accepted by the server
			default:
				if _, err := reference.Parse(img.From.Name); err != nil {
					errs = append(errs, field.Invalid(p.Child("from", "name"), img.From.Name, err.Error()))
				}
			}
		}
		errs = append(errs, validateImportPolicy(img.ImportPolicy, p.Child("importPolicy"))...)
	}
	if r := isi.Spec.Repository; r != nil {
		p := field.NewPath("spec", "repository")
		if r.From.Kind != "DockerImage" {
			errs = append(errs, field.Invalid(p.Child("from", "kind"), r.From.Kind, "only DockerImage is supported"))
		} else if r.From.Name == "" {
			errs = append(errs, field.Required(p.Child("from", "name"), "container image references require a name"))
		} else if ref, err := reference.Parse(r.From.Name); err != nil {
			errs = append(errs, field.Invalid(p.Child("from", "name"), r.From.Name, err.Error()))
		} else if ref.Tag != "" || ref.ID != "" {
			errs = append(errs, field.Invalid(p.Child("from", "name"), r.From.Name, "you must specify an image repository, not a tag or ID"))
		}
		errs = append(errs, validateImportPolicy(r.ImportPolicy, p.Child("importPolicy"))...)
	}
	if len(isi.Spec.Images) == 0 && isi.Spec.Repository == nil {
		errs = append(errs, field.Invalid(images, nil, "you must specify at least one image or a repository import"))
	}
	for _, msg := range ValidateImageStreamName(isi.Name) {
		errs = append(errs, field.Invalid(field.NewPath("metadata", "name"), isi.Name, msg))
	}
	return errs
}
