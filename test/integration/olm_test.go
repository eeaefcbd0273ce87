package integration

import (
	"context"
	"crypto/tls"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	configv1 "github.com/openshift/api/config/v1"
	samplesv1 "github.com/openshift/api/samples/v1"
	"github.com/openshift/library-go/pkg/config/clusteroperator/v1helpers"
	"github.com/operator-framework/api/pkg/operators/v1alpha1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	"sigs.k8s.io/yaml"

	"github.com/samples-operator-dev/cluster-samples-operator/pkg/access"
	"github.com/samples-operator-dev/cluster-samples-operator/pkg/clusteroperator"
	"github.com/samples-operator-dev/cluster-samples-operator/pkg/configstatus"
	"github.com/samples-operator-dev/cluster-samples-operator/pkg/operator"
	"github.com/samples-operator-dev/cluster-samples-operator/pkg/standdown"
	"github.com/samples-operator-dev/cluster-samples-operator/test/controlplane"
)

// bundleCSV reads the committed bundle's ClusterServiceVersion.
func bundleCSV(t *testing.T) *v1alpha1.ClusterServiceVersion {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(controlplane.RepoRoot(), "bundle", "manifests", "cluster-samples-operator.clusterserviceversion.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	csv := &v1alpha1.ClusterServiceVersion{}
	if err := yaml.Unmarshal(data, csv); err != nil {
		t.Fatal(err)
	}
	return csv
}

// installBundleRBACAsOLM gives the operator's service account what OLM gives it when it installs
// the bundle: every clusterPermissions entry as a ClusterRole bound cluster-wide, every
// permissions entry as a Role bound in the install namespace, and the bundle's other manifests
// (its ClusterRoles among them) as they are, namespaced ones in the install namespace. Nothing is
// bound in openshift or openshift-config: OLM cannot, that is the administrator's step.
func installBundleRBACAsOLM(t *testing.T) func(context.Context, *controlplane.ControlPlane) (*controlplane.ApplyResult, error) {
	csv := bundleCSV(t)
	return func(ctx context.Context, cp *controlplane.ControlPlane) (*controlplane.ApplyResult, error) {
		ns := controlplane.OperatorNamespace
		var objs []*unstructured.Unstructured
		add := func(obj interface{}) error {
			u, err := toUnstructured(obj)
			if err != nil {
				return err
			}
			objs = append(objs, u)
			return nil
		}
		strategy := csv.Spec.InstallStrategy.StrategySpec
		for i, p := range strategy.ClusterPermissions {
			name := fmt.Sprintf("%s-cluster-%d", csv.Name, i)
			if err := add(&rbacv1.ClusterRole{TypeMeta: metav1.TypeMeta{APIVersion: "rbac.authorization.k8s.io/v1", Kind: "ClusterRole"},
				ObjectMeta: metav1.ObjectMeta{Name: name}, Rules: p.Rules}); err != nil {
				return nil, err
			}
			if err := add(&rbacv1.ClusterRoleBinding{TypeMeta: metav1.TypeMeta{APIVersion: "rbac.authorization.k8s.io/v1", Kind: "ClusterRoleBinding"},
				ObjectMeta: metav1.ObjectMeta{Name: name},
				RoleRef:    rbacv1.RoleRef{APIGroup: "rbac.authorization.k8s.io", Kind: "ClusterRole", Name: name},
				Subjects:   []rbacv1.Subject{{Kind: "ServiceAccount", Name: p.ServiceAccountName, Namespace: ns}}}); err != nil {
				return nil, err
			}
		}
		for i, p := range strategy.Permissions {
			name := fmt.Sprintf("%s-%d", csv.Name, i)
			if err := add(&rbacv1.Role{TypeMeta: metav1.TypeMeta{APIVersion: "rbac.authorization.k8s.io/v1", Kind: "Role"},
				ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns}, Rules: p.Rules}); err != nil {
				return nil, err
			}
			if err := add(&rbacv1.RoleBinding{TypeMeta: metav1.TypeMeta{APIVersion: "rbac.authorization.k8s.io/v1", Kind: "RoleBinding"},
				ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns},
				RoleRef:    rbacv1.RoleRef{APIGroup: "rbac.authorization.k8s.io", Kind: "Role", Name: name},
				Subjects:   []rbacv1.Subject{{Kind: "ServiceAccount", Name: p.ServiceAccountName, Namespace: ns}}}); err != nil {
				return nil, err
			}
		}
		files, err := filepath.Glob(filepath.Join(controlplane.RepoRoot(), "bundle", "manifests", "*.yaml"))
		if err != nil {
			return nil, err
		}
		for _, f := range files {
			manifests, err := controlplane.ReadManifests(f)
			if err != nil {
				return nil, err
			}
			for _, obj := range manifests {
				switch obj.GetKind() {
				case "ClusterServiceVersion", "CustomResourceDefinition": // the CRD is installed already
					continue
				case "ClusterRole", "ClusterRoleBinding":
				default:
					obj.SetNamespace(ns)
				}
				objs = append(objs, obj)
			}
		}
		return controlplane.Apply(ctx, cp.AdminConfig, objs)
	}
}

