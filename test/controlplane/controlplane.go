// Package controlplane runs a real kube-apiserver and etcd on loopback for integration tests and
// for `make run-local`. The binaries are built from source by the tools module under hack/tools
// (`make control-plane`). The API server runs with RBAC authorization, a static admin identity and a
// separate identity for the operator, an audit log for counting requests, and serves the OpenShift
// resources the operator uses through CRDs (see CRDFiles), with openshift-apiserver's behaviour on
// ImageStreams, ImageStreamImports and Templates played by the admission webhooks of
// test/apiserverhooks, which run in this process for as long as the control plane does.
// BuildConfigs, DeploymentConfigs, TemplateInstances, Routes and the RoleBindings of
// authorization.openshift.io, which the sample Templates create and clients tested here list, are
// CRDs too (served by default, as on a cluster; see apis.go for switching apps, build and route
// off). ServiceMonitors (monitoring.coreos.com) are served by a CRD with either backend. The
// first three are stored as sent: nothing plays what openshift-apiserver fills in on create. It
// sets a BuildConfig's spec.runPolicy Serial, success and failure history limits 5,
// spec.source.type and spec.strategy.type from the source and strategy given,
// status.lastVersion 0; a DeploymentConfig's spec.strategy
// (Rolling with its parameters, when none is given), revisionHistoryLimit 10, a ConfigChange
// trigger when it has none, spec.selector from the template's labels when empty, the pod
// template's defaults, a zero status; a TemplateInstance's spec.requester from the creating user
// (naming another needs the right to impersonate them).
// Triggers, strategies and annotations that were sent come back as sent on both backends (only
// a container port's protocol is defaulted by the CRD too), and both warn that DeploymentConfigs
// are deprecated. Nothing acts on any of them: no build, deployment or template instance
// controller runs with either backend.
//
// When $OPENSHIFT_BIN_DIR (Options.OpenShiftBinDir) names a folder holding the real
// openshift-apiserver, that server runs instead, aggregated behind kube-apiserver, and serves
// image.openshift.io, template.openshift.io, build.openshift.io, apps.openshift.io,
// route.openshift.io and authorization.openshift.io itself: no aggregated CRDs, no webhooks
// (RealOpenShiftAPIServer reports which backend runs).
package controlplane

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/base64"
	"errors"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	configv1 "github.com/openshift/api/config/v1"
	imagev1 "github.com/openshift/api/image/v1"
	configclient "github.com/openshift/client-go/config/clientset/versioned"
	imageclient "github.com/openshift/client-go/image/clientset/versioned"
	"golang.org/x/mod/modfile"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"

	"github.com/samples-operator-dev/cluster-samples-operator/pkg/names"
	"github.com/samples-operator-dev/cluster-samples-operator/test/apiserverhooks"
)

const (
	// OperatorNamespace, OperatorServiceAccount and OperatorUser name the identity the operator
	// runs as, the same one the Deployment in manifests/ gives it.
	OperatorNamespace      = names.OperatorNamespace
	OperatorServiceAccount = "cluster-samples-operator"
	OperatorUser           = "system:serviceaccount:" + OperatorNamespace + ":" + OperatorServiceAccount
	// AdminUser is a member of system:masters: the cluster admin of the tests.
	AdminUser = "local-admin"
	// harnessUser is a member of system:masters too, for the requests of the control plane's
	// own machinery that no test makes (the reset, the stand-ins' reads): a reset tells its own
	// requests from those of anything a test left running by it (recycle.go).
	harnessUser = "local-control-plane"

	// KubernetesVersion is what the locally built kube-apiserver reports (set by ldflags).
	KubernetesVersion = "v1.35.4"
)

