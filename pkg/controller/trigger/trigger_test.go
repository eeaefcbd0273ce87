package trigger

import (
	"errors"
	"testing"
	"time"

	configv1 "github.com/openshift/api/config/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/cache"
)

func mirrorSet(rv string, mirrors ...string) *configv1.ImageTagMirrorSet {
	s := &configv1.ImageTagMirrorSet{ObjectMeta: metav1.ObjectMeta{Name: "mirrors", ResourceVersion: rv, Generation: 1}}
	var ms []configv1.ImageMirror
	for _, m := range mirrors {
		ms = append(ms, configv1.ImageMirror(m))
	}
	s.Spec.ImageTagMirrors = []configv1.ImageTagMirrors{{Source: "registry.redhat.io", Mirrors: ms}}
	return s
}

// TestOnlyRealChangesTrigger: a create or delete after the first list, and an update of the part
// that counts, are changes; the first list, a resync, and an update of anything else are not.
func TestOnlyRealChangesTrigger(t *testing.T) {
	spec := func(obj interface{}) interface{} { return obj.(*configv1.ImageTagMirrorSet).Spec }
	withStatusWrite := mirrorSet("8", "mirror.local:5000")
	withStatusWrite.Labels = map[string]string{"touched": "yes"}
	for _, tc := range []struct {
		name  string
		event func(h cache.ResourceEventHandler)
		want  string
	}{
		{"listed at start", func(h cache.ResourceEventHandler) { h.OnAdd(mirrorSet("7", "mirror.local:5000"), true) }, ""},
		{"created", func(h cache.ResourceEventHandler) { h.OnAdd(mirrorSet("7", "mirror.local:5000"), false) }, "created"},
		{"a resync", func(h cache.ResourceEventHandler) {
			h.OnUpdate(mirrorSet("7", "mirror.local:5000"), mirrorSet("7", "mirror.local:5000"))
		}, ""},
		{"a write that leaves the spec", func(h cache.ResourceEventHandler) {
			h.OnUpdate(mirrorSet("7", "mirror.local:5000"), withStatusWrite)
		}, ""},
		{"another mirror", func(h cache.ResourceEventHandler) {
			h.OnUpdate(mirrorSet("7", "mirror.local:5000"), mirrorSet("8", "mirror.local:5001"))
		}, "updated"},
		{"deleted", func(h cache.ResourceEventHandler) { h.OnDelete(mirrorSet("7", "mirror.local:5000")) }, "deleted"},
		{"deleted while the informer relisted", func(h cache.ResourceEventHandler) {
			h.OnDelete(cache.DeletedFinalStateUnknown{Key: "mirrors", Obj: mirrorSet("7", "mirror.local:5000")})
		}, "deleted"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var got []Change
			tc.event(handler(Source{Kind: "ImageTagMirrorSet", Part: spec}, func(c Change) { got = append(got, c) }))
			switch {
			case tc.want == "" && len(got) != 0:
				t.Errorf("changes %+v, want none", got)
			case tc.want != "" && (len(got) != 1 || got[0].Verb != tc.want || got[0].Name != "mirrors" || got[0].Kind != "ImageTagMirrorSet"):
				t.Errorf("changes %+v, want one %s of mirrors", got, tc.want)
			}
		})
	}
}

// TestMattersPicksTheObjectsThatCount: of the secrets, only docker configs; a secret that becomes
// one, or stops being one, is a change.
func TestMattersPicksTheObjectsThatCount(t *testing.T) {
	secret := func(rv string, typ corev1.SecretType, data string) *corev1.Secret {
		return &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "s", Namespace: "openshift", ResourceVersion: rv}, Type: typ,
			Data: map[string][]byte{"k": []byte(data)}}
	}
	src := Source{
		Kind:    "Secret",
		Part:    func(obj interface{}) interface{} { return obj.(*corev1.Secret).Data },
		Matters: func(obj interface{}) bool { return obj.(*corev1.Secret).Type == corev1.SecretTypeDockerConfigJson },
	}
	n := 0
	h := handler(src, func(Change) { n++ })
	h.OnAdd(secret("1", corev1.SecretTypeOpaque, "a"), false)
	h.OnUpdate(secret("1", corev1.SecretTypeOpaque, "a"), secret("2", corev1.SecretTypeOpaque, "b"))
	h.OnDelete(secret("2", corev1.SecretTypeOpaque, "b"))
	if n != 0 {
		t.Errorf("%d changes of an opaque secret, want none", n)
	}
	h.OnAdd(secret("3", corev1.SecretTypeDockerConfigJson, "a"), false)
	h.OnUpdate(secret("3", corev1.SecretTypeDockerConfigJson, "a"), secret("4", corev1.SecretTypeDockerConfigJson, "a"))
	h.OnUpdate(secret("4", corev1.SecretTypeDockerConfigJson, "a"), secret("5", corev1.SecretTypeDockerConfigJson, "b"))
	h.OnUpdate(secret("5", corev1.SecretTypeDockerConfigJson, "b"), secret("6", corev1.SecretTypeOpaque, "b"))
	if n != 3 {
		t.Errorf("%d changes of a docker config secret, want 3 (created, new data, no longer a docker config)", n)
	}
}

