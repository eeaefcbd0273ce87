package configstatuscontrol

import (
	"encoding/json"
	"slices"
)

// RetiredAnnouncedAnnotation on the Config records what the last SamplesRetired Event named, as
// JSON: {"version":"4.21.0","samples":["imagestream perl","template rails"]}. It is written once,
// with the Event, and read through the Config's lister: a new leader, or the pod an upgrade
// restarts, knows the retirement was told and does not tell it again.
const RetiredAnnouncedAnnotation = "samples.operator.openshift.io/retired-announced"

// retiredAnnouncement is what a SamplesRetired Event named.
type retiredAnnouncement struct {
	Version string   `json:"version"`
	Samples []string `json:"samples"`
}

// retiredToAnnounce decides whether the samples version retired (retired, as "kind name") are
// announced. told are the records of earlier announcements (the annotation, and what this
// process wrote, which the lister may not show yet); one that names every retired sample of the
// same version means the retirement was told. A sample an admin deleted since is no news, so a
// smaller set is not told again. record is the annotation's value once announced.
func retiredToAnnounce(version string, retired []string, told ...string) (record string, announce bool) {
	if len(retired) == 0 {
		return "", false
	}
	for _, t := range told {
		var earlier retiredAnnouncement
		if json.Unmarshal([]byte(t), &earlier) != nil || earlier.Version != version {
			continue
		}
		if !slices.ContainsFunc(retired, func(s string) bool { return !slices.Contains(earlier.Samples, s) }) {
			return "", false
		}
	}
	out, _ := json.Marshal(retiredAnnouncement{Version: version, Samples: retired})
	return string(out), true
}
