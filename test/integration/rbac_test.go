package integration

import (
	"context"
	"testing"

	authorizationv1 "k8s.io/api/authorization/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/samples-operator-dev/cluster-samples-operator/test/controlplane"
)

// TestOperatorRBACIsLeastPrivilege asks the API server what the operator's service account may do
// with the RBAC of manifests/: what it needs is allowed, and nothing around it.
func TestOperatorRBACIsLeastPrivilege(t *testing.T) {
	parallel(t, 0)
	e := newEnv(t)
	type access struct {
		verb, group, resource, subresource, namespace, name string
		allowed                                             bool
	}
	cases := []access{
		// What it needs.
		{"update", "samples.operator.openshift.io", "configs", "", "", "cluster", true},
		{"update", "samples.operator.openshift.io", "configs", "status", "", "cluster", true},
		{"create", "image.openshift.io", "imagestreams", "", "openshift", "", true},
		{"delete", "template.openshift.io", "templates", "", "openshift", "x", true},
		{"create", "image.openshift.io", "imagestreamimports", "", "openshift", "", true},
		{"create", "", "configmaps", "", "openshift-cluster-samples-operator", "", true},
		{"get", "", "secrets", "", "openshift-config", "pull-secret", true},
		{"watch", "", "secrets", "", "openshift-config", "pull-secret", true},
		{"update", "config.openshift.io", "clusteroperators", "status", "", "openshift-samples", true},
		// openshift-apiserver's ClusterOperator, read: the end of its rollouts retries imports.
		{"list", "config.openshift.io", "clusteroperators", "", "", "openshift-apiserver", true},
		{"watch", "config.openshift.io", "clusteroperators", "", "", "openshift-apiserver", true},
		{"update", "coordination.k8s.io", "leases", "", "openshift-cluster-samples-operator", "cluster-samples-operator-lock", true},
		{"create", "authentication.k8s.io", "tokenreviews", "", "", "", true},
		// An OLM-installed copy reads the ClusterVersion to stand down for the CVO's copy.
		{"get", "config.openshift.io", "clusterversions", "", "", "version", true},
		{"list", "config.openshift.io", "clusterversions", "", "", "version", true},
		{"watch", "config.openshift.io", "clusterversions", "", "", "version", true},
		// The APIServices, read: a change may change what kinds discovery lists, which decides
		// whether a sample template can work here. Never written.
		{"list", "apiregistration.k8s.io", "apiservices", "", "", "", true},
		{"watch", "apiregistration.k8s.io", "apiservices", "", "", "", true},
		{"update", "apiregistration.k8s.io", "apiservices", "", "", "v1.route.openshift.io", false},
		{"delete", "apiregistration.k8s.io", "apiservices", "", "", "v1.route.openshift.io", false},
		// The nodes' architectures and the images' (by digest): read only.
		{"list", "", "nodes", "", "", "", true},
		{"watch", "", "nodes", "", "", "", true},
		{"get", "image.openshift.io", "images", "", "", "sha256:0000", true},
		{"update", "", "nodes", "", "", "node-a", false},
		{"list", "image.openshift.io", "images", "", "", "", false},
		{"delete", "image.openshift.io", "images", "", "", "sha256:0000", false},
		// Asking what it may do when a write is refused: every authenticated user may
		// (system:basic-user), the operator ships no rule for it.
		{"create", "authorization.k8s.io", "selfsubjectaccessreviews", "", "", "", true},
		// Secrets anywhere else, or other secrets of openshift-config.
		{"get", "", "secrets", "", "openshift-config", "other-secret", false},
		{"list", "", "secrets", "", "openshift-config", "", false},
		{"get", "", "secrets", "", "kube-system", "x", false},
		{"get", "", "secrets", "", "openshift", "x", false},
		{"list", "", "secrets", "", "", "", false},
		{"update", "", "secrets", "", "openshift-config", "pull-secret", false},
		// Writes outside its resources.
		{"create", "image.openshift.io", "imagestreams", "", "default", "", false},
		{"delete", "template.openshift.io", "templates", "", "openshift-config", "x", false},
		{"delete", "", "configmaps", "", "openshift", "x", false},
		{"create", "", "configmaps", "", "openshift-config", "", false},
		{"update", "config.openshift.io", "clusteroperators", "status", "", "kube-apiserver", false},
		{"update", "config.openshift.io", "clusteroperators", "status", "", "openshift-apiserver", false},
		{"get", "config.openshift.io", "clusteroperators", "", "", "kube-apiserver", false},
		{"list", "config.openshift.io", "clusteroperators", "", "", "", false},
		{"delete", "config.openshift.io", "clusteroperators", "", "", "openshift-samples", false},
		{"delete", "samples.operator.openshift.io", "configs", "", "", "cluster", false},
		{"update", "config.openshift.io", "images", "", "", "cluster", false},
		{"get", "config.openshift.io", "clusterversions", "", "", "other", false},
		{"list", "config.openshift.io", "clusterversions", "", "", "", false},
		{"update", "config.openshift.io", "clusterversions", "", "", "version", false},
		{"update", "config.openshift.io", "clusterversions", "status", "", "version", false},
		{"create", "apps", "deployments", "", "openshift-cluster-samples-operator", "", false},
		{"create", "", "pods", "", "openshift", "", false},
		{"get", "", "nodes", "", "", "x", false},
		{"create", "rbac.authorization.k8s.io", "rolebindings", "", "openshift", "", false},
		{"*", "*", "*", "", "", "", false},
	}
	for _, c := range cases {
		allowed := operatorMay(t, e.kube, authorizationv1.ResourceAttributes{
			Verb: c.verb, Group: c.group, Resource: c.resource, Subresource: c.subresource, Namespace: c.namespace, Name: c.name,
		})
		if allowed != c.allowed {
			t.Errorf("%s %s/%s %s in %q name %q: allowed=%v, want %v", c.verb, c.group, c.resource, c.subresource, c.namespace, c.name, allowed, c.allowed)
		}
	}

	// And for real, with the operator's own credentials.
	e.probesForbidden = true
	op := kubernetes.NewForConfigOrDie(e.cp.OperatorConfig)
	if _, err := op.CoreV1().Secrets("kube-system").List(context.Background(), metav1.ListOptions{}); !apierrors.IsForbidden(err) {
		t.Errorf("listing kube-system secrets as the operator: %v, want Forbidden", err)
	}
	if _, err := op.CoreV1().ConfigMaps("default").Create(context.Background(), &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "x"}}, metav1.CreateOptions{}); !apierrors.IsForbidden(err) {
		t.Errorf("creating a ConfigMap in default as the operator: %v, want Forbidden", err)
	}
	if _, err := op.CoreV1().Secrets("openshift-config").Get(context.Background(), "pull-secret", metav1.GetOptions{}); err != nil {
		t.Errorf("reading the pull secret as the operator: %v", err)
	}
}

// operatorMay asks the API server whether the operator's service account may do what attrs say.
func operatorMay(t *testing.T, kube kubernetes.Interface, attrs authorizationv1.ResourceAttributes) bool {
	t.Helper()
	review := &authorizationv1.SubjectAccessReview{Spec: authorizationv1.SubjectAccessReviewSpec{
		User:               controlplane.OperatorUser,
		Groups:             []string{"system:serviceaccounts", "system:serviceaccounts:" + controlplane.OperatorNamespace, "system:authenticated"},
		ResourceAttributes: &attrs,
	}}
	got, err := kube.AuthorizationV1().SubjectAccessReviews().Create(context.Background(), review, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return got.Status.Allowed
}