// Options tunes a control plane. The zero value is what most tests want.
type Options struct {
	// BinDir holds etcd and kube-apiserver. Default: $CONTROL_PLANE_BIN_DIR, else <repo>/_output/bin.
	BinDir string
	// Dir is where data, logs and kubeconfigs go. Default: a new temporary directory, removed by Stop.
	Dir string
	// OpenShiftBinDir holds the real openshift-apiserver (plain or .xz). Default: $OPENSHIFT_BIN_DIR;
	// empty: the stand-ins serve the image, template, build and apps APIs.
	OpenShiftBinDir string
	// StandIns serves the image, template, build and apps APIs with the stand-ins whatever
	// OpenShiftBinDir and $OPENSHIFT_BIN_DIR say: for a test that compares the two.
	StandIns bool
	// WorkloadAPIs is ignored: every control plane serves BuildConfigs, DeploymentConfigs and
	// TemplateInstances unless WorkloadAPIsOff.
	//
	// Deprecated: the default now; drop it (a control plane with the default Options may be a
	// recycled one, which starts no servers).
	WorkloadAPIs bool
	// WorkloadAPIsOff starts the control plane as a cluster installed without the
	// DeploymentConfig and Build capabilities: apps.openshift.io and build.openshift.io are not
	// served (the real server has them switched off and their APIServices are absent; the
	// stand-ins' CRDs are not installed), so discovery lacks DeploymentConfig and BuildConfig.
	// ControlPlane.SetWorkloadAPIs switches them on (and off) while it runs. See apis.go for what
	// serving them costs.
	WorkloadAPIsOff bool
	// RouteAPIOff starts the control plane without route.openshift.io (the real server's
	// APIService absent, the stand-ins' Route CRD not installed); ControlPlane.SetRouteAPI
	// switches it on and off.
	RouteAPIOff bool
}

// ControlPlane is a running etcd and kube-apiserver pair.
type ControlPlane struct {
	Dir  string
	Host string // https://127.0.0.1:PORT

	AdminConfig        *rest.Config
	OperatorConfig     *rest.Config
	harnessConfig      *rest.Config
	AdminKubeconfig    string
	OperatorKubeconfig string
	AuditLogPath       string
	// CAFile signs ServingCertFile, a certificate for 127.0.0.1 that other local servers (the
	// operator's metrics endpoint in run-local) may serve too.
	CAFile          string
	ServingCertFile string
	ServingKeyFile  string
	// RegistryCAFile signs the certificate of the registries StartTLSRegistry starts; the real
	// openshift-apiserver trusts it (SSL_CERT_FILE), as a cluster trusts a mirror's CA through
	// additionalTrustedCA. Empty on the stand-ins.
	RegistryCAFile string

	binDir      string
	ownDir      bool
	etcdURL     string
	etcdArgs    []string
	apiArgs     []string
	etcd        *process
	apiserver   *process
	readyClient *http.Client
	adminToken  string
	pickPort    func() (int, error)
	hooks       *apiserverhooks.Server
	// apis are the optional API groups served now (apis.go).
	apis optionalAPIs

	// The real openshift-apiserver, when osaBinary is set.
	osaBinary        string
	osaPort          int
	osaCertFile      string
	osaKeyFile       string
	frontProxyCAFile string
	caBundle         string // base64 of the CA that signed the server's certificate
	// osaAllowedRegistries is imagePolicyConfig.allowedRegistriesForImport, in JSON.
	osaAllowedRegistries string
	osa                  *process
	openShiftBinDir      string
	// osaKubeconfig is the kubeconfig of the server's own clients (its informers among them):
	// AdminKubeconfig unless a test put something between the server and kube-apiserver.
	osaKubeconfig string
	// The real import controllers and the registries they import from (imports.go), once
	// started; registryCertFile and registryKeyFile are what a registry with TLS serves,
	// signed by RegistryCAFile.
	ocm              *process
	registries       []*process
	registryCertFile string
	registryKeyFile  string

	// audit keeps each audit log's completed requests parsed so far, so that tests polling the
	// log parse only what was appended since.
	auditMu sync.Mutex
	audit   map[string]*auditTail
	// unrecyclable says why no later test may get this control plane (recycle.go), under
	// auditMu; baseline is what it held when first handed out.
	unrecyclable string
	baseline     *baseline
	// handedOutWith are the servers that ran when the control plane was last handed out: a
	// reset after a restart waits for every cache (caches.go).
	handedOutWith []*process
	// history is what became of the control plane, printed when a test fails on it (history.go).
	history history
}

// RepoRoot is the checkout this package lives in.
func RepoRoot() string {
	if root := os.Getenv("CSO_REPO_ROOT"); root != "" {
		return root
	}
	_, file, _, _ := runtime.Caller(0)
	above := filepath.Dir(filepath.Dir(filepath.Dir(file)))
	if filepath.IsAbs(above) {
		return above
	}
	// Built with -trimpath (make test builds so, for a new clone to reuse what an earlier one
	// compiled), the file is named by its import path and the module's path is all that is left:
	// the checkout is the nearest directory at or above go test's working directory, the
	// package's own, whose go.mod declares that module.
	root, err := checkoutDeclaring(above)
	if err != nil {
		panic(fmt.Sprintf("test/controlplane: %v; set CSO_REPO_ROOT to the checkout", err))
	}
	return root
}

