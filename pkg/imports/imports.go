// Package imports says, without clients, what the operator records and retries about image
// imports: which tags of an imagestream failed to import, the ConfigMap that records them for an
// admin, the ImageStreamImport that retries them, and whether the pull secret holds credentials
// for the samples registry.
package imports

import (
	"encoding/json"
	"fmt"
	"sort"
	"strings"
	"time"

	imagev1 "github.com/openshift/api/image/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

const (
	// ErrorLabel marks a ConfigMap that records an imagestream's failed imports.
	ErrorLabel = "samples.openshift.io/imagestream-error"
	// FailingSinceAnnotation is when the stream's imports began failing (RFC 3339), written with
	// the error ConfigMap and kept while it exists: a restart does not restart the clock.
	FailingSinceAnnotation = "samples.operator.openshift.io/failing-since"
	// TagToImageName is the ConfigMap listing every inventory tag's source image.
	TagToImageName = "imagestreamtag-to-image"
	// PullSecretNamespace and PullSecretName locate the cluster's install pull secret.
	PullSecretNamespace = "openshift-config"
	PullSecretName      = "pull-secret"
	// CredentialRegistry is the registry the OCP samples need credentials for.
	CredentialRegistry = "registry.redhat.io"
)

// FailedTags returns, for each status tag whose latest import failed, the failure's message. A tag
// has failed when its newest ImportSuccess=False condition is at least as new (by generation) as any
// other condition of the tag.
func FailedTags(is *imagev1.ImageStream) map[string]string {
	failed := map[string]string{}
	for _, tag := range is.Status.Tags {
		if _, message, ok := lastFailure(tag); ok {
			failed[tag.Tag] = message
		}
	}
	return failed
}

// FailedTagsOfSpec is FailedTags without the tags whose spec tag was rewritten after their import
// failed (its generation is newer than the failure's): the image API imports the new reference,
// and until it has, such a tag is waiting, not failing. What a reader is told (status, a
// template's verdict) follows this; the operator's record and retries of a failure follow
// FailedTags, and clear once the tag has imported.
func FailedTagsOfSpec(is *imagev1.ImageStream) map[string]string {
	specGen := map[string]int64{}
	for _, ref := range is.Spec.Tags {
		if ref.Generation != nil {
			specGen[ref.Name] = *ref.Generation
		}
	}
	failed := map[string]string{}
	for _, tag := range is.Status.Tags {
		// A failure without a generation cannot be placed against the spec: it stands.
		if gen, message, ok := lastFailure(tag); ok && (gen == 0 || specGen[tag.Tag] <= gen) {
			failed[tag.Tag] = message
		}
	}
	return failed
}

// lastFailure is the generation and message of the tag's failed import, ok when that failure is
// its latest news.
func lastFailure(tag imagev1.NamedTagEventList) (generation int64, message string, ok bool) {
	var latest, errGen int64
	for _, c := range tag.Conditions {
		if c.Generation > latest {
			latest = c.Generation
		}
		if c.Type == imagev1.ImportSuccess && c.Status == corev1.ConditionFalse && c.Generation >= errGen {
			errGen, message = c.Generation, c.Message
			if message == "" {
				message = c.Reason
			}
		}
	}
	if !(errGen > 0 && errGen >= latest || errGen == 0 && latest == 0 && hasFailure(tag)) {
		return 0, "", false
	}
	if message == "" {
		message = "import failed"
	}
	return errGen, message, true
}

// hasFailure covers conditions written without a generation.
func hasFailure(tag imagev1.NamedTagEventList) bool {
	for _, c := range tag.Conditions {
		if c.Type == imagev1.ImportSuccess && c.Status == corev1.ConditionFalse {
			return true
		}
	}
	return false
}

// ErrorConfigMap is the ConfigMap that tells an admin which tags of stream failed and why (one key
// per tag, the import's message as value), and since when.
func ErrorConfigMap(namespace, stream string, failed map[string]string, since time.Time) *corev1.ConfigMap {
	data := make(map[string]string, len(failed))
	for tag, msg := range failed {
		data[tag] = msg
	}
	return &corev1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{
			Name:        stream,
			Namespace:   namespace,
			Labels:      map[string]string{ErrorLabel: "true"},
			Annotations: map[string]string{FailingSinceAnnotation: since.UTC().Format(time.RFC3339)},
		},
		Data: data,
	}
}