func toUnstructured(obj interface{}) (*unstructured.Unstructured, error) {
	data, err := yaml.Marshal(obj)
	if err != nil {
		return nil, err
	}
	u := &unstructured.Unstructured{}
	return u, yaml.Unmarshal(data, &u.Object)
}

// bindOperatorRoles is what the README and the CSV tell an administrator to run after installing.
func (e *env) bindOperatorRoles(t *testing.T) {
	t.Helper()
	for _, b := range []struct{ name, namespace, clusterRole string }{
		{"cluster-samples-operator", "openshift", "cluster-samples-operator-openshift"},
		{"cluster-samples-operator-pull-secret-reader", "openshift-config", "cluster-samples-operator-pull-secret-reader-openshift-config"},
	} {
		if _, err := e.kube.RbacV1().RoleBindings(b.namespace).Create(context.Background(), &rbacv1.RoleBinding{
			ObjectMeta: metav1.ObjectMeta{Name: b.name, Namespace: b.namespace},
			RoleRef:    rbacv1.RoleRef{APIGroup: "rbac.authorization.k8s.io", Kind: "ClusterRole", Name: b.clusterRole},
			Subjects:   []rbacv1.Subject{{Kind: "ServiceAccount", Name: controlplane.OperatorServiceAccount, Namespace: controlplane.OperatorNamespace}},
		}, metav1.CreateOptions{}); err != nil {
			t.Fatalf("oc create rolebinding %s -n %s: %v", b.name, b.namespace, err)
		}
	}
}

// setClusterVersion creates or updates ClusterVersion version with these capabilities enabled,
// as the cluster-version operator reports them.
func (e *env) setClusterVersion(t *testing.T, enabled ...configv1.ClusterVersionCapability) {
	t.Helper()
	ctx := context.Background()
	versions := e.config.ConfigV1().ClusterVersions()
	cv, err := versions.Get(ctx, standdown.ClusterVersionName, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		cv, err = versions.Create(ctx, &configv1.ClusterVersion{
			ObjectMeta: metav1.ObjectMeta{Name: standdown.ClusterVersionName},
			Spec:       configv1.ClusterVersionSpec{ClusterID: "00000000-0000-4000-8000-000000000000"},
		}, metav1.CreateOptions{})
	}
	if err != nil {
		t.Fatal(err)
	}
	cv.Status.Desired = configv1.Release{Version: "4.20.0", Image: "quay.io/openshift-release-dev/ocp-release@sha256:" + strings.Repeat("0", 64)}
	cv.Status.VersionHash = "test"
	cv.Status.Capabilities.EnabledCapabilities = enabled
	if _, err := versions.UpdateStatus(ctx, cv, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
}

// startOperatorWithReadiness starts the operator serving /readyz on a loopback port, and returns
// a probe of it as the kubelet would make it.
func (e *env) startOperatorWithReadiness(t *testing.T, opts operator.Options) (*runningOperator, func() int) {
	t.Helper()
	op, addr, pool := e.startOperatorServing(t, opts)
	client := &http.Client{Timeout: 5 * time.Second, Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool}}}
	return op, func() int {
		resp, err := client.Get("https://" + addr + "/readyz")
		if err != nil {
			return 0
		}
		resp.Body.Close()
		return resp.StatusCode
	}
}

