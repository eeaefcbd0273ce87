package integration

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	configv1 "github.com/openshift/api/config/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/util/retry"

	"github.com/samples-operator-dev/cluster-samples-operator/pkg/payload"
	"github.com/samples-operator-dev/cluster-samples-operator/test/controlplane"
	"github.com/samples-operator-dev/cluster-samples-operator/test/payloadcheck"
	"github.com/samples-operator-dev/cluster-samples-operator/test/release"
)

// The release versions of the CVO tests: oldVersion is the upstream operator's release,
// newVersion ours.
const (
	oldVersion = "4.21.0"
	newVersion = "4.21.1"
)

const (
	capabilityAnnotation = "capability.openshift.io/name"
	samplesCapability    = configv1.ClusterVersionCapabilityOpenShiftSamples
)

// cvoTimeout bounds one CVO run. Measured: the CVO's sync succeeds within about a second of the
// operator reporting its version, but it writes Completed into ClusterVersion's history only on
// its next status sync, about 15.6 s after it started (the same with the capability disabled,
// when there is nothing to wait for).
const cvoTimeout = 90 * time.Second

// newCVOEnv is an env whose control plane holds nothing of the operator yet (no manifests
// applied) and is prepared for the CVO.
func newCVOEnv(t *testing.T, caps *configv1.ClusterVersionCapabilitiesSpec, versions ...string) (*env, *cvoCluster) {
	t.Helper()
	cvoBinary(t) // skip before starting anything
	e := newEnvInstalled(t, func(context.Context, *controlplane.ControlPlane) (*controlplane.ApplyResult, error) {
		return &controlplane.ApplyResult{}, nil
	})
	return e, prepareForCVO(t, e, caps, versions...)
}

