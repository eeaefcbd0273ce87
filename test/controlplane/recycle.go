package controlplane

import (
	"context"
	"errors"
	"fmt"
	"os"
	"slices"
	"sort"
	"strings"
	"time"

	apiequality "k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/metadata"
	"k8s.io/client-go/rest"
)

// A control plane costs about 10 CPU-s to start with the real openshift-apiserver, and the
// integration package started about 90 a run: 40 % of its CPU on a saturated 2-core machine.
// Recycling gives a test's control plane to a later test instead, once everything the test
// created is deleted and everything it changed is put back: what the later test gets holds, kind
// by kind, exactly the objects it held when it was first handed out (its baseline), and nothing
// the earlier test did shows in it, its audit logs included. A control plane whose state is not
// all in its storage (a webhook knob, a server stopped) is not recycled; one whose
// openshift-apiserver a test configured otherwise (another allow-list for imports, API groups
// switched off or on) gets the baseline's configuration back.

// baseline is what a started control plane holds before any test: every object of every kind it
// serves that can be listed and deleted.
type baseline struct {
	objects              map[storedObject]*unstructured.Unstructured
	osaAllowedRegistries string
	apis                 optionalAPIs
}

type storedObject struct {
	resource        schema.GroupVersionResource
	namespace, name string
}

func (k storedObject) String() string {
	id := k.resource.Resource
	if k.resource.Group != "" {
		id += "." + k.resource.Group
	}
	if k.namespace != "" {
		return id + " " + k.namespace + "/" + k.name
	}
	return id + " " + k.name
}

// notRecycled are the kinds left out of the baseline and the reset: views of other objects
// (deleting those objects deletes them), events.k8s.io's second name for core Events, and the
// leases kube-apiserver keeps of itself.
var notRecycled = map[string][]string{
	"project.openshift.io": nil, // projects are namespaces
	"events.k8s.io":        nil,
	"image.openshift.io":   {"imagestreamtags", "imagetags", "imagestreamimages"},
}

// rbacViews are left out too when the real openshift-apiserver runs: its roles and bindings of
// authorization.openshift.io are views of RBAC's (and its RoleBindingRestrictions cannot be
// listed: realServerCRDFiles). The stand-ins' RoleBinding CRD stores objects of its own, which
// the reset deletes as any other.
var rbacViews = map[string][]string{authorizationGroup: nil}

func recycledResource(gv schema.GroupVersion, r metav1.APIResource, realServer bool) bool {
	if strings.Contains(r.Name, "/") || !slices.Contains(r.Verbs, "list") || !slices.Contains(r.Verbs, "delete") {
		return false
	}
	skipped, ok := notRecycled[gv.Group]
	if !ok && realServer {
		skipped, ok = rbacViews[gv.Group]
	}
	return !ok || (skipped != nil && !slices.Contains(skipped, r.Name))
}

// selfKept reports whether the object is one kube-apiserver keeps up to date itself.
func selfKept(k storedObject) bool {
	return k.resource.Group == "coordination.k8s.io" && k.namespace == "kube-system"
}

// servedResources lists every kind the control plane serves that a reset handles, at the
// version each group prefers. A group that does not answer (openshift-apiserver stopped) is an
// error: what it holds could not be reset.
func servedResources(disco discovery.DiscoveryInterface, realServer bool) ([]schema.GroupVersionResource, error) {
	lists, err := discovery.ServerPreferredResources(disco)
	if err != nil {
		return nil, err
	}
	var out []schema.GroupVersionResource
	for _, list := range lists {
		gv, err := schema.ParseGroupVersion(list.GroupVersion)
		if err != nil {
			return nil, err
		}
		for _, r := range list.APIResources {
			if recycledResource(gv, r, realServer) {
				out = append(out, gv.WithResource(r.Name))
			}
		}
	}
	return out, nil
}

type recycleClients struct {
	kube  kubernetes.Interface
	dyn   dynamic.Interface
	meta  metadata.Interface
	disco discovery.DiscoveryInterface
	// realServer: the real openshift-apiserver serves the aggregated groups (rbacViews).
	realServer bool
}

