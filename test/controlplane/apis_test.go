package controlplane

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
)

// discoveryLists is what kube-apiserver's discovery lists, as a client that judges the cluster by
// discovery sees it; a group it cannot list fails the test.
func discoveryLists(t *testing.T, cp *ControlPlane) []*metav1.APIResourceList {
	t.Helper()
	disco, err := discovery.NewDiscoveryClientForConfig(cp.AdminConfig)
	if err != nil {
		t.Fatal(err)
	}
	_, lists, err := disco.ServerGroupsAndResources()
	if err != nil {
		t.Fatalf("discovery: %v", err)
	}
	return lists
}

// servedKinds lists which of DeploymentConfig, BuildConfig and Route kube-apiserver's discovery
// shows.
func servedKinds(t *testing.T, cp *ControlPlane) []string {
	t.Helper()
	var kinds []string
	for _, list := range discoveryLists(t, cp) {
		gv, _ := schema.ParseGroupVersion(list.GroupVersion)
		for _, r := range list.APIResources {
			if kind, ok := optionalKinds[gv.Group]; ok && kind.Version == gv.Version && kind.Resource == r.Name {
				kinds = append(kinds, r.Kind)
			}
		}
	}
	slices.Sort(kinds)
	return kinds
}

// apiServices lists which of the optional groups' APIServices are registered.
func apiServices(t *testing.T, ctx context.Context, dyn dynamic.Interface) []string {
	t.Helper()
	var names []string
	for group := range optionalKinds {
		_, err := dyn.Resource(apiServiceResource).Get(ctx, "v1."+group, metav1.GetOptions{})
		switch {
		case err == nil:
			names = append(names, "v1."+group)
		case !apierrors.IsNotFound(err):
			t.Fatal(err)
		}
	}
	slices.Sort(names)
	return names
}

var (
	allOptionalKinds  = []string{"BuildConfig", "DeploymentConfig", "Route"}
	allOptionalAPISvc = []string{"v1.apps.openshift.io", "v1.build.openshift.io", "v1.route.openshift.io"}
)

func quietDynamic(cp *ControlPlane) dynamic.Interface {
	cfg := rest.CopyConfig(cp.AdminConfig)
	cfg.WarningHandler = rest.NoWarnings{} // DeploymentConfigs are deprecated
	return dynamic.NewForConfigOrDie(cfg)
}