// buildPayload builds the release of manifests/ at version.
func buildPayload(t *testing.T, version string, previous ...string) *release.Payload {
	t.Helper()
	p, err := release.Build(os.DirFS(filepath.Join(controlplane.RepoRoot(), "manifests")), t.TempDir(), release.Options{Version: version, Previous: previous})
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// TestCVOInstallsThePayload runs the real cluster-version operator on the payload built from
// manifests/: with the capability openshift-samples disabled it applies nothing of the
// capability, and enabling it later installs the operator; on each cluster profile the install
// completes with the operator running as the
// service account the payload creates, with the payload's RBAC (the env fails the test on any
// request of the operator that is forbidden).
func TestCVOInstallsThePayload(t *testing.T) {
	parallelParent(t)
	cvoBinary(t)
	p := buildPayload(t, newVersion)

	t.Run("capability disabled, then enabled", func(t *testing.T) {
		parallel(t, aboutHalfAMinute)
		none := &configv1.ClusterVersionCapabilitiesSpec{BaselineCapabilitySet: configv1.ClusterVersionCapabilitySetNone}
		e, c := newCVOEnv(t, none, newVersion)
		ctx := context.Background()
		ns, err := e.kube.CoreV1().Namespaces().Get(ctx, controlplane.OperatorNamespace, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		kubelet := startFakeKubelet(t, e)
		cvo := c.startCVO(t, p, payload.SelfManagedHA)
		took := c.waitCompleted(t, cvo, newVersion, cvoTimeout)
		t.Logf("capability openshift-samples disabled: ClusterVersion Completed %.1fs after the CVO started", took.Seconds())

		getter := newObjectGetter(t, e.cp)
		var applied []string
		for _, o := range payloadObjects(t, p) {
			got, err := getter.get(o)
			switch {
			case o.Annotations[capabilityAnnotation] == "":
				// Not part of the capability (the Config CRD, copied verbatim from
				// openshift/api, and the in-payload ImageStreams): the CVO applies it anyway.
				if err != nil {
					t.Errorf("%s carries no capability annotation but was not applied: %v", o, err)
				}
				applied = append(applied, o.Kind+" "+o.Name)
			case o.Annotations[capabilityAnnotation] != string(samplesCapability):
				t.Errorf("%s is of capability %q, not %s", o, o.Annotations[capabilityAnnotation], samplesCapability)
			case o.Kind == "Namespace" && o.Name == controlplane.OperatorNamespace:
				// The test control plane creates it before any test: it must be untouched.
				if err != nil || got.GetResourceVersion() != ns.ResourceVersion {
					t.Errorf("%s was written by the CVO with the capability disabled (%v)", o, err)
				}
			case !apierrors.IsNotFound(err):
				t.Errorf("%s exists with the capability disabled (%v)", o, err)
			}
		}
		t.Logf("applied with the capability disabled (no capability annotation): %v", applied)
		if pods := kubelet.pods(); len(pods) != 0 {
			t.Errorf("operator processes started with the capability disabled: %v", pods)
		}

		// The admin enables the capability on the running cluster: the CVO applies the rest.
		start := time.Now()
		err = retry.RetryOnConflict(retry.DefaultRetry, func() error {
			cv, err := e.config.ConfigV1().ClusterVersions().Get(ctx, clusterVersionVersion, metav1.GetOptions{})
			if err != nil {
				return err
			}
			cv.Spec.Capabilities.AdditionalEnabledCapabilities = []configv1.ClusterVersionCapability{samplesCapability}
			_, err = e.config.ConfigV1().ClusterVersions().Update(ctx, cv, metav1.UpdateOptions{})
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
		eventually(t, cvoTimeout, func() (bool, string) {
			cv, err := e.config.ConfigV1().ClusterVersions().Get(ctx, clusterVersionVersion, metav1.GetOptions{})
			if err != nil {
				return false, err.Error()
			}
			return slices.Contains(cv.Status.Capabilities.EnabledCapabilities, samplesCapability) && c.operatorReported(newVersion),
				"capability not enabled or operator not reported: " + describeClusterVersion(cv)
		})
		t.Logf("capability enabled: operator reported %.1fs after the change", time.Since(start).Seconds())
		assertInstalled(t, e, kubelet, p, payload.SelfManagedHA)
		// The CVO reports a sync pass when it ends: one that waited for openshift-samples before
		// the operator reported may still say Failing a moment after; the next one must not.
		eventually(t, cvoTimeout, func() (bool, string) {
			cv, err := e.config.ConfigV1().ClusterVersions().Get(ctx, clusterVersionVersion, metav1.GetOptions{})
			if err != nil {
				return false, err.Error()
			}
			for _, cond := range cv.Status.Conditions {
				if cond.Type == "Failing" && cond.Status != configv1.ConditionFalse {
					return false, fmt.Sprintf("ClusterVersion Failing=%s after enabling the capability: %s", cond.Status, cond.Message)
				}
			}
			return true, ""
		})
	})

	t.Run("self-managed-high-availability", func(t *testing.T) {
		parallel(t, aboutHalfAMinute)
		e, c := newCVOEnv(t, nil, newVersion)
		kubelet := startFakeKubelet(t, e)
		cvo := c.startCVO(t, p, payload.SelfManagedHA)
		took := c.waitCompleted(t, cvo, newVersion, cvoTimeout)
		t.Logf("self-managed-high-availability: install Completed %.1fs after the CVO started", took.Seconds())
		assertInstalled(t, e, kubelet, p, payload.SelfManagedHA)
	})

	t.Run("ibm-cloud-managed", func(t *testing.T) {
		parallel(t, aboutHalfAMinute)
		e, c := newCVOEnv(t, nil, newVersion)
		kubelet := startFakeKubelet(t, e)
		cvo := c.startCVO(t, p, payload.IBMCloudManaged)
		took := c.waitCompleted(t, cvo, newVersion, cvoTimeout)
		t.Logf("ibm-cloud-managed: install Completed %.1fs after the CVO started", took.Seconds())
		assertInstalled(t, e, kubelet, p, payload.IBMCloudManaged)
		d, err := e.kube.AppsV1().Deployments(controlplane.OperatorNamespace).Get(context.Background(), payload.OperatorName, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if ns := d.Spec.Template.Spec.NodeSelector; len(ns) != 0 {
			t.Errorf("the ibm-cloud-managed Deployment selects nodes %v: its control plane has no master nodes", ns)
		}
	})
}

// assertInstalled checks that every object of the payload in the profile is there (and none
// annotated for deletion), the one operator process runs at the payload's version, and the
// samples are installed at that version.
func assertInstalled(t *testing.T, e *env, kubelet *fakeKubelet, p *release.Payload, profile string) {
	t.Helper()
	getter := newObjectGetter(t, e.cp)
	objects := payloadObjects(t, p)
	// The CVO applies the manifests after the ClusterOperator's once the operator reports, so
	// the last of them may still be on their way when it does.
	eventually(t, cvoTimeout, func() (bool, string) {
		var problems []string
		for _, o := range objects {
			if !o.InProfile(profile) {
				continue
			}
			got, err := getter.get(o)
			switch {
			case o.Deleted() && !apierrors.IsNotFound(err):
				problems = append(problems, fmt.Sprintf("%s is annotated for deletion but exists (%v)", o, err))
			case !o.Deleted() && err != nil:
				problems = append(problems, fmt.Sprintf("%s was not applied: %v", o, err))
			case !o.Deleted() && o.Kind == "Deployment":
				if got.GetAnnotations()[payload.ProfileAnnotationPrefix+profile] != "true" {
					problems = append(problems, fmt.Sprintf("the Deployment applied is not %s's: annotations %v", profile, got.GetAnnotations()))
				}
			}
		}
		return len(problems) == 0, strings.Join(problems, "; ")
	})
	if pods := kubelet.pods(); !slices.Equal(pods, []string{p.Version}) {
		t.Errorf("operator processes started at versions %v, want one at %s", pods, p.Version)
	}
	co := e.waitClusterOperator(t, configv1.ConditionTrue, configv1.ConditionFalse, configv1.ConditionFalse, "", p.Version)
	if len(co.Status.RelatedObjects) == 0 {
		t.Errorf("ClusterOperator has no relatedObjects")
	}
	e.waitManaged(t, fullX86Inventory(t), p.Version)
}

// TestCVOUpgradeFromUpstreamPayload installs, with the real CVO, the payload of the upstream
// operator at oldVersion, runs the operator at that version until its samples are in place, then
// updates the cluster to the payload of manifests/ at newVersion: the update completes, every
// object our payload annotates for deletion is gone, the samples move to the new version, and
// ClusterOperator openshift-samples is never Available=False nor Degraded=True on the way.
func TestCVOUpgradeFromUpstreamPayload(t *testing.T) {
	parallel(t, aboutAMinute) // 68 s in CI
	e, c := newCVOEnv(t, nil, oldVersion, newVersion)
	ctx := context.Background()
	giveEditAggregatedRules(t, e.kube)

	upstreamDir := t.TempDir()
	writeUpstreamManifests(t, upstreamDir)
	oldPayload, err := release.Build(os.DirFS(upstreamDir), t.TempDir(), release.Options{Version: oldVersion})
	if err != nil {
		t.Fatal(err)
	}
	newPayload := buildPayload(t, newVersion, oldVersion)

	kubelet := startFakeKubelet(t, e)
	// The upstream payload's Role in openshift lacks the quota and limit range watches this
	// operator does without until the new payload grants them.
	e.optionalForbiddenBefore = time.Now().Add(24 * time.Hour)
	cvo := c.startCVO(t, oldPayload, payload.SelfManagedHA)
	took := c.waitCompleted(t, cvo, oldVersion, cvoTimeout)
	t.Logf("upstream payload %s: install Completed %.1fs after the CVO started", oldVersion, took.Seconds())
	inv := fullX86Inventory(t)
	e.waitManaged(t, inv, oldVersion)
	for _, g := range upstreamLeftovers {
		if err := getObject(ctx, e.kube, g); err != nil {
			t.Fatalf("the upstream payload did not create %s %s/%s: %v", g.kind, g.namespace, g.name, err)
		}
	}

	// The update, as `oc adm upgrade --to-image --force` leads to: the CVO of the old release
	// stops, and the one of the new release starts on its payload.
	cvo.stop(t)
	monitor := monitorClusterOperator(t, e.config)
	err = retry.RetryOnConflict(retry.DefaultRetry, func() error {
		cv, err := e.config.ConfigV1().ClusterVersions().Get(ctx, clusterVersionVersion, metav1.GetOptions{})
		if err != nil {
			return err
		}
		cv.Spec.DesiredUpdate = &configv1.Update{Image: newPayload.ReleaseImage, Version: newVersion, Force: true}
		_, err = e.config.ConfigV1().ClusterVersions().Update(ctx, cv, metav1.UpdateOptions{})
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	cvo = c.startCVO(t, newPayload, payload.SelfManagedHA)
	took = c.waitCompleted(t, cvo, newVersion, cvoTimeout)
	e.optionalForbiddenBefore = time.Now() // the new payload's Role grants them from here on
	// The upstream payload does not let the operator read images: it asks again only after a
	// backoff (30 s, doubling), a few reads at a time, not once per digest at each import.
	// Installing and updating take well under two backoff periods: three rounds at most.
	if refused := e.operatorRequests(t, verb("get"), on("images"), answered(403)); len(refused) > 3*8 {
		t.Errorf("the operator asked for images it may not read %d times under the upstream payload, want at most %d", len(refused), 3*8)
	} else {
		t.Logf("images read under the upstream payload, which refuses them: %d", len(refused))
	}
	t.Logf("update %s -> %s Completed %.1fs after the new CVO started", oldVersion, newVersion, took.Seconds())
	e.waitManaged(t, inv, newVersion)
	t.Logf("samples at %s %.1fs after the new CVO started", newVersion, time.Since(start).Seconds())
	monitor.stop()

	var deleted, wantDeleted []string
	getter := newObjectGetter(t, e.cp)
	for _, o := range payloadObjects(t, newPayload) {
		if !o.Deleted() || !o.InProfile(payload.SelfManagedHA) {
			continue
		}
		deleted = append(deleted, o.Kind+" "+strings.TrimPrefix(o.Namespace+"/"+o.Name, "/"))
		if _, err := getter.get(o); !apierrors.IsNotFound(err) {
			t.Errorf("%s is annotated for deletion but still there after the update (%v)", o, err)
		}
	}
	for _, g := range upstreamLeftovers {
		wantDeleted = append(wantDeleted, g.kind+" "+strings.TrimPrefix(g.namespace+"/"+g.name, "/"))
	}
	if !sameElements(deleted, wantDeleted) {
		t.Errorf("the payload annotates for deletion %v, upstreamLeftovers lists %v", deleted, wantDeleted)
	}
	// Nothing of the upstream payload lingers: each of its objects is either one of ours or
	// one our payload deletes.
	ours := map[string]bool{}
	for _, o := range payloadObjects(t, newPayload) {
		if o.InProfile(payload.SelfManagedHA) {
			ours[o.Kind+" "+o.Namespace+"/"+o.Name] = true
		}
	}
	for _, o := range payloadObjects(t, oldPayload) {
		if !ours[o.Kind+" "+o.Namespace+"/"+o.Name] {
			t.Errorf("%s of the upstream payload is neither in ours nor deleted by it", o)
		}
	}
	if pods := kubelet.pods(); !slices.Equal(pods, []string{oldVersion, newVersion}) {
		t.Errorf("operator processes started at versions %v, want %s then %s", pods, oldVersion, newVersion)
	}

	for _, s := range monitor.states() {
		t.Logf("ClusterOperator openshift-samples: %s", s)
	}
	bad, events, samples := monitor.report()
	t.Logf("ClusterOperator openshift-samples during the update: %d watch events, %d samples at 100ms", events, samples)
	if events == 0 || samples == 0 {
		t.Errorf("the ClusterOperator monitor saw nothing (%d events, %d samples)", events, samples)
	}
	for _, b := range bad {
		t.Errorf("ClusterOperator openshift-samples during the update: %s", b)
	}
}

// upstreamAnnotations are the annotations of every manifest of the upstream operator's payload.
const upstreamAnnotations = `  annotations:
    capability.openshift.io/name: openshift-samples
    include.release.openshift.io/ibm-cloud-managed: "true"
    include.release.openshift.io/self-managed-high-availability: "true"
`

// writeUpstreamManifests writes into dir the manifests/ of the upstream operator's release as
// that operator ships them: the Config CRD, its namespace and service account, broad RBAC (the
// objects upstreamLeftovers lists among them), its Deployment and the serving ConfigMap, and the
// ClusterOperator at the release version. The Deployment runs "the upstream operator", which the
// fake kubelet plays with this repository's binary at the old version.
func writeUpstreamManifests(t *testing.T, dir string) {
	t.Helper()
	crd, err := os.ReadFile(filepath.Join(controlplane.RepoRoot(), "manifests", "00-samples-config.crd.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	a := upstreamAnnotations
	sa := `subjects:
- kind: ServiceAccount
  name: cluster-samples-operator
  namespace: openshift-cluster-samples-operator
`
	files := map[string]string{
		"00-crd.yaml": string(crd),
		"01-namespace.yaml": `apiVersion: v1
kind: Namespace
metadata:
  name: openshift-cluster-samples-operator
` + a + `    openshift.io/node-selector: ""
  labels:
    openshift.io/cluster-monitoring: "true"
`,
		"02-sa.yaml": `apiVersion: v1
kind: ServiceAccount
metadata:
  name: cluster-samples-operator
  namespace: openshift-cluster-samples-operator
` + a,
		"03-rbac.yaml": `apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata:
  name: cluster-samples-operator
` + a + `rules:
- apiGroups: [samples.operator.openshift.io]
  resources: [configs, configs/status, configs/finalizers]
  verbs: ["*"]
- apiGroups: [config.openshift.io]
  resources: [clusteroperators, clusteroperators/status]
  verbs: ["*"]
- apiGroups: [config.openshift.io]
  resources: [networks, apiservers, clusterversions]
  verbs: [get, list, watch]
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRoleBinding
metadata:
  name: cluster-samples-operator
` + a + `roleRef:
  apiGroup: rbac.authorization.k8s.io
  kind: ClusterRole
  name: cluster-samples-operator
` + sa + `---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata:
  name: cluster-samples-operator-imageconfig-reader
` + a + `rules:
- apiGroups: [config.openshift.io]
  resources: [images]
  verbs: [get, list, watch]
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRoleBinding
metadata:
  name: cluster-samples-operator-imageconfig-reader
` + a + `roleRef:
  apiGroup: rbac.authorization.k8s.io
  kind: ClusterRole
  name: cluster-samples-operator-imageconfig-reader
` + sa + `---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata:
  name: cluster-samples-operator-proxy-reader
` + a + `rules:
- apiGroups: [config.openshift.io]
  resources: [proxies]
  verbs: [get, list, watch]
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRoleBinding
metadata:
  name: cluster-samples-operator-proxy-reader
` + a + `roleRef:
  apiGroup: rbac.authorization.k8s.io
  kind: ClusterRole
  name: cluster-samples-operator-proxy-reader
` + sa + `---
apiVersion: rbac.authorization.k8s.io/v1
kind: Role
metadata:
  name: cluster-samples-operator
  namespace: openshift-cluster-samples-operator
` + a + `rules:
- apiGroups: [""]
  resources: [pods, services, endpoints, persistentvolumeclaims, events, configmaps, secrets]
  verbs: ["*"]
- apiGroups: [apps]
  resources: [deployments, daemonsets, replicasets, statefulsets]
  verbs: ["*"]
- apiGroups: [coordination.k8s.io]
  resources: [leases]
  verbs: ["*"]
---
apiVersion: rbac.authorization.k8s.io/v1
kind: RoleBinding
metadata:
  name: cluster-samples-operator
  namespace: openshift-cluster-samples-operator
` + a + `roleRef:
  apiGroup: rbac.authorization.k8s.io
  kind: Role
  name: cluster-samples-operator
` + sa + `---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata:
  name: system:openshift:cluster-samples-operator:cluster-reader
  labels:
    rbac.authorization.k8s.io/aggregate-to-cluster-reader: "true"
` + a + `rules:
- apiGroups: [samples.operator.openshift.io]
  resources: [configs, configs/status]
  verbs: [get, list, watch]
`,
		"04-openshift-rbac.yaml": `apiVersion: rbac.authorization.k8s.io/v1
kind: RoleBinding
metadata:
  name: cluster-samples-operator-openshift-edit
  namespace: openshift
` + a + `roleRef:
  apiGroup: rbac.authorization.k8s.io
  kind: ClusterRole
  name: edit
` + sa,
		"05-openshift-config-rbac.yaml": `apiVersion: rbac.authorization.k8s.io/v1
kind: Role
metadata:
  name: coreos-pull-secret-reader
  namespace: openshift-config
` + a + `rules:
- apiGroups: [""]
  resources: [secrets]
  verbs: [get, list, watch]
---
apiVersion: rbac.authorization.k8s.io/v1
kind: RoleBinding
metadata:
  name: cluster-samples-operator-openshift-config-secret-reader
  namespace: openshift-config
` + a + `roleRef:
  apiGroup: rbac.authorization.k8s.io
  kind: Role
  name: coreos-pull-secret-reader
` + sa,
		"06-operator-config.yaml": `apiVersion: v1
kind: ConfigMap
metadata:
  name: samples-operator-config
  namespace: openshift-cluster-samples-operator
` + a + `data:
  config.yaml: |
    apiVersion: config.openshift.io/v1
    kind: GenericControllerConfig
    servingInfo:
      bindAddress: ":60000"
`,
		"06-operator.yaml": `apiVersion: apps/v1
kind: Deployment
metadata:
  name: cluster-samples-operator
  namespace: openshift-cluster-samples-operator
` + a + `spec:
  replicas: 1
  selector:
    matchLabels:
      name: cluster-samples-operator
  template:
    metadata:
      labels:
        name: cluster-samples-operator
    spec:
      serviceAccountName: cluster-samples-operator
      priorityClassName: system-cluster-critical
      containers:
      - name: cluster-samples-operator
        image: quay.io/openshift/origin-cluster-samples-operator:latest
        command: [cluster-samples-operator]
        args: [--config=/etc/samples-operator/config.yaml]
        env:
        - name: RELEASE_VERSION
          value: "0.0.1-snapshot"
        - name: IMAGE_JENKINS
          value: quay.io/openshift/origin-jenkins:v4.0
        volumeMounts:
        - name: config
          mountPath: /etc/samples-operator
      volumes:
      - name: config
        configMap:
          name: samples-operator-config
`,
		"07-clusteroperator.yaml": `apiVersion: config.openshift.io/v1
kind: ClusterOperator
metadata:
  name: openshift-samples
` + a + `spec: {}
status:
  versions:
  - name: operator
    version: "0.0.1-snapshot"
`,
		"image-references": `kind: ImageStream
apiVersion: image.openshift.io/v1
spec:
  tags:
  - name: cluster-samples-operator
    from:
      kind: DockerImage
      name: quay.io/openshift/origin-cluster-samples-operator:latest
  - name: jenkins
    from:
      kind: DockerImage
      name: quay.io/openshift/origin-jenkins:v4.0
`,
	}
	for name, data := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	// The upstream payload passes the release's payload rules too (not ours: it ships no
	// NetworkPolicy for the metrics port).
	objs, err := payload.Read(os.DirFS(dir))
	if err != nil {
		t.Fatal(err)
	}
	refs, err := payload.ReadImageReferences(os.DirFS(dir))
	if err != nil {
		t.Fatal(err)
	}
	errs := append(payloadcheck.CheckImages(objs, refs), payloadcheck.CheckOperatorDeployments(objs)...)
	errs = append(append(errs, payloadcheck.CheckDeploymentVariants(objs)...), payloadcheck.CheckProfiles(objs)...)
	if len(errs) > 0 {
		t.Fatalf("the upstream-shaped manifests break the payload rules: %v", errs)
	}
}