// checkoutDeclaring is the nearest directory at or above the working directory whose go.mod
// declares module.
func checkoutDeclaring(module string) (string, error) {
	start, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for dir := start; ; dir = filepath.Dir(dir) {
		if modFile, err := os.ReadFile(filepath.Join(dir, "go.mod")); err == nil && modfile.ModulePath(modFile) == module {
			return dir, nil
		}
		if filepath.Dir(dir) == dir {
			return "", fmt.Errorf("no go.mod declaring %s at or above %s", module, start)
		}
	}
}

// Start launches etcd and kube-apiserver, waits until the API server is ready, and installs the
// CRDs and namespaces the operator needs. On error nothing is left running.
func Start(ctx context.Context, opts Options) (*ControlPlane, error) {
	return start(ctx, opts, FreePort)
}

// start is Start with the servers' ports chosen by pickPort.
func start(ctx context.Context, opts Options, pickPort func() (int, error)) (_ *ControlPlane, err error) {
	cp := &ControlPlane{binDir: opts.BinDir, Dir: opts.Dir, pickPort: pickPort,
		apis: optionalAPIs{workloads: !opts.WorkloadAPIsOff, routes: !opts.RouteAPIOff}}
	began := time.Now()
	cp.record("starting")
	if cp.binDir == "" {
		cp.binDir = os.Getenv("CONTROL_PLANE_BIN_DIR")
	}
	if cp.binDir == "" {
		cp.binDir = filepath.Join(RepoRoot(), "_output", "bin")
	}
	for _, bin := range []string{"etcd", "kube-apiserver"} {
		if _, err := os.Stat(filepath.Join(cp.binDir, bin)); err != nil {
			return nil, fmt.Errorf("%s is not built in %s: run `make control-plane` first", bin, cp.binDir)
		}
	}
	if cp.Dir == "" {
		if cp.Dir, err = os.MkdirTemp("", "local-control-plane-"); err != nil {
			return nil, err
		}
		cp.ownDir = true
	}
	defer func() {
		if err != nil {
			// Stop removes the directory: what the servers said goes with the error, so that a
			// start that fails only now and then can be understood from the test's log.
			err = fmt.Errorf("%w\n--- history of the control plane in %s:\n%s\n%s",
				err, cp.Dir, cp.History(), strings.Join(cp.logTails(30), "\n"))
			cp.Stop()
		}
	}()
	openShiftBinDir := opts.OpenShiftBinDir
	if openShiftBinDir == "" {
		openShiftBinDir = os.Getenv(OpenShiftBinDirEnv)
	}
	if opts.StandIns {
		openShiftBinDir = ""
	}
	cp.openShiftBinDir = openShiftBinDir
	if cp.osaBinary, err = OpenShiftBinary(openShiftBinDir, openShiftAPIServerName); err != nil {
		return nil, err
	}

	if err := cp.configure(); err != nil {
		return nil, err
	}
	if !cp.RealOpenShiftAPIServer() {
		if cp.hooks, err = apiserverhooks.Start(); err != nil {
			return nil, fmt.Errorf("starting the admission webhooks: %w", err)
		}
	}
	if err := cp.startEtcdAndAPIServer(ctx); err != nil {
		return nil, err
	}
	if cp.RealOpenShiftAPIServer() {
		if err := cp.Bootstrap(ctx); err != nil {
			return nil, err
		}
		cp.record("started in %s with the real openshift-apiserver, in %s", time.Since(began).Round(time.Millisecond), cp.Dir)
		return cp, nil
	}
	// The stand-ins' reads play openshift-apiserver's own: they are the harness's, not a test's.
	images, err := imageclient.NewForConfig(cp.harnessConfig)
	if err != nil {
		return nil, err
	}
	cp.hooks.SetStreamGetter(func(ctx context.Context, namespace, name string) (*imagev1.ImageStream, error) {
		return images.ImageV1().ImageStreams(namespace).Get(ctx, name, metav1.GetOptions{})
	})
	configs, err := configclient.NewForConfig(cp.harnessConfig)
	if err != nil {
		return nil, err
	}
	cp.hooks.SetImageConfigGetter(func(ctx context.Context) (*configv1.Image, error) {
		return configs.ConfigV1().Images().Get(ctx, "cluster", metav1.GetOptions{})
	})
	if err := cp.Bootstrap(ctx); err != nil {
		return nil, err
	}
	cp.record("started in %s with the stand-ins, in %s", time.Since(began).Round(time.Millisecond), cp.Dir)
	return cp, nil
}

