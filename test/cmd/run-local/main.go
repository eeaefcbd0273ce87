// Command run-local starts a local control plane, applies manifests/, runs the image import
// emulator and the operator out of cluster, and prints the KUBECONFIG line to use with kubectl
// or oc. Ctrl-C (or SIGTERM) stops everything it started.
package main

import (
	"context"
	"flag"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	imageclient "github.com/openshift/client-go/image/clientset/versioned"
	"k8s.io/klog/v2"

	"github.com/samples-operator-dev/cluster-samples-operator/test/controlplane"
	"github.com/samples-operator-dev/cluster-samples-operator/test/emulator"
)

func main() {
	binDir := flag.String("bin-dir", "_output/bin", "directory with etcd, kube-apiserver and cluster-samples-operator")
	releaseVersion := flag.String("release-version", "0.0.1-local", "RELEASE_VERSION given to the operator")
	workDir := flag.String("dir", "_output/run-local", "where the control plane keeps its data, logs and kubeconfigs")
	metricsAddr := flag.String("metrics-bind-address", "127.0.0.1:60000", "where the operator serves /metrics; loopback only")
	flag.Parse()
	if err := run(*binDir, *workDir, *releaseVersion, *metricsAddr); err != nil {
		fmt.Fprintln(os.Stderr, "run-local:", err)
		os.Exit(1)
	}
}

func run(binDir, workDir, releaseVersion, metricsAddr string) error {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()

	binDir, _ = filepath.Abs(binDir)
	workDir, _ = filepath.Abs(workDir)
	// A fresh cluster every time: stale etcd data from an earlier run would hide bugs.
	if err := os.RemoveAll(workDir); err != nil {
		return err
	}
	if err := os.MkdirAll(workDir, 0o755); err != nil {
		return err
	}

	fmt.Println("Starting etcd and kube-apiserver on 127.0.0.1 ...")
	cp, err := controlplane.Start(ctx, controlplane.Options{BinDir: binDir, Dir: workDir})
	if err != nil {
		return err
	}
	defer cp.Stop()

	applied, err := controlplane.ApplyDir(ctx, cp.AdminConfig, filepath.Join(controlplane.RepoRoot(), "manifests"))
	if err != nil {
		return fmt.Errorf("applying manifests/: %w", err)
	}
	fmt.Printf("Applied %d objects from manifests/", len(applied.Applied))
	if len(applied.Skipped) > 0 {
		fmt.Printf(" (skipped, not served locally: %v)", applied.Skipped)
	}
	fmt.Println()

	importer := emulator.New(imageclient.NewForConfigOrDie(cp.AdminConfig), "openshift")
	if err := importer.ResolveMirrorSets(cp.AdminConfig); err != nil {
		return err
	}
	go func() {
		if err := importer.Run(ctx); err != nil && ctx.Err() == nil {
			klog.ErrorS(err, "import emulator stopped")
		}
	}()

	// The operator's bootstrap probe must not leave this machine: a TLS listener on loopback
	// stands in for the samples registry.
	registry := httptest.NewTLSServer(http.NotFoundHandler())
	defer registry.Close()
	registryAddr := strings.TrimPrefix(registry.URL, "https://")

	operatorLog := filepath.Join(workDir, "operator.log")
	logFile, err := os.Create(operatorLog)
	if err != nil {
		return err
	}
	defer logFile.Close()
	operator := exec.Command(filepath.Join(binDir, "cluster-samples-operator"), "operator",
		"--kubeconfig", operatorKubeconfig(cp),
		"--registry-probe-address", registryAddr, "--registry-probe-insecure-skip-verify",
		"--metrics-bind-address", metricsAddr, "--tls-cert-file", cp.ServingCertFile, "--tls-private-key-file", cp.ServingKeyFile)
	operator.Env = append(os.Environ(), "RELEASE_VERSION="+releaseVersion)
	operator.Stdout = logFile
	operator.Stderr = logFile
	operator.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	if err := operator.Start(); err != nil {
		return fmt.Errorf("starting the operator: %w", err)
	}
	operatorDone := make(chan error, 1)
	go func() { operatorDone <- operator.Wait() }()

	fmt.Printf(`
The local control plane is up. In another shell:

  export KUBECONFIG=%s
  %s get crd
  %s get config.samples cluster -o yaml

Metrics (scrapes are authorized by the API server; the admin may):
  curl --cacert %s -H "Authorization: Bearer %s" https://%s/metrics

Operator log: %s
Press Ctrl-C to stop everything.
`, cp.AdminKubeconfig, filepath.Join(binDir, "kubectl"), filepath.Join(binDir, "kubectl"), cp.CAFile, cp.AdminConfig.BearerToken, metricsAddr, operatorLog)

	operatorRunning := true
	select {
	case <-ctx.Done():
		fmt.Println("\nStopping the operator, kube-apiserver and etcd ...")
	case err := <-operatorDone:
		operatorRunning = false
		fmt.Printf("\nThe operator exited (%v); see %s. Stopping the control plane ...\n", err, operatorLog)
	}
	if operatorRunning {
		_ = syscall.Kill(-operator.Process.Pid, syscall.SIGTERM)
		select {
		case <-operatorDone:
		case <-time.After(15 * time.Second):
			_ = syscall.Kill(-operator.Process.Pid, syscall.SIGKILL)
			<-operatorDone
		}
	}
	return nil
}

// operatorKubeconfig picks the identity the operator runs as: its own service account once
// manifests/ grants it RBAC, the admin before that.
func operatorKubeconfig(cp *controlplane.ControlPlane) string {
	if _, err := os.Stat(filepath.Join(controlplane.RepoRoot(), "manifests", "03-rbac.yaml")); err == nil {
		return cp.OperatorKubeconfig
	}
	return cp.AdminKubeconfig
}