// TestSettledTellsOnlyOfTheEndOfARollout: of a source with Settled, only an update from an
// object it is false for to one it is true for is a change; a rollout starting, another write
// while it runs or after it, a resync, a create and a delete are not.
func TestSettledTellsOnlyOfTheEndOfARollout(t *testing.T) {
	co := func(rv string, progressing configv1.ConditionStatus) *configv1.ClusterOperator {
		return &configv1.ClusterOperator{ObjectMeta: metav1.ObjectMeta{Name: "openshift-apiserver", ResourceVersion: rv},
			Status: configv1.ClusterOperatorStatus{Conditions: []configv1.ClusterOperatorStatusCondition{
				{Type: configv1.OperatorProgressing, Status: progressing}}}}
	}
	src := Source{Kind: "ClusterOperator", Settled: func(obj interface{}) bool {
		return obj.(*configv1.ClusterOperator).Status.Conditions[0].Status == configv1.ConditionFalse
	}}
	var got []Change
	h := handler(src, func(c Change) { got = append(got, c) })
	h.OnAdd(co("1", configv1.ConditionFalse), false)
	h.OnUpdate(co("1", configv1.ConditionFalse), co("2", configv1.ConditionTrue))
	h.OnUpdate(co("2", configv1.ConditionTrue), co("3", configv1.ConditionTrue))
	h.OnUpdate(co("3", configv1.ConditionTrue), co("3", configv1.ConditionTrue))
	if len(got) != 0 {
		t.Fatalf("changes %+v before the rollout ended, want none", got)
	}
	h.OnUpdate(co("3", configv1.ConditionTrue), co("4", configv1.ConditionFalse))
	if len(got) != 1 || got[0].Verb != "settled" || got[0].Name != "openshift-apiserver" || got[0].Kind != "ClusterOperator" {
		t.Fatalf("changes %+v, want the rollout's end", got)
	}
	h.OnUpdate(co("4", configv1.ConditionFalse), co("5", configv1.ConditionFalse))
	h.OnDelete(co("5", configv1.ConditionFalse))
	if len(got) != 1 {
		t.Errorf("changes %+v, want only the rollout's end", got)
	}
}

// TestAChangeCarriesItsSourcesAgain: the second action a source asks for reaches the one told.
func TestAChangeCarriesItsSourcesAgain(t *testing.T) {
	spec := func(obj interface{}) interface{} { return obj.(*configv1.ImageTagMirrorSet).Spec }
	var got []Change
	h := handler(Source{Kind: "ImageTagMirrorSet", Part: spec, Again: 3 * time.Second}, func(c Change) { got = append(got, c) })
	h.OnAdd(mirrorSet("7", "mirror.local:5000"), false)
	h.OnUpdate(mirrorSet("7", "mirror.local:5000"), mirrorSet("8", "mirror.local:5001"))
	h.OnDelete(mirrorSet("8", "mirror.local:5001"))
	if len(got) != 3 {
		t.Fatalf("changes %+v, want created, updated, deleted", got)
	}
	for _, c := range got {
		if c.Again != 3*time.Second {
			t.Errorf("%s: Again = %v, want the source's 3s", c.Verb, c.Again)
		}
	}
}

// registering is an informer that keeps the handlers registered with it, or refuses them.
type registering struct {
	handlers []cache.ResourceEventHandler
	refuse   error
}

func (r *registering) AddEventHandler(h cache.ResourceEventHandler) (cache.ResourceEventHandlerRegistration, error) {
	if r.refuse != nil {
		return nil, r.refuse
	}
	r.handlers = append(r.handlers, h)
	return nil, nil
}

// TestWatchRegistersEverySourceWithAnInformer: a source without an informer (a kind the cluster
// does not serve) is passed over and those after it are still watched; an informer that refuses
// the handler fails the watch.
func TestWatchRegistersEverySourceWithAnInformer(t *testing.T) {
	spec := func(obj interface{}) interface{} { return obj.(*configv1.ImageTagMirrorSet).Spec }
	first, last := &registering{}, &registering{}
	err := Watch([]Source{{Kind: "A", Informer: first, Part: spec}, {Kind: "B"}, {Kind: "C", Informer: last, Part: spec}}, func(Change) {})
	if err != nil || len(first.handlers) != 1 || len(last.handlers) != 1 {
		t.Errorf("Watch: %v; handlers registered %d and %d, want one each", err, len(first.handlers), len(last.handlers))
	}
	refusing := &registering{refuse: errors.New("informer stopped")}
	if err := Watch([]Source{{Kind: "A", Informer: refusing, Part: spec}}, func(Change) {}); err == nil {
		t.Error("Watch with an informer that refuses the handler succeeded")
	}
}
