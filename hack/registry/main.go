// Command registry serves an in-memory OCI distribution registry on a loopback port, so that the
// real openshift-apiserver of the integration tests has images to import (test/controlplane
// starts it), over plain HTTP or, with -tls-cert and -tls-key, over HTTPS. Built from github.com/distribution/distribution/v3 with only the in-memory storage
// driver: the cloud drivers of the upstream command would bring code the tests never run.
package main

import (
	"context"
	"flag"
	"fmt"
	"net"
	"os"

	"github.com/distribution/distribution/v3/configuration"
	"github.com/distribution/distribution/v3/registry"
	_ "github.com/distribution/distribution/v3/registry/storage/driver/inmemory"
)

func main() {
	addr := flag.String("addr", "127.0.0.1:5000", "loopback host:port to serve on")
	cert := flag.String("tls-cert", "", "PEM certificate to serve HTTPS with (with -tls-key); default: plain HTTP")
	key := flag.String("tls-key", "", "PEM key of -tls-cert")
	flag.Parse()
	if (*cert == "") != (*key == "") {
		fmt.Fprintln(os.Stderr, "registry: -tls-cert and -tls-key go together")
		os.Exit(2)
	}
	if err := serve(*addr, *cert, *key); err != nil {
		fmt.Fprintln(os.Stderr, "registry:", err)
		os.Exit(1)
	}
}

func serve(addr, cert, key string) error {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return err
	}
	if ip := net.ParseIP(host); ip == nil || !ip.IsLoopback() {
		return fmt.Errorf("%s is not a loopback address: the test registry never listens beyond the machine", addr)
	}
	// Traces would go to an OTLP collector on localhost:4318 by default.
	if os.Getenv("OTEL_TRACES_EXPORTER") == "" {
		os.Setenv("OTEL_TRACES_EXPORTER", "none")
	}
	config := &configuration.Configuration{
		Version: configuration.MajorMinorVersion(0, 1),
		Storage: configuration.Storage{
			"inmemory": configuration.Parameters{},
			// Tests replace an image under the same tag; deletes keep that honest.
			"delete": configuration.Parameters{"enabled": true},
		},
	}
	config.Log.Level = "warn"
	config.Log.AccessLog.Disabled = true
	config.HTTP.Addr = addr
	config.HTTP.Net = "tcp"
	config.HTTP.Secret = "test-registry-upload-state"
	config.HTTP.TLS.Certificate, config.HTTP.TLS.Key = cert, key
	reg, err := registry.NewRegistry(context.Background(), config)
	if err != nil {
		return err
	}
	return reg.ListenAndServe()
}