// FailingSince is when the stream a ConfigMap records began failing: its annotation, or its
// creation for a record written before the annotation was.
func FailingSince(cm *corev1.ConfigMap) time.Time {
	if since, err := time.Parse(time.RFC3339, cm.Annotations[FailingSinceAnnotation]); err == nil {
		return since
	}
	return cm.CreationTimestamp.Time
}

// ErrorConfigMapInSync reports whether a live ConfigMap records exactly these failures.
func ErrorConfigMapInSync(live *corev1.ConfigMap, failed map[string]string) bool {
	if live.Labels[ErrorLabel] != "true" || len(live.Data) != len(failed) {
		return false
	}
	for tag, msg := range failed {
		if v, ok := live.Data[tag]; !ok || v != msg {
			return false
		}
	}
	return true
}

// RetryImport builds the ImageStreamImport that asks the image API to import the failed tags again,
// as `oc import-image` does: each tag's DockerImage reference, following ImageStreamTag references
// within the stream. Tags that resolve to nothing importable are left out; nil when none remain.
//
// Each image carries the whole import and reference policy of the tag it imports into, as
// openshift-controller-manager's own imports do (pkg/image/controller/imagestream_controller.go
// handleImageStream): a successful import writes the request's import policy into the tag
// (openshift-apiserver imagestreamimport/rest.go importSuccessful), so a policy left out here
// would be defaulted by the server and overwrite the tag's, an import mode the operator then
// has to revert.
func RetryImport(is *imagev1.ImageStream, failed map[string]string) *imagev1.ImageStreamImport {
	specTags := specTagsOf(is)
	targets := map[string]imagev1.TagReference{}
	for tag := range failed {
		if target, ok := resolve(specTags, tag); ok {
			targets[target.Name] = target
		}
	}
	if len(targets) == 0 {
		return nil
	}
	names := make([]string, 0, len(targets))
	for name := range targets {
		names = append(names, name)
	}
	sort.Strings(names)
	// The stream's UID and resourceVersion make the import act on this stream only, as the import
	// controller's do: openshift-apiserver creates a missing stream for an import that names
	// neither, which would leave a bare, unlabelled stream behind a retry that races a Removed or
	// a skip; with them it answers NotFound (stream gone or replaced) or Conflict (changed since).
	isi := &imagev1.ImageStreamImport{
		ObjectMeta: metav1.ObjectMeta{Name: is.Name, Namespace: is.Namespace, UID: is.UID, ResourceVersion: is.ResourceVersion},
		Spec:       imagev1.ImageStreamImportSpec{Import: true},
	}
	for _, name := range names {
		target := targets[name]
		isi.Spec.Images = append(isi.Spec.Images, imagev1.ImageImportSpec{
			From:            corev1.ObjectReference{Kind: "DockerImage", Name: target.From.Name},
			To:              &corev1.LocalObjectReference{Name: name},
			ImportPolicy:    target.ImportPolicy,
			ReferencePolicy: target.ReferencePolicy,
		})
	}
	return isi
}

// NotScheduled keeps of failed the tags that openshift-controller-manager does not import again
// on its own: those whose image (following ImageStreamTag references in the stream) has
// importPolicy.scheduled set are re-imported by its scheduled import controller, every 15
// minutes by default, and a retry of the operator's on top would double their imports.
func NotScheduled(is *imagev1.ImageStream, failed map[string]string) map[string]string {
	specTags := specTagsOf(is)
	out := make(map[string]string, len(failed))
	for tag, msg := range failed {
		if target, ok := resolve(specTags, tag); !ok || !target.ImportPolicy.Scheduled {
			out[tag] = msg
		}
	}
	return out
}

