package controlplane

import (
	"context"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/dynamic"
)

// A cluster serves, besides image.openshift.io and template.openshift.io, the kinds that the
// sample Templates create: DeploymentConfigs (apps.openshift.io), BuildConfigs
// (build.openshift.io) and Routes (route.openshift.io). Every control plane serves them too
// unless its Options say otherwise, so that an operator that judges a Template by whether the
// cluster serves what it creates sees a normal cluster by default. apps.openshift.io and
// build.openshift.io go together, as a cluster whose DeploymentConfig and Build capabilities
// are off lacks both; Routes go on their own.
//
// What serving them costs, measured on this project's two cores while other work ran too
// (medians; start is Start's call until it returns; RSS and CPU of the process 10 s later, under
// the harness's GOGC=off GOMEMLIMIT=512MiB (process.go), 5 starts of each; in brackets the RSS
// with Go's default collector, 3 starts of each):
//
//	                              real openshift-apiserver                  stand-ins
//	                              start   its RSS          its CPU          start   kube-apiserver CPU (RSS)
//	all on (the default)          9.3 s   431 (243) MiB    1.2 s            6.6 s   3.7 s (358 MiB)
//	WorkloadAPIsOff               9.3 s   358 (207) MiB    1.1 s            6.3 s   2.9 s (330 MiB)
//	WorkloadAPIsOff, RouteAPIOff  8.7 s   357 (219) MiB    1.0 s            6.3 s   3.0 s (328 MiB)
//
// apps and build cost openshift-apiserver about 73 MiB (36 MiB with the default collector) and
// 0.2 to 0.5 s of CPU; their CRDs cost the stand-ins' kube-apiserver about 0.7 s of CPU and
// 30 MiB. The starts differ by less than their noise here (5.5 to 37 s seen for the same
// options); kube-apiserver's RSS under the harness's settings sits at its memory limit whatever
// is served (534 to 585 MiB, on both backends), so it is not shown. Switching while running:
// SetWorkloadAPIs took 3.0 s on and 2.9 s off with the real server (a restart), 0.7 and 0.5 s
// with the stand-ins; SetRouteAPI 0.16 and 0.08 s; a reset that serves all three again 4 to
// 4.6 s and 1 to 1.4 s.
//
// openshift-apiserver serves route.openshift.io whatever its configuration (only apps and build
// can be switched off), so RouteAPIOff there only leaves its APIService unregistered.
//
// Two more kinds the sample Templates create are served by every control plane and cannot be
// switched off, as no cluster goes without them: the jenkins Templates' RoleBinding of
// authorization.openshift.io, and the ServiceMonitor of monitoring.coreos.com that their
// "-monitored" variants create (and the operator's manifests ship). The real openshift-apiserver
// serves authorization.openshift.io once its APIService v1.authorization.openshift.io is
// registered like the others': its RoleBindings are RBAC RoleBindings, which the reset handles as
// such (recycle.go, rbacViews); the RoleBindingRestriction CRD of the same group is then not
// installed (realServerCRDFiles). The stand-ins serve RoleBindings with a CRD that hack/crdgen
// derives from openshift/api's authorization/v1 type, which stores them apart from RBAC and
// refuses a name that is no DNS subdomain (the jenkins Templates' ${JENKINS_SERVICE_NAME}_edit,
// which the real server takes). Both backends serve ServiceMonitors with the CRD of
// test/crds/monitoring (hack/crdgen), whose spec keeps every field. What they cost, measured as
// above but on a quiet machine (load 1 to 4), 4 starts of each, medians, before and after: the
// real server's start 7.9 s and 8.3 s (7.5 s in a later series, with Start also waiting for a
// complete discovery: waitDiscoveryComplete), its RSS 433 and 432 to 435 MiB and its CPU 1.1 and
// 0.9 to 1.1 s (it served the group before, only unregistered), kube-apiserver's CPU 2.6 and 2.3
// to 2.75 s; the stand-ins' start 6.7 and 6.0 s, kube-apiserver's CPU 2.95 and 2.9 s. All of it
// is within the noise of the same series.

// optionalAPIs says which of the groups a control plane may go without it serves.
type optionalAPIs struct {
	workloads bool // apps.openshift.io and build.openshift.io
	routes    bool // route.openshift.io
}

const (
	appsGroup  = "apps.openshift.io"
	buildGroup = "build.openshift.io"
	routeGroup = "route.openshift.io"
	// authorizationGroup is served by every control plane, as by every cluster: it is no
	// capability that a cluster may go without.
	authorizationGroup = "authorization.openshift.io"
)