// StartForTest starts a control plane for the test, failing the test on error. When the test
// ends the control plane stops, or, with prewarming on (EnablePrewarm), is reset for a later
// test (recycle.go): either way the test may leave in it what it likes.
func StartForTest(t testing.TB) *ControlPlane {
	t.Helper()
	return StartForTestWith(t, Options{})
}

// StartForTestWith is StartForTest with options.
func StartForTestWith(t testing.TB, opts Options) *ControlPlane {
	t.Helper()
	return prewarm.startForTestWith(t, opts)
}

// startForTestWith is StartForTestWith with p for the prewarmer.
func (p *prewarmer) startForTestWith(t testing.TB, opts Options) *ControlPlane {
	t.Helper()
	cp, prewarmed := startForTest(t, opts, p, Start)
	if cp == nil {
		return nil // t.Fatalf has been called
	}
	cp.handTo(t.Name())
	t.Cleanup(func() {
		if t.Failed() {
			cp.record("%s ended: failed", t.Name())
			cp.DumpLogTail(t, 40)
			t.Logf("--- history of the control plane in %s:\n%s", cp.Dir, cp.History())
		} else {
			cp.record("%s ended: passed", t.Name())
		}
		if prewarmed {
			// The reset sees what the test left running (its operator, a client of its) still
			// sending requests: that fails this test, the one to fix, rather than only cost the
			// control plane. Waiting for the verdict holds the test's end by the reset's second.
			var late *lateRequestsError
			if err := <-p.giveBack(cp, t.Failed()); errors.As(err, &late) {
				t.Errorf("%v: stop what the test starts, and wait until it has stopped, before the test ends", late)
				t.Logf("--- history of the control plane in %s:\n%s", cp.Dir, cp.History())
			}
			return
		}
		cp.Stop()
	})
	return cp
}

// startForTest takes a control plane from p or starts one, and tries once more when that fails:
// with a dozen control planes starting and running at once on two cores, a start can miss one
// of its own deadlines (once in CI: a just-established CRD still unlistable after 30 s), which
// says nothing about the test. A second failure fails the test; the first is logged.
func startForTest(t testing.TB, opts Options, p *prewarmer, start func(context.Context, Options) (*ControlPlane, error)) (*ControlPlane, bool) {
	t.Helper()
	once := func() (*ControlPlane, bool, error) {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
		defer cancel()
		if opts == (Options{}) {
			if cp, prewarmed, err := p.take(ctx); prewarmed {
				return cp, true, err
			}
		}
		cp, err := start(ctx, opts)
		return cp, false, err
	}
	cp, prewarmed, err := once()
	if err != nil {
		t.Logf("the local control plane did not start, starting another: %v", err)
		cp, prewarmed, err = once()
	}
	if err != nil {
		t.Fatalf("starting the local control plane: %v", err)
		return nil, false
	}
	return cp, prewarmed
}

