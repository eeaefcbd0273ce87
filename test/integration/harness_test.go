package integration

import (
	"context"
	"crypto/x509"
	"errors"
	"fmt"
	"net"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	configclient "github.com/openshift/client-go/config/clientset/versioned"
	imageclient "github.com/openshift/client-go/image/clientset/versioned"
	samplesclient "github.com/openshift/client-go/samples/clientset/versioned"
	templateclient "github.com/openshift/client-go/template/clientset/versioned"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/samples-operator-dev/cluster-samples-operator/pkg/access"
	"github.com/samples-operator-dev/cluster-samples-operator/pkg/operator"
	"github.com/samples-operator-dev/cluster-samples-operator/test/controlplane"
	"github.com/samples-operator-dev/cluster-samples-operator/test/emulator"
)

// env is one control plane with manifests/ applied and the import emulator running, and admin
// clients to play the cluster admin.
type env struct {
	t *testing.T
	// wholeInventory: the scenes of this env run on every sample of the x86_64 inventory.
	wholeInventory bool
	cp             *controlplane.ControlPlane
	kube           kubernetes.Interface
	samples        samplesclient.Interface
	images         imageclient.Interface
	tmpl           templateclient.Interface
	config         configclient.Interface
	importer       *emulator.Emulator
	// applied is what applying manifests/ did.
	applied *controlplane.ApplyResult
	// probesForbidden is set by a test that makes forbidden requests as the operator on purpose.
	probesForbidden bool
	// optionalForbiddenBefore is set by a test that runs the operator for a while with RBAC of
	// another release, which lacks the rules the operator does without (access.OptionalRules):
	// their refusals before that time are expected, any other is not.
	optionalForbiddenBefore time.Time
	// since is when the current scene began (runScenes), zero for a test with a cluster of its
	// own: what the operator reported before it (its Events) belongs to earlier scenes.
	since time.Time
}

func newEnv(t *testing.T) *env {
	t.Helper()
	return newEnvOver(t, nil)
}

// newEnvOver is newEnv on a cluster that already holds what before creates (what an earlier
// release left, say) when manifests/ are applied.
func newEnvOver(t *testing.T, before func(*controlplane.ControlPlane)) *env {
	t.Helper()
	return newEnvInstalled(t, func(ctx context.Context, cp *controlplane.ControlPlane) (*controlplane.ApplyResult, error) {
		if before != nil {
			before(cp)
		}
		return applyManifests(ctx, cp)
	})
}

// newEnvInstalled is newEnv with the operator installed by install instead of by applying
// manifests/ as the cluster-version operator does (by OLM, say).
func newEnvInstalled(t *testing.T, install func(context.Context, *controlplane.ControlPlane) (*controlplane.ApplyResult, error)) *env {
	t.Helper()
	return newEnvInstalledOn(t, controlplane.Options{}, install)
}

// newEnvOnStandIns is newEnv on the stand-ins for openshift-apiserver even where the real server
// is at hand (OPENSHIFT_BIN_DIR): for tests that plant on the image API what only the stand-ins
// can carry (an admission webhook on imagestreams, a server that normalizes fields), to show
// what the operator does about it. What they plant, not the server, is under test.
func newEnvOnStandIns(t *testing.T) *env {
	t.Helper()
	return newEnvInstalledOn(t, controlplane.Options{StandIns: true}, applyManifests)
}

// newEnvWithWorkloads is newEnv, named for the tests of who uses the samples: they create
// BuildConfigs, DeploymentConfigs and TemplateInstances, which every control plane serves unless
// started with controlplane.Options.WorkloadAPIsOff. Its control plane may be a recycled one.
func newEnvWithWorkloads(t *testing.T) *env {
	t.Helper()
	return newEnv(t)
}

func applyManifests(ctx context.Context, cp *controlplane.ControlPlane) (*controlplane.ApplyResult, error) {
	return controlplane.ApplyDir(ctx, cp.AdminConfig, filepath.Join(controlplane.RepoRoot(), "manifests"))
}

