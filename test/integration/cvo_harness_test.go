package integration

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	configv1 "github.com/openshift/api/config/v1"
	configclient "github.com/openshift/client-go/config/clientset/versioned"
	appsv1 "k8s.io/api/apps/v1"
	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/uuid"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/discovery/cached/memory"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/restmapper"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"

	"github.com/samples-operator-dev/cluster-samples-operator/pkg/payload"
	"github.com/samples-operator-dev/cluster-samples-operator/test/controlplane"
	"github.com/samples-operator-dev/cluster-samples-operator/test/release"
)

// This file runs the real cluster-version operator (CVO) on a release payload built from
// manifests/ by test/release, against the local control plane. The facts it relies on are in
// the README of the folder OPENSHIFT_BIN_DIR names ("cluster-version-operator on a payload
// directory").

const cvoBinaryName = "cluster-version-operator"

var (
	cvoOnce sync.Once
	cvoPath string
	cvoErr  error
)

// cvoBinary is the real CVO from $OPENSHIFT_BIN_DIR; the test is skipped without it, and fails
// when OPENSHIFT_BIN_DIR is set and lacks it (requireReal).
func cvoBinary(t *testing.T) string {
	t.Helper()
	dir := os.Getenv(controlplane.OpenShiftBinDirEnv)
	requireReal(t, cvoBinaryName, dir != "", "set OPENSHIFT_BIN_DIR to a folder holding cluster-version-operator (or cluster-version-operator.xz) and SHA256SUMS")
	requireReal(t, cvoBinaryName, controlplane.HasOpenShiftBinary(dir, cvoBinaryName), fmt.Sprintf("%s holds neither %s nor %s.xz", dir, cvoBinaryName, cvoBinaryName))
	cvoOnce.Do(func() { cvoPath, cvoErr = controlplane.OpenShiftBinary(dir, cvoBinaryName) })
	if cvoErr != nil {
		t.Fatalf("the cluster-version operator from %s: %v", dir, cvoErr)
	}
	return cvoPath
}

// loopbackProxy is where every HTTP client of the CVO that is not bound for the API server is
// sent: a closed port on loopback, so nothing leaves the machine and every such request fails at
// once.
const loopbackProxy = "http://127.0.0.1:9"

var (
	featureGateResource   = schema.GroupVersionResource{Group: "config.openshift.io", Version: "v1", Resource: "featuregates"}
	clusterVersionVersion = "version"
)

// cvoCluster is a local control plane prepared to hold what the CVO needs from the rest of a
// cluster.
type cvoCluster struct {
	e    *env
	dyn  dynamic.Interface
	cvos int
}

