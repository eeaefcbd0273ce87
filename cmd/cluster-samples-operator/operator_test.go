package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestSelfSignedServingOnlyWhenNothingWasGiven(t *testing.T) {
	dir := t.TempDir()
	absent := operatorFlags{metricsBindAddress: ":60000", tlsCertFile: filepath.Join(dir, "tls.crt"), tlsKeyFile: filepath.Join(dir, "tls.key")}
	given := func(names ...string) func(string) bool {
		return func(flag string) bool {
			for _, n := range names {
				if n == flag {
					return true
				}
			}
			return false
		}
	}

	if !selfSignedServing(given(), &absent) {
		t.Error("no flags and no default files: want a self-signed certificate")
	}
	// A file the user named and that is missing must stop the operator, not be papered over.
	for _, flag := range []string{tlsCertFlag, tlsKeyFlag} {
		if selfSignedServing(given(flag), &absent) {
			t.Errorf("--%s given: want no self-signed certificate", flag)
		}
	}
	noServer := absent
	noServer.metricsBindAddress = ""
	if selfSignedServing(given(), &noServer) {
		t.Error("no metrics server: want no self-signed certificate")
	}
	// The service CA's secret is mounted (in a cluster): serve it.
	if err := os.WriteFile(absent.tlsCertFile, []byte("x"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(absent.tlsKeyFile, []byte("x"), 0o600); err != nil {
		t.Fatal(err)
	}
	if selfSignedServing(given(), &absent) {
		t.Error("default files present: want them served, not a self-signed certificate")
	}
}

// The health listener is the metrics server's second one: asked for without that server, the
// operator refuses to start rather than run without the probes' listener.
func TestHealthListenerNeedsTheMetricsServer(t *testing.T) {
	cmd := newOperatorCommand()
	cmd.SetArgs([]string{"--metrics-bind-address=", "--" + healthBindFlag + "=127.0.0.1:0"})
	cmd.SilenceUsage, cmd.SilenceErrors = true, true
	if err := cmd.Execute(); err == nil || !strings.Contains(err.Error(), "needs the metrics server") {
		t.Fatalf("Execute: %v, want the health listener refused without the metrics server", err)
	}
}
