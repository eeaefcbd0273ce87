package apiserverhooks

import (
	"context"
	"encoding/json"
	"fmt"
	"regexp"
	"slices"
	"strings"

	imagev1 "github.com/openshift/api/image/v1"
	"github.com/openshift/library-go/pkg/image/reference"
	admissionv1 "k8s.io/api/admission/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/validation/path"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/samples-operator-dev/cluster-samples-operator/pkg/importallow"
)

// DefaultImportMode is what an empty importMode becomes: openshift-apiserver's DefaultImportMode
// (osa pkg/image/apis/image/types.go) on a cluster whose imagePolicyConfig does not set
// imageStreamImportMode.
const DefaultImportMode = imagev1.ImportModeLegacy

// imageStreamNameRE is the rule openshift-apiserver adds to the path-segment rule for image
// stream names (RepositoryNameComponentRegexp in osa pkg/image/apis/image/validation): a stream
// is a repository path component of the internal registry.
var imageStreamNameRE = regexp.MustCompile(`^[a-z0-9]+(?:[._-][a-z0-9]+)*$`)

// repositoryPathMax bounds "<namespace>/<name>", the repository path of a stream in the internal
// registry (distribution's NameTotalLengthMax, checked by osa ValidateImageStreamWithWhitelister).
const repositoryPathMax = 255

func decodeStream(raw []byte) (*imagev1.ImageStream, error) {
	is := &imagev1.ImageStream{}
	if err := json.Unmarshal(raw, is); err != nil {
		return nil, fmt.Errorf("decoding the ImageStream: %w", err)
	}
	return is, nil
}

func (s *Server) mutateImageStream(req *admissionv1.AdmissionRequest) (map[string]any, field.ErrorList, error) {
	obj, err := decodeObject(req.Object.Raw)
	if err != nil {
		return nil, nil, err
	}
	before, old, err := decodeStreamRequest(req)
	if err != nil {
		return nil, nil, err
	}
	after := before.DeepCopy()
	if fn := s.imageStreamNormalizer(); fn != nil {
		fn(after)
	}
	PrepareImageStream(after, old)
	mutated, err := applyTyped(obj, before, after)
	if err != nil {
		return nil, nil, err
	}
	// The whole spec as the server encodes it: that also fills the fields a typed decoder reads
	// as false or "" when they are missing, which the CRD's schema would otherwise require
	// (lookupPolicy.local, for one).
	mutated, err = setTyped(mutated, obj, "spec", after.Spec)
	return mutated, nil, err
}

// PrepareImageStream does to a created (old == nil) or updated stream what openshift-apiserver
// does before it stores it: the v1 decoding (defaults, spec.tags turned into a map and back) and
// the strategy's tag generations. The stream's own metadata.generation is left to the CRD
// machinery, which moves it as the strategy does: 1 on create, +1 when the spec changes.
func PrepareImageStream(stream, old *imagev1.ImageStream) {
	decodeImageStream(stream)
	if old == nil {
		// osa strategy.go PrepareForCreate: every tag is generation 1, the stream's.
		for i := range stream.Spec.Tags {
			stream.Spec.Tags[i].Generation = ptr(int64(1))
		}
		return
	}
	old = old.DeepCopy()
	decodeImageStream(old)
	oldTags := map[string]imagev1.TagReference{}
	for _, t := range old.Spec.Tags {
		oldTags[t.Name] = t
	}
	// osa strategy.go updateSpecTagGenerationsForUpdate: a client cannot set a tag's generation,
	// except to 0, which asks for a new import.
	for i := range stream.Spec.Tags {
		tag := &stream.Spec.Tags[i]
		if tag.Generation != nil && *tag.Generation == 0 {
			continue
		}
		if oldTag, ok := oldTags[tag.Name]; ok {
			tag.Generation = copyPtr(oldTag.Generation)
		}
	}
	// osa strategy.go prepareForUpdate: a spec change moves the stream's generation.
	generation := old.Generation
	if !equality.Semantic.DeepEqual(old.Spec, stream.Spec) || generation == 0 {
		generation = old.Generation + 1
	}
	// osa strategy.go ensureSpecTagGenerationsAreSet: new and changed tags, and tags without a
	// generation, get the stream's.
	for i := range stream.Spec.Tags {
		tag := &stream.Spec.Tags[i]
		if oldTag, ok := oldTags[tag.Name]; !ok || tagChanged(oldTag, *tag, stream.Namespace) {
			tag.Generation = nil
		}
		if tag.Generation == nil || *tag.Generation == 0 {
			tag.Generation = ptr(generation)
		}
	}
}