func (cp *ControlPlane) recycleClients() (*recycleClients, error) {
	cfg := rest.CopyConfig(cp.harnessConfig)
	// Listing every kind meets deprecated ones (v1 Endpoints): their warnings say nothing here.
	cfg.WarningHandler = rest.NoWarnings{}
	kube, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return nil, err
	}
	dyn, err := dynamic.NewForConfig(cfg)
	if err != nil {
		return nil, err
	}
	meta, err := metadata.NewForConfig(cfg)
	if err != nil {
		return nil, err
	}
	return &recycleClients{kube: kube, dyn: dyn, meta: meta, disco: kube.Discovery(), realServer: cp.RealOpenShiftAPIServer()}, nil
}

// objects lists every object of every kind a reset handles.
func (c *recycleClients) objects(ctx context.Context) (map[storedObject]*unstructured.Unstructured, error) {
	resources, err := c.resources(ctx)
	if err != nil {
		return nil, err
	}
	all := map[storedObject]*unstructured.Unstructured{}
	for _, gvr := range resources {
		list, err := c.dyn.Resource(gvr).List(ctx, metav1.ListOptions{})
		if apierrors.IsNotFound(err) || apierrors.IsMethodNotSupported(err) {
			continue // a CRD deleted since discovery
		}
		if err != nil {
			return nil, fmt.Errorf("listing %s: %w", gvr, err)
		}
		for i := range list.Items {
			obj := &list.Items[i]
			all[storedObject{resource: gvr, namespace: obj.GetNamespace(), name: obj.GetName()}] = obj
		}
	}
	return all, nil
}

// objectsAgainst is objects for a reset: every object is listed by its metadata, and only those
// the baseline does not hold at the same version are read whole. One version of an object is one
// content, and a reset meets few changed objects: the whole lists (the CRDs' schemas above all)
// were about a tenth of the integration test binary's CPU, and as much again of kube-apiserver's
// in encoding them. An object the baseline lacks is only deleted, and one kube-apiserver keeps
// itself is left alone: their metadata is enough.
func (c *recycleClients) objectsAgainst(ctx context.Context, baseline map[storedObject]*unstructured.Unstructured) (map[storedObject]*unstructured.Unstructured, error) {
	resources, err := c.resources(ctx)
	if err != nil {
		return nil, err
	}
	all := map[storedObject]*unstructured.Unstructured{}
	for _, gvr := range resources {
		list, err := c.meta.Resource(gvr).List(ctx, metav1.ListOptions{})
		if apierrors.IsNotFound(err) || apierrors.IsMethodNotSupported(err) {
			continue // a CRD deleted since discovery
		}
		if err != nil {
			return nil, fmt.Errorf("listing %s: %w", gvr, err)
		}
		for i := range list.Items {
			meta := &list.Items[i]
			k := storedObject{resource: gvr, namespace: meta.Namespace, name: meta.Name}
			was, inBaseline := baseline[k]
			switch {
			case !inBaseline || was.GetUID() != meta.UID || selfKept(k):
				all[k] = metadataOnly(meta)
			case was.GetResourceVersion() == meta.ResourceVersion:
				all[k] = was
			default:
				obj, err := c.dyn.Resource(gvr).Namespace(k.namespace).Get(ctx, k.name, metav1.GetOptions{})
				if apierrors.IsNotFound(err) {
					continue // deleted since the list
				}
				if err != nil {
					return nil, fmt.Errorf("reading %s: %w", k, err)
				}
				all[k] = obj
			}
		}
	}
	return all, nil
}

// metadataOnly is an object of which only the metadata a reset reads for a deletion is known.
func metadataOnly(meta *metav1.PartialObjectMetadata) *unstructured.Unstructured {
	obj := &unstructured.Unstructured{Object: map[string]any{}}
	obj.SetNamespace(meta.Namespace)
	obj.SetName(meta.Name)
	obj.SetUID(meta.UID)
	obj.SetResourceVersion(meta.ResourceVersion)
	obj.SetFinalizers(meta.Finalizers)
	return obj
}