func (cp *ControlPlane) configure() error {
	keys, err := newPKI(cp.Dir, cp.RealOpenShiftAPIServer())
	if err != nil {
		return err
	}
	etcdClientPort, err := cp.pickPort()
	if err != nil {
		return err
	}
	etcdPeerPort, err := cp.pickPort()
	if err != nil {
		return err
	}
	apiPort, err := cp.pickPort()
	if err != nil {
		return err
	}
	cp.etcdURL = "http://127.0.0.1:" + strconv.Itoa(etcdClientPort)
	cp.etcdArgs = []string{
		"--data-dir=" + filepath.Join(cp.Dir, "etcd"),
		"--listen-client-url=" + cp.etcdURL,
		"--listen-peer-url=http://127.0.0.1:" + strconv.Itoa(etcdPeerPort),
	}

	cp.adminToken = randomToken()
	operatorToken := randomToken()
	harnessToken := randomToken()
	tokens := fmt.Sprintf("%s,%s,%s,\"system:masters,system:authenticated\"\n%s,%s,%s,\"system:serviceaccounts,system:serviceaccounts:%s,system:authenticated\"\n%s,%s,%s,\"system:masters,system:authenticated\"\n",
		cp.adminToken, AdminUser, AdminUser, operatorToken, OperatorUser, OperatorUser, OperatorNamespace, harnessToken, harnessUser, harnessUser)
	tokenFile := filepath.Join(cp.Dir, "tokens.csv")
	if err := os.WriteFile(tokenFile, []byte(tokens), 0o600); err != nil {
		return err
	}
	auditPolicy := filepath.Join(cp.Dir, "audit-policy.yaml")
	if err := os.WriteFile(auditPolicy, []byte(auditPolicyYAML), 0o600); err != nil {
		return err
	}
	cp.AuditLogPath = filepath.Join(cp.Dir, "audit.log")

	cp.Host = "https://127.0.0.1:" + strconv.Itoa(apiPort)
	cp.apiArgs = []string{
		"--etcd-servers=" + cp.etcdURL,
		"--bind-address=127.0.0.1",
		"--advertise-address=127.0.0.1",
		"--secure-port=" + strconv.Itoa(apiPort),
		"--cert-dir=" + filepath.Join(cp.Dir, "apiserver-certs"),
		"--tls-cert-file=" + keys.servingCertFile,
		"--tls-private-key-file=" + keys.servingKeyFile,
		"--token-auth-file=" + tokenFile,
		"--authorization-mode=RBAC",
		"--service-account-issuer=https://kubernetes.default.svc",
		"--service-account-key-file=" + keys.saPublicKeyFile,
		"--service-account-signing-key-file=" + keys.saSigningKeyFile,
		"--service-cluster-ip-range=10.0.0.0/24",
		"--endpoint-reconciler-type=none",
		"--enable-priority-and-fairness=false",
		"--audit-policy-file=" + auditPolicy,
		"--audit-log-path=" + cp.AuditLogPath,
		"--audit-log-mode=blocking",
		"--audit-log-format=json",
		auditLogMaxSizeFlag,
	}
	if cp.RealOpenShiftAPIServer() {
		if cp.osaPort, err = cp.pickPort(); err != nil {
			return err
		}
		cp.osaCertFile, cp.osaKeyFile = keys.osaServingCertFile, keys.osaServingKeyFile
		cp.frontProxyCAFile = keys.frontProxyCAFile
		cp.caBundle = base64.StdEncoding.EncodeToString(keys.caPEM)
		cp.RegistryCAFile, cp.registryCertFile, cp.registryKeyFile = keys.registryCAFile, keys.registryCertFile, keys.registryKeyFile
		cp.apiArgs = append(cp.apiArgs,
			"--requestheader-client-ca-file="+keys.frontProxyCAFile,
			"--proxy-client-cert-file="+keys.frontProxyClientCertFile,
			"--proxy-client-key-file="+keys.frontProxyClientKeyFile,
		)
		cp.apiArgs = append(cp.apiArgs, requestHeaderFlags...)
	}

	cp.CAFile, cp.ServingCertFile, cp.ServingKeyFile = filepath.Join(cp.Dir, "ca.crt"), keys.servingCertFile, keys.servingKeyFile
	if err := os.WriteFile(cp.CAFile, keys.caPEM, 0o644); err != nil {
		return err
	}
	cp.AdminConfig = cp.restConfig(keys.caPEM, cp.adminToken)
	cp.OperatorConfig = cp.restConfig(keys.caPEM, operatorToken)
	cp.harnessConfig = cp.restConfig(keys.caPEM, harnessToken)
	cp.harnessConfig.UserAgent = harnessUser
	cp.AdminKubeconfig = filepath.Join(cp.Dir, "admin.kubeconfig")
	cp.OperatorKubeconfig = filepath.Join(cp.Dir, "operator.kubeconfig")
	if err := writeKubeconfig(cp.AdminKubeconfig, cp.Host, keys.caPEM, AdminUser, cp.adminToken); err != nil {
		return err
	}
	if err := writeKubeconfig(cp.OperatorKubeconfig, cp.Host, keys.caPEM, OperatorUser, operatorToken); err != nil {
		return err
	}

	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(keys.caPEM)
	cp.readyClient = &http.Client{
		Timeout:   2 * time.Second,
		Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool}},
	}
	return nil
}

