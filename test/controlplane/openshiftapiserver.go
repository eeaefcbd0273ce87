package controlplane

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	configv1 "github.com/openshift/api/config/v1"
	configclient "github.com/openshift/client-go/config/clientset/versioned"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
)

// The real openshift-apiserver, aggregated behind the test kube-apiserver, replaces the CRDs of
// test/crds/aggregated and the webhooks of test/apiserverhooks when OPENSHIFT_BIN_DIR names a
// folder holding it (see /work/shared/openshift/README.md for how it is built and what it needs;
// apps.openshift.io, build.openshift.io and route.openshift.io are served by default, and
// authorization.openshift.io always: see apis.go for what they cost).

// OpenShiftBinDirEnv names the folder holding openshift-apiserver (plain, or compressed as
// openshift-apiserver.xz, optionally with a SHA256SUMS of the plain binaries).
const OpenShiftBinDirEnv = "OPENSHIFT_BIN_DIR"

const (
	openShiftAPIServerName      = "openshift-apiserver"
	openShiftAPIServerNamespace = "openshift-apiserver"
	// openShiftAPIServerHost is the name kube-apiserver checks the server's certificate against:
	// the Service openshift-apiserver/api.
	openShiftAPIServerHost = "api." + openShiftAPIServerNamespace + ".svc"
	frontProxyClientName   = "front-proxy-client"
)

// openShiftAPIServerNamespaces are the namespaces the real server expects besides Namespaces.
var openShiftAPIServerNamespaces = []string{openShiftAPIServerNamespace, "openshift-infra"}

// aggregatedGroups are the groups the real server serves, each registered as an APIService
// v1.<group>: image.openshift.io and template.openshift.io for the operator,
// authorization.openshift.io, whose RoleBindings the jenkins sample Templates create (the server
// keeps none of its own: each is an RBAC RoleBinding, read and written through kube-apiserver),
// and unless the Options or the test switched them off (apis.go) apps.openshift.io,
// build.openshift.io and route.openshift.io, whose kinds the sample Templates create (no build,
// deployment or route controller runs: they are stored and served, nothing acts on them). Each
// has a stand-in CRD in test/crds/aggregated; no CRD of these groups may be installed with the
// real server, or it would shadow the APIService (see realServerCRDFiles).
func (cp *ControlPlane) aggregatedGroups() []string {
	return append([]string{"image.openshift.io", "template.openshift.io", authorizationGroup}, cp.apis.groups()...)
}

// workloadGroupsOff switches apps.openshift.io and build.openshift.io off, the only two groups
// apiServers.perGroupOptions can (Options.WorkloadAPIsOff, SetWorkloadAPIs).
const workloadGroupsOff = `apiServers:
  perGroupOptions:
  - name: apps.openshift.io
    disabledVersions: [v1]
  - name: build.openshift.io
    disabledVersions: [v1]
`

// requestHeaderFlags are the front-proxy settings kube-apiserver and openshift-apiserver share,
// without the client CA file.
var requestHeaderFlags = []string{
	"--requestheader-allowed-names=" + frontProxyClientName,
	"--requestheader-extra-headers-prefix=X-Remote-Extra-",
	"--requestheader-group-headers=X-Remote-Group",
	"--requestheader-username-headers=X-Remote-User",
}