// resources are the kinds a reset handles that the control plane serves now.
func (c *recycleClients) resources(ctx context.Context) ([]schema.GroupVersionResource, error) {
	var resources []schema.GroupVersionResource
	// kube-apiserver marks an aggregated group stale until it has read that group's discovery
	// from openshift-apiserver, a moment after the group is first served.
	err := wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, 30*time.Second, true, func(context.Context) (done bool, err error) {
		resources, err = servedResources(c.disco, c.realServer)
		return err == nil, nil
	})
	if err != nil {
		_, err := servedResources(c.disco, c.realServer)
		return nil, err
	}
	return resources, nil
}

// takeBaseline records what the control plane holds now as what every test gets.
func (cp *ControlPlane) takeBaseline(ctx context.Context) error {
	c, err := cp.recycleClients()
	if err != nil {
		return err
	}
	objects, err := c.objects(ctx)
	if err != nil {
		return err
	}
	cp.baseline = &baseline{objects: objects, osaAllowedRegistries: cp.osaAllowedRegistries, apis: cp.apis}
	cp.handedOutWith = cp.servers()
	return nil
}

// notRecyclable marks the control plane as one no later test may get, saying why.
func (cp *ControlPlane) notRecyclable(why string) {
	cp.auditMu.Lock()
	first := cp.unrecyclable == ""
	if first {
		cp.unrecyclable = why
	}
	cp.auditMu.Unlock()
	if first {
		cp.record("not to be reset: %s", why)
	}
}

// recycle brings the control plane back to its baseline for another test, or says why it
// cannot. The test that had it must be over: nothing of it may still write. Either way the
// control plane's history says what the reset did.
func (cp *ControlPlane) recycle(ctx context.Context) error {
	began := time.Now()
	report := &resetReport{}
	err := cp.reset(ctx, report)
	took := time.Since(began).Round(time.Millisecond)
	if err != nil {
		cp.record("not reset (%s): %v; %s", took, err, report)
		return err
	}
	cp.record("reset in %s: %s", took, report)
	return nil
}

// resetReport is what one reset did, for the control plane's history.
type resetReport struct {
	deleted, restored, recreated map[storedObject]bool
	restarted                    string
	caches                       []string      // the cached kinds waited for
	cachesCaughtUp               time.Duration // how long the servers' caches took to see the reset
	late                         []AuditEvent
}

func (r *resetReport) add(set *map[storedObject]bool, k storedObject) {
	if *set == nil {
		*set = map[storedObject]bool{}
	}
	(*set)[k] = true
}

func (r *resetReport) String() string {
	var parts []string
	if r.restarted != "" {
		parts = append(parts, r.restarted)
	}
	for _, s := range []struct {
		what string
		set  map[storedObject]bool
	}{{"deleted", r.deleted}, {"put back", r.restored}, {"created again", r.recreated}} {
		keys := make([]storedObject, 0, len(s.set))
		for k := range s.set {
			keys = append(keys, k)
		}
		if len(keys) > 0 {
			parts = append(parts, s.what+" "+objectSummary(keys, 4))
		}
	}
	if len(parts) == 0 {
		parts = append(parts, "nothing to undo")
	}
	if len(r.caches) > 0 {
		parts = append(parts, fmt.Sprintf("the servers' caches of %s saw it %s later", strings.Join(r.caches, ", "), r.cachesCaughtUp.Round(time.Millisecond)))
	}
	return strings.Join(parts, "; ")
}

