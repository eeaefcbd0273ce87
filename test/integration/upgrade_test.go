package integration

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	operatorv1 "github.com/openshift/api/operator/v1"
	samplesv1 "github.com/openshift/api/samples/v1"
	authorizationv1 "k8s.io/api/authorization/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/samples-operator-dev/cluster-samples-operator/test/controlplane"
)

// upstreamGrant is an RBAC object or ConfigMap that the compatible upstream operator's payload
// creates and ours must remove on upgrade.
type upstreamGrant struct{ kind, namespace, name string }

var upstreamLeftovers = []upstreamGrant{
	{"ClusterRoleBinding", "", "cluster-samples-operator-imageconfig-reader"},
	{"ClusterRole", "", "cluster-samples-operator-imageconfig-reader"},
	{"ClusterRoleBinding", "", "cluster-samples-operator-proxy-reader"},
	{"ClusterRole", "", "cluster-samples-operator-proxy-reader"},
	{"RoleBinding", "openshift", "cluster-samples-operator-openshift-edit"},
	{"RoleBinding", "openshift-config", "cluster-samples-operator-openshift-config-secret-reader"},
	{"Role", "openshift-config", "coreos-pull-secret-reader"},
	{"ConfigMap", controlplane.OperatorNamespace, "samples-operator-config"},
}