// OpenShiftBinary returns the path of a runnable copy of the real OpenShift server name
// (openshift-apiserver, openshift-controller-manager, cluster-version-operator) from dir, or ""
// when dir is empty. dir holds it plain or compressed as name.xz, with an optional SHA256SUMS
// of the plain binaries that both must match; a compressed binary is decompressed once into
// <repo>/_output/openshift and reused while its checksum is right.
func OpenShiftBinary(dir, name string) (string, error) {
	if dir == "" {
		return "", nil
	}
	sums, err := readSHA256SUMS(filepath.Join(dir, "SHA256SUMS"))
	if err != nil {
		return "", err
	}
	want := sums[name]
	plain := filepath.Join(dir, name)
	if _, err := os.Stat(plain); err == nil {
		if err := verifySHA256(plain, want); err != nil {
			return "", err
		}
		return plain, nil
	}
	compressed := plain + ".xz"
	if _, err := os.Stat(compressed); err != nil {
		return "", fmt.Errorf("%s=%s holds neither %s nor %s.xz", OpenShiftBinDirEnv, dir, name, name)
	}
	if want == "" && sums != nil {
		return "", fmt.Errorf("%s lists no checksum for %s", filepath.Join(dir, "SHA256SUMS"), name)
	}
	return decompressOnce(compressed, filepath.Join(RepoRoot(), "_output", "openshift", name), want)
}

// HasOpenShiftBinary reports whether dir holds name, plain or compressed.
func HasOpenShiftBinary(dir, name string) bool {
	if dir == "" {
		return false
	}
	for _, f := range []string{name, name + ".xz"} {
		if _, err := os.Stat(filepath.Join(dir, f)); err == nil {
			return true
		}
	}
	return false
}

func readSHA256SUMS(path string) (map[string]string, error) {
	data, err := os.ReadFile(path)
	if os.IsNotExist(err) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	sums := map[string]string{}
	for _, line := range strings.Split(string(data), "\n") {
		fields := strings.Fields(line)
		if len(fields) == 2 {
			sums[strings.TrimPrefix(fields[1], "*")] = strings.ToLower(fields[0])
		}
	}
	return sums, nil
}

// verified caches the checksums this process already checked: each test starts a control plane.
var verified sync.Map // path -> size and modification time it was verified at

type fileStamp struct {
	size    int64
	modTime time.Time
}

func stamp(path string) (fileStamp, error) {
	fi, err := os.Stat(path)
	if err != nil {
		return fileStamp{}, err
	}
	return fileStamp{fi.Size(), fi.ModTime()}, nil
}

// verifySHA256 fails when path's checksum is not want; an empty want verifies nothing.
func verifySHA256(path, want string) error {
	if want == "" {
		return nil
	}
	st, err := stamp(path)
	if err != nil {
		return err
	}
	if v, ok := verified.Load(path); ok && v.(fileStamp) == st {
		return nil
	}
	got, err := fileSHA256(path)
	if err != nil {
		return err
	}
	if got != want {
		return fmt.Errorf("%s has SHA-256 %s, SHA256SUMS says %s", path, got, want)
	}
	verified.Store(path, st)
	return nil
}

func fileSHA256(path string) (string, error) {
	f, err := os.Open(path)
	if err != nil {
		return "", err
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return "", err
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

// decompressOnce makes dst the decompressed src. An existing dst is reused when it has the right
// checksum (without a checksum, when it is newer than src). Several test processes may get here
// at once: each writes a file of its own next to dst and renames it over dst, so none ever runs
// a half-written binary.
func decompressOnce(src, dst, want string) (string, error) {
	if fi, err := os.Stat(dst); err == nil {
		if want != "" {
			if verifySHA256(dst, want) == nil {
				return dst, nil
			}
		} else if srcInfo, err := os.Stat(src); err == nil && fi.ModTime().After(srcInfo.ModTime()) {
			return dst, nil
		}
	}
	if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
		return "", err
	}
	tmp, err := os.CreateTemp(filepath.Dir(dst), "."+filepath.Base(dst)+".*")
	if err != nil {
		return "", err
	}
	defer os.Remove(tmp.Name()) // nothing left behind if the rename does not happen
	cmd := exec.Command("xz", "-dc", src)
	cmd.Stdout = tmp
	var stderr strings.Builder
	cmd.Stderr = &stderr
	err = cmd.Run()
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return "", fmt.Errorf("decompressing %s: %v %s", src, err, stderr.String())
	}
	if err := verifySHA256(tmp.Name(), want); err != nil {
		return "", err
	}
	if err := os.Chmod(tmp.Name(), 0o755); err != nil {
		return "", err
	}
	if err := os.Rename(tmp.Name(), dst); err != nil {
		return "", err
	}
	verified.Delete(tmp.Name())
	return dst, verifySHA256(dst, want)
}