// A control plane started with WorkloadAPIsOff and RouteAPIOff serves none of DeploymentConfig,
// BuildConfig and Route, as a cluster without those capabilities; switched on, it serves them
// (objects created then), switched off again it does not.
func TestOptionalAPIsSwitchOnAndOff(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("starts a control plane")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	cp, err := Start(ctx, Options{WorkloadAPIsOff: true, RouteAPIOff: true})
	if err != nil {
		t.Fatal(err)
	}
	defer cp.Stop()
	dyn := quietDynamic(cp)
	onReal := cp.RealOpenShiftAPIServer()

	if got := servedKinds(t, cp); len(got) != 0 {
		t.Errorf("started with WorkloadAPIsOff and RouteAPIOff, discovery shows %v", got)
	}
	if onReal {
		if got := apiServices(t, ctx, dyn); len(got) != 0 {
			t.Errorf("started with WorkloadAPIsOff and RouteAPIOff, APIServices %v are registered", got)
		}
	}
	bc := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "build.openshift.io/v1", "kind": "BuildConfig",
		"metadata": map[string]any{"name": "switched", "namespace": "openshift"},
		"spec": map[string]any{
			"source":   map[string]any{"dockerfile": "FROM scratch"},
			"strategy": map[string]any{"type": "Docker", "dockerStrategy": map[string]any{}},
		},
	}}
	if _, err := dyn.Resource(buildConfigResource).Namespace("openshift").Create(ctx, bc, metav1.CreateOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("creating a BuildConfig with build.openshift.io off: %v, want NotFound", err)
	}

	began := time.Now()
	if err := cp.SetWorkloadAPIs(ctx, true); err != nil {
		t.Fatal(err)
	}
	t.Logf("workload APIs on in %s", time.Since(began).Round(time.Millisecond))
	if got := servedKinds(t, cp); !slices.Equal(got, []string{"BuildConfig", "DeploymentConfig"}) {
		t.Errorf("after SetWorkloadAPIs(true), discovery shows %v, want BuildConfig and DeploymentConfig", got)
	}
	if onReal {
		if got := apiServices(t, ctx, dyn); !slices.Equal(got, []string{"v1.apps.openshift.io", "v1.build.openshift.io"}) {
			t.Errorf("after SetWorkloadAPIs(true), APIServices %v", got)
		}
	}
	if _, err := dyn.Resource(buildConfigResource).Namespace("openshift").Create(ctx, bc, metav1.CreateOptions{}); err != nil {
		t.Errorf("creating a BuildConfig once build.openshift.io is on: %v", err)
	}
	if _, err := dyn.Resource(deploymentConfigResource).Namespace("openshift").List(ctx, metav1.ListOptions{}); err != nil {
		t.Errorf("listing DeploymentConfigs once apps.openshift.io is on: %v", err)
	}

	began = time.Now()
	if err := cp.SetRouteAPI(ctx, true); err != nil {
		t.Fatal(err)
	}
	t.Logf("route API on in %s", time.Since(began).Round(time.Millisecond))
	if got := servedKinds(t, cp); !slices.Equal(got, allOptionalKinds) {
		t.Errorf("after SetRouteAPI(true), discovery shows %v, want %v", got, allOptionalKinds)
	}
	route := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "route.openshift.io/v1", "kind": "Route",
		"metadata": map[string]any{"name": "switched", "namespace": "openshift"},
		"spec":     map[string]any{"to": map[string]any{"kind": "Service", "name": "switched"}},
	}}
	if _, err := dyn.Resource(routeResource).Namespace("openshift").Create(ctx, route, metav1.CreateOptions{}); err != nil {
		t.Errorf("creating a Route once route.openshift.io is on: %v", err)
	}

	began = time.Now()
	if err := cp.SetWorkloadAPIs(ctx, false); err != nil {
		t.Fatal(err)
	}
	t.Logf("workload APIs off in %s", time.Since(began).Round(time.Millisecond))
	if got := servedKinds(t, cp); !slices.Equal(got, []string{"Route"}) {
		t.Errorf("after SetWorkloadAPIs(false), discovery shows %v, want only Route", got)
	}
	if onReal {
		if got := apiServices(t, ctx, dyn); !slices.Equal(got, []string{"v1.route.openshift.io"}) {
			t.Errorf("after SetWorkloadAPIs(false), APIServices %v", got)
		}
	}
	if _, err := dyn.Resource(buildConfigResource).Namespace("openshift").List(ctx, metav1.ListOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("listing BuildConfigs with build.openshift.io off again: %v, want NotFound", err)
	}
	if !cp.ServesRouteAPI() || cp.ServesWorkloadAPIs() {
		t.Errorf("ServesRouteAPI %v, ServesWorkloadAPIs %v; want true, false", cp.ServesRouteAPI(), cp.ServesWorkloadAPIs())
	}
	if h := cp.History(); !strings.Contains(h, "the test switched") {
		t.Errorf("the history does not record the switches:\n%s", h)
	}
}

// A test that switched API groups off (or on) leaves a control plane no baseline shows: the reset
// serves the baseline's groups again, deletes what the test created in them, and takes the
// APIServices or CRDs it created again as the baseline's, so that a second reset finds nothing
// to undo.
func TestAResetServesTheAPIGroupsATestSwitchedOff(t *testing.T) {
	t.Parallel()
	ctx, cp := startWithBaseline(t)
	dyn := quietDynamic(cp)
	if got := servedKinds(t, cp); !slices.Equal(got, allOptionalKinds) {
		t.Fatalf("a default control plane's discovery shows %v, want %v", got, allOptionalKinds)
	}
	if cp.RealOpenShiftAPIServer() {
		if got := apiServices(t, ctx, dyn); !slices.Equal(got, allOptionalAPISvc) {
			t.Fatalf("a default control plane registers APIServices %v, want %v", got, allOptionalAPISvc)
		}
	}
	dc := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "apps.openshift.io/v1", "kind": "DeploymentConfig",
		"metadata": map[string]any{"name": "left", "namespace": "openshift"},
		"spec": map[string]any{"template": map[string]any{
			"metadata": map[string]any{"labels": map[string]any{"app": "left"}},
			"spec":     map[string]any{"containers": []any{map[string]any{"name": "left", "image": "left"}}},
		}},
	}}
	if _, err := dyn.Resource(deploymentConfigResource).Namespace("openshift").Create(ctx, dc, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := cp.SetWorkloadAPIs(ctx, false); err != nil {
		t.Fatal(err)
	}
	if err := cp.SetRouteAPI(ctx, false); err != nil {
		t.Fatal(err)
	}
	if got := servedKinds(t, cp); len(got) != 0 {
		t.Fatalf("after switching them off, discovery shows %v", got)
	}
	var pid int
	if cp.RealOpenShiftAPIServer() {
		pid = cp.osa.pid()
	}

	began := time.Now()
	if err := cp.recycle(ctx); err != nil {
		t.Fatal(err)
	}
	t.Logf("reset in %s", time.Since(began).Round(time.Millisecond))
	if got := servedKinds(t, cp); !slices.Equal(got, allOptionalKinds) {
		t.Errorf("after the reset, discovery shows %v, want %v", got, allOptionalKinds)
	}
	if cp.RealOpenShiftAPIServer() {
		if got := apiServices(t, ctx, dyn); !slices.Equal(got, allOptionalAPISvc) {
			t.Errorf("after the reset, APIServices %v, want %v", got, allOptionalAPISvc)
		}
		if cp.osa.pid() == pid {
			t.Errorf("openshift-apiserver was not restarted to serve apps and build again")
		}
	}
	if !cp.ServesWorkloadAPIs() || !cp.ServesRouteAPI() {
		t.Errorf("after the reset, ServesWorkloadAPIs %v, ServesRouteAPI %v", cp.ServesWorkloadAPIs(), cp.ServesRouteAPI())
	}
	if _, err := dyn.Resource(deploymentConfigResource).Namespace("openshift").Get(ctx, "left", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("the DeploymentConfig the test left: %v, want NotFound", err)
	}
	if h := cp.History(); !strings.Contains(h, "the test left the control plane serving none of") {
		t.Errorf("the history does not record the groups switched back:\n%s", h)
	}

	resetAgainUndoesNothing(t, ctx, cp)
}