// newEnvInstalledOn is newEnvInstalled on a control plane started with cpOpts.
func newEnvInstalledOn(t *testing.T, cpOpts controlplane.Options, install func(context.Context, *controlplane.ControlPlane) (*controlplane.ApplyResult, error)) *env {
	t.Helper()
	e, ctx := newEnvWithoutImporterOn(t, cpOpts, install)
	e.importer = emulator.New(e.images, "openshift")
	if err := e.importer.ResolveMirrorSets(e.cp.AdminConfig); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() {
		defer close(done)
		_ = e.importer.Run(ctx)
	}()
	t.Cleanup(func() { cancel(); <-done })
	return e
}

// newEnvWithoutImporter is newEnvInstalled with nothing that imports: the caller starts the
// importer it wants before ctx, which ends with the test, is done.
func newEnvWithoutImporter(t *testing.T, install func(context.Context, *controlplane.ControlPlane) (*controlplane.ApplyResult, error)) (*env, context.Context) {
	t.Helper()
	return newEnvWithoutImporterOn(t, controlplane.Options{}, install)
}

func newEnvWithoutImporterOn(t *testing.T, cpOpts controlplane.Options, install func(context.Context, *controlplane.ControlPlane) (*controlplane.ApplyResult, error)) (*env, context.Context) {
	t.Helper()
	cp := controlplane.StartForTestWith(t, cpOpts)
	// Last of all the control plane's cleanup waits for its reset's verdict on late requests
	// (about a second and a half): the test only waits then, and another runs in its turn.
	t.Cleanup(func() { schedule.lend(t.Name()) })
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	applied, err := install(ctx, cp)
	if err != nil {
		t.Fatalf("installing the operator: %v", err)
	}
	e := &env{
		t:       t,
		cp:      cp,
		applied: applied,
		kube:    kubernetes.NewForConfigOrDie(cp.AdminConfig),
		samples: samplesclient.NewForConfigOrDie(cp.AdminConfig),
		images:  imageclient.NewForConfigOrDie(cp.AdminConfig),
		tmpl:    templateclient.NewForConfigOrDie(cp.AdminConfig),
		config:  configclient.NewForConfigOrDie(cp.AdminConfig),
	}
	// Every OpenShift cluster has an install pull secret with credentials for registry.redhat.io.
	if _, err := e.kube.CoreV1().Secrets("openshift-config").Create(ctx, pullSecret(testPullSecretAuth), metav1.CreateOptions{}); err != nil {
		t.Fatalf("creating the pull secret: %v", err)
	}
	// Whatever a test does, the operator runs as its own service account with the RBAC it was
	// installed with (manifests/, unless a test says otherwise): none of its requests may be
	// forbidden.
	t.Cleanup(func() { e.assertNeverForbidden(t) })
	return e, ctx
}

func (e *env) assertNeverForbidden(t *testing.T) {
	if e.probesForbidden {
		return
	}
	optional := func(ev controlplane.AuditEvent) bool {
		if !ev.Time.Before(e.optionalForbiddenBefore) {
			return false
		}
		for _, r := range access.OptionalRules(access.Samples) {
			if ev.Verb == r.Verb && ev.Resource == r.Resource && ev.Namespace == r.Namespace {
				return true
			}
		}
		// The mirror sets, read cluster-wide: the operator decides without them where it may not.
		// The nodes, the APIServices and the images tell whether a sample can work here (issue
		// 50): without them no sample is judged by its nodes' architectures, its kinds' servers,
		// or its images' architectures. A payload of another version does not grant them.
		switch ev.Resource {
		case "imagetagmirrorsets", "imagedigestmirrorsets", "imagecontentsourcepolicies", "nodes", "apiservices":
			return ev.Verb == "list" || ev.Verb == "watch"
		case "images":
			return ev.Verb == "get"
		}
		return false
	}
	for _, line := range describe(e.operatorRequests(t, answered(403), not(optional))) {
		t.Errorf("the operator was forbidden (RBAC in manifests/ is missing a rule): %s", line)
	}
}

// testPullSecretAuth is the credential in the test pull secret; no log may ever contain it.
const testPullSecretAuth = "c2FtcGxlcy10ZXN0OnNlY3JldC10b2tlbi0xMjM0NQ=="

func pullSecret(registryAuth string, registries ...string) *corev1.Secret {
	if len(registries) == 0 {
		registries = []string{"registry.redhat.io", "quay.io"}
	}
	var auths []string
	for _, r := range registries {
		auths = append(auths, fmt.Sprintf("%q:{\"auth\":%q}", r, registryAuth))
	}
	return &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Name: "pull-secret", Namespace: "openshift-config"},
		Type:       corev1.SecretTypeDockerConfigJson,
		Data:       map[string][]byte{corev1.DockerConfigJsonKey: []byte(`{"auths":{` + strings.Join(auths, ",") + `}}`)},
	}
}

