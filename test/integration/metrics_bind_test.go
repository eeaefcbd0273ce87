package integration

import (
	"context"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/samples-operator-dev/cluster-samples-operator/pkg/operator"
)

// TestOperatorStopsWhenItCannotServeMetrics: a metrics port another process holds is an error at
// start, so the process exits and the kubelet shows why, instead of running on without metrics
// while /healthz, which that server serves, cannot be reached.
func TestOperatorStopsWhenItCannotServeMetrics(t *testing.T) {
	parallel(t, 0)
	e := newEnv(t)
	taken, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer taken.Close()
	certFile, keyFile, _ := servingCert(t)
	opts := defaultOptions()
	opts.MetricsBindAddress, opts.TLSCertFile, opts.TLSKeyFile = taken.Addr().String(), certFile, keyFile

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan error, 1)
	go func() { done <- operator.Run(ctx, e.cp.OperatorConfig, opts) }()
	select {
	case err := <-done:
		if err == nil || !strings.Contains(err.Error(), "address already in use") {
			t.Errorf("operator returned %v, want the bind error", err)
		}
	case <-time.After(30 * time.Second):
		t.Fatalf("the operator kept running without its metrics server")
	}
}