func (cp *ControlPlane) reset(ctx context.Context, report *resetReport) error {
	cp.auditMu.Lock()
	why := cp.unrecyclable
	cp.auditMu.Unlock()
	switch {
	case why != "":
		return errors.New(why)
	case cp.baseline == nil:
		return errors.New("no baseline was taken")
	}
	for _, p := range []*process{cp.etcd, cp.apiserver, cp.osa} {
		if p != nil && p.exited() {
			return fmt.Errorf("%s is not running", p.name)
		}
	}
	// Real imports: the test's registries and import controllers go; what they imported is
	// stored, and goes with the rest below.
	cp.ocm.stop(osaStopGrace)
	cp.ocm = nil
	for _, r := range cp.registries {
		r.stop(osaStopGrace)
	}
	cp.registries = nil
	// From here on nothing of the test runs: any request but the reset's and the servers' own
	// comes from something the test left running (lateRequests).
	testEnded := time.Now()
	c, err := cp.recycleClients()
	if err != nil {
		return err
	}
	if err := cp.resetConfiguration(ctx, c, report); err != nil {
		return err
	}
	var left []string
	err = wait.PollUntilContextTimeout(ctx, 200*time.Millisecond, 30*time.Second, true, func(ctx context.Context) (bool, error) {
		now, err := c.objectsAgainst(ctx, cp.baseline.objects)
		if err != nil {
			return false, err
		}
		if left, err = cp.resetOnce(ctx, c, now, report); err != nil {
			return false, err
		}
		return len(left) == 0, nil
	})
	if err != nil {
		if len(left) > 0 {
			err = fmt.Errorf("%w; still differing from the baseline: %s", err, strings.Join(left, ", "))
		}
		// What keeps a reset from converging is most often something of the test still writing:
		// the refusal names it, whether or not the reset got as far as its own look at the log.
		if late, lateErr := cp.lateRequests(testEnded); lateErr == nil && len(late) > 0 {
			report.late = late
			err = &lateRequestsError{test: cp.holder(), late: late, since: testEnded, err: err}
		}
		return err
	}
	converged := time.Now()
	kinds, err := cp.cachesToWaitFor()
	if err != nil {
		return err
	}
	if report.caches, err = cp.waitCachesSeeReset(ctx, c, kinds); err != nil {
		return err
	}
	report.cachesCaughtUp = time.Since(converged)
	// kube-apiserver logs a request it proxies to openshift-apiserver only after the answer has
	// gone back: the last ones may still be on their way.
	time.Sleep(200 * time.Millisecond)
	if report.late, err = cp.lateRequests(testEnded); err != nil {
		return err
	}
	if len(report.late) > 0 {
		return &lateRequestsError{test: cp.holder(), late: report.late, since: testEnded}
	}
	cp.handedOutWith = cp.servers()
	return cp.skipAuditLogs()
}

// resetConfiguration gives openshift-apiserver the baseline's allow-list for imports and serves
// the optional API groups the baseline served (apis.go), before the objects are reset: the
// objects of a group a test switched off come back with it, and are deleted with the rest.
func (cp *ControlPlane) resetConfiguration(ctx context.Context, c *recycleClients, report *resetReport) error {
	restart := cp.osaAllowedRegistries != cp.baseline.osaAllowedRegistries
	if !restart && cp.apis == cp.baseline.apis {
		return nil
	}
	var what []string
	if restart {
		what = append(what, fmt.Sprintf("restarted openshift-apiserver with allowedRegistriesForImport %s (the test left %s)",
			cp.baseline.osaAllowedRegistries, cp.osaAllowedRegistries))
		cp.osaAllowedRegistries = cp.baseline.osaAllowedRegistries
	}
	if cp.apis != cp.baseline.apis {
		how := "switched the API groups back"
		if cp.RealOpenShiftAPIServer() && cp.apis.workloads != cp.baseline.apis.workloads {
			how = "restarted openshift-apiserver"
		}
		what = append(what, fmt.Sprintf("%s: %s (the test left the control plane %s)", how, cp.baseline.apis, cp.apis))
	}
	report.restarted = strings.Join(what, "; ")
	created, err := cp.setAPIs(ctx, c, cp.baseline.apis, restart)
	if err != nil {
		return err
	}
	// An APIService or CRD created again is another object than the baseline's: it becomes the
	// baseline's, as one the reset creates again does (resetOnce). kube-apiserver registers the
	// APIService of a CRD's group a moment after the CRD.
	for _, k := range created {
		if _, ok := cp.baseline.objects[k]; !ok {
			continue
		}
		var obj *unstructured.Unstructured
		err := wait.PollUntilContextTimeout(ctx, 50*time.Millisecond, 30*time.Second, true, func(ctx context.Context) (bool, error) {
			var err error
			obj, err = c.dyn.Resource(k.resource).Get(ctx, k.name, metav1.GetOptions{})
			return err == nil, nil
		})
		if err != nil {
			return fmt.Errorf("reading %s: %w", k, err)
		}
		cp.baseline.objects[k] = obj
	}
	return nil
}