// auditLogMaxSizeFlag keeps kube-apiserver from rotating its audit log (at 100 MB by default)
// under a reader: a recycled control plane serves many tests, and each reads the file on.
const auditLogMaxSizeFlag = "--audit-log-maxsize=100000"

// The audit log records every request at Metadata level: user, verb, resource, response code.
// Tests and the benchmark count the operator's requests from it. A write is also logged as it
// arrives (RequestReceived), so that one whose object is stored but whose answer is not yet
// logged shows as in flight (WritesInFlight) rather than not at all.
const auditPolicyYAML = `apiVersion: audit.k8s.io/v1
kind: Policy
rules:
- level: Metadata
  verbs: ["create", "update", "patch", "delete", "deletecollection"]
- level: Metadata
  omitStages: ["RequestReceived"]
`

func (cp *ControlPlane) restConfig(caPEM []byte, token string) *rest.Config {
	return &rest.Config{
		Host:            cp.Host,
		BearerToken:     token,
		TLSClientConfig: rest.TLSClientConfig{CAData: caPEM},
		QPS:             200,
		Burst:           400,
	}
}

func writeKubeconfig(path, host string, caPEM []byte, user, token string) error {
	cfg := clientcmdapi.NewConfig()
	cfg.Clusters["local"] = &clientcmdapi.Cluster{Server: host, CertificateAuthorityData: caPEM}
	cfg.AuthInfos[user] = &clientcmdapi.AuthInfo{Token: token}
	cfg.Contexts["local"] = &clientcmdapi.Context{Cluster: "local", AuthInfo: user}
	cfg.CurrentContext = "local"
	return clientcmd.WriteToFile(*cfg, path)
}

// startEtcdAndAPIServer starts both on the ports configure chose. Another test's server can
// still bind one of them first; such a start is retried, twice at most, on fresh ports and an
// empty etcd data directory.
func (cp *ControlPlane) startEtcdAndAPIServer(ctx context.Context) error {
	etcdLog, apiLog := filepath.Join(cp.Dir, "etcd.log"), filepath.Join(cp.Dir, "kube-apiserver.log")
	for attempt := 1; ; attempt++ {
		etcdFrom, apiFrom := fileSize(etcdLog), fileSize(apiLog)
		err := cp.startEtcd(ctx)
		if err == nil {
			err = cp.startAPIServer(ctx)
		}
		if err == nil || attempt == 3 || !(portTakenSince(etcdLog, etcdFrom) || portTakenSince(apiLog, apiFrom)) {
			return err
		}
		cp.apiserver.stop(15 * time.Second)
		cp.etcd.stop(10 * time.Second)
		cp.apiserver, cp.etcd = nil, nil
		if err := os.RemoveAll(filepath.Join(cp.Dir, "etcd")); err != nil {
			return err
		}
		if err := cp.configure(); err != nil {
			return err
		}
	}
}

func (cp *ControlPlane) startEtcd(ctx context.Context) error {
	var err error
	cp.etcd, err = startProcess("etcd", filepath.Join(cp.Dir, "etcd.log"), filepath.Join(cp.binDir, "etcd"), cp.etcdArgs...)
	if err != nil {
		return err
	}
	return waitFor(ctx, 60*time.Second, "etcd", cp.etcd, func() bool {
		resp, err := cp.readyClient.Get(cp.etcdURL + "/health") // gives up on a port that never answers
		if err != nil {
			return false
		}
		resp.Body.Close()
		return resp.StatusCode == http.StatusOK
	})
}

func (cp *ControlPlane) startAPIServer(ctx context.Context) error {
	var err error
	cp.apiserver, err = startProcess("kube-apiserver", filepath.Join(cp.Dir, "kube-apiserver.log"), filepath.Join(cp.binDir, "kube-apiserver"), cp.apiArgs...)
	if err != nil {
		return err
	}
	return waitFor(ctx, 90*time.Second, "kube-apiserver", cp.apiserver, cp.apiserverReady)
}

func (cp *ControlPlane) apiserverReady() bool {
	req, _ := http.NewRequest(http.MethodGet, cp.Host+"/readyz", nil)
	req.Header.Set("Authorization", "Bearer "+cp.adminToken)
	resp, err := cp.readyClient.Do(req)
	if err != nil {
		return false
	}
	resp.Body.Close()
	return resp.StatusCode == http.StatusOK
}