// conditionOf is a condition of a Config that may not exist yet.
func (e *env) configOrNil() *samplesv1.Config {
	cfg, err := e.samples.SamplesV1().Configs().Get(context.Background(), samplesv1.ConfigName, metav1.GetOptions{})
	if err != nil {
		return nil
	}
	return cfg
}

// TestOLMInstallIsNotReadyUntilAnAdministratorBindsItsRoles installs the operator as OLM does,
// with the bundle's RBAC and nothing bound in openshift or openshift-config. It is not ready, and
// the Config and the ClusterOperator give the two commands; the informers that cannot list retry
// on the reflector's backoff, not in a loop. Once an administrator runs the commands it becomes
// ready by itself and installs the samples. When the cluster-version operator later takes the
// samples over (the capability is enabled), it stands down: it stops writing, releases the lease,
// and says so through readiness, its log and an Event (this control plane has no OLM, so no
// OperatorCondition).
func TestOLMInstallIsNotReadyUntilAnAdministratorBindsItsRoles(t *testing.T) {
	parallel(t, aboutTwentySecond)
	e := newEnvInstalled(t, installBundleRBACAsOLM(t))
	e.probesForbidden = true // forbidden on purpose until the roles are bound
	logs := captureKlog(t)
	ctx := context.Background()
	csv := bundleCSV(t).Name
	e.setClusterVersion(t, configv1.ClusterVersionCapabilityConsole) // a cluster without the samples capability

	opts := defaultOptions()
	opts.OperatorConditionName = csv
	start := time.Now()
	_, readyz := e.startOperatorWithReadiness(t, opts)

	commands := []string{access.Command(access.Samples, true), access.Command(access.PullSecret, true)}
	eventually(t, 30*time.Second, func() (bool, string) {
		c := configCondition(e.configOrNil(), samplesv1.SamplesExist)
		if c == nil || c.Status != corev1.ConditionFalse || c.Reason != configstatus.ReasonMissingAccess {
			return false, fmt.Sprintf("SamplesExist %+v", c)
		}
		for _, cmd := range commands {
			if !strings.Contains(c.Message, cmd) {
				return false, fmt.Sprintf("SamplesExist message %q lacks %q", c.Message, cmd)
			}
		}
		creds := configCondition(e.configOrNil(), samplesv1.ImportCredentialsExist)
		return creds != nil && creds.Reason == configstatus.ReasonMissingAccess && strings.Contains(creds.Message, commands[1]),
			fmt.Sprintf("ImportCredentialsExist %+v", creds)
	})
	co := e.waitClusterOperator(t, configv1.ConditionFalse, configv1.ConditionFalse, configv1.ConditionTrue, clusteroperator.ReasonMissingAccess, "")
	if d := v1helpers.FindStatusCondition(co.Status.Conditions, configv1.OperatorDegraded); d == nil || !strings.Contains(d.Message, commands[0]) || !strings.Contains(d.Message, commands[1]) {
		t.Errorf("Degraded %+v lacks the commands", d)
	}
	t.Logf("not ready, and said why, %s after start: %s", time.Since(start).Round(time.Millisecond), configCondition(e.configOrNil(), samplesv1.SamplesExist).Message)
	if code := readyz(); code != http.StatusServiceUnavailable {
		t.Errorf("/readyz = %d while the roles are not bound, want 503", code)
	}

	// While forbidden the operator asks only what its reflectors retry, on their backoff.
	window := 6 * time.Second
	from := time.Now()
	time.Sleep(window)
	events := e.operatorRequests(t)
	total, forbidden := 0, map[string]int{}
	var reviews []time.Time
	for _, ev := range events {
		if ev.Resource == "selfsubjectaccessreviews" {
			reviews = append(reviews, ev.Received)
		}
		if ev.Received.Before(from) || ev.Received.After(from.Add(window)) {
			continue
		}
		total++
		if ev.Code == 403 {
			forbidden[ev.Verb+" "+ev.Resource]++
		}
		switch {
		case ev.Resource == "selfsubjectaccessreviews":
		case ev.IsWrite() && ev.Resource != "events" && ev.Resource != "leases":
			t.Errorf("while forbidden the operator sent %s %s/%s (%d)", ev.Verb, ev.Resource, ev.Subresource, ev.Code)
		}
	}
	// Where every user may list the samples (the real openshift-apiserver's bootstrap policy),
	// reads cannot tell that the grant is missing: reviews do, asked again on a backoff from
	// the tracker's RecheckMin so that the binding is noticed. Two rounds at most begin in the
	// window; a round is a burst of reviews, and one that began before the window may end in it.
	if started := reviewRoundsStarted(reviews, from, from.Add(window)); started > 2 {
		t.Errorf("%d rounds of SelfSubjectAccessReviews began in %s while forbidden, want at most two (reviews at %v)", started, window, reviews)
	}
	// Three informers (imagestreams, templates, the pull secret), each a watch and a list per
	// attempt, with the reflector's backoff from 0.8 s doubling: a handful each. A tight loop
	// would be thousands.
	for key, n := range forbidden {
		if n > 12 {
			t.Errorf("%d forbidden %s in %s: not the reflector's backoff", n, key, window)
		}
	}
	if total > 60 {
		t.Errorf("%d requests in %s while forbidden", total, window)
	}
	t.Logf("while forbidden, %d requests in %s; refused: %v", total, window, forbidden)

	// The administrator's step. The operator notices through its reflectors' next attempt.
	granted := time.Now()
	e.bindOperatorRoles(t)
	var ready time.Time
	eventually(t, 90*time.Second, func() (bool, string) {
		code := readyz()
		ready = time.Now()
		return code == http.StatusOK, fmt.Sprintf("/readyz = %d", code)
	})
	// Ready within a minute of the last binding (docs/design.md, the access recheck: the
	// reviews' recheck, at most RecheckMax apart, or where reads prove the grant the informers'
	// backoff, notices it), measured from the binding's create in the audit log; the wait above
	// is only patience. The documented minute, not the constant: a longer RecheckMax must fail.
	const documented = time.Minute
	bindings := e.everyonesRequests(t, verb("create"), on("rolebindings"), receivedAfter(granted), carriedOut)
	if len(bindings) != 2 {
		t.Fatalf("the audit log holds %d creates of RoleBindings since the administrator's step, want 2", len(bindings))
	}
	took := ready.Sub(bindings[1].Received)
	t.Logf("ready %s after the roles were bound", took.Round(time.Millisecond))
	if took > documented {
		t.Errorf("ready %s after the roles were bound, more than the access recheck's bound (%s)", took.Round(time.Millisecond), documented)
	}
	e.waitManaged(t, x86Inventory(t), "v1")
	waitConfigCondition(t, e, samplesv1.ImportCredentialsExist, corev1.ConditionTrue)
	e.waitClusterOperator(t, configv1.ConditionTrue, configv1.ConditionFalse, configv1.ConditionFalse, "", "v1")

	// The cluster-version operator takes the samples over: this copy stands down.
	e.setClusterVersion(t, configv1.ClusterVersionCapabilityConsole, standdown.Capability)
	eventually(t, 20*time.Second, func() (bool, string) {
		lease, err := e.kube.CoordinationV1().Leases(controlplane.OperatorNamespace).Get(ctx, operator.LeaseName, metav1.GetOptions{})
		if err != nil {
			return false, err.Error()
		}
		holder := ""
		if lease.Spec.HolderIdentity != nil {
			holder = *lease.Spec.HolderIdentity
		}
		return holder == "" && readyz() == http.StatusServiceUnavailable, fmt.Sprintf("lease held by %q, /readyz %d", holder, readyz())
	})
	stoodDown := time.Now()
	e.waitEvent(t, "StandingDown", "enables the capability openshift-samples")
	e.waitEvent(t, "OperatorConditionNotUpdated", csv)
	if out := logs(); !strings.Contains(out, "Standing down") {
		t.Errorf("the log does not say the operator stands down")
	}
	// It writes nothing any more: a deleted sample stays deleted.
	if err := e.images.ImageV1().ImageStreams("openshift").Delete(ctx, "ruby", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	time.Sleep(3 * time.Second)
	if e.imageStreamExists("ruby") {
		t.Errorf("a copy standing down recreated a sample")
	}
	for _, ev := range describe(e.operatorRequests(t, writes, receivedAfter(stoodDown), not(on(standDownReports...)))) {
		t.Errorf("standing down, the operator wrote %s", ev)
	}
}

// TestOLMCopyStandsDownForTheClusterVersionOperator installs the operator as the cluster-version
// operator does (manifests/, with the samples capability enabled) and, next to it, a copy as OLM
// does (the bundle's RBAC, its roles bound, an OperatorCondition). The OLM copy writes nothing at
// all, does not take the lease the CVO's copy uses, is not ready, and says why on its
// OperatorCondition, in an Event and in its log.
func TestOLMCopyStandsDownForTheClusterVersionOperator(t *testing.T) {
	parallel(t, 0)
	bundleRBAC := installBundleRBACAsOLM(t)
	e := newEnvInstalled(t, func(ctx context.Context, cp *controlplane.ControlPlane) (*controlplane.ApplyResult, error) {
		if _, err := controlplane.ApplyDir(ctx, cp.AdminConfig, filepath.Join(controlplane.RepoRoot(), "manifests")); err != nil {
			return nil, err
		}
		return bundleRBAC(ctx, cp)
	})
	logs := captureKlog(t)
	ctx := context.Background()
	csv := bundleCSV(t).Name
	e.setClusterVersion(t, standdown.Capability, configv1.ClusterVersionCapabilityConsole)
	conditions := e.installOperatorCondition(t, csv)

	opts := defaultOptions()
	opts.OperatorConditionName = csv
	start := time.Now()
	_, readyz := e.startOperatorWithReadiness(t, opts)

	var upgradeable map[string]interface{}
	eventually(t, 30*time.Second, func() (bool, string) {
		oc, err := conditions.Get(ctx, csv, metav1.GetOptions{})
		if err != nil {
			return false, err.Error()
		}
		list, _, _ := unstructured.NestedSlice(oc.Object, "spec", "conditions")
		for _, c := range list {
			if m, ok := c.(map[string]interface{}); ok && m["type"] == "Upgradeable" {
				upgradeable = m
			}
		}
		return upgradeable != nil && upgradeable["status"] == "False" && upgradeable["reason"] == standdown.ReasonManagedByCVO,
			fmt.Sprintf("spec.conditions %v", list)
	})
	if msg, _ := upgradeable["message"].(string); !strings.Contains(msg, "stands down and writes nothing") || !strings.Contains(msg, csv) {
		t.Errorf("Upgradeable message %q does not say why", msg)
	}
	e.waitEvent(t, "StandingDown", "enables the capability openshift-samples")
	time.Sleep(3 * time.Second) // what a copy that does not stand down would have done by now
	if code := readyz(); code != http.StatusServiceUnavailable {
		t.Errorf("/readyz = %d while standing down, want 503", code)
	}
	if out := logs(); !strings.Contains(out, "Standing down") {
		t.Errorf("the log does not say the operator stands down")
	}
	for _, ev := range describe(e.operatorRequests(t, writes, receivedAfter(start), not(on(standDownReports...)))) {
		t.Errorf("standing down, the operator wrote %s", ev)
	}
	if _, err := e.kube.CoordinationV1().Leases(controlplane.OperatorNamespace).Get(ctx, operator.LeaseName, metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("the lease exists (%v): the copy standing down campaigned for it", err)
	}
	if cfg := e.configOrNil(); cfg != nil {
		t.Errorf("the copy standing down created the Config")
	}
}

// waitEvent waits for an Event with this reason whose message contains text, in the operator's
// namespace.
func (e *env) waitEvent(t *testing.T, reason, text string) {
	t.Helper()
	eventually(t, 20*time.Second, func() (bool, string) {
		var reasons []string
		for _, ev := range e.operatorEvents(t) {
			if ev.Reason == reason && strings.Contains(ev.Message, text) {
				return true, ""
			}
			reasons = append(reasons, ev.Reason)
		}
		return false, fmt.Sprintf("no %s event with %q among %v", reason, text, reasons)
	})
}

var (
	crdResource               = schema.GroupVersionResource{Group: "apiextensions.k8s.io", Version: "v1", Resource: "customresourcedefinitions"}
	operatorConditionResource = schema.GroupVersionResource{Group: "operators.coreos.com", Version: "v2", Resource: "operatorconditions"}
)

// operatorConditionCRD stands in for OLM's OperatorCondition CRD: the v2 version the operator
// writes, without its schema (the API server stores what it is given).
const operatorConditionCRD = `
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: operatorconditions.operators.coreos.com
spec:
  group: operators.coreos.com
  scope: Namespaced
  names: {kind: OperatorCondition, listKind: OperatorConditionList, plural: operatorconditions, singular: operatorcondition}
  versions:
  - name: v2
    served: true
    storage: true
    subresources: {status: {}}
    schema:
      openAPIV3Schema: {type: object, x-kubernetes-preserve-unknown-fields: true}
`

// installOperatorCondition does what OLM does for a CSV: an OperatorCondition of the CSV's name
// in its namespace, and a Role and RoleBinding that let the operator's service account get,
// update and patch it.
func (e *env) installOperatorCondition(t *testing.T, csv string) dynamic.ResourceInterface {
	t.Helper()
	ctx := context.Background()
	dyn := dynamic.NewForConfigOrDie(e.cp.AdminConfig)
	crd := &unstructured.Unstructured{}
	if err := yaml.Unmarshal([]byte(operatorConditionCRD), &crd.Object); err != nil {
		t.Fatal(err)
	}
	if _, err := dyn.Resource(crdResource).Create(ctx, crd, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	ns := controlplane.OperatorNamespace
	conditions := dyn.Resource(operatorConditionResource).Namespace(ns)
	oc := &unstructured.Unstructured{Object: map[string]interface{}{
		"apiVersion": "operators.coreos.com/v2", "kind": "OperatorCondition",
		"metadata": map[string]interface{}{"name": csv, "namespace": ns},
		"spec": map[string]interface{}{
			"deployments":     []interface{}{"cluster-samples-operator"},
			"serviceAccounts": []interface{}{controlplane.OperatorServiceAccount},
		},
	}}
	// The CRD needs a moment to be served.
	eventually(t, 30*time.Second, func() (bool, string) {
		_, err := conditions.Create(ctx, oc, metav1.CreateOptions{})
		return err == nil, fmt.Sprintf("creating the OperatorCondition: %v", err)
	})
	if _, err := e.kube.RbacV1().Roles(ns).Create(ctx, &rbacv1.Role{
		ObjectMeta: metav1.ObjectMeta{Name: csv, Namespace: ns},
		Rules: []rbacv1.PolicyRule{{Verbs: []string{"get", "update", "patch"}, APIGroups: []string{"operators.coreos.com"},
			Resources: []string{"operatorconditions"}, ResourceNames: []string{csv}}},
	}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := e.kube.RbacV1().RoleBindings(ns).Create(ctx, &rbacv1.RoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: csv, Namespace: ns},
		RoleRef:    rbacv1.RoleRef{APIGroup: "rbac.authorization.k8s.io", Kind: "Role", Name: csv},
		Subjects:   []rbacv1.Subject{{Kind: "ServiceAccount", Name: controlplane.OperatorServiceAccount, Namespace: ns}},
	}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	return conditions
}

// standDownReports are what an operator standing down still writes: Events, the
// OperatorCondition, and the Lease's release.
var standDownReports = []string{"events", "operatorconditions", "leases"}

// reviewRoundsStarted counts the bursts of reviews (requests less than a second apart; rounds
// are RecheckMin apart) whose first review came in [from, to].
func reviewRoundsStarted(reviews []time.Time, from, to time.Time) int {
	slices.SortFunc(reviews, func(a, b time.Time) int { return a.Compare(b) })
	started := 0
	for i, at := range reviews {
		if i > 0 && at.Sub(reviews[i-1]) < time.Second {
			continue
		}
		if !at.Before(from) && !at.After(to) {
			started++
		}
	}
	return started
}
