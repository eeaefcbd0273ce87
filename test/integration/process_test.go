package integration

import (
	"bytes"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/samples-operator-dev/cluster-samples-operator/test/controlplane"
)

var (
	binaryOnce sync.Once
	binaryPath string
	binaryErr  error
)

// OperatorBinaryEnv names the operator binary `make test` built with the shipped flags; without
// it the tests build one themselves.
const OperatorBinaryEnv = "OPERATOR_BINARY"

// operatorBinary is the operator binary, built once per test run, for tests that need a real
// process to kill or signal.
func operatorBinary(t *testing.T) string {
	t.Helper()
	binaryOnce.Do(func() {
		if prebuilt := os.Getenv(OperatorBinaryEnv); prebuilt != "" {
			if _, binaryErr = os.Stat(prebuilt); binaryErr == nil {
				binaryPath = prebuilt
			}
			return
		}
		dir, err := os.MkdirTemp("", "operator-bin-")
		if err != nil {
			binaryErr = err
			return
		}
		binaryPath = filepath.Join(dir, "cluster-samples-operator")
		// As the Makefile and the Dockerfile build it, so that what a test measures (memory)
		// is what ships.
		cmd := exec.Command("go", "build", "-trimpath", "-ldflags", "-s -w", "-o", binaryPath, "./cmd/cluster-samples-operator")
		cmd.Dir = controlplane.RepoRoot()
		cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
		if out, err := cmd.CombinedOutput(); err != nil {
			binaryErr = err
			t.Logf("%s", out)
		}
	})
	if binaryErr != nil {
		t.Fatalf("building the operator: %v", binaryErr)
	}
	return binaryPath
}

// operatorProcess is the operator binary running against the env's control plane.
type operatorProcess struct {
	cmd    *exec.Cmd
	output *syncBuffer
	done   chan struct{}
}

type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// startProcess runs the operator binary with a loopback registry for its probe and no metrics
// server, plus extra flags.
func (e *env) startProcess(t *testing.T, version string, extra ...string) *operatorProcess {
	t.Helper()
	return e.startProcessWithEnv(t, version, nil, append([]string{"--metrics-bind-address", ""}, extra...)...)
}

// startProcessWithEnv runs the operator binary on the test inventory with a loopback registry for
// its probe, extra environment variables (NAME=value) and extra flags.
func (e *env) startProcessWithEnv(t *testing.T, version string, environ []string, extra ...string) *operatorProcess {
	t.Helper()
	registry := httptest.NewTLSServer(http.NotFoundHandler())
	t.Cleanup(registry.Close)
	args := append([]string{"operator",
		"--kubeconfig", e.cp.OperatorKubeconfig,
		"--registry-probe-address", strings.TrimPrefix(registry.URL, "https://"), "--registry-probe-insecure-skip-verify",
		"--inventory-dir", testInventoryDir(), // as defaultOptions; a later --inventory-dir in extra wins
	}, extra...)
	return startBinary(t, append(append(os.Environ(), "RELEASE_VERSION="+version), environ...), args...)
}

// startBinary runs the operator binary with exactly this environment and these arguments, and
// kills it when the test ends.
func startBinary(t *testing.T, environ []string, args ...string) *operatorProcess {
	t.Helper()
	p, err := launchBinary(operatorBinary(t), environ, args...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		p.signal(syscall.SIGKILL)
		<-p.done
		if t.Failed() {
			t.Logf("operator process output (last 3000 bytes):\n%s", tail(p.output.String(), 3000))
		}
	})
	return p
}

// launchBinary starts bin (the operator binary built by operatorBinary) with exactly this
// environment and these arguments; the caller stops it. It may be called from any goroutine.
func launchBinary(bin string, environ []string, args ...string) (*operatorProcess, error) {
	cmd := exec.Command(bin, args...)
	cmd.Env = environ
	p := &operatorProcess{cmd: cmd, output: &syncBuffer{}, done: make(chan struct{})}
	cmd.Stdout, cmd.Stderr = p.output, p.output
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	go func() { _ = cmd.Wait(); close(p.done) }()
	return p, nil
}

func (p *operatorProcess) signal(sig syscall.Signal) {
	select {
	case <-p.done:
	default:
		_ = p.cmd.Process.Signal(sig)
	}
}

// wait returns the exit code, or -1 when the process did not exit within the timeout.
func (p *operatorProcess) wait(timeout time.Duration) int {
	select {
	case <-p.done:
		return p.cmd.ProcessState.ExitCode()
	case <-time.After(timeout):
		return -1
	}
}

func tail(s string, n int) string {
	if len(s) > n {
		return s[len(s)-n:]
	}
	return s
}