// AwaitingRewrite lists, sorted, the failed tags whose image the operator is about to change: in
// the live stream the tag resolves to another DockerImage reference than in want (a new
// samplesRegistry, say), or to none where want has one. A retry would import the reference
// being replaced, and its write to the stream would meet the rewrite; the rewrite itself makes
// the image API import the new reference.
func AwaitingRewrite(live, want *imagev1.ImageStream, failed map[string]string) []string {
	liveTags, wantTags := specTagsOf(live), specTagsOf(want)
	var out []string
	for tag := range failed {
		if wantTarget, wanted := resolve(wantTags, tag); wanted {
			liveTarget, ok := resolve(liveTags, tag)
			if !ok || liveTarget.From.Name != wantTarget.From.Name {
				out = append(out, tag)
			}
		}
	}
	sort.Strings(out)
	return out
}

func specTagsOf(is *imagev1.ImageStream) map[string]imagev1.TagReference {
	tags := make(map[string]imagev1.TagReference, len(is.Spec.Tags))
	for _, t := range is.Spec.Tags {
		tags[t.Name] = t
	}
	return tags
}

// resolve follows ImageStreamTag references inside one stream to a DockerImage tag.
func resolve(tags map[string]imagev1.TagReference, name string) (imagev1.TagReference, bool) {
	seen := map[string]bool{}
	for {
		tag := tags[name] // a missing tag has no From either
		if seen[name] || tag.From == nil {
			return imagev1.TagReference{}, false
		}
		seen[name] = true
		switch tag.From.Kind {
		case "DockerImage":
			return tag, tag.From.Name != ""
		case "ImageStreamTag":
			ref := tag.From.Name
			if i := strings.LastIndex(ref, ":"); i >= 0 {
				ref = ref[i+1:]
			}
			if ref == "" {
				ref = "latest"
			}
			name = ref
		default:
			return imagev1.TagReference{}, false
		}
	}
}

// Credentials says whether imports of the samples can authenticate: True when samplesRegistry points
// elsewhere (the admin's mirror has its own arrangement), or when the pull secret holds an auth for
// registry.redhat.io. The message never quotes the secret.
func Credentials(secret *corev1.Secret, samplesRegistry string) (ok bool, message string) {
	if samplesRegistry != "" {
		return true, fmt.Sprintf("samplesRegistry is %s: the pull secret's %s credentials are not needed", samplesRegistry, CredentialRegistry)
	}
	where := fmt.Sprintf("secret %s/%s", PullSecretNamespace, PullSecretName)
	if secret == nil {
		return false, where + " does not exist: add credentials for " + CredentialRegistry + " to it, or mirror the samples and set samplesRegistry"
	}
	raw, found := secret.Data[corev1.DockerConfigJsonKey]
	if !found {
		return false, fmt.Sprintf("%s has no %s key: it must be of type %s with credentials for %s", where, corev1.DockerConfigJsonKey, corev1.SecretTypeDockerConfigJson, CredentialRegistry)
	}
	var cfg struct {
		Auths map[string]json.RawMessage `json:"auths"`
	}
	if err := json.Unmarshal(raw, &cfg); err != nil || cfg.Auths == nil {
		return false, fmt.Sprintf("%s key %s is not a docker config with an \"auths\" object", where, corev1.DockerConfigJsonKey)
	}
	if _, found := cfg.Auths[CredentialRegistry]; !found {
		return false, fmt.Sprintf("%s holds no credentials for %s: add them (oc registry login --registry %s --to <file>, then oc set data secret/%s -n %s --from-file=.dockerconfigjson=<file>)",
			where, CredentialRegistry, CredentialRegistry, PullSecretName, PullSecretNamespace)
	}
	return true, fmt.Sprintf("%s holds credentials for %s", where, CredentialRegistry)
}

// TagToImageConfigMap is the ConfigMap an admin of a disconnected cluster mirrors from: every
// inventory tag's source image, keyed <imagestream>_<tag>, stamped with the operator version.
func TagToImageConfigMap(namespace, version string, tagToImage map[string]string) *corev1.ConfigMap {
	data := make(map[string]string, len(tagToImage))
	for k, v := range tagToImage {
		data[k] = v
	}
	return &corev1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{
			Name:        TagToImageName,
			Namespace:   namespace,
			Annotations: map[string]string{"samples.operator.openshift.io/version": version},
		},
		Data: data,
	}
}
