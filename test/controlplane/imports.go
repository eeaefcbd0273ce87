package controlplane

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
)

// Real imports: openshift-controller-manager's image import controllers ask the real
// openshift-apiserver to import, and the server pulls from a registry on loopback built from
// github.com/distribution/distribution/v3 (hack/registry). The facts this relies on are in the
// README of the folder OPENSHIFT_BIN_DIR names ("openshift-controller-manager's image import
// controllers").

const (
	openShiftControllerManagerName      = "openshift-controller-manager"
	openShiftControllerManagerNamespace = "openshift-controller-manager"
	registryBinaryName                  = "registry"
)

// CanImport reports whether this control plane can run real imports: the real
// openshift-apiserver serves, OPENSHIFT_BIN_DIR holds openshift-controller-manager, and the test
// registry is built (`make test-openshift` builds it). why says what is missing.
func (cp *ControlPlane) CanImport() (ok bool, why string) {
	if !cp.RealOpenShiftAPIServer() {
		return false, "the stand-ins serve the image API (set " + OpenShiftBinDirEnv + " to run the real openshift-apiserver)"
	}
	if !HasOpenShiftBinary(cp.openShiftBinDir, openShiftControllerManagerName) {
		return false, fmt.Sprintf("%s=%s holds no %s", OpenShiftBinDirEnv, cp.openShiftBinDir, openShiftControllerManagerName)
	}
	return cp.CanServeRegistry()
}

// StartRegistry serves an empty in-memory registry on a free loopback port and makes the
// cluster's imports trust it (images.config.openshift.io/cluster
// spec.registrySources.insecureRegistries, which openshift-apiserver reads at every import: the
// registry speaks plain HTTP). It returns the registry's host:port; the registry stops with the
// control plane.
func (cp *ControlPlane) StartRegistry(ctx context.Context) (string, error) {
	host, err := cp.startRegistry(ctx, false, "")
	if err != nil {
		return "", err
	}
	dyn, err := dynamic.NewForConfig(cp.AdminConfig)
	if err != nil {
		return "", err
	}
	patch := fmt.Sprintf(`{"spec":{"registrySources":{"insecureRegistries":[%q]}}}`, host)
	if _, err := dyn.Resource(imageConfigResource).Patch(ctx, "cluster", "application/merge-patch+json", []byte(patch), metav1.PatchOptions{}); err != nil {
		return "", fmt.Errorf("trusting the test registry in images.config.openshift.io/cluster: %w", err)
	}
	return host, nil
}

// StartTLSRegistry serves an empty in-memory registry over HTTPS on a free loopback port, with a
// certificate signed by RegistryCAFile, and returns its host:port. The cluster is not told of it:
// the real openshift-apiserver trusts it as a cluster trusts a mirror whose CA is in
// additionalTrustedCA, by its CA (the server runs with SSL_CERT_FILE naming RegistryCAFile), so
// it is verified as any registry is, and it is not in insecureRegistries. Several may run; each
// stops with the control plane. Only with the real openshift-apiserver (CanServeRegistry).
// RegistryTransport reaches it from a test.
func (cp *ControlPlane) StartTLSRegistry(ctx context.Context) (string, error) {
	if ok, why := cp.CanServeRegistry(); !ok {
		return "", fmt.Errorf("no registry the cluster trusts by its CA: %s", why)
	}
	return cp.startRegistry(ctx, true, "")
}

// StartTLSRegistryWithLogin is StartTLSRegistry for a registry that answers only a client that
// logs in as user with password (HTTP basic): an import needs a docker config secret holding them.
func (cp *ControlPlane) StartTLSRegistryWithLogin(ctx context.Context, user, password string) (string, error) {
	if ok, why := cp.CanServeRegistry(); !ok {
		return "", fmt.Errorf("no registry the cluster trusts by its CA: %s", why)
	}
	return cp.startRegistry(ctx, true, user+":"+password)
}

// CanServeRegistry reports whether this control plane can start test registries the real
// openshift-apiserver imports from: the real server serves and the registry is built. why says
// what is missing.
func (cp *ControlPlane) CanServeRegistry() (ok bool, why string) {
	if !cp.RealOpenShiftAPIServer() {
		return false, "the stand-ins serve the image API (set " + OpenShiftBinDirEnv + " to run the real openshift-apiserver)"
	}
	if _, err := os.Stat(filepath.Join(cp.binDir, registryBinaryName)); err != nil {
		return false, fmt.Sprintf("the test registry is not built in %s (make %s/%s)", cp.binDir, "_output/bin", registryBinaryName)
	}
	return true, ""
}

// RegistryTransport reaches the test registries directly, whatever proxy this process is told
// of, and trusts those started with TLS.
func (cp *ControlPlane) RegistryTransport() *http.Transport {
	t := &http.Transport{Proxy: nil}
	if cp.RegistryCAFile != "" {
		pool := x509.NewCertPool()
		if pem, err := os.ReadFile(cp.RegistryCAFile); err == nil {
			pool.AppendCertsFromPEM(pem)
		}
		t.TLSClientConfig = &tls.Config{RootCAs: pool}
	}
	return t
}