// decodeImageStream is what a v1 ImageStream goes through on its way into openshift-apiserver:
// spec.tags becomes a map keyed by name (a repeated name keeps its last entry; osa
// pkg/image/apis/image/v1/conversion.go) and comes back sorted by name, and every tag gets the
// defaults of osa pkg/image/apis/image/v1/defaults.go.
func decodeImageStream(stream *imagev1.ImageStream) {
	if len(stream.Spec.Tags) == 0 {
		return
	}
	byName := map[string]imagev1.TagReference{}
	for _, t := range stream.Spec.Tags {
		byName[t.Name] = t
	}
	tags := make([]imagev1.TagReference, 0, len(byName))
	for _, t := range byName {
		if t.ReferencePolicy.Type == "" {
			t.ReferencePolicy.Type = imagev1.SourceTagReferencePolicy
		}
		if t.ImportPolicy.ImportMode == "" {
			t.ImportPolicy.ImportMode = DefaultImportMode
		}
		tags = append(tags, t)
	}
	slices.SortFunc(tags, func(a, b imagev1.TagReference) int { return strings.Compare(a.Name, b.Name) })
	stream.Spec.Tags = tags
}

// tagChanged says whether an update changed what a tag imports (osa strategy.go tagRefChanged):
// its source, whether it is a reference, its import mode, or a generation reset to 0.
func tagChanged(old, next imagev1.TagReference, namespace string) bool {
	if next.From == nil || next.From.Kind == "" && next.From.Name == "" {
		return false
	}
	var oldFrom corev1.ObjectReference
	if old.From != nil {
		oldFrom = *old.From
	}
	orDefault := func(ns string) string {
		if ns == "" {
			return namespace
		}
		return ns
	}
	switch {
	case orDefault(oldFrom.Namespace) != orDefault(next.From.Namespace),
		oldFrom.Name != next.From.Name,
		old.Reference != next.Reference,
		old.ImportPolicy.ImportMode != next.ImportPolicy.ImportMode:
		return true
	}
	return old.Generation != nil && next.Generation != nil && *old.Generation != *next.Generation && *next.Generation == 0
}

func (s *Server) validateImageStreamRequest(req *admissionv1.AdmissionRequest) (map[string]any, field.ErrorList, error) {
	stream, old, err := decodeStreamRequest(req)
	if err != nil {
		return nil, nil, err
	}
	errs := ValidateImageStream(stream, old)
	if get := s.imageConfigGetter(); get != nil {
		img, err := get(context.Background())
		if err != nil && !apierrors.IsNotFound(err) {
			return nil, nil, err
		}
		if img != nil {
			errs = append(errs, ValidateAllowedRegistries(stream, old, req.SubResource == "status", importallow.New(img.Spec.AllowedRegistriesForImport, img.Status.InternalRegistryHostname))...)
		}
	}
	return nil, errs, nil
}

