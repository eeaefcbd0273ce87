package desired

import "testing"

func TestAdminSettable(t *testing.T) {
	for field, want := range map[string]bool{
		"spec.tags[latest].importPolicy.scheduled":        true,
		"spec.tags[3.11].importPolicy.importMode":         true,
		"spec.tags[latest].importPolicy.insecure":         false,
		"spec.tags[latest].from":                          false,
		"metadata.annotations[openshift.io/display-name]": false,
	} {
		if got := AdminSettable(field); got != want {
			t.Errorf("AdminSettable(%q) = %v, want %v", field, got, want)
		}
	}
}