// resetAgainUndoesNothing resets cp, which a reset just brought back to its baseline, and fails
// the test unless the history says that this reset found nothing to undo: the first took what it
// created again as the baseline's.
func resetAgainUndoesNothing(t *testing.T, ctx context.Context, cp *ControlPlane) {
	t.Helper()
	if err := cp.recycle(ctx); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(cp.History()), "\n")
	if last := lines[len(lines)-1]; !strings.Contains(last, "nothing to undo") {
		t.Errorf("a second reset undid something: %s", last)
	}
}

// sampleTemplateKinds are the kinds the shipped sample Templates create, of every inventory:
// the operator marks a Template unusable when discovery does not list one of its kinds.
var sampleTemplateKinds = []string{
	"apps.openshift.io/v1 DeploymentConfig",
	"apps/v1 Deployment",
	"apps/v1 StatefulSet",
	"authorization.openshift.io/v1 RoleBinding",
	"build.openshift.io/v1 BuildConfig",
	"image.openshift.io/v1 ImageStream",
	"monitoring.coreos.com/v1 ServiceMonitor",
	"route.openshift.io/v1 Route",
	"v1 ConfigMap",
	"v1 PersistentVolumeClaim",
	"v1 Secret",
	"v1 Service",
	"v1 ServiceAccount",
}

// discoveredKinds lists every "group/version Kind" kube-apiserver's discovery shows.
func discoveredKinds(t *testing.T, cp *ControlPlane) map[string]bool {
	t.Helper()
	kinds := map[string]bool{}
	for _, list := range discoveryLists(t, cp) {
		for _, r := range list.APIResources {
			if !strings.Contains(r.Name, "/") {
				kinds[list.GroupVersion+" "+r.Kind] = true
			}
		}
	}
	return kinds
}

var serviceMonitorResource = schema.GroupVersionResource{Group: "monitoring.coreos.com", Version: "v1", Resource: "servicemonitors"}