// openShiftAPIServerConfig is the server's config file: serving on a loopback port with a
// certificate for the Service's name, storage in the test etcd (plain HTTP: the etcd TLS
// arguments are set empty, or defaulting fills in paths), the admin kubeconfig for its clients
// (osaClientKubeconfig), and apps.openshift.io and build.openshift.io switched off when they are
// not served (see aggregatedGroups).
func (cp *ControlPlane) openShiftAPIServerConfig() string {
	groupsOff := workloadGroupsOff
	if cp.apis.workloads {
		groupsOff = ""
	}
	return fmt.Sprintf(`apiVersion: openshiftcontrolplane.config.openshift.io/v1
kind: OpenShiftAPIServerConfig
servingInfo:
  bindAddress: 127.0.0.1:%d
  bindNetwork: tcp4
  certFile: %s
  keyFile: %s
storageConfig:
  urls: [%q]
  storagePrefix: %s
kubeClientConfig:
  kubeConfig: %s
imagePolicyConfig:
  internalRegistryHostname: image-registry.openshift-image-registry.svc:5000
  allowedRegistriesForImport: %s
apiServerArguments:
  etcd-cafile: [""]
  etcd-certfile: [""]
  etcd-keyfile: [""]
  audit-policy-file: [%q]
  audit-log-path: [%q]
  audit-log-format: [json]
  audit-log-mode: [blocking]
  audit-log-maxsize: ["100000"]
%s`, cp.osaPort, cp.osaCertFile, cp.osaKeyFile, cp.etcdURL, osaStoragePrefix, cp.osaClientKubeconfig(), cp.osaAllowedRegistries,
		filepath.Join(cp.Dir, "audit-policy.yaml"), cp.osaAuditLogPath(), groupsOff)
}

func (cp *ControlPlane) osaClientKubeconfig() string {
	if cp.osaKubeconfig != "" {
		return cp.osaKubeconfig
	}
	return cp.AdminKubeconfig
}

// osaAuditLogPath is openshift-apiserver's own audit log: unlike kube-apiserver's, it names the
// object of a create (the server decodes the body), which AuditEvents uses.
func (cp *ControlPlane) osaAuditLogPath() string {
	return filepath.Join(cp.Dir, "openshift-apiserver-audit.log")
}

// openShiftAPIServerEnv keeps every registry call of the server on loopback: the proxy is a
// closed port, so an import fails at once and no name is ever resolved.
func openShiftAPIServerEnv() []string {
	var env []string
	for _, kv := range os.Environ() {
		name, _, _ := strings.Cut(kv, "=")
		switch strings.ToUpper(name) {
		case "HTTP_PROXY", "HTTPS_PROXY", "NO_PROXY", "ALL_PROXY", "SSL_CERT_FILE":
			continue
		}
		env = append(env, kv)
	}
	const proxy = "http://127.0.0.1:9"
	const noProxy = "127.0.0.1,localhost,::1"
	return append(env, "HTTP_PROXY="+proxy, "HTTPS_PROXY="+proxy, "http_proxy="+proxy, "https_proxy="+proxy,
		"NO_PROXY="+noProxy, "no_proxy="+noProxy)
}