// createUpstreamPayload creates, as the CVO would have from the upstream operator's payload, its
// broader grants: the built-in edit role over openshift, every secret of openshift-config, all
// verbs on pods, secrets and deployments of the operator namespace and on every ClusterOperator,
// plus its config ConfigMap. The local control plane runs no aggregation controller, so edit
// gets explicit rules standing in for what aggregation gives it on a cluster.
func createUpstreamPayload(t *testing.T, kube kubernetes.Interface) {
	t.Helper()
	ctx := context.Background()
	sa := []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Name: controlplane.OperatorServiceAccount, Namespace: controlplane.OperatorNamespace}}
	all := []string{rbacv1.VerbAll}
	read := []string{"get", "list", "watch"}

	giveEditAggregatedRules(t, kube)

	clusterRoles := []rbacv1.ClusterRole{
		{ObjectMeta: metav1.ObjectMeta{Name: "cluster-samples-operator"}, Rules: []rbacv1.PolicyRule{
			{APIGroups: []string{"samples.operator.openshift.io"}, Resources: []string{"configs", "configs/status"}, Verbs: all},
			{APIGroups: []string{"config.openshift.io"}, Resources: []string{"clusteroperators", "clusteroperators/status"}, Verbs: all},
		}},
		{ObjectMeta: metav1.ObjectMeta{Name: "cluster-samples-operator-imageconfig-reader"}, Rules: []rbacv1.PolicyRule{
			{APIGroups: []string{"config.openshift.io"}, Resources: []string{"images"}, Verbs: read},
		}},
		{ObjectMeta: metav1.ObjectMeta{Name: "cluster-samples-operator-proxy-reader"}, Rules: []rbacv1.PolicyRule{
			{APIGroups: []string{"config.openshift.io"}, Resources: []string{"proxies"}, Verbs: read},
		}},
		{ObjectMeta: metav1.ObjectMeta{Name: "system:openshift:cluster-samples-operator:cluster-reader",
			Labels: map[string]string{"rbac.authorization.k8s.io/aggregate-to-cluster-reader": "true"}}, Rules: []rbacv1.PolicyRule{
			{APIGroups: []string{"samples.operator.openshift.io"}, Resources: []string{"configs", "configs/status"}, Verbs: read},
		}},
	}
	for i := range clusterRoles {
		if _, err := kube.RbacV1().ClusterRoles().Create(ctx, &clusterRoles[i], metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	for _, name := range []string{"cluster-samples-operator", "cluster-samples-operator-imageconfig-reader", "cluster-samples-operator-proxy-reader"} {
		crb := &rbacv1.ClusterRoleBinding{ObjectMeta: metav1.ObjectMeta{Name: name}, Subjects: sa,
			RoleRef: rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: name}}
		if _, err := kube.RbacV1().ClusterRoleBindings().Create(ctx, crb, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}

	roles := []rbacv1.Role{
		{ObjectMeta: metav1.ObjectMeta{Name: "cluster-samples-operator", Namespace: controlplane.OperatorNamespace}, Rules: []rbacv1.PolicyRule{
			{APIGroups: []string{""}, Resources: []string{"pods", "services", "endpoints", "persistentvolumeclaims", "events", "configmaps", "secrets"}, Verbs: all},
			{APIGroups: []string{"apps"}, Resources: []string{"deployments", "daemonsets", "replicasets", "statefulsets"}, Verbs: all},
		}},
		{ObjectMeta: metav1.ObjectMeta{Name: "coreos-pull-secret-reader", Namespace: "openshift-config"}, Rules: []rbacv1.PolicyRule{
			{APIGroups: []string{""}, Resources: []string{"secrets"}, Verbs: read},
		}},
	}
	for i := range roles {
		if _, err := kube.RbacV1().Roles(roles[i].Namespace).Create(ctx, &roles[i], metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	roleBindings := []rbacv1.RoleBinding{
		{ObjectMeta: metav1.ObjectMeta{Name: "cluster-samples-operator", Namespace: controlplane.OperatorNamespace}, Subjects: sa,
			RoleRef: rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: "cluster-samples-operator"}},
		{ObjectMeta: metav1.ObjectMeta{Name: "cluster-samples-operator-openshift-edit", Namespace: "openshift"}, Subjects: sa,
			RoleRef: rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: "edit"}},
		{ObjectMeta: metav1.ObjectMeta{Name: "cluster-samples-operator-openshift-config-secret-reader", Namespace: "openshift-config"}, Subjects: sa,
			RoleRef: rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: "coreos-pull-secret-reader"}},
	}
	for i := range roleBindings {
		if _, err := kube.RbacV1().RoleBindings(roleBindings[i].Namespace).Create(ctx, &roleBindings[i], metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "samples-operator-config", Namespace: controlplane.OperatorNamespace},
		Data: map[string]string{"config.yaml": "apiVersion: config.openshift.io/v1\nkind: GenericControllerConfig\nservingInfo:\n  bindAddress: \":60000\"\n"}}
	if _, err := kube.CoreV1().ConfigMaps(controlplane.OperatorNamespace).Create(ctx, cm, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
}

// giveEditAggregatedRules gives the built-in edit role rules standing in for what aggregation
// gives it on a cluster: the local control plane runs no aggregation controller.
func giveEditAggregatedRules(t *testing.T, kube kubernetes.Interface) {
	t.Helper()
	ctx := context.Background()
	all := []string{rbacv1.VerbAll}
	edit, err := kube.RbacV1().ClusterRoles().Get(ctx, "edit", metav1.GetOptions{})
	if err != nil {
		t.Fatalf("the bootstrap edit role: %v", err)
	}
	edit.Rules = []rbacv1.PolicyRule{
		{APIGroups: []string{""}, Resources: []string{"configmaps", "secrets", "services", "pods"}, Verbs: all},
		{APIGroups: []string{"apps"}, Resources: []string{"deployments"}, Verbs: all},
		{APIGroups: []string{"image.openshift.io"}, Resources: []string{"imagestreams", "imagestreamimports"}, Verbs: all},
		{APIGroups: []string{"template.openshift.io"}, Resources: []string{"templates"}, Verbs: all},
	}
	if _, err := kube.RbacV1().ClusterRoles().Update(ctx, edit, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
}

// broaderThanNeeded is what the upstream grants allowed the operator and ours must not.
var broaderThanNeeded = []authorizationv1.ResourceAttributes{
	{Verb: "get", Resource: "secrets", Namespace: "openshift-config", Name: "other-secret"},
	{Verb: "list", Resource: "secrets", Namespace: "openshift-config"},
	{Verb: "create", Resource: "configmaps", Namespace: "openshift"},
	{Verb: "update", Resource: "secrets", Namespace: "openshift", Name: "x"},
	{Verb: "delete", Group: "apps", Resource: "deployments", Namespace: "openshift", Name: "x"},
	{Verb: "get", Resource: "secrets", Namespace: controlplane.OperatorNamespace, Name: "x"},
	{Verb: "create", Resource: "pods", Namespace: controlplane.OperatorNamespace},
	{Verb: "delete", Group: "config.openshift.io", Resource: "clusteroperators", Name: "openshift-samples"},
	{Verb: "update", Group: "config.openshift.io", Resource: "clusteroperators", Subresource: "status", Name: "kube-apiserver"},
	{Verb: "delete", Group: "samples.operator.openshift.io", Resource: "configs", Name: "cluster"},
}

// TestUpgradeFromUpstreamPayloadRemovesBroaderGrants: on a cluster that ran the upstream operator,
// applying our manifests as the CVO does (release.openshift.io/delete deletes) leaves the operator
// only its own narrow grants, keeps the cluster-reader aggregation, and the sample cycle works.
func TestUpgradeFromUpstreamPayloadRemovesBroaderGrants(t *testing.T) {
	parallel(t, aboutTwentySecond)
	var kube kubernetes.Interface
	e := newEnvOver(t, func(cp *controlplane.ControlPlane) {
		kube = kubernetes.NewForConfigOrDie(cp.AdminConfig)
		createUpstreamPayload(t, kube)
		for _, attrs := range broaderThanNeeded {
			if !operatorMay(t, kube, attrs) {
				t.Fatalf("the upstream-shaped payload should allow %+v before the upgrade", attrs)
			}
		}
	})
	ctx := context.Background()

	var wantDeleted []string
	for _, g := range upstreamLeftovers {
		wantDeleted = append(wantDeleted, g.kind+" "+strings.TrimPrefix(g.namespace+"/"+g.name, "/"))
	}
	if got := e.applied.Deleted; !sameElements(got, wantDeleted) {
		t.Errorf("applying manifests/ deleted %v, want %v", got, wantDeleted)
	}
	for _, attrs := range broaderThanNeeded {
		if operatorMay(t, kube, attrs) {
			t.Errorf("after the upgrade the operator may still %s %s/%s %s in %q name %q", attrs.Verb, attrs.Group, attrs.Resource, attrs.Subresource, attrs.Namespace, attrs.Name)
		}
	}
	for _, g := range upstreamLeftovers {
		if err := getObject(ctx, kube, g); !apierrors.IsNotFound(err) {
			t.Errorf("%s %s/%s is still there after the upgrade: %v", g.kind, g.namespace, g.name, err)
		}
	}
	reader, err := kube.RbacV1().ClusterRoles().Get(ctx, "system:openshift:cluster-samples-operator:cluster-reader", metav1.GetOptions{})
	if err != nil {
		t.Fatalf("the cluster-reader aggregation role is gone: %v", err)
	}
	if reader.Labels["rbac.authorization.k8s.io/aggregate-to-cluster-reader"] != "true" ||
		len(reader.Rules) != 1 || !slices.Equal(reader.Rules[0].Verbs, []string{"get", "list", "watch"}) {
		t.Errorf("cluster-reader aggregation role: labels %v rules %+v", reader.Labels, reader.Rules)
	}

	// A second pass of the CVO finds nothing left to delete.
	again, err := controlplane.ApplyDir(ctx, e.cp.AdminConfig, controlplane.RepoRoot()+"/manifests")
	if err != nil {
		t.Fatal(err)
	}
	if len(again.Deleted) != 0 {
		t.Errorf("the second apply deleted %v", again.Deleted)
	}

	// The full cycle with only the narrow grants (newEnv fails the test on any 403): install,
	// revert a deletion, Removed, Managed again.
	inv := x86Inventory(t)
	e.startOperator(defaultOptions())
	e.waitManaged(t, inv, "v1")
	if err := e.tmpl.TemplateV1().Templates("openshift").Delete(ctx, "rails-postgresql-example", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	eventually(t, 10*time.Second, func() (bool, string) {
		return e.templateExists("rails-postgresql-example"), "deleted template not put back"
	})
	e.updateConfig(func(c *samplesv1.Config) { c.Spec.ManagementState = operatorv1.Removed })
	eventually(t, 20*time.Second, func() (bool, string) {
		c := e.getConfig()
		return c.Status.ManagementState == operatorv1.Removed && !e.imageStreamExists("python"), "samples not removed"
	})
	e.updateConfig(func(c *samplesv1.Config) { c.Spec.ManagementState = operatorv1.Managed })
	e.waitManaged(t, inv, "v1")
}

func getObject(ctx context.Context, kube kubernetes.Interface, g upstreamGrant) error {
	var err error
	switch g.kind {
	case "ClusterRole":
		_, err = kube.RbacV1().ClusterRoles().Get(ctx, g.name, metav1.GetOptions{})
	case "ClusterRoleBinding":
		_, err = kube.RbacV1().ClusterRoleBindings().Get(ctx, g.name, metav1.GetOptions{})
	case "Role":
		_, err = kube.RbacV1().Roles(g.namespace).Get(ctx, g.name, metav1.GetOptions{})
	case "RoleBinding":
		_, err = kube.RbacV1().RoleBindings(g.namespace).Get(ctx, g.name, metav1.GetOptions{})
	case "ConfigMap":
		_, err = kube.CoreV1().ConfigMaps(g.namespace).Get(ctx, g.name, metav1.GetOptions{})
	}
	return err
}

func sameElements(a, b []string) bool {
	a, b = slices.Clone(a), slices.Clone(b)
	slices.Sort(a)
	slices.Sort(b)
	return slices.Equal(a, b)
}