// servers are the server processes running now: one restarted is another process.
func (cp *ControlPlane) servers() []*process {
	return []*process{cp.etcd, cp.apiserver, cp.osa}
}

// cachesToWaitFor names the cached kinds the reset waits for (cachesToProbe), from the requests
// since the control plane was last handed out and the servers running now.
func (cp *ControlPlane) cachesToWaitFor() (map[schema.GroupResource]bool, error) {
	events, err := cp.completedRequests(cp.AuditLogPath)
	if err != nil {
		return nil, err
	}
	return cachesToProbe(events, !slices.Equal(cp.servers(), cp.handedOutWith)), nil
}

// inFlightGrace is how long after a test ended a request of it may still arrive without
// anything of the test running: a client stopped by a cancelled context returns at once, while
// the request it had sent is still on its way (seen: an update of the import emulator's,
// received within a millisecond of the end). Something left running sends again after that.
const inFlightGrace = 250 * time.Millisecond

// lateRequests lists the requests kube-apiserver received once the test was over (inFlightGrace
// after since) that are not the control plane's own (ownRequest). Every client a test has
// reaches the servers through kube-apiserver, so its audit log has them all.
func (cp *ControlPlane) lateRequests(since time.Time) ([]AuditEvent, error) {
	all, err := cp.completedRequests(cp.AuditLogPath)
	if err != nil {
		return nil, err
	}
	over := since.Add(inFlightGrace)
	var late []AuditEvent
	for _, e := range all {
		if !e.Received.Before(over) && !ownRequest(e) {
			late = append(late, e)
		}
	}
	return late, nil
}

// ownRequest reports whether a request is the control plane's own: the reset's and the
// stand-ins' (harnessUser), kube-apiserver's to itself, and openshift-apiserver's, which runs
// with the admin's kubeconfig and names itself in its user agent. The operator's service
// account, the CVO (the admin, as cluster-version-operator), a test's own clients (the admin as
// the test binary) and the users they impersonate are none of these.
func ownRequest(e AuditEvent) bool {
	switch e.User {
	case harnessUser, "system:apiserver":
		return true
	case AdminUser:
		return strings.HasPrefix(e.UserAgent, openShiftAPIServerName+"/")
	}
	return false
}

// lateRequestsError is a reset's refusal for requests that came after the test ended from others
// than the reset: something the test left running. Its test is the one at fault, and fails for it
// (StartForTestWith), beside the control plane going.
type lateRequestsError struct {
	test  string
	late  []AuditEvent
	since time.Time
	// err is what else kept the reset from converging, if anything.
	err error
}

func (e *lateRequestsError) Error() string {
	msg := fmt.Sprintf("after %s ended, requests came from others than the reset: %s", e.test, describeLate(e.late, e.since))
	if e.err != nil {
		msg += "; " + e.err.Error()
	}
	return msg
}

func (e *lateRequestsError) Unwrap() error { return e.err }