func (cp *ControlPlane) startRegistry(ctx context.Context, withTLS bool, basicAuth string) (string, error) {
	if _, err := os.Stat(filepath.Join(cp.binDir, registryBinaryName)); err != nil {
		return "", fmt.Errorf("the test registry is not built in %s (make %s/%s)", cp.binDir, "_output/bin", registryBinaryName)
	}
	port, err := FreePort()
	if err != nil {
		return "", err
	}
	host := "127.0.0.1:" + strconv.Itoa(port)
	args, scheme := []string{"-addr", host}, "http"
	if withTLS {
		args, scheme = append(args, "-tls-cert", cp.registryCertFile, "-tls-key", cp.registryKeyFile), "https"
	}
	if basicAuth != "" {
		args = append(args, "-basic-auth", basicAuth)
	}
	logName := "registry.log"
	if len(cp.registries) > 0 {
		logName = "registry-" + strconv.Itoa(port) + ".log"
	}
	p, err := startProcess(registryBinaryName, filepath.Join(cp.Dir, logName), filepath.Join(cp.binDir, registryBinaryName), args...)
	if err != nil {
		return "", err
	}
	cp.registries = append(cp.registries, p)
	client := &http.Client{Timeout: time.Second, Transport: cp.RegistryTransport()}
	if err := waitFor(ctx, 30*time.Second, registryBinaryName, p, func() bool {
		resp, err := client.Get(scheme + "://" + host + "/v2/")
		if err != nil {
			return false
		}
		resp.Body.Close()
		// A registry that wants a login answers its challenge: it is up.
		return resp.StatusCode == http.StatusOK || basicAuth != "" && resp.StatusCode == http.StatusUnauthorized
	}); err != nil {
		return "", err
	}
	return host, nil
}

// StartImportControllers runs openshift-controller-manager with only its image import
// controllers (openshift.io/image-import: a tag whose spec is ahead of its status is imported,
// a scheduled tag every scheduledImportInterval at the earliest), and returns once it holds its
// leader lease, that is once the controllers run. Until then, or without it, nothing imports on
// its own. They stop with the control plane.
func (cp *ControlPlane) StartImportControllers(ctx context.Context, scheduledImportInterval time.Duration) error {
	if ok, why := cp.CanImport(); !ok {
		return fmt.Errorf("real imports cannot run: %s", why)
	}
	binary, err := OpenShiftBinary(cp.openShiftBinDir, openShiftControllerManagerName)
	if err != nil {
		return err
	}
	kube, err := kubernetes.NewForConfig(cp.AdminConfig)
	if err != nil {
		return err
	}
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: openShiftControllerManagerNamespace}}
	if _, err := kube.CoreV1().Namespaces().Create(ctx, ns, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		return fmt.Errorf("creating namespace %s: %w", ns.Name, err)
	}
	port, err := FreePort()
	if err != nil {
		return err
	}
	config := fmt.Sprintf(`apiVersion: openshiftcontrolplane.config.openshift.io/v1
kind: OpenShiftControllerManagerConfig
servingInfo:
  bindAddress: 127.0.0.1:%d
  bindNetwork: tcp4
  certFile: %s
  keyFile: %s
leaderElection:
  namespace: %s
controllers: ["openshift.io/image-import", "-openshift.io/serviceaccount-pull-secrets-rollback"]
imageImport:
  scheduledImageImportMinimumIntervalSeconds: %d
  maxScheduledImageImportsPerMinute: 600
`, port, cp.ServingCertFile, cp.ServingKeyFile, openShiftControllerManagerNamespace, int(scheduledImportInterval/time.Second))
	configFile := filepath.Join(cp.Dir, "openshift-controller-manager.yaml")
	if err := os.WriteFile(configFile, []byte(config), 0o600); err != nil {
		return err
	}
	started := time.Now()
	cp.ocm, err = startProcessEnv(openShiftControllerManagerName, filepath.Join(cp.Dir, "openshift-controller-manager.log"), binary,
		openShiftAPIServerEnv(), "start", "--config="+configFile, "--kubeconfig="+cp.AdminKubeconfig,
		"--namespace="+openShiftControllerManagerNamespace, "--listen=127.0.0.1:"+strconv.Itoa(port))
	if err != nil {
		return err
	}
	return waitFor(ctx, 60*time.Second, openShiftControllerManagerName, cp.ocm, func() bool {
		leases, err := kube.CoordinationV1().Leases(openShiftControllerManagerNamespace).List(ctx, metav1.ListOptions{})
		if err != nil {
			return false
		}
		for _, l := range leases.Items {
			if heldSince(&l, started) {
				return true
			}
		}
		return false
	})
}

// heldSince reports whether the lease was acquired or renewed after t by a holder.
func heldSince(l *coordinationv1.Lease, t time.Time) bool {
	if l.Spec.HolderIdentity == nil || *l.Spec.HolderIdentity == "" || l.Spec.RenewTime == nil {
		return false
	}
	return !l.Spec.RenewTime.Time.Before(t.Add(-time.Second))
}
