package controlplane

import (
	"cmp"
	"maps"
	"slices"
	"testing"

	"k8s.io/apimachinery/pkg/runtime/schema"
)

// A reset waits for the caches of the kinds written since the control plane was handed out, and
// for all of them after a server restarted; for none when neither happened.
func TestAResetWaitsForTheCachesOfWhatWasWrittenOrRestarted(t *testing.T) {
	quotaWrite := AuditEvent{Verb: "delete", Resource: "resourcequotas", Namespace: "openshift", Name: "q"}
	mirrorRead := AuditEvent{Verb: "list", Group: "config.openshift.io", Resource: "imagetagmirrorsets"}
	mirrorWrite := AuditEvent{Verb: "create", Group: "config.openshift.io", Resource: "imagedigestmirrorsets", Name: "m"}
	otherWrite := AuditEvent{Verb: "update", Resource: "configmaps", Namespace: "openshift", Name: "c"}
	for _, tc := range []struct {
		name      string
		events    []AuditEvent
		restarted bool
		want      []schema.GroupResource
	}{
		{"nothing cached written", []AuditEvent{otherWrite, mirrorRead}, false, nil},
		{"a quota deleted", []AuditEvent{otherWrite, quotaWrite}, false, []schema.GroupResource{resourceQuotaResource.GroupResource()}},
		{"a mirror set created", []AuditEvent{mirrorRead, mirrorWrite}, false, []schema.GroupResource{idmsResource.GroupResource()}},
		{"a server restarted", []AuditEvent{otherWrite}, true, cachedKinds},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := slices.SortedFunc(maps.Keys(cachesToProbe(tc.events, tc.restarted)), compareGroupResource)
			want := slices.SortedFunc(slices.Values(tc.want), compareGroupResource)
			if !slices.Equal(got, want) {
				t.Errorf("cachesToProbe = %v, want %v", got, want)
			}
		})
	}
}

func compareGroupResource(a, b schema.GroupResource) int {
	return cmp.Or(cmp.Compare(a.Group, b.Group), cmp.Compare(a.Resource, b.Resource))
}