// groups are the optional groups served.
func (a optionalAPIs) groups() []string {
	var out []string
	if a.workloads {
		out = append(out, appsGroup, buildGroup)
	}
	if a.routes {
		out = append(out, routeGroup)
	}
	return out
}

func (a optionalAPIs) String() string {
	if g := a.groups(); len(g) > 0 {
		return "serving " + strings.Join(g, ", ")
	}
	return "serving none of " + strings.Join(optionalAPIs{true, true}.groups(), ", ")
}

// optionalKinds are the kinds of each optional group that discovery shows when it is served.
var optionalKinds = map[string]schema.GroupVersionResource{
	appsGroup:  deploymentConfigResource,
	buildGroup: buildConfigResource,
	routeGroup: routeResource,
}

// optionalCRDFiles are the stand-ins' CRD files of each optional group (test/crds/aggregated).
var optionalCRDFiles = map[string]string{
	appsGroup:  "deploymentconfigs.crd.yaml",
	buildGroup: "buildconfigs.crd.yaml",
	routeGroup: "routes.crd.yaml",
}

// withoutOffCRDs drops from files the stand-ins' CRDs of the optional groups not served.
func (a optionalAPIs) withoutOffCRDs(files []string) []string {
	served := a.groups()
	return slices.DeleteFunc(files, func(f string) bool {
		for group, file := range optionalCRDFiles {
			if filepath.Base(f) == file && !slices.Contains(served, group) {
				return true
			}
		}
		return false
	})
}

// SetWorkloadAPIs switches apps.openshift.io and build.openshift.io (DeploymentConfigs and
// BuildConfigs) on or off, and returns once discovery through kube-apiserver shows it: with the
// real openshift-apiserver by restarting it with the groups on or off (apiServers.perGroupOptions)
// and registering or deleting their APIServices, on, once those are Available and the server
// takes a create of each kind (about 3 s); with the stand-ins by creating or deleting their
// CRDs (deleting a CRD deletes its objects; the real server keeps them in storage and serves
// them again once on). On a cluster, a capability once enabled cannot be disabled: switching off
// shows what a cluster installed without the DeploymentConfig and Build capabilities serves.
// It does nothing when the groups already are as asked. A control plane handed on to a later
// test (recycle.go) is given the groups back.
func (cp *ControlPlane) SetWorkloadAPIs(ctx context.Context, on bool) error {
	want := cp.apis
	want.workloads = on
	return cp.switchAPIs(ctx, want)
}

// SetRouteAPI switches route.openshift.io (Routes) on or off, and returns once discovery shows
// it: with the real openshift-apiserver, which always serves the group, by registering or
// deleting its APIService (no restart); with the stand-ins by creating or deleting the Route CRD.
// Like SetWorkloadAPIs, it does nothing when the group already is as asked.
func (cp *ControlPlane) SetRouteAPI(ctx context.Context, on bool) error {
	want := cp.apis
	want.routes = on
	return cp.switchAPIs(ctx, want)
}

// ServesWorkloadAPIs and ServesRouteAPI report whether the groups are switched on.
func (cp *ControlPlane) ServesWorkloadAPIs() bool { return cp.apis.workloads }

// ServesRouteAPI: see ServesWorkloadAPIs.
func (cp *ControlPlane) ServesRouteAPI() bool { return cp.apis.routes }

func (cp *ControlPlane) switchAPIs(ctx context.Context, want optionalAPIs) error {
	if want == cp.apis {
		return nil
	}
	c, err := cp.recycleClients()
	if err != nil {
		return err
	}
	began := time.Now()
	was := cp.apis
	if _, err := cp.setAPIs(ctx, c, want, false); err != nil {
		return err
	}
	cp.record("the test switched from %s to %s (%s)", was, want, time.Since(began).Round(time.Millisecond))
	return nil
}