// prepareForCVO makes the env's control plane look enough like a cluster for the CVO: the CRDs
// and namespaces that components before run level 50 create, the config singletons, a
// FeatureGate whose status lists every one of versions, and ClusterVersion version with these
// capabilities (nil: the default set).
func prepareForCVO(t *testing.T, e *env, caps *configv1.ClusterVersionCapabilitiesSpec, versions ...string) *cvoCluster {
	t.Helper()
	ctx := context.Background()
	c := &cvoCluster{e: e, dyn: dynamic.NewForConfigOrDie(e.cp.AdminConfig)}

	crds, err := controlplane.ReadManifests(filepath.Join(controlplane.RepoRoot(), "test", "crds", "cvo", "featuregates.crd.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	crds = append(crds, monitoringStandInCRDs()...)
	crdClient := c.dyn.Resource(schema.GroupVersionResource{Group: "apiextensions.k8s.io", Version: "v1", Resource: "customresourcedefinitions"})
	for _, crd := range crds {
		// With the real openshift-apiserver the control plane already installed FeatureGate.
		if _, err := crdClient.Create(ctx, crd, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
			t.Fatalf("creating CRD %s: %v", crd.GetName(), err)
		}
	}
	for _, ns := range []string{"openshift-cluster-version", "openshift-monitoring"} {
		if _, err := e.kube.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	// The CRDs are served once a list succeeds.
	eventually(t, 30*time.Second, func() (bool, string) {
		for _, gvr := range []schema.GroupVersionResource{featureGateResource, prometheusRuleResource, serviceMonitorResource} {
			if _, err := c.dyn.Resource(gvr).List(ctx, metav1.ListOptions{}); err != nil {
				return false, fmt.Sprintf("%s: %v", gvr.Resource, err)
			}
		}
		return true, ""
	})

	cfg := e.config.ConfigV1()
	cluster := metav1.ObjectMeta{Name: "cluster"}
	proxy, err := cfg.Proxies().Create(ctx, &configv1.Proxy{ObjectMeta: cluster}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	proxy.Status = configv1.ProxyStatus{HTTPProxy: loopbackProxy, HTTPSProxy: loopbackProxy, NoProxy: "127.0.0.1,localhost,::1"}
	if _, err := cfg.Proxies().UpdateStatus(ctx, proxy, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	infra, err := cfg.Infrastructures().Create(ctx, &configv1.Infrastructure{ObjectMeta: cluster}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	infra.Status = configv1.InfrastructureStatus{
		InfrastructureName:     "local",
		Platform:               configv1.NonePlatformType,
		PlatformStatus:         &configv1.PlatformStatus{Type: configv1.NonePlatformType},
		APIServerURL:           e.cp.Host,
		APIServerInternalURL:   e.cp.Host,
		ControlPlaneTopology:   configv1.HighlyAvailableTopologyMode,
		InfrastructureTopology: configv1.HighlyAvailableTopologyMode,
		CPUPartitioning:        configv1.CPUPartitioningNone,
	}
	if _, err := cfg.Infrastructures().UpdateStatus(ctx, infra, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := cfg.Images().Create(ctx, &configv1.Image{ObjectMeta: cluster}, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		t.Fatal(err)
	}
	if _, err := cfg.Networks().Create(ctx, &configv1.Network{ObjectMeta: cluster}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := cfg.APIServers().Create(ctx, &configv1.APIServer{ObjectMeta: cluster}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}

	var gates []any
	for _, v := range versions {
		gates = append(gates, map[string]any{"version": v, "enabled": []any{}, "disabled": []any{}})
	}
	fg := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "config.openshift.io/v1", "kind": "FeatureGate",
		"metadata": map[string]any{"name": "cluster"},
		"spec":     map[string]any{},
	}}
	fg, err = c.dyn.Resource(featureGateResource).Create(ctx, fg, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	fg.Object["status"] = map[string]any{"featureGates": gates}
	if _, err := c.dyn.Resource(featureGateResource).UpdateStatus(ctx, fg, metav1.UpdateOptions{}); err != nil {
		t.Fatalf("FeatureGate status: %v", err)
	}
	c.createClusterVersion(t, caps)
	return c
}

func (c *cvoCluster) createClusterVersion(t *testing.T, caps *configv1.ClusterVersionCapabilitiesSpec) {
	t.Helper()
	cv := &configv1.ClusterVersion{
		ObjectMeta: metav1.ObjectMeta{Name: clusterVersionVersion},
		Spec:       configv1.ClusterVersionSpec{ClusterID: configv1.ClusterID(uuid.NewUUID()), Capabilities: caps},
	}
	if _, err := c.e.config.ConfigV1().ClusterVersions().Create(context.Background(), cv, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
}

var (
	prometheusRuleResource = schema.GroupVersionResource{Group: "monitoring.coreos.com", Version: "v1", Resource: "prometheusrules"}
	serviceMonitorResource = schema.GroupVersionResource{Group: "monitoring.coreos.com", Version: "v1", Resource: "servicemonitors"}
)

// monitoringStandInCRDs serve the monitoring.coreos.com kinds of manifests/ so that the CVO can
// apply them, as the Prometheus operator's CRDs do on a cluster (they are not in a module this
// project can pin). They keep every field: the schema of those manifests is checked elsewhere
// (promtool_test.go, prometheus_test.go), not here.
func monitoringStandInCRDs() []*unstructured.Unstructured {
	var out []*unstructured.Unstructured
	for _, kind := range []struct{ plural, singular, kind, list string }{
		{"prometheusrules", "prometheusrule", "PrometheusRule", "PrometheusRuleList"},
		{"servicemonitors", "servicemonitor", "ServiceMonitor", "ServiceMonitorList"},
	} {
		out = append(out, &unstructured.Unstructured{Object: map[string]any{
			"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
			"metadata": map[string]any{"name": kind.plural + ".monitoring.coreos.com"},
			"spec": map[string]any{
				"group": "monitoring.coreos.com",
				"scope": "Namespaced",
				"names": map[string]any{"plural": kind.plural, "singular": kind.singular, "kind": kind.kind, "listKind": kind.list},
				"versions": []any{map[string]any{
					"name": "v1", "served": true, "storage": true,
					"schema": map[string]any{"openAPIV3Schema": map[string]any{
						"type": "object", "x-kubernetes-preserve-unknown-fields": true,
					}},
				}},
			},
		}})
	}
	return out
}

// cvoProcess is the CVO running on one payload.
type cvoProcess struct {
	cmd     *exec.Cmd
	log     string
	done    chan struct{}
	started time.Time
}

// startCVO runs the CVO on the payload for the cluster profile, as the cluster admin, with every
// HTTP client that does not talk to the API server pointed at a closed loopback port.
func (c *cvoCluster) startCVO(t *testing.T, p *release.Payload, profile string) *cvoProcess {
	t.Helper()
	c.cvos++
	logDir := os.Getenv("CVO_TEST_LOG_DIR") // to keep the CVO's logs
	if logDir == "" {
		logDir = t.TempDir()
	}
	logPath := filepath.Join(logDir, fmt.Sprintf("%s-cvo-%d-%s.log", strings.ReplaceAll(t.Name(), "/", "_"), c.cvos, p.Version))
	logFile, err := os.Create(logPath)
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(cvoBinary(t), "start",
		"--kubeconfig", c.e.cp.AdminKubeconfig,
		"--release-image", p.ReleaseImage,
		"--listen", "",
		"--node-name", "local",
		"--metrics-url", "https://127.0.0.1:1",
		"--use-dns-for-services",
		"--update-service", "http://127.0.0.1:1/graph",
		"-v", "2",
	)
	cmd.Env = append(os.Environ(),
		"PAYLOAD_OVERRIDE="+p.Dir,
		"CLUSTER_PROFILE="+profile,
		"NODE_NAME=local",
		"HTTPS_PROXY="+loopbackProxy, "HTTP_PROXY="+loopbackProxy, "https_proxy="+loopbackProxy, "http_proxy="+loopbackProxy,
		"NO_PROXY=127.0.0.1,localhost,::1", "no_proxy=127.0.0.1,localhost,::1",
	)
	cmd.Stdout, cmd.Stderr = logFile, logFile
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	p2 := &cvoProcess{cmd: cmd, log: logPath, done: make(chan struct{}), started: time.Now()}
	go func() { _ = cmd.Wait(); logFile.Close(); close(p2.done) }()
	t.Cleanup(func() {
		p2.stop(t)
		if t.Failed() {
			data, _ := os.ReadFile(logPath)
			t.Logf("cluster-version-operator log %s (last 6000 bytes):\n%s", filepath.Base(logPath), tail(string(data), 6000))
		}
	})
	return p2
}

// stop ends the CVO as the kubelet does (SIGTERM), so that it releases its lease for the next one.
func (p *cvoProcess) stop(t *testing.T) {
	select {
	case <-p.done:
		return
	default:
	}
	_ = p.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-p.done:
	case <-time.After(30 * time.Second):
		t.Errorf("the cluster-version operator did not stop within 30s of SIGTERM")
		_ = p.cmd.Process.Kill()
		<-p.done
	}
}

func (p *cvoProcess) exited() bool {
	select {
	case <-p.done:
		return true
	default:
		return false
	}
}

// waitCompleted waits until the newest entry of ClusterVersion's history is version, Completed,
// and returns how long that took from the CVO's start.
func (c *cvoCluster) waitCompleted(t *testing.T, p *cvoProcess, version string, timeout time.Duration) time.Duration {
	t.Helper()
	defer c.logSamplesStatusIfFailed(t)
	var reported time.Time
	eventually(t, timeout, func() (bool, string) {
		if p.exited() {
			t.Fatalf("the cluster-version operator exited: %v", p.cmd.ProcessState)
		}
		if reported.IsZero() && c.operatorReported(version) {
			reported = time.Now()
		}
		cv, err := c.e.config.ConfigV1().ClusterVersions().Get(context.Background(), clusterVersionVersion, metav1.GetOptions{})
		if err != nil {
			return false, err.Error()
		}
		if len(cv.Status.History) > 0 && cv.Status.History[0].Version == version && cv.Status.History[0].State == configv1.CompletedUpdate {
			return true, ""
		}
		return false, "ClusterVersion: " + describeClusterVersion(cv)
	})
	took := time.Since(p.started)
	if !reported.IsZero() {
		t.Logf("CVO on %s: operator reported Available at %s %.1fs after the CVO started; Completed %.1fs later", version, version, reported.Sub(p.started).Seconds(), time.Since(reported).Seconds())
	}
	return took
}

// logSamplesStatusIfFailed logs, once a test has failed, what the operator said of itself: the
// conditions of ClusterOperator openshift-samples and of the samples Config, with their
// messages. The ClusterVersion only says that the operator is not available.
func (c *cvoCluster) logSamplesStatusIfFailed(t *testing.T) {
	if !t.Failed() {
		return
	}
	ctx := context.Background()
	if co, err := c.e.config.ConfigV1().ClusterOperators().Get(ctx, "openshift-samples", metav1.GetOptions{}); err != nil {
		t.Logf("ClusterOperator openshift-samples: %v", err)
	} else {
		t.Logf("ClusterOperator openshift-samples: %s", summarizeClusterOperator(co))
		for _, cond := range co.Status.Conditions {
			t.Logf("  %s=%s %s: %s", cond.Type, cond.Status, cond.Reason, cond.Message)
		}
	}
	if cfg := c.e.configOrNil(); cfg == nil {
		t.Log("no samples Config")
	} else {
		for _, cond := range cfg.Status.Conditions {
			t.Logf("Config %s=%s %s: %s", cond.Type, cond.Status, cond.Reason, cond.Message)
		}
	}
}

// operatorReported says whether ClusterOperator openshift-samples is Available at version.
func (c *cvoCluster) operatorReported(version string) bool {
	co, err := c.e.config.ConfigV1().ClusterOperators().Get(context.Background(), "openshift-samples", metav1.GetOptions{})
	if err != nil {
		return false
	}
	available := false
	for _, cond := range co.Status.Conditions {
		if cond.Type == configv1.OperatorAvailable && cond.Status == configv1.ConditionTrue {
			available = true
		}
	}
	for _, v := range co.Status.Versions {
		if v.Name == "operator" && v.Version == version {
			return available
		}
	}
	return false
}

func describeClusterVersion(cv *configv1.ClusterVersion) string {
	var parts []string
	for _, h := range cv.Status.History {
		parts = append(parts, fmt.Sprintf("history %s %s", h.Version, h.State))
	}
	for _, cond := range cv.Status.Conditions {
		if cond.Type == configv1.OperatorProgressing || cond.Type == "Failing" || cond.Type == configv1.OperatorAvailable || cond.Type == "ReleaseAccepted" || cond.Type == configv1.OperatorUpgradeable {
			parts = append(parts, fmt.Sprintf("%s=%s %s: %s", cond.Type, cond.Status, cond.Reason, cond.Message))
		}
	}
	return strings.Join(parts, "; ")
}

// payloadObjects reads the manifests of a built payload.
func payloadObjects(t *testing.T, p *release.Payload) []payload.Object {
	t.Helper()
	objs, err := payload.Read(os.DirFS(filepath.Join(p.Dir, release.ReleaseManifestsDir)))
	if err != nil {
		t.Fatal(err)
	}
	return objs
}

// objectGetter gets the object of any manifest from the API server.
type objectGetter struct {
	dyn    dynamic.Interface
	mapper meta.RESTMapper
}

func newObjectGetter(t *testing.T, cp *controlplane.ControlPlane) *objectGetter {
	disco, err := discovery.NewDiscoveryClientForConfig(cp.AdminConfig)
	if err != nil {
		t.Fatal(err)
	}
	return &objectGetter{dyn: dynamic.NewForConfigOrDie(cp.AdminConfig), mapper: restmapper.NewDeferredDiscoveryRESTMapper(memory.NewMemCacheClient(disco))}
}

func (g *objectGetter) get(o payload.Object) (*unstructured.Unstructured, error) {
	gv, err := schema.ParseGroupVersion(o.APIVersion)
	if err != nil {
		return nil, err
	}
	mapping, err := g.mapper.RESTMapping(schema.GroupKind{Group: gv.Group, Kind: o.Kind}, gv.Version)
	if err != nil {
		return nil, err
	}
	if mapping.Scope.Name() == meta.RESTScopeNameNamespace {
		return g.dyn.Resource(mapping.Resource).Namespace(o.Namespace).Get(context.Background(), o.Name, metav1.GetOptions{})
	}
	return g.dyn.Resource(mapping.Resource).Get(context.Background(), o.Name, metav1.GetOptions{})
}

// fakeKubelet plays the Deployment controller and the kubelet for the operator's Deployment:
// whenever the Deployment's pod template changes it starts the operator binary with the
// template's environment (RELEASE_VERSION, ...), authenticated by a token of the template's
// service account from the TokenRequest API, so that the operator has exactly the RBAC the
// payload gives that account. As a rolling update with the default surge does, it starts the new
// process before it stops the old one, which hands over the leader lease on SIGTERM. It reports
// the rollout in the Deployment's status.
type fakeKubelet struct {
	t       *testing.T
	cp      *controlplane.ControlPlane
	kube    kubernetes.Interface
	bin     string
	probe   string
	dir     string
	cancel  context.CancelFunc
	stopped chan struct{}

	mu       sync.Mutex
	current  *operatorProcess
	template string
	all      []*kubeletPod
	lastErr  string
}

type kubeletPod struct {
	version string
	started time.Time
	proc    *operatorProcess
}

func startFakeKubelet(t *testing.T, e *env) *fakeKubelet {
	t.Helper()
	registry := httptest.NewTLSServer(http.NotFoundHandler())
	t.Cleanup(registry.Close)
	ctx, cancel := context.WithCancel(context.Background())
	k := &fakeKubelet{
		t: t, cp: e.cp, kube: e.kube, bin: operatorBinary(t), probe: strings.TrimPrefix(registry.URL, "https://"),
		dir: t.TempDir(), cancel: cancel, stopped: make(chan struct{}),
	}
	go k.run(ctx)
	t.Cleanup(k.stop)
	return k
}

func (k *fakeKubelet) run(ctx context.Context) {
	defer close(k.stopped)
	tick := time.NewTicker(50 * time.Millisecond)
	defer tick.Stop()
	for {
		if err := k.sync(ctx); err != nil {
			k.mu.Lock()
			k.lastErr = err.Error()
			k.mu.Unlock()
		}
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
	}
}

func (k *fakeKubelet) sync(ctx context.Context) error {
	d, err := k.kube.AppsV1().Deployments(controlplane.OperatorNamespace).Get(ctx, payload.OperatorName, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return nil
	}
	if err != nil {
		return err
	}
	tmpl, err := json.Marshal(d.Spec.Template)
	if err != nil {
		return err
	}
	k.mu.Lock()
	same := string(tmpl) == k.template
	k.mu.Unlock()
	if !same {
		if err := k.roll(ctx, d, string(tmpl)); err != nil {
			return err
		}
	}
	return k.reportRollout(ctx, d)
}

func (k *fakeKubelet) roll(ctx context.Context, d *appsv1.Deployment, tmpl string) error {
	spec := d.Spec.Template.Spec
	if len(spec.Containers) == 0 {
		return fmt.Errorf("the Deployment has no container")
	}
	environ := os.Environ()
	version := ""
	for _, env := range spec.Containers[0].Env {
		if env.ValueFrom == nil {
			environ = append(environ, env.Name+"="+env.Value)
		}
		if env.Name == "RELEASE_VERSION" {
			version = env.Value
		}
	}
	kubeconfig, err := k.serviceAccountKubeconfig(ctx, spec.ServiceAccountName)
	if err != nil {
		return err
	}
	proc, err := launchBinary(k.bin, environ, "operator",
		"--kubeconfig", kubeconfig,
		"--registry-probe-address", k.probe, "--registry-probe-insecure-skip-verify",
		"--metrics-bind-address", "",
		// Fast hand-over of the lease between the old and the new process.
		"--leader-elect-lease-duration", "15s", "--leader-elect-renew-deadline", "10s", "--leader-elect-retry-period", "1s",
	)
	if err != nil {
		return err
	}
	k.mu.Lock()
	old := k.current
	k.current, k.template = proc, tmpl
	k.all = append(k.all, &kubeletPod{version: version, started: time.Now(), proc: proc})
	k.mu.Unlock()
	if old != nil {
		// The new pod is up; the old one gets SIGTERM and its grace period.
		time.Sleep(time.Second)
		old.signal(syscall.SIGTERM)
		select {
		case <-old.done:
		case <-time.After(30 * time.Second):
			old.signal(syscall.SIGKILL)
			<-old.done
		}
	}
	return nil
}

// serviceAccountKubeconfig writes a kubeconfig holding a token of the service account.
func (k *fakeKubelet) serviceAccountKubeconfig(ctx context.Context, sa string) (string, error) {
	if sa == "" {
		sa = "default"
	}
	expiry := int64(3600)
	tr, err := k.kube.CoreV1().ServiceAccounts(controlplane.OperatorNamespace).CreateToken(ctx, sa,
		&authenticationv1.TokenRequest{Spec: authenticationv1.TokenRequestSpec{ExpirationSeconds: &expiry}}, metav1.CreateOptions{})
	if err != nil {
		return "", fmt.Errorf("a token for service account %s: %w", sa, err)
	}
	ca, err := os.ReadFile(k.cp.CAFile)
	if err != nil {
		return "", err
	}
	cfg := clientcmdapi.NewConfig()
	cfg.Clusters["local"] = &clientcmdapi.Cluster{Server: k.cp.Host, CertificateAuthorityData: ca}
	cfg.AuthInfos[sa] = &clientcmdapi.AuthInfo{Token: tr.Status.Token}
	cfg.Contexts["local"] = &clientcmdapi.Context{Cluster: "local", AuthInfo: sa}
	cfg.CurrentContext = "local"
	f, err := os.CreateTemp(k.dir, sa+"-*.kubeconfig")
	if err != nil {
		return "", err
	}
	f.Close()
	return f.Name(), clientcmd.WriteToFile(*cfg, f.Name())
}

// reportRollout writes what the Deployment controller would once the one replica is up.
func (k *fakeKubelet) reportRollout(ctx context.Context, d *appsv1.Deployment) error {
	if d.Status.ObservedGeneration == d.Generation && d.Status.AvailableReplicas == 1 && d.Status.UpdatedReplicas == 1 {
		return nil
	}
	now := metav1.Now()
	d.Status = appsv1.DeploymentStatus{
		ObservedGeneration: d.Generation, Replicas: 1, UpdatedReplicas: 1, ReadyReplicas: 1, AvailableReplicas: 1,
		Conditions: []appsv1.DeploymentCondition{
			{Type: appsv1.DeploymentAvailable, Status: corev1.ConditionTrue, Reason: "MinimumReplicasAvailable", LastUpdateTime: now, LastTransitionTime: now},
			{Type: appsv1.DeploymentProgressing, Status: corev1.ConditionTrue, Reason: "NewReplicaSetAvailable", LastUpdateTime: now, LastTransitionTime: now},
		},
	}
	_, err := k.kube.AppsV1().Deployments(d.Namespace).UpdateStatus(ctx, d, metav1.UpdateOptions{})
	return err
}

// pods lists the versions of the processes started so far, in order.
func (k *fakeKubelet) pods() []string {
	k.mu.Lock()
	defer k.mu.Unlock()
	var out []string
	for _, p := range k.all {
		out = append(out, p.version)
	}
	return out
}

func (k *fakeKubelet) stop() {
	k.cancel()
	<-k.stopped
	k.mu.Lock()
	defer k.mu.Unlock()
	for _, p := range k.all {
		p.proc.signal(syscall.SIGKILL)
		<-p.proc.done
	}
	for _, p := range k.all {
		k.t.Logf("operator process at %s started %s", p.version, p.started.Format("15:04:05.000"))
	}
	if k.t.Failed() {
		if k.lastErr != "" {
			k.t.Logf("fake kubelet: last error: %s", k.lastErr)
		}
		for i, p := range k.all {
			k.t.Logf("operator process %d (RELEASE_VERSION=%s, started %s) output, last 3000 bytes:\n%s", i, p.version, p.started.Format(time.StampMilli), tail(p.proc.output.String(), 3000))
		}
	}
}

// coObservation is one state of ClusterOperator openshift-samples that a watch event or a
// sample showed.
type coObservation struct {
	at     time.Time
	source string
	rv     string
	what   string
}

// coMonitor records every state of ClusterOperator openshift-samples in which it was
// Available=False or Degraded=True: a watch sees every write, and a Get every 100 ms checks what
// a client polling the API server would see.
type coMonitor struct {
	mu       sync.Mutex
	timeline []string // every state the list and the watch showed
	bad      []coObservation
	events   int
	samples  int
	cancel   context.CancelFunc
	wg       sync.WaitGroup
}

func monitorClusterOperator(t *testing.T, config configclient.Interface) *coMonitor {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	m := &coMonitor{cancel: cancel}
	cos := config.ConfigV1().ClusterOperators()
	list, err := cos.List(ctx, metav1.ListOptions{FieldSelector: "metadata.name=openshift-samples"})
	if err != nil {
		t.Fatal(err)
	}
	for i := range list.Items {
		m.check(&list.Items[i], "list")
	}
	rv := list.ResourceVersion
	m.wg.Add(2)
	go func() {
		defer m.wg.Done()
		for ctx.Err() == nil {
			w, err := cos.Watch(ctx, metav1.ListOptions{FieldSelector: "metadata.name=openshift-samples", ResourceVersion: rv, AllowWatchBookmarks: true})
			if err != nil {
				time.Sleep(50 * time.Millisecond)
				continue
			}
			for ev := range w.ResultChan() {
				co, ok := ev.Object.(*configv1.ClusterOperator)
				if !ok {
					continue
				}
				rv = co.ResourceVersion
				if ev.Type == watch.Added || ev.Type == watch.Modified {
					m.mu.Lock()
					m.events++
					m.mu.Unlock()
					m.check(co, "watch")
				}
			}
			w.Stop()
		}
	}()
	go func() {
		defer m.wg.Done()
		tick := time.NewTicker(100 * time.Millisecond)
		defer tick.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-tick.C:
			}
			co, err := cos.Get(ctx, "openshift-samples", metav1.GetOptions{})
			if err != nil {
				continue
			}
			m.mu.Lock()
			m.samples++
			m.mu.Unlock()
			m.check(co, "100ms sample")
		}
	}()
	t.Cleanup(m.stop)
	return m
}

func (m *coMonitor) check(co *configv1.ClusterOperator, source string) {
	if source != "100ms sample" {
		m.mu.Lock()
		m.timeline = append(m.timeline, fmt.Sprintf("%s %s rv %s: %s", time.Now().Format("15:04:05.000"), source, co.ResourceVersion, summarizeClusterOperator(co)))
		m.mu.Unlock()
	}
	var bad []string
	for _, c := range co.Status.Conditions {
		if (c.Type == configv1.OperatorAvailable && c.Status == configv1.ConditionFalse) || (c.Type == configv1.OperatorDegraded && c.Status == configv1.ConditionTrue) {
			bad = append(bad, fmt.Sprintf("%s=%s reason %s: %s", c.Type, c.Status, c.Reason, c.Message))
		}
	}
	if len(bad) == 0 {
		return
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	m.bad = append(m.bad, coObservation{at: time.Now(), source: source, rv: co.ResourceVersion, what: strings.Join(bad, "; ")})
}

func summarizeClusterOperator(co *configv1.ClusterOperator) string {
	var parts []string
	for _, c := range co.Status.Conditions {
		switch c.Type {
		case configv1.OperatorAvailable, configv1.OperatorProgressing, configv1.OperatorDegraded, configv1.OperatorUpgradeable:
			parts = append(parts, fmt.Sprintf("%s=%s(%s)", c.Type, c.Status, c.Reason))
		}
	}
	for _, v := range co.Status.Versions {
		parts = append(parts, v.Name+"="+v.Version)
	}
	return strings.Join(parts, " ")
}

// states is every state of the ClusterOperator that the list and the watch showed.
func (m *coMonitor) states() []string {
	m.mu.Lock()
	defer m.mu.Unlock()
	return slices.Clone(m.timeline)
}

func (m *coMonitor) stop() {
	m.cancel()
	m.wg.Wait()
}

// report returns the bad observations (one line per distinct resourceVersion and source) and
// the numbers of watch events and samples seen.
func (m *coMonitor) report() (bad []string, events, samples int) {
	m.mu.Lock()
	defer m.mu.Unlock()
	seen := map[string]bool{}
	for _, o := range m.bad {
		key := o.source + "/" + o.rv
		if seen[key] {
			continue
		}
		seen[key] = true
		bad = append(bad, fmt.Sprintf("%s %s rv %s: %s", o.at.Format("15:04:05.000"), o.source, o.rv, o.what))
	}
	return bad, m.events, m.samples
}
