package apiserverhooks

import (
	"context"
	"encoding/json"
	"fmt"

	imagev1 "github.com/openshift/api/image/v1"
	"github.com/openshift/library-go/pkg/image/reference"
	admissionv1 "k8s.io/api/admission/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

func decodeImport(raw []byte) (*imagev1.ImageStreamImport, error) {
	isi := &imagev1.ImageStreamImport{}
	if err := json.Unmarshal(raw, isi); err != nil {
		return nil, fmt.Errorf("decoding the ImageStreamImport: %w", err)
	}
	return isi, nil
}

// The stream identity an ImageStreamImport was sent with. openshift-apiserver's handler reads the
// request's uid and resourceVersion (imagestreamimport/rest.go): with either, a missing stream is
// NotFound, another uid NotFound and another resourceVersion a Conflict; with neither, a missing
// stream is created. A CRD object cannot be stored with a resourceVersion, so the mutating webhook
// moves it into an annotation, where the import emulator, which plays the handler, reads it too.
// The uid never reaches a webhook: kube-apiserver clears metadata.uid of a create before
// admission, so the stand-in checks the resourceVersion only (docs/design.md lists the difference).
const (
	RequestedUIDAnnotation             = "apiserverhooks.test/requested-uid"
	RequestedResourceVersionAnnotation = "apiserverhooks.test/requested-resource-version"
)

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
	if err != nil || (isi.UID == "" && isi.ResourceVersion == "") {
		return mutated, nil, err
	}
	meta := isi.ObjectMeta
	if meta.Annotations == nil {
		meta.Annotations = map[string]string{}
	}
	if meta.UID != "" {
		meta.Annotations[RequestedUIDAnnotation] = string(meta.UID)
	}
	if meta.ResourceVersion != "" {
		meta.Annotations[RequestedResourceVersionAnnotation] = meta.ResourceVersion
	}
	meta.UID, meta.ResourceVersion = "", ""
	mutated, err = setTyped(mutated, nil, "metadata", meta)
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

func (s *Server) validateImageStreamImportRequest(req *admissionv1.AdmissionRequest) (map[string]any, field.ErrorList, error) {
	isi, err := decodeImport(req.Object.Raw)
	if err != nil {
		return nil, nil, err
	}
	if errs := ValidateImageStreamImport(isi); len(errs) > 0 {
		return nil, errs, nil
	}
	return nil, nil, s.checkImportTarget(req.Namespace, isi)
}

// checkImportTarget answers as openshift-apiserver's import handler does when the request names
// the stream's uid or resourceVersion (moved into annotations by the mutating webhook): NotFound
// when the stream is missing or is another one of that name, Conflict when it has changed since.
func (s *Server) checkImportTarget(namespace string, isi *imagev1.ImageStreamImport) error {
	uid, rv := isi.Annotations[RequestedUIDAnnotation], isi.Annotations[RequestedResourceVersionAnnotation]
	get := s.streamGetter()
	if (uid == "" && rv == "") || get == nil {
		return nil
	}
	stream, err := get(context.Background(), namespace, isi.Name)
	notFound := apierrors.NewNotFound(schema.GroupResource{Group: imagev1.GroupName, Resource: "imagestream"}, isi.Name)
	switch {
	case apierrors.IsNotFound(err):
		return notFound
	case err != nil:
		return apierrors.NewInternalError(err)
	case rv != "" && rv != stream.ResourceVersion:
		return apierrors.NewConflict(schema.GroupResource{Group: imagev1.GroupName, Resource: "imagestream"}, isi.Name,
			fmt.Errorf("the image stream was updated from %q to %q", rv, stream.ResourceVersion))
	case uid != "" && uid != string(stream.UID):
		return notFound
	}
	return nil
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