func (cp *ControlPlane) startOpenShiftAPIServer(ctx context.Context) error {
	if cp.osaAllowedRegistries == "" {
		cp.osaAllowedRegistries = "null"
	}
	configFile := filepath.Join(cp.Dir, "openshift-apiserver.yaml")
	if err := os.WriteFile(configFile, []byte(cp.openShiftAPIServerConfig()), 0o600); err != nil {
		return err
	}
	args := append([]string{
		"start",
		"--config=" + configFile,
		"--authentication-kubeconfig=" + cp.AdminKubeconfig,
		"--authorization-kubeconfig=" + cp.AdminKubeconfig,
		"--authentication-skip-lookup",
		"--requestheader-client-ca-file=" + cp.frontProxyCAFile,
	}, requestHeaderFlags...)
	var err error
	// The registries' CA, as a cluster's additionalTrustedCA reaches the server: its imports
	// verify a registry started with TLS (StartTLSRegistry) against it. Go reads the file in
	// place of the system bundle; the system's certificate directories still count.
	env := append(openShiftAPIServerEnv(), "SSL_CERT_FILE="+cp.RegistryCAFile)
	cp.osa, err = startProcessEnv(openShiftAPIServerName, filepath.Join(cp.Dir, "openshift-apiserver.log"), cp.osaBinary, env, args...)
	if err != nil {
		return err
	}
	healthz := "https://127.0.0.1:" + strconv.Itoa(cp.osaPort) + "/healthz"
	return waitFor(ctx, 90*time.Second, openShiftAPIServerName, cp.osa, func() bool {
		resp, err := cp.readyClient.Get(healthz)
		if err != nil {
			return false
		}
		resp.Body.Close()
		return resp.StatusCode == 200
	})
}

var (
	apiServiceResource  = schema.GroupVersionResource{Group: "apiregistration.k8s.io", Version: "v1", Resource: "apiservices"}
	imageConfigResource = schema.GroupVersionResource{Group: "config.openshift.io", Version: "v1", Resource: "images"}
)

// bootstrapOpenShiftAPIServer prepares the cluster for the real server, starts it (once), and
// registers it with kube-apiserver's aggregator. It returns once kube-apiserver routes a dry-run
// create of each group's kind in openshift to it.
func (cp *ControlPlane) bootstrapOpenShiftAPIServer(ctx context.Context, kube kubernetes.Interface, dyn dynamic.Interface) error {
	// A CRD of an aggregated group would shadow the APIService.
	crds, err := dyn.Resource(crdResource).List(ctx, metav1.ListOptions{})
	if err != nil {
		return err
	}
	for _, crd := range crds.Items {
		group, _, _ := unstructured.NestedString(crd.Object, "spec", "group")
		for _, g := range cp.aggregatedGroups() {
			if group == g {
				if err := dyn.Resource(crdResource).Delete(ctx, crd.GetName(), metav1.DeleteOptions{}); err != nil && !apierrors.IsNotFound(err) {
					return fmt.Errorf("deleting CRD %s: %w", crd.GetName(), err)
				}
			}
		}
	}
	for _, ns := range openShiftAPIServerNamespaces {
		_, err := kube.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{})
		if err != nil && !apierrors.IsAlreadyExists(err) {
			return fmt.Errorf("creating namespace %s: %w", ns, err)
		}
	}
	// ImageStreamImport fails without the cluster image configuration.
	imageConfig := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "config.openshift.io/v1", "kind": "Image", "metadata": map[string]any{"name": "cluster"}, "spec": map[string]any{},
	}}
	if _, err := dyn.Resource(imageConfigResource).Create(ctx, imageConfig, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		return fmt.Errorf("creating images.config.openshift.io/cluster: %w", err)
	}
	if cp.osa == nil {
		if err := cp.startOpenShiftAPIServer(ctx); err != nil {
			return err
		}
	}
	// Endpoints may not hold loopback addresses; an ExternalName Service may name one.
	svc := &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Name: "api", Namespace: openShiftAPIServerNamespace},
		Spec: corev1.ServiceSpec{
			Type:         corev1.ServiceTypeExternalName,
			ExternalName: "127.0.0.1",
			Ports:        []corev1.ServicePort{{Name: "https", Port: int32(cp.osaPort)}},
		},
	}
	if _, err := kube.CoreV1().Services(openShiftAPIServerNamespace).Create(ctx, svc, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		return fmt.Errorf("creating Service %s/%s: %w", svc.Namespace, svc.Name, err)
	}
	for _, group := range cp.aggregatedGroups() {
		if err := cp.registerAPIService(ctx, dyn, group); err != nil {
			return err
		}
	}
	return cp.waitAggregatedServed(ctx)
}