// describeLate names who sent the late requests, how many each, and the first of each.
func describeLate(late []AuditEvent, since time.Time) string {
	type sender struct{ user, agent string }
	count := map[sender]int{}
	first := map[sender]AuditEvent{}
	var order []sender
	for _, e := range late {
		agent, _, _ := strings.Cut(e.UserAgent, " ")
		s := sender{e.User, agent}
		if count[s] == 0 {
			order = append(order, s)
			first[s] = e
		}
		count[s]++
	}
	var out []string
	for _, s := range order {
		e := first[s]
		target := e.Resource
		if e.Group != "" {
			target += "." + e.Group
		}
		switch {
		case e.Name == "" && e.Namespace != "":
			target += " in " + e.Namespace
		case e.Namespace != "":
			target += " " + e.Namespace + "/" + e.Name
		case e.Name != "":
			target += " " + e.Name
		case e.Resource == "":
			target = "a path"
		}
		out = append(out, fmt.Sprintf("%d by %s (%s), the first a %s of %s %s after the end",
			count[s], s.user, s.agent, e.Verb, target, e.Received.Sub(since).Round(time.Millisecond)))
	}
	return strings.Join(out, "; ")
}

// resetOnce deletes what is not in the baseline and puts back what differs from it; left names
// what differed, empty once the control plane is back at its baseline.
func (cp *ControlPlane) resetOnce(ctx context.Context, c *recycleClients, now map[storedObject]*unstructured.Unstructured, report *resetReport) (left []string, err error) {
	type namespacedKind struct {
		resource  schema.GroupVersionResource
		namespace string
	}
	keepsSome := map[namespacedKind]bool{}
	for k := range cp.baseline.objects {
		keepsSome[namespacedKind{k.resource, k.namespace}] = true
	}
	collections := map[namespacedKind]bool{}
	var deletes []storedObject
	var namespaces []string
	for k, obj := range now {
		was, inBaseline := cp.baseline.objects[k]
		if inBaseline && was.GetUID() == obj.GetUID() {
			// The same version is the same content, status included.
			if selfKept(k) || was.GetResourceVersion() == obj.GetResourceVersion() {
				continue
			}
			if !sameContent(was, obj) {
				left = append(left, k.String()+" (changed)")
				report.add(&report.restored, k)
				if err := cp.restore(ctx, c, k, was, obj); err != nil {
					return nil, fmt.Errorf("putting back %s: %w", k, err)
				}
				continue
			}
			// The cluster configuration's status is what its operators publish and what the
			// operator reads (images.config's import mode): a test's change of it goes too.
			if k.resource.Group == "config.openshift.io" && !apiequality.Semantic.DeepEqual(was.Object["status"], obj.Object["status"]) {
				left = append(left, k.String()+" (status changed)")
				report.add(&report.restored, k)
				put := obj.DeepCopy()
				if status, ok := was.Object["status"]; ok {
					put.Object["status"] = runtime.DeepCopyJSONValue(status)
				} else {
					delete(put.Object, "status")
				}
				if _, err := c.dyn.Resource(k.resource).Namespace(k.namespace).UpdateStatus(ctx, put, metav1.UpdateOptions{}); err != nil {
					return nil, fmt.Errorf("putting back the status of %s: %w", k, err)
				}
			}
			continue
		}
		left = append(left, k.String())
		report.add(&report.deleted, k)
		if len(obj.GetFinalizers()) > 0 {
			patch := []byte(`{"metadata":{"finalizers":null}}`)
			_, err := c.dyn.Resource(k.resource).Namespace(k.namespace).Patch(ctx, k.name, types.MergePatchType, patch, metav1.PatchOptions{})
			if err != nil && !apierrors.IsNotFound(err) {
				return nil, fmt.Errorf("removing the finalizers of %s: %w", k, err)
			}
		}
		switch {
		case k.resource.Group == "" && k.resource.Resource == "namespaces":
			namespaces = append(namespaces, k.name)
		case k.namespace != "" && !keepsSome[namespacedKind{k.resource, k.namespace}]:
			collections[namespacedKind{k.resource, k.namespace}] = true
		default:
			deletes = append(deletes, k)
		}
	}
	for nk := range collections {
		err := c.dyn.Resource(nk.resource).Namespace(nk.namespace).DeleteCollection(ctx, metav1.DeleteOptions{}, metav1.ListOptions{})
		if err != nil && !apierrors.IsNotFound(err) {
			return nil, fmt.Errorf("deleting %s in %s: %w", nk.resource, nk.namespace, err)
		}
	}
	for _, k := range deletes {
		err := c.dyn.Resource(k.resource).Namespace(k.namespace).Delete(ctx, k.name, metav1.DeleteOptions{})
		if err != nil && !apierrors.IsNotFound(err) {
			return nil, fmt.Errorf("deleting %s: %w", k, err)
		}
	}
	// No namespace controller runs here: once its objects are gone (above, or on the next
	// pass), a namespace is deleted and its finalizer removed by hand.
	for _, name := range namespaces {
		if err := c.kube.CoreV1().Namespaces().Delete(ctx, name, metav1.DeleteOptions{}); err != nil && !apierrors.IsNotFound(err) {
			return nil, fmt.Errorf("deleting namespace %s: %w", name, err)
		}
		ns, err := c.kube.CoreV1().Namespaces().Get(ctx, name, metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			continue
		}
		if err != nil {
			return nil, err
		}
		ns.Spec.Finalizers = nil
		if _, err := c.kube.CoreV1().Namespaces().Finalize(ctx, ns, metav1.UpdateOptions{}); err != nil && !apierrors.IsNotFound(err) && !apierrors.IsConflict(err) {
			return nil, fmt.Errorf("finalizing namespace %s: %w", name, err)
		}
	}
	// A baseline object a test deleted, or replaced by one of its own (deleted above), comes back.
	for k, was := range cp.baseline.objects {
		if obj, ok := now[k]; (ok && obj.GetUID() == was.GetUID()) || selfKept(k) {
			continue
		}
		left = append(left, k.String()+" (missing)")
		if ok := now[k] != nil; ok {
			continue // deleted above; created again on the next pass
		}
		put := was.DeepCopy()
		for _, f := range []string{"resourceVersion", "uid", "creationTimestamp", "managedFields", "generation"} {
			unstructured.RemoveNestedField(put.Object, "metadata", f)
		}
		created, err := c.dyn.Resource(k.resource).Namespace(k.namespace).Create(ctx, put, metav1.CreateOptions{})
		if err != nil {
			return nil, fmt.Errorf("creating %s again: %w", k, err)
		}
		cp.baseline.objects[k] = created
		report.add(&report.recreated, k)
	}
	sort.Strings(left)
	return left, nil
}

