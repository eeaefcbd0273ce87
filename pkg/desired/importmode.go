package desired

import (
	"slices"
	"strings"

	imagev1 "github.com/openshift/api/image/v1"
)

// ImportModeAnnotation, on an imagestream, is the import mode the operator last gave the tags
// whose mode the inventory leaves to the cluster: the cluster's own (images.config.openshift.io
// status.imageStreamImportMode), which `oc adm upgrade --to-multi-arch` turns to
// PreserveOriginal. A tag whose mode is still that one follows the cluster's next change; one an
// admin set otherwise is theirs.
const ImportModeAnnotation = "samples.operator.openshift.io/import-mode"

// FollowImportMode gives want's tags that have no import mode of their own the cluster's, and
// records it on the stream. An empty mode (the cluster says none) leaves want as it is.
func FollowImportMode(want *imagev1.ImageStream, mode imagev1.ImportModeType) {
	if mode == "" {
		return
	}
	for i := range want.Spec.Tags {
		if want.Spec.Tags[i].ImportPolicy.ImportMode == "" {
			want.Spec.Tags[i].ImportPolicy.ImportMode = mode
		}
	}
	want.Annotations[ImportModeAnnotation] = string(mode)
}

// AdminImportModeAnnotation, on an imagestream, lists (sorted, comma-separated) the tags whose
// import mode the inventory leaves to the cluster but an admin set, as the operator found them
// when it last wrote ImportModeAnnotation: a tag an admin set to the mode the cluster then turned
// to looks like one that follows it, and would otherwise be taken along at the cluster's next
// change. Like ImportModeAnnotation it rides along with the writes and is never a reason for one.
const AdminImportModeAnnotation = "samples.operator.openshift.io/admin-import-mode-tags"

// followsCluster reports whether a live tag's import mode is the one the operator gave it for
// the cluster: not for a tag AdminImportModeAnnotation names; else the stream's
// ImportModeAnnotation, or, on a stream the operator never wrote a mode on, the server's default
// (Legacy, or none yet).
func followsCluster(live *imagev1.ImageStream, tag string, mode imagev1.ImportModeType) bool {
	if slices.Contains(adminImportModeTagsOf(live), tag) {
		return false
	}
	if last, ok := live.Annotations[ImportModeAnnotation]; ok {
		return string(mode) == last
	}
	return mode == "" || mode == imagev1.ImportModeLegacy
}

// adminImportModeTagsOf reads a stream's AdminImportModeAnnotation.
func adminImportModeTagsOf(is *imagev1.ImageStream) []string {
	value := is.Annotations[AdminImportModeAnnotation]
	if value == "" {
		return nil
	}
	return strings.Split(value, ",")
}

// setAdminImportModeTags writes tags (sorted) in out's AdminImportModeAnnotation, or removes it
// when there are none.
func setAdminImportModeTags(out *imagev1.ImageStream, tags []string) {
	if len(tags) == 0 {
		delete(out.Annotations, AdminImportModeAnnotation)
		return
	}
	if out.Annotations == nil {
		out.Annotations = map[string]string{}
	}
	slices.Sort(tags)
	out.Annotations[AdminImportModeAnnotation] = strings.Join(tags, ",")
}
