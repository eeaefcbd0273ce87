package usability

import (
	"maps"
	"slices"
	"strings"
	"testing"

	appsv1 "github.com/openshift/api/apps/v1"
	authorizationv1 "github.com/openshift/api/authorization/v1"
	buildv1 "github.com/openshift/api/build/v1"
	imagev1 "github.com/openshift/api/image/v1"
	networkv1 "github.com/openshift/api/network/v1"
	oauthv1 "github.com/openshift/api/oauth/v1"
	projectv1 "github.com/openshift/api/project/v1"
	quotav1 "github.com/openshift/api/quota/v1"
	routev1 "github.com/openshift/api/route/v1"
	securityv1 "github.com/openshift/api/security/v1"
	templatev1 "github.com/openshift/api/template/v1"
	userv1 "github.com/openshift/api/user/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// TestLegacyKindsMatchOpenShiftAPI: legacyGroups holds exactly the kinds openshift/api registers
// in the legacy group ("v1") for each OpenShift group, beyond the core kinds, without the lists
// and Scale (a subresource's kind, which Kubernetes' own groups have too).
func TestLegacyKindsMatchOpenShiftAPI(t *testing.T) {
	core := runtime.NewScheme()
	if err := corev1.AddToScheme(core); err != nil {
		t.Fatal(err)
	}
	legacy := schema.GroupVersion{Version: "v1"}
	want := map[string]string{}
	for group, install := range map[string]func(*runtime.Scheme) error{
		appsv1.GroupName: appsv1.DeprecatedInstallWithoutGroup, authorizationv1.GroupName: authorizationv1.DeprecatedInstallWithoutGroup,
		buildv1.GroupName: buildv1.DeprecatedInstallWithoutGroup, imagev1.GroupName: imagev1.DeprecatedInstallWithoutGroup,
		networkv1.GroupName: networkv1.DeprecatedInstallWithoutGroup, oauthv1.GroupName: oauthv1.DeprecatedInstallWithoutGroup,
		projectv1.GroupName: projectv1.DeprecatedInstallWithoutGroup, quotav1.GroupName: quotav1.DeprecatedInstallWithoutGroup,
		routev1.GroupName: routev1.DeprecatedInstallWithoutGroup, securityv1.GroupName: securityv1.DeprecatedInstallWithoutGroup,
		templatev1.GroupName: templatev1.DeprecatedInstallWithoutGroup, userv1.GroupName: userv1.DeprecatedInstallWithoutGroup,
	} {
		s := runtime.NewScheme()
		if err := install(s); err != nil {
			t.Fatal(err)
		}
		for kind := range s.KnownTypes(legacy) {
			if core.Recognizes(legacy.WithKind(kind)) || strings.HasSuffix(kind, "List") || kind == "Scale" {
				continue
			}
			if other, twice := want[kind]; twice {
				t.Errorf("%s is registered by %s and %s", kind, other, group)
			}
			want[kind] = group
		}
	}
	if !maps.Equal(legacyGroups, want) {
		for _, kind := range slices.Sorted(maps.Keys(want)) {
			if legacyGroups[kind] != want[kind] {
				t.Errorf("legacy v1 %s: %q, openshift/api says %q", kind, legacyGroups[kind], want[kind])
			}
		}
		for _, kind := range slices.Sorted(maps.Keys(legacyGroups)) {
			if _, ok := want[kind]; !ok {
				t.Errorf("legacy v1 %s is not one of openshift/api's", kind)
			}
		}
	}
}

// TestGroupVersionOf: a legacy kind of "v1" is its group's; of any other version or group, or a
// core kind, as written.
func TestGroupVersionOf(t *testing.T) {
	for _, tc := range []struct {
		apiVersion, kind, want string
		ok                     bool
	}{
		{"v1", "DeploymentConfig", "apps.openshift.io/v1", true},
		{"v1", "Template", "template.openshift.io/v1", true},
		{"v1", "Secret", "v1", true},
		{"v1beta1", "DeploymentConfig", "v1beta1", true},
		{"apps/v1", "DeploymentConfig", "apps/v1", true},
		{"", "Secret", "", false},
		{"a/b/c", "Secret", "", false},
	} {
		gv, ok := groupVersionOf(tc.apiVersion, tc.kind)
		if ok != tc.ok || ok && gv.String() != tc.want {
			t.Errorf("groupVersionOf(%q, %q) = %v %v, want %s %v", tc.apiVersion, tc.kind, gv, ok, tc.want, tc.ok)
		}
	}
}
