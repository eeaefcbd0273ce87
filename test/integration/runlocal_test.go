package integration

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	samplesclient "github.com/openshift/client-go/samples/clientset/versioned"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/samples-operator-dev/cluster-samples-operator/test/controlplane"
)

// runLocalStartGuard only guards against a hang: whether the start failed is run-local's to say
// (it exits), by the control plane's own bounds for each server (etcd 60 s, kube-apiserver
// 90 s, then the real openshift-apiserver's), whose sum a start on a loaded machine may near.
// A bound of 90 s for the whole failed twice in clean-clone CI runs beside two busy-looping
// cores, with run-local still starting its servers.
const runLocalStartGuard = 5 * time.Minute

// TestRunLocal runs what `make run-local` runs: the printed KUBECONFIG reaches an API server that
// serves the CRDs and on which the operator creates its Config; SIGINT (Ctrl-C) stops everything.
func TestRunLocal(t *testing.T) {
	parallel(t, 0)
	root := controlplane.RepoRoot()
	binDir := t.TempDir()
	for _, name := range []string{"etcd", "kube-apiserver"} {
		if err := os.Symlink(filepath.Join(root, "_output", "bin", name), filepath.Join(binDir, name)); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Symlink(operatorBinary(t), filepath.Join(binDir, "cluster-samples-operator")); err != nil {
		t.Fatal(err)
	}
	// `make test` builds the wrapper once, as `make run-local` runs it; a plain `go test` builds it.
	runLocal := os.Getenv("RUN_LOCAL_BINARY")
	if runLocal == "" {
		runLocal = filepath.Join(binDir, "run-local")
		build := exec.Command("go", "build", "-o", runLocal, "./test/cmd/run-local")
		build.Dir = root
		if out, err := build.CombinedOutput(); err != nil {
			t.Fatalf("building run-local: %v\n%s", err, out)
		}
	}

	workDir := filepath.Join(t.TempDir(), "run-local")
	// A port of its own: the default 127.0.0.1:60000 may be held by something this test does not
	// control, and the operator exits when it cannot serve metrics.
	cmd := exec.Command(runLocal, "--bin-dir", binDir, "--dir", workDir, "--metrics-bind-address", freeLoopbackAddr(t))
	cmd.Dir = root
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var printed syncBuffer
	cmd.Stderr = &printed
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	kubeconfig := make(chan string, 1)
	go func() {
		scanner := bufio.NewScanner(stdout)
		for scanner.Scan() {
			_, _ = printed.Write(append(scanner.Bytes(), '\n'))
			if line := strings.TrimSpace(scanner.Text()); strings.HasPrefix(line, "export KUBECONFIG=") {
				kubeconfig <- strings.TrimPrefix(line, "export KUBECONFIG=")
			}
		}
		done <- cmd.Wait()
	}()
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		if t.Failed() {
			operatorLog, _ := os.ReadFile(filepath.Join(workDir, "operator.log"))
			t.Logf("run-local printed:\n%s\noperator.log (last 4000 bytes):\n%s", printed.String(), tail(string(operatorLog), 4000))
		}
	})

	var path string
	select {
	case path = <-kubeconfig:
	case err := <-done:
		t.Fatalf("run-local exited before printing KUBECONFIG: %v", err)
	case <-time.After(runLocalStartGuard):
		t.Fatalf("run-local printed no KUBECONFIG line within %s", runLocalStartGuard)
	}
	cfg, err := clientcmd.BuildConfigFromFlags("", path)
	if err != nil {
		t.Fatal(err)
	}
	crds, err := dynamic.NewForConfigOrDie(cfg).Resource(schema.GroupVersionResource{Group: "apiextensions.k8s.io", Version: "v1", Resource: "customresourcedefinitions"}).
		List(context.Background(), metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	names := map[string]bool{}
	for _, crd := range crds.Items {
		names[crd.GetName()] = true
	}
	for _, want := range []string{"configs.samples.operator.openshift.io", "clusteroperators.config.openshift.io"} {
		if !names[want] {
			t.Errorf("CRD %s is not served; have %v", want, names)
		}
	}
	// ImageStreams and Templates come from CRDs on the stand-ins and from the aggregated
	// openshift-apiserver on the real one: either way discovery lists them.
	discovery := kubernetes.NewForConfigOrDie(cfg).Discovery()
	for groupVersion, resource := range map[string]string{"image.openshift.io/v1": "imagestreams", "template.openshift.io/v1": "templates"} {
		list, err := discovery.ServerResourcesForGroupVersion(groupVersion)
		served := false
		for _, r := range listedResources(list) {
			served = served || r == resource
		}
		if !served {
			t.Errorf("%s %s is not served (%v)", groupVersion, resource, err)
		}
	}
	eventually(t, 30*time.Second, func() (bool, string) {
		select {
		case err := <-done:
			t.Fatalf("run-local exited while the test waited for Config cluster: %v", err)
		default:
		}
		_, err := samplesclient.NewForConfigOrDie(cfg).SamplesV1().Configs().Get(context.Background(), "cluster", metav1.GetOptions{})
		return err == nil, fmt.Sprintf("the operator has not created Config cluster: %v", err)
	})

	if err := cmd.Process.Signal(syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	select {
	case <-done:
	case <-time.After(45 * time.Second):
		t.Fatal("run-local did not stop within 45s of SIGINT")
	}
	if left := processesMentioning(workDir); len(left) > 0 {
		t.Errorf("processes left behind after Ctrl-C: %v", left)
	}
}

// listedResources names the resources of a discovery answer (none for a nil one).
func listedResources(list *metav1.APIResourceList) []string {
	if list == nil {
		return nil
	}
	var names []string
	for _, r := range list.APIResources {
		names = append(names, r.Name)
	}
	return names
}

// processesMentioning lists the PIDs whose command line contains s.
func processesMentioning(s string) []string {
	entries, _ := os.ReadDir("/proc")
	var pids []string
	for _, e := range entries {
		cmdline, err := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
		if err == nil && strings.Contains(string(cmdline), s) {
			pids = append(pids, e.Name()+": "+strings.ReplaceAll(string(cmdline), "\x00", " "))
		}
	}
	return pids
}
