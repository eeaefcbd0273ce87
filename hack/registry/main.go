// Command registry serves an in-memory OCI distribution registry on a loopback port, so that the
// real openshift-apiserver of the integration tests has images to import (test/controlplane
// starts it), over plain HTTP or, with -tls-cert and -tls-key, over HTTPS; with -basic-auth it
// answers only a client that logs in as that user. Built from github.com/distribution/distribution/v3 with only the in-memory storage
// driver: the cloud drivers of the upstream command would bring code the tests never run.
package main

import (
	"context"
	"flag"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"

	"github.com/distribution/distribution/v3/configuration"
	"github.com/distribution/distribution/v3/registry"
	_ "github.com/distribution/distribution/v3/registry/auth/htpasswd"
	_ "github.com/distribution/distribution/v3/registry/storage/driver/inmemory"
	"golang.org/x/crypto/bcrypt"
)

func main() {
	addr := flag.String("addr", "127.0.0.1:5000", "loopback host:port to serve on")
	cert := flag.String("tls-cert", "", "PEM certificate to serve HTTPS with (with -tls-key); default: plain HTTP")
	key := flag.String("tls-key", "", "PEM key of -tls-cert")
	basicAuth := flag.String("basic-auth", "", "USER:PASSWORD a client must log in with (HTTP basic; only with -tls-cert)")
	flag.Parse()
	if (*cert == "") != (*key == "") {
		fmt.Fprintln(os.Stderr, "registry: -tls-cert and -tls-key go together")
		os.Exit(2)
	}
	if *basicAuth != "" && (*cert == "" || !strings.Contains(*basicAuth, ":")) {
		fmt.Fprintln(os.Stderr, "registry: -basic-auth takes USER:PASSWORD and needs -tls-cert (the password travels in every request)")
		os.Exit(2)
	}
	if err := serve(*addr, *cert, *key, *basicAuth); err != nil {
		fmt.Fprintln(os.Stderr, "registry:", err)
		os.Exit(1)
	}
}

func serve(addr, cert, key, basicAuth string) error {
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
	if basicAuth != "" {
		htpasswd, err := writeHtpasswd(basicAuth)
		if err != nil {
			return err
		}
		defer os.RemoveAll(filepath.Dir(htpasswd))
		config.Auth = configuration.Auth{"htpasswd": configuration.Parameters{"realm": "test-registry", "path": htpasswd}}
	}
	reg, err := registry.NewRegistry(context.Background(), config)
	if err != nil {
		return err
	}
	return reg.ListenAndServe()
}

// writeHtpasswd writes the one user of USER:PASSWORD, its password hashed with bcrypt as the
// htpasswd access controller requires, to a file of a new temporary folder.
func writeHtpasswd(userPassword string) (string, error) {
	user, password, _ := strings.Cut(userPassword, ":")
	hash, err := bcrypt.GenerateFromPassword([]byte(password), bcrypt.MinCost)
	if err != nil {
		return "", err
	}
	dir, err := os.MkdirTemp("", "test-registry-auth-")
	if err != nil {
		return "", err
	}
	path := filepath.Join(dir, "htpasswd")
	return path, os.WriteFile(path, []byte(user+":"+string(hash)+"\n"), 0o600)
}