// A default control plane serves every kind the sample Templates create, as a cluster does: the
// jenkins Templates' authorization.openshift.io RoleBinding (the real server turns it into an
// RBAC RoleBinding) and their ServiceMonitor among them. What a test creates of them is gone
// after a reset, and a second reset finds nothing to undo. One difference stays: the jenkins
// Templates name their RoleBinding ${JENKINS_SERVICE_NAME}_edit, which the real server takes (an
// RBAC name may be any path segment) and the stand-ins' CRD refuses (a custom resource's name
// must be a DNS subdomain).
func TestADefaultControlPlaneServesEveryKindTheSamplesCreate(t *testing.T) {
	t.Parallel()
	ctx, cp := startWithBaseline(t)
	dyn := quietDynamic(cp)
	kinds := discoveredKinds(t, cp)
	for _, k := range sampleTemplateKinds {
		if !kinds[k] {
			t.Errorf("discovery does not list %s", k)
		}
	}

	// As the jenkins Templates create them, once instantiated in openshift.
	rb := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "authorization.openshift.io/v1", "kind": "RoleBinding",
		"metadata":   map[string]any{"name": "jenkins_edit", "namespace": "openshift"},
		"groupNames": nil,
		"roleRef":    map[string]any{"name": "edit"},
		"subjects":   []any{map[string]any{"kind": "ServiceAccount", "name": "jenkins"}},
	}}
	_, err := dyn.Resource(roleBindingResource).Namespace("openshift").Create(ctx, rb, metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}})
	switch {
	case cp.RealOpenShiftAPIServer() && err != nil:
		t.Errorf("the real server refused the jenkins Templates' RoleBinding name: %v", err)
	case !cp.RealOpenShiftAPIServer() && !apierrors.IsInvalid(err):
		t.Errorf("the stand-ins took a RoleBinding named jenkins_edit (%v): the CRD's names are DNS subdomains", err)
	}
	rb.SetName("jenkins-edit")
	if _, err := dyn.Resource(roleBindingResource).Namespace("openshift").Create(ctx, rb, metav1.CreateOptions{}); err != nil {
		t.Fatalf("creating an authorization.openshift.io RoleBinding: %v", err)
	}
	list, err := dyn.Resource(roleBindingResource).Namespace("openshift").List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatalf("listing authorization.openshift.io RoleBindings: %v", err)
	}
	var listed []string
	for _, item := range list.Items {
		listed = append(listed, item.GetName())
	}
	if !slices.Contains(listed, "jenkins-edit") {
		t.Errorf("authorization.openshift.io RoleBindings in openshift: %v, want jenkins-edit among them", listed)
	}
	got, err := dyn.Resource(roleBindingResource).Namespace("openshift").Get(ctx, "jenkins-edit", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if name, _, _ := unstructured.NestedString(got.Object, "roleRef", "name"); name != "edit" {
		t.Errorf("the RoleBinding's roleRef: %v", got.Object["roleRef"])
	}
	kube := kubernetes.NewForConfigOrDie(cp.AdminConfig)
	rbac, err := kube.RbacV1().RoleBindings("openshift").Get(ctx, "jenkins-edit", metav1.GetOptions{})
	if cp.RealOpenShiftAPIServer() {
		want := rbacv1.RoleRef{APIGroup: "rbac.authorization.k8s.io", Kind: "ClusterRole", Name: "edit"}
		if err != nil {
			t.Errorf("the real server keeps no RoleBinding of its own, but no RBAC RoleBinding was created: %v", err)
		} else if rbac.RoleRef != want || len(rbac.Subjects) != 1 || rbac.Subjects[0].Kind != "ServiceAccount" || rbac.Subjects[0].Name != "jenkins" {
			t.Errorf("the RBAC RoleBinding: roleRef %+v, subjects %+v; want the ClusterRole edit and the ServiceAccount jenkins", rbac.RoleRef, rbac.Subjects)
		}
	} else if !apierrors.IsNotFound(err) {
		t.Errorf("the stand-ins' RoleBinding CRD made an RBAC RoleBinding: %v", err)
	}

	sm := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "monitoring.coreos.com/v1", "kind": "ServiceMonitor",
		"metadata": map[string]any{"name": "jenkins-monitored", "namespace": "openshift", "labels": map[string]any{"app": "jenkins", "name": "jenkins"}},
		"spec": map[string]any{
			"endpoints": []any{map[string]any{"interval": "10s", "path": "/prometheus/", "port": "web"}},
			"selector":  map[string]any{"matchLabels": map[string]any{"app": "jenkins"}},
		},
	}}
	if _, err := dyn.Resource(serviceMonitorResource).Namespace("openshift").Create(ctx, sm, metav1.CreateOptions{}); err != nil {
		t.Fatalf("creating a ServiceMonitor: %v", err)
	}

	if err := cp.recycle(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := dyn.Resource(roleBindingResource).Namespace("openshift").Get(ctx, "jenkins-edit", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("after the reset, the RoleBinding the test created: %v, want NotFound", err)
	}
	if _, err := dyn.Resource(serviceMonitorResource).Namespace("openshift").Get(ctx, "jenkins-monitored", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("after the reset, the ServiceMonitor the test created: %v, want NotFound", err)
	}
	kinds = discoveredKinds(t, cp)
	for _, k := range sampleTemplateKinds {
		if !kinds[k] {
			t.Errorf("after the reset, discovery does not list %s", k)
		}
	}
	resetAgainUndoesNothing(t, ctx, cp)
}