// ValidateAllowedRegistries is openshift-apiserver's import allow-list on an imagestream write
// (osa pkg/image/apis/image/validation/validation.go). A create or an update of the main resource
// (ValidateImageStreamWithWhitelister, ValidateImageStreamUpdateWithWhitelister) checks every
// DockerImage reference of the new stream, spec.dockerImageRepository, the tags' from and the
// status tag events, and on an update admits whatever names a repository the old stream already
// named in any of those places (importallow.List.ForUpdateOf), whatever the list says now: a tag
// may move to another tag of such a repository, not to another repository of its registry. A
// /status write (ValidateImageStreamStatusUpdateWithWhitelister) exempts only the exact
// references the old status held: the real server refuses an importer's status that records an
// image from a registry the list leaves out, and keeps what was recorded before the list changed.
// An insecure tag, or a stream annotated openshift.io/image.insecureRepository, may use either port.
func ValidateAllowedRegistries(stream, old *imagev1.ImageStream, status bool, allow *importallow.List) field.ErrorList {
	if !allow.Restricted() {
		return nil
	}
	insecureRepository := stream.Annotations[imagev1.InsecureRepositoryAnnotation] == "true"
	transport := func(insecure bool) importallow.Transport {
		if insecure || insecureRepository {
			return importallow.Any
		}
		return importallow.Secure
	}
	var errs field.ErrorList
	admit := func(allow *importallow.List, ref string, insecure bool, p *field.Path) {
		if err := allow.AdmitPullSpec(ref, transport(insecure)); err != nil {
			errs = append(errs, field.Forbidden(p, err.Error()))
		}
	}
	insecureTag := map[string]bool{}
	for _, tag := range stream.Spec.Tags {
		insecureTag[tag.Name] = tag.ImportPolicy.Insecure
	}
	recorded := map[string]bool{}
	if status && old != nil {
		for _, tag := range old.Status.Tags {
			for _, item := range tag.Items {
				recorded[item.DockerImageReference] = true
			}
		}
	} else {
		// The main resource: the old stream's repositories are admitted.
		allow = allow.ForUpdateOf(old)
		if repo := stream.Spec.DockerImageRepository; repo != "" {
			admit(allow, repo, false, field.NewPath("spec", "dockerImageRepository"))
		}
		for _, tag := range stream.Spec.Tags {
			if tag.From != nil && tag.From.Kind == "DockerImage" {
				admit(allow, tag.From.Name, tag.ImportPolicy.Insecure, field.NewPath("spec", "tags").Key(tag.Name).Child("from", "name"))
			}
		}
	}
	for _, tag := range stream.Status.Tags {
		for i, item := range tag.Items {
			if item.DockerImageReference == "" || recorded[item.DockerImageReference] {
				continue
			}
			admit(allow, item.DockerImageReference, insecureTag[tag.Tag], field.NewPath("status", "tags").Key(tag.Tag).Child("items").Index(i).Child("dockerImageReference"))
		}
	}
	return errs
}

// decodeStreamRequest decodes the stream a request writes and, for an update, the one it
// replaces (nil on create).
func decodeStreamRequest(req *admissionv1.AdmissionRequest) (stream, old *imagev1.ImageStream, err error) {
	if stream, err = decodeStream(req.Object.Raw); err != nil {
		return nil, nil, err
	}
	if req.Operation == admissionv1.Update {
		if old, err = decodeStream(req.OldObject.Raw); err != nil {
			return nil, nil, err
		}
	}
	return stream, old, nil
}

// ValidateImageStreamName is openshift-apiserver's rule for the name of an image stream (and of
// an ImageStreamImport, which names one): a path segment and a repository path component.
func ValidateImageStreamName(name string) []string {
	if msgs := path.ValidatePathSegmentName(name, false); len(msgs) > 0 {
		return msgs
	}
	if !imageStreamNameRE.MatchString(name) {
		return []string{fmt.Sprintf("must match %q", imageStreamNameRE.String())}
	}
	return nil
}