// registerAPIService has kube-apiserver route group's v1 to the server.
func (cp *ControlPlane) registerAPIService(ctx context.Context, dyn dynamic.Interface, group string) error {
	api := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "apiregistration.k8s.io/v1", "kind": "APIService",
		"metadata": map[string]any{"name": "v1." + group},
		"spec": map[string]any{
			"group": group, "version": "v1",
			"groupPriorityMinimum": int64(9900), "versionPriority": int64(15),
			"caBundle": cp.caBundle,
			"service":  map[string]any{"namespace": openShiftAPIServerNamespace, "name": "api", "port": int64(cp.osaPort)},
		},
	}}
	if _, err := dyn.Resource(apiServiceResource).Apply(ctx, api.GetName(), api, metav1.ApplyOptions{FieldManager: "local-control-plane", Force: true}); err != nil {
		return fmt.Errorf("registering APIService %s: %w", api.GetName(), err)
	}
	return nil
}

// waitAggregatedServed waits until the APIServices of aggregatedGroups are Available,
// kube-apiserver routes a create of each group's kind to the server, and its discovery is
// complete. Available comes first: the aggregator's proxy for a group may answer 404 a while
// after it (seen for apps and build).
func (cp *ControlPlane) waitAggregatedServed(ctx context.Context) error {
	cfg := rest.CopyConfig(cp.AdminConfig)
	// DeploymentConfigs are deprecated: every request for one carries a warning, which each start
	// would print.
	cfg.WarningHandler = rest.NoWarnings{}
	dyn, err := dynamic.NewForConfig(cfg)
	if err != nil {
		return err
	}
	disco, err := discovery.NewDiscoveryClientForConfig(cfg)
	if err != nil {
		return err
	}
	if err := waitAPIServicesAvailable(ctx, dyn, cp.aggregatedGroups()); err != nil {
		return err
	}
	if err := waitAggregatedKindsServed(ctx, dyn, cp.aggregatedGroups()); err != nil {
		return err
	}
	return waitDiscoveryComplete(ctx, disco)
}

// waitDiscoveryComplete waits until kube-apiserver's discovery answers for every group. It
// reports an aggregated group "stale" from the registration of one of the server's APIServices
// (all name the same Service) until it has read the server's discovery again, a moment after the
// APIServices are Available and the kinds served: a client that lists what the cluster serves
// right after the control plane started (an operator judging its Templates, a test) would
// otherwise miss a group now and then (seen: template.openshift.io and authorization.openshift.io
// in 2 of 5 starts).
func waitDiscoveryComplete(ctx context.Context, disco discovery.DiscoveryInterface) error {
	var last error
	err := wait.PollUntilContextTimeout(ctx, 50*time.Millisecond, 60*time.Second, true, func(context.Context) (bool, error) {
		_, _, last = disco.ServerGroupsAndResources()
		return last == nil, nil
	})
	if err != nil {
		return fmt.Errorf("kube-apiserver's discovery is not complete: %v (%w)", last, err)
	}
	return nil
}

func waitAPIServicesAvailable(ctx context.Context, dyn dynamic.Interface, groups []string) error {
	var last string
	err := wait.PollUntilContextTimeout(ctx, 50*time.Millisecond, 60*time.Second, true, func(ctx context.Context) (bool, error) {
		for _, group := range groups {
			api, err := dyn.Resource(apiServiceResource).Get(ctx, "v1."+group, metav1.GetOptions{})
			if err != nil {
				last = err.Error()
				return false, nil
			}
			conditions, _, _ := unstructured.NestedSlice(api.Object, "status", "conditions")
			available := false
			for _, c := range conditions {
				cond, _ := c.(map[string]any)
				if cond["type"] == "Available" {
					available = cond["status"] == "True"
					last = fmt.Sprintf("APIService v1.%s: Available=%v %v: %v", group, cond["status"], cond["reason"], cond["message"])
				}
			}
			if !available {
				return false, nil
			}
		}
		return true, nil
	})
	if err != nil {
		return fmt.Errorf("openshift-apiserver's APIServices are not Available: %s (%w)", last, err)
	}
	return nil
}