func waitFor(ctx context.Context, timeout time.Duration, what string, p *process, ready func() bool) error {
	deadline := time.Now().Add(timeout)
	for {
		// Exited is judged after ready: whatever answered on the port, if the process is gone,
		// it was another server that took the port first.
		isReady := ready()
		if p.exited() {
			// The log goes with the directory when the start is abandoned: its end goes in the error.
			return fmt.Errorf("%s exited during start-up (%v); the end of %s:\n%s", what, p.waitErr, p.logFile.Name(), logTail(p.logFile.Name(), 8))
		}
		if isReady {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("%s not ready within %s; see %s", what, timeout, p.logFile.Name())
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// Stop terminates the import controllers, the registry and openshift-apiserver (those that run),
// kube-apiserver and etcd, then the webhook
// server, which kube-apiserver may call until it is gone, and removes the directory Start created.
func (cp *ControlPlane) Stop() {
	cp.record("stopping")
	cp.ocm.stop(osaStopGrace)
	for _, r := range cp.registries {
		r.stop(osaStopGrace)
	}
	cp.osa.stop(osaStopGrace)
	cp.apiserver.stop(15 * time.Second)
	cp.etcd.stop(10 * time.Second)
	cp.hooks.Stop()
	if cp.ownDir && os.Getenv("KEEP_CONTROL_PLANE_DIR") == "" {
		_ = os.RemoveAll(cp.Dir)
	}
}

// Webhooks is the running webhook server that plays openshift-apiserver (test/apiserverhooks):
// a test may make it normalize more than the server does (NormalizeImageStreams). It is nil when
// the real openshift-apiserver runs.
func (cp *ControlPlane) Webhooks() *apiserverhooks.Server {
	cp.notRecyclable("a test reached the webhook server, whose knobs a reset does not put back")
	return cp.hooks
}

// RealOpenShiftAPIServer reports whether the real openshift-apiserver serves the image and
// template APIs (OPENSHIFT_BIN_DIR) rather than the CRDs and webhooks that stand in for it.
func (cp *ControlPlane) RealOpenShiftAPIServer() bool { return cp.osaBinary != "" }

// PIDs lists the processes the control plane started, for tests that check nothing outlives it.
func (cp *ControlPlane) PIDs() []int {
	var pids []int
	for _, p := range append([]*process{cp.etcd, cp.apiserver, cp.osa, cp.ocm}, cp.registries...) {
		if p != nil {
			pids = append(pids, p.pid())
		}
	}
	return pids
}

// RestartAPIServer stops kube-apiserver and starts it again on the same port and storage.
func (cp *ControlPlane) RestartAPIServer(ctx context.Context) error {
	cp.record("kube-apiserver restarted by the test")
	cp.apiserver.stop(15 * time.Second)
	return cp.startAPIServer(ctx)
}

// RestartEtcd stops etcd and starts it again on the same data directory.
func (cp *ControlPlane) RestartEtcd(ctx context.Context) error {
	cp.record("etcd restarted by the test")
	cp.etcd.stop(10 * time.Second)
	return cp.startEtcd(ctx)
}

// logTail is the last lines of the file at path, or why it cannot be read.
func logTail(path string, lines int) string {
	data, err := os.ReadFile(path)
	if err != nil {
		return err.Error()
	}
	all := strings.Split(strings.TrimRight(string(data), "\n"), "\n")
	if len(all) > lines {
		all = all[len(all)-lines:]
	}
	return strings.Join(all, "\n")
}

// DumpLogTail writes the last lines of each component's log to the test log.
func (cp *ControlPlane) DumpLogTail(t testing.TB, lines int) {
	for _, tail := range cp.logTails(lines) {
		t.Log(tail)
	}
}

// logTails is the last lines of each component's log that exists, one string each.
func (cp *ControlPlane) logTails(lines int) []string {
	registryLogs, _ := filepath.Glob(filepath.Join(cp.Dir, "registry*.log"))
	for i := range registryLogs {
		registryLogs[i] = filepath.Base(registryLogs[i])
	}
	var tails []string
	for _, name := range append([]string{"etcd.log", "kube-apiserver.log", "openshift-apiserver.log", "openshift-controller-manager.log"}, registryLogs...) {
		path := filepath.Join(cp.Dir, name)
		if _, err := os.Stat(path); err != nil {
			continue
		}
		tails = append(tails, fmt.Sprintf("--- last lines of %s:\n%s", name, logTail(path, lines)))
	}
	return tails
}