// sameContent compares two versions of an object leaving out what the server keeps: its
// version, generation, field managers and status.
func sameContent(a, b *unstructured.Unstructured) bool {
	return apiequality.Semantic.DeepEqual(content(a), content(b))
}

func content(obj *unstructured.Unstructured) map[string]any {
	c := obj.DeepCopy().Object
	delete(c, "status")
	if meta, ok := c["metadata"].(map[string]any); ok {
		for _, f := range []string{"resourceVersion", "generation", "managedFields"} {
			delete(meta, f)
		}
	}
	return c
}

// restore writes the baseline's content over an object a test changed.
func (cp *ControlPlane) restore(ctx context.Context, c *recycleClients, k storedObject, was, now *unstructured.Unstructured) error {
	put := was.DeepCopy()
	put.SetResourceVersion(now.GetResourceVersion())
	put.SetManagedFields(nil)
	_, err := c.dyn.Resource(k.resource).Namespace(k.namespace).Update(ctx, put, metav1.UpdateOptions{})
	return err
}

// skipAuditLogs makes the audit logs read from here on: what the earlier test and the reset
// did stays in the files and out of every count.
func (cp *ControlPlane) skipAuditLogs() error {
	cp.auditMu.Lock()
	defer cp.auditMu.Unlock()
	cp.audit = map[string]*auditTail{}
	for _, path := range []string{cp.AuditLogPath, cp.osaAuditLogPath()} {
		info, err := os.Stat(path)
		if os.IsNotExist(err) {
			continue
		}
		if err != nil {
			return err
		}
		cp.audit[path] = &auditTail{offset: info.Size()}
	}
	return nil
}
