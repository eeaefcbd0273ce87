package usability

import "k8s.io/apimachinery/pkg/runtime/schema"

// legacyGroups maps each OpenShift kind that a template may still write with the legacy
// "apiVersion: v1" (OpenShift 3's API, without a group) to the group that serves it now, as
// openshift/api's DeprecatedInstallWithoutGroup registers them (TestLegacyKindsMatchOpenShiftAPI
// holds the two together). Every other kind of "v1" is a core kind.
var legacyGroups = byKind(map[string][]string{
	"apps.openshift.io": {"DeploymentConfig", "DeploymentConfigRollback", "DeploymentRequest", "DeploymentLog", "DeploymentLogOptions"},
	"authorization.openshift.io": {"Role", "RoleBinding", "ClusterRole", "ClusterRoleBinding", "RoleBindingRestriction",
		"SelfSubjectRulesReview", "SubjectRulesReview", "ResourceAccessReview", "SubjectAccessReview", "LocalResourceAccessReview",
		"LocalSubjectAccessReview", "ResourceAccessReviewResponse", "SubjectAccessReviewResponse", "IsPersonalSubjectAccessReview"},
	"build.openshift.io":    {"Build", "BuildConfig", "BuildLog", "BuildRequest", "BuildLogOptions", "BinaryBuildRequestOptions"},
	"image.openshift.io":    {"Image", "ImageSignature", "ImageStream", "ImageStreamMapping", "ImageStreamTag", "ImageStreamImage", "ImageStreamImport"},
	"network.openshift.io":  {"ClusterNetwork", "HostSubnet", "NetNamespace", "EgressNetworkPolicy"},
	"oauth.openshift.io":    {"OAuthAccessToken", "OAuthAuthorizeToken", "OAuthClient", "OAuthClientAuthorization", "OAuthRedirectReference"},
	"project.openshift.io":  {"Project", "ProjectRequest"},
	"quota.openshift.io":    {"ClusterResourceQuota", "AppliedClusterResourceQuota"},
	"route.openshift.io":    {"Route"},
	"security.openshift.io": {"SecurityContextConstraints", "PodSecurityPolicySubjectReview", "PodSecurityPolicySelfSubjectReview", "PodSecurityPolicyReview"},
	"template.openshift.io": {"Template", "ProcessedTemplate", "TemplateConfig"},
	"user.openshift.io":     {"User", "Identity", "UserIdentityMapping", "Group"},
})

// byKind turns kinds by group into the group of each kind.
func byKind(kindsByGroup map[string][]string) map[string]string {
	out := map[string]string{}
	for group, kinds := range kindsByGroup {
		for _, kind := range kinds {
			out[kind] = group
		}
	}
	return out
}

// groupVersionOf is the group/version that serves a template object's kind: its apiVersion, or
// for a legacy OpenShift kind of "v1", that kind's group at v1. ok is false for an apiVersion
// that does not parse.
func groupVersionOf(apiVersion, kind string) (schema.GroupVersion, bool) {
	gv, err := schema.ParseGroupVersion(apiVersion)
	if err != nil || gv.Version == "" {
		return schema.GroupVersion{}, false
	}
	if group, legacy := legacyGroups[kind]; legacy && gv.Group == "" && gv.Version == "v1" {
		gv.Group = group
	}
	return gv, true
}
