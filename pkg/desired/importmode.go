package desired

import (
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

// followsCluster reports whether a live tag's import mode is the one the operator gave it for
// the cluster: the stream's ImportModeAnnotation, or, on a stream the operator never wrote a mode
// on, the server's default (Legacy, or none yet).
func followsCluster(live *imagev1.ImageStream, mode imagev1.ImportModeType) bool {
	if last, ok := live.Annotations[ImportModeAnnotation]; ok {
		return string(mode) == last
	}
	return mode == "" || mode == imagev1.ImportModeLegacy
}