// setAPIs serves the optional groups want asks for, restarting the real openshift-apiserver when
// its configuration changes or restart says so, and waits until discovery shows them. It
// returns the APIServices and CRDs created (by it, or by kube-apiserver for a CRD's group), whose
// new identity the baseline must take (recycle.go).
func (cp *ControlPlane) setAPIs(ctx context.Context, c *recycleClients, want optionalAPIs, restart bool) (created []storedObject, err error) {
	was := cp.apis
	var on, off []string
	for _, g := range want.groups() {
		if !slices.Contains(was.groups(), g) {
			on = append(on, g)
		}
	}
	for _, g := range was.groups() {
		if !slices.Contains(want.groups(), g) {
			off = append(off, g)
		}
	}
	if cp.RealOpenShiftAPIServer() {
		// APIServices go first: kube-apiserver stops routing to groups the server is about to
		// stop serving, and discovery never shows one unavailable.
		for _, g := range off {
			if err := deleteAndWait(ctx, c.dyn.Resource(apiServiceResource), "v1."+g); err != nil {
				return nil, fmt.Errorf("deleting APIService v1.%s: %w", g, err)
			}
		}
		cp.apis = want
		if restart || was.workloads != want.workloads {
			if err := cp.restartOpenShiftAPIServer(ctx); err != nil {
				return nil, err
			}
		}
		for _, g := range on {
			if err := cp.registerAPIService(ctx, c.dyn, g); err != nil {
				return nil, err
			}
			created = append(created, storedObject{resource: apiServiceResource, name: "v1." + g})
		}
		if err := waitAPIServicesAvailable(ctx, c.dyn, cp.aggregatedGroups()); err != nil {
			return nil, err
		}
		if err := waitAggregatedKindsServed(ctx, c.dyn, cp.aggregatedGroups()); err != nil {
			return nil, err
		}
		if err := waitDiscoveryComplete(ctx, c.disco); err != nil {
			return nil, err
		}
	} else {
		for _, g := range off {
			obj, err := ReadManifests(filepath.Join(RepoRoot(), "test", "crds", "aggregated", optionalCRDFiles[g]))
			if err != nil {
				return nil, err
			}
			if err := deleteAndWait(ctx, c.dyn.Resource(crdResource), obj[0].GetName()); err != nil {
				return nil, fmt.Errorf("deleting CRD %s: %w", obj[0].GetName(), err)
			}
		}
		var files []string
		for _, g := range on {
			files = append(files, filepath.Join(RepoRoot(), "test", "crds", "aggregated", optionalCRDFiles[g]))
		}
		names, err := installCRDs(ctx, c.dyn, files)
		if err != nil {
			return nil, err
		}
		for _, name := range names {
			created = append(created, storedObject{resource: crdResource, name: name})
		}
		// kube-apiserver registers a local APIService for each group that CRDs serve.
		for _, g := range on {
			created = append(created, storedObject{resource: apiServiceResource, name: "v1." + g})
		}
		cp.apis = want
	}
	return created, waitDiscoveryShows(ctx, c.disco, want)
}

// deleteAndWait deletes the cluster-scoped object name and waits until it is gone.
func deleteAndWait(ctx context.Context, client dynamic.NamespaceableResourceInterface, name string) error {
	if err := client.Delete(ctx, name, metav1.DeleteOptions{}); err != nil && !apierrors.IsNotFound(err) {
		return err
	}
	return wait.PollUntilContextTimeout(ctx, 50*time.Millisecond, 60*time.Second, true, func(ctx context.Context) (bool, error) {
		_, err := client.Get(ctx, name, metav1.GetOptions{})
		return apierrors.IsNotFound(err), nil
	})
}

// waitDiscoveryShows waits until kube-apiserver's discovery lists the kind of each optional
// group served and none of those not served. Discovery of an aggregated group comes from
// openshift-apiserver a moment after its APIService is Available; until then the group is
// reported failed, which counts as not shown yet.
func waitDiscoveryShows(ctx context.Context, disco discovery.DiscoveryInterface, want optionalAPIs) error {
	var last string
	err := wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, 60*time.Second, true, func(context.Context) (bool, error) {
		_, lists, err := disco.ServerGroupsAndResources()
		if err != nil && !discovery.IsGroupDiscoveryFailedError(err) {
			last = err.Error()
			return false, nil
		}
		shown := map[string]bool{}
		for _, list := range lists {
			gv, perr := schema.ParseGroupVersion(list.GroupVersion)
			if perr != nil {
				continue
			}
			for _, r := range list.APIResources {
				if kind, ok := optionalKinds[gv.Group]; ok && gv.Version == kind.Version && r.Name == kind.Resource {
					shown[gv.Group] = true
				}
			}
		}
		for g := range optionalKinds {
			if served := slices.Contains(want.groups(), g); served != shown[g] {
				last = fmt.Sprintf("discovery shows %s: %v, want %v (%v)", g, shown[g], served, err)
				return false, nil
			}
		}
		return true, nil
	})
	if err != nil {
		return fmt.Errorf("waiting for discovery %s: %s (%w)", want, last, err)
	}
	return nil
}