var (
	templateResource         = schema.GroupVersionResource{Group: "template.openshift.io", Version: "v1", Resource: "templates"}
	buildConfigResource      = schema.GroupVersionResource{Group: "build.openshift.io", Version: "v1", Resource: "buildconfigs"}
	deploymentConfigResource = schema.GroupVersionResource{Group: "apps.openshift.io", Version: "v1", Resource: "deploymentconfigs"}
	routeResource            = schema.GroupVersionResource{Group: "route.openshift.io", Version: "v1", Resource: "routes"}
	roleBindingResource      = schema.GroupVersionResource{Group: authorizationGroup, Version: "v1", Resource: "rolebindings"}
)

// waitAggregatedKindsServed dry-runs the create of a kind of each of groups (an ImageStream, a
// Template, a DeploymentConfig, a BuildConfig, a Route, a RoleBinding) in openshift until all
// succeed: the aggregator routes every group to the server and the server's informers and policy
// are ready. (The server dry-runs a RoleBinding's create in RBAC: no RBAC RoleBinding is left.)
func waitAggregatedKindsServed(ctx context.Context, dyn dynamic.Interface, groups []string) error {
	probe := func(apiVersion, kind string, fields map[string]any) *unstructured.Unstructured {
		obj := map[string]any{
			"apiVersion": apiVersion, "kind": kind,
			"metadata": map[string]any{"name": "apiserver-probe", "namespace": "openshift"},
		}
		for k, v := range fields {
			obj[k] = v
		}
		return &unstructured.Unstructured{Object: obj}
	}
	probes := map[schema.GroupVersionResource]*unstructured.Unstructured{
		imageStreamResource: probe("image.openshift.io/v1", "ImageStream", nil),
		templateResource:    probe("template.openshift.io/v1", "Template", map[string]any{"objects": []any{}}),
		buildConfigResource: probe("build.openshift.io/v1", "BuildConfig", map[string]any{"spec": map[string]any{
			"source":   map[string]any{"dockerfile": "FROM scratch"},
			"strategy": map[string]any{"type": "Docker", "dockerStrategy": map[string]any{}},
		}}),
		deploymentConfigResource: probe("apps.openshift.io/v1", "DeploymentConfig", map[string]any{"spec": map[string]any{
			"template": map[string]any{
				"metadata": map[string]any{"labels": map[string]any{"app": "probe"}},
				"spec":     map[string]any{"containers": []any{map[string]any{"name": "probe", "image": "probe"}}},
			},
		}}),
	}
	probes[routeResource] = probe("route.openshift.io/v1", "Route", map[string]any{"spec": map[string]any{
		"to": map[string]any{"kind": "Service", "name": "probe"},
	}})
	probes[roleBindingResource] = probe("authorization.openshift.io/v1", "RoleBinding", map[string]any{
		"roleRef":  map[string]any{"name": "view"},
		"subjects": []any{map[string]any{"kind": "ServiceAccount", "name": "probe"}},
	})
	for resource := range probes {
		if !slices.Contains(groups, resource.Group) {
			delete(probes, resource)
		}
	}
	var last error
	err := wait.PollUntilContextTimeout(ctx, 50*time.Millisecond, 60*time.Second, true, func(ctx context.Context) (bool, error) {
		for resource, probe := range probes {
			_, last = dyn.Resource(resource).Namespace("openshift").Create(ctx, probe, metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}})
			if last != nil {
				return false, nil
			}
		}
		return true, nil
	})
	if err != nil {
		return fmt.Errorf("openshift-apiserver does not serve the kinds of %s in openshift: %v (%w)", strings.Join(groups, ", "), last, err)
	}
	return nil
}