// defaultOptions runs the operator as amd64 at version v1 with a registry probe that succeeds
// without dialing anything.
func defaultOptions() operator.Options {
	return operator.Options{
		Version:       "v1",
		GOARCH:        "amd64",
		InventoryDir:  testInventoryDir(),
		RegistryProbe: func(context.Context) error { return nil },
		ProbeTarget:   "registry.test:443",
	}
}

// fullInventoryOptions is defaultOptions with the whole embedded inventory (fullX86Inventory).
func fullInventoryOptions() operator.Options {
	opts := defaultOptions()
	opts.InventoryDir = ""
	return opts
}

// runningOperator is an operator running in this process as its own service account.
type runningOperator struct {
	cancel context.CancelFunc
	done   chan error
}

func (e *env) startOperator(opts operator.Options) *runningOperator {
	e.t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	op := &runningOperator{cancel: cancel, done: make(chan error, 1)}
	go func() { op.done <- operator.Run(ctx, e.cp.OperatorConfig, opts) }()
	e.t.Cleanup(func() { op.stop(e.t) })
	return op
}

// startOperatorServing starts the operator with its HTTPS server (metrics and /readyz) on a free
// loopback port, under a certificate made for the test; it returns the operator, the server's
// address and a pool that trusts its certificate.
func (e *env) startOperatorServing(t *testing.T, opts operator.Options) (*runningOperator, string, *x509.CertPool) {
	t.Helper()
	addr := freeLoopbackAddr(t)
	certFile, keyFile, pool := servingCert(t)
	opts.MetricsBindAddress, opts.TLSCertFile, opts.TLSKeyFile = addr, certFile, keyFile
	return e.startOperator(opts), addr, pool
}

// freeLoopbackAddr is a 127.0.0.1 address with a port nothing listens on, outside the range
// the kernel hands to outgoing connections (controlplane.FreePort).
func freeLoopbackAddr(t *testing.T) string {
	t.Helper()
	port, err := controlplane.FreePort()
	if err != nil {
		t.Fatal(err)
	}
	return net.JoinHostPort("127.0.0.1", strconv.Itoa(port))
}

func (op *runningOperator) stop(t *testing.T) {
	if op.cancel == nil {
		return
	}
	op.cancel()
	op.cancel = nil
	select {
	case err := <-op.done:
		if err != nil {
			t.Errorf("operator returned: %v", err)
		}
	case <-time.After(30 * time.Second):
		t.Errorf("operator did not stop within 30s")
	}
}

// eventually polls cond until it holds or the timeout passes; cond explains what it is waiting for.
// The timeout is patience, not a measure (within measures): with other tests beside it (and more
// so under the race detector) the machine is several times slower, so the patience is too.
func eventually(t *testing.T, timeout time.Duration, cond func() (bool, string)) {
	t.Helper()
	eventuallyEvery(t, timeout, 20*time.Millisecond, cond)
}

// eventuallyEvery is eventually for a cond that costs the servers more than a read or two (a
// list of every imagestream, say): it is asked every interval instead.
func eventuallyEvery(t *testing.T, timeout, interval time.Duration, cond func() (bool, string)) {
	t.Helper()
	timeout *= patience
	deadline := time.Now().Add(timeout)
	var why string
	for {
		var ok bool
		ok, why = cond()
		if ok {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("not within %s: %s", timeout, why)
		}
		time.Sleep(interval)
	}
}

// within measures how long cond takes to hold, failing after the timeout.
func within(t *testing.T, timeout time.Duration, cond func() (bool, string)) time.Duration {
	t.Helper()
	start := time.Now()
	for {
		ok, why := cond()
		if ok {
			return time.Since(start)
		}
		if time.Since(start) > timeout {
			t.Fatalf("not within %s: %s", timeout, why)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

func errString(err error) string {
	if err == nil {
		return "<nil>"
	}
	var target interface{ Status() any }
	if errors.As(err, &target) {
		return fmt.Sprintf("%v", target.Status())
	}
	return err.Error()
}