// ValidateImageStream rejects what openshift-apiserver rejects in a stream that is created
// (old == nil) or updated, apart from what needs other objects: the registry allow-list of
// images.config.openshift.io, the SubjectAccessReview for tags that point into other
// namespaces, the LimitRange, and the existence of other streams that tags point at.
// Sources: osa pkg/image/apis/image/validation/validation.go (ValidateImageStreamWithWhitelister,
// ValidateImageStreamTagReference, ValidateImportPolicy) and the strategy's tagsChanged.
func ValidateImageStream(stream, old *imagev1.ImageStream) field.ErrorList {
	var errs field.ErrorList
	namePath := field.NewPath("metadata", "name")
	for _, msg := range ValidateImageStreamName(stream.Name) {
		errs = append(errs, field.Invalid(namePath, stream.Name, msg))
	}
	if len(stream.Namespace+"/"+stream.Name) > repositoryPathMax {
		errs = append(errs, field.Invalid(namePath, stream.Name, fmt.Sprintf("'namespace/name' cannot be longer than %d characters", repositoryPathMax)))
	}
	if repo := stream.Spec.DockerImageRepository; repo != "" {
		p := field.NewPath("spec", "dockerImageRepository")
		ref, err := reference.Parse(repo)
		switch {
		case err != nil:
			errs = append(errs, field.Invalid(p, repo, err.Error()))
		case ref.Tag != "":
			errs = append(errs, field.Invalid(p, repo, "the repository name may not contain a tag"))
		case ref.ID != "":
			errs = append(errs, field.Invalid(p, repo, "the repository name may not contain an ID"))
		}
	}
	oldTags := map[string]imagev1.TagReference{}
	if old != nil {
		for _, t := range old.Spec.Tags {
			oldTags[t.Name] = t
		}
	}
	for _, tag := range stream.Spec.Tags {
		p := field.NewPath("spec", "tags").Key(tag.Name)
		errs = append(errs, validateTagReference(tag, p)...)
		if oldTag, ok := oldTags[tag.Name]; ok && !tagChanged(oldTag, tag, stream.Namespace) {
			continue
		}
		if tag.From != nil && (tag.From.Kind == "ImageStreamTag" || tag.From.Kind == "ImageStreamImage") {
			sep := ":"
			if tag.From.Kind == "ImageStreamImage" {
				sep = "@"
			}
			if len(strings.Split(tag.From.Name, sep)) > 2 {
				errs = append(errs, field.Invalid(p.Child("from", "name"), tag.From.Name, "must be of the form <tag>, <repo>:<tag>, <id>, or <repo>@<id>"))
			}
		}
	}
	for _, tag := range stream.Status.Tags {
		for i, item := range tag.Items {
			p := field.NewPath("status", "tags").Key(tag.Tag).Child("items").Index(i).Child("dockerImageReference")
			if item.DockerImageReference == "" {
				errs = append(errs, field.Required(p, ""))
			} else if _, err := reference.Parse(item.DockerImageReference); err != nil {
				errs = append(errs, field.Invalid(p, item.DockerImageReference, err.Error()))
			}
		}
	}
	return errs
}

func validateTagReference(tag imagev1.TagReference, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	if from := tag.From; from != nil {
		if from.Name == "" {
			errs = append(errs, field.Required(p.Child("from", "name"), ""))
		}
		switch from.Kind {
		case "DockerImage":
			if from.Name != "" {
				if _, err := reference.Parse(from.Name); err != nil {
					errs = append(errs, field.Invalid(p.Child("from", "name"), from.Name, err.Error()))
				}
			}
		case "ImageStreamImage", "ImageStreamTag":
			if tag.ImportPolicy.Scheduled {
				errs = append(errs, field.Invalid(p.Child("importPolicy", "scheduled"), true, "only tags pointing to Docker repositories may be scheduled for background import"))
			}
		default:
			errs = append(errs, field.Required(p.Child("from", "kind"), "valid values are 'DockerImage', 'ImageStreamImage', 'ImageStreamTag'"))
		}
	}
	switch tag.ReferencePolicy.Type {
	case imagev1.SourceTagReferencePolicy, imagev1.LocalTagReferencePolicy:
	default:
		errs = append(errs, field.Invalid(p.Child("referencePolicy", "type"), tag.ReferencePolicy.Type, fmt.Sprintf("valid values are %q, %q", imagev1.SourceTagReferencePolicy, imagev1.LocalTagReferencePolicy)))
	}
	return append(errs, validateImportPolicy(tag.ImportPolicy, p.Child("importPolicy"))...)
}

func validateImportPolicy(policy imagev1.TagImportPolicy, p *field.Path) field.ErrorList {
	switch policy.ImportMode {
	case "", imagev1.ImportModeLegacy, imagev1.ImportModePreserveOriginal:
		return nil
	}
	return field.ErrorList{field.Invalid(p.Child("importMode"), policy.ImportMode,
		fmt.Sprintf("invalid import mode, valid modes are '', '%s', '%s'", imagev1.ImportModeLegacy, imagev1.ImportModePreserveOriginal))}
}

func ptr[T any](v T) *T { return &v }

func copyPtr[T any](p *T) *T {
	if p == nil {
		return nil
	}
	return ptr(*p)
}