// RolloutImageConfig plays cluster-openshift-apiserver-operator after an admin changed
// images.config.openshift.io/cluster: the real openshift-apiserver reads
// spec.allowedRegistriesForImport from its config file, not from the cluster, so its operator
// writes the list there and rolls the server out (RolloutAllowedRegistriesForImport). The
// stand-in's webhooks read the Image config at every request: for them it does nothing.
func (cp *ControlPlane) RolloutImageConfig(ctx context.Context) error {
	if !cp.RealOpenShiftAPIServer() {
		return nil
	}
	configs, err := configclient.NewForConfig(cp.AdminConfig)
	if err != nil {
		return err
	}
	img, err := configs.ConfigV1().Images().Get(ctx, "cluster", metav1.GetOptions{})
	if err != nil {
		return err
	}
	return cp.RolloutAllowedRegistriesForImport(ctx, img.Spec.AllowedRegistriesForImport)
}

// RolloutAllowedRegistriesForImport restarts the real openshift-apiserver on the same port with
// allowed as its imagePolicyConfig.allowedRegistriesForImport (nil: no restriction) unless it
// has that list already, and returns once kube-apiserver routes to it again. On a cluster such a
// rollout takes a while after the Image config changed, during which the server still enforces
// the old list. With the stand-ins it does nothing.
func (cp *ControlPlane) RolloutAllowedRegistriesForImport(ctx context.Context, allowed []configv1.RegistryLocation) error {
	if !cp.RealOpenShiftAPIServer() {
		return nil
	}
	list := []byte("null")
	if allowed != nil {
		var err error
		if list, err = json.Marshal(allowed); err != nil {
			return err
		}
	}
	if string(list) == cp.osaAllowedRegistries {
		return nil
	}
	cp.osaAllowedRegistries = string(list)
	if err := cp.restartOpenShiftAPIServer(ctx); err != nil {
		return err
	}
	return cp.waitAggregatedServed(ctx)
}

// restartOpenShiftAPIServer stops the real openshift-apiserver and starts it again on the same
// port with the configuration the control plane holds now (allow-list, groups switched off),
// returning once it answers its health check; the caller registers the APIServices of groups it
// now serves and waits for them.
func (cp *ControlPlane) restartOpenShiftAPIServer(ctx context.Context) error {
	cp.osa.stop(osaStopGrace)
	return cp.startOpenShiftAPIServer(ctx)
}

// osaStopGrace is how long openshift-apiserver may take to stop on SIGTERM before it is killed:
// with kube-apiserver's proxied watches open it does not finish a graceful stop on its own, and
// nothing it would finish matters to a test.
const osaStopGrace = 2 * time.Second

// StopOpenShiftAPIServer stops the real openshift-apiserver, as a crash or one step of a rolling
// restart would; its APIServices stay registered, so kube-apiserver answers 503 for its groups
// until StartOpenShiftAPIServer. It fails on the stand-ins, which cannot be stopped.
func (cp *ControlPlane) StopOpenShiftAPIServer() error {
	if !cp.RealOpenShiftAPIServer() || cp.osa == nil {
		return fmt.Errorf("no real openshift-apiserver to stop")
	}
	cp.osa.stop(osaStopGrace)
	return nil
}

// StartOpenShiftAPIServer starts the real openshift-apiserver again on its port, and returns once
// kube-apiserver routes each of its groups to it.
func (cp *ControlPlane) StartOpenShiftAPIServer(ctx context.Context) error {
	if !cp.RealOpenShiftAPIServer() {
		return fmt.Errorf("no real openshift-apiserver to start")
	}
	if err := cp.startOpenShiftAPIServer(ctx); err != nil {
		return err
	}
	return cp.waitAggregatedServed(ctx)
}
