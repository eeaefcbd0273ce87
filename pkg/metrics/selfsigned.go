package metrics

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"time"

	"github.com/openshift/library-go/pkg/crypto"
	"k8s.io/apimachinery/pkg/util/sets"
)

// selfSignedLifetime bounds the in-memory certificate. It is made anew at every start, so only a
// process that runs for longer than this outlives it.
const selfSignedLifetime = 365 * 24 * time.Hour

// CertFilesAbsent reports whether neither the certificate nor the key exists: the case of a
// process started outside a cluster, where no service CA secret is mounted. One file without the
// other is a broken mount, not an absent certificate, and so is any error other than not-exist:
// those are left for the loading to report.
func CertFilesAbsent(certFile, keyFile string) bool {
	for _, f := range []string{certFile, keyFile} {
		if _, err := os.Stat(f); !errors.Is(err, fs.ErrNotExist) {
			return false
		}
	}
	return true
}

// selfSignedHosts are the names a scraper on the same machine dials; the host name covers a
// scraper that reaches the process by it (a pod's name is its host name).
func selfSignedHosts(hostname string) []string {
	hosts := []string{"localhost", "127.0.0.1", "::1"}
	if hostname != "" && hostname != "localhost" {
		hosts = append(hosts, hostname)
	}
	return hosts
}

// selfSignedCertificate makes a CA and a serving certificate for hosts signed by it, and returns
// the certificate with the CA after it, so that a client can pin the CA from the handshake.
func selfSignedCertificate(hosts []string, lifetime time.Duration) (*tls.Certificate, error) {
	if len(hosts) == 0 {
		return nil, errors.New("a self-signed certificate needs at least one host")
	}
	// The time in the CA's name tells the certificates of successive runs apart.
	caConfig, err := crypto.MakeSelfSignedCAConfigForDuration(fmt.Sprintf("cluster-samples-operator-metrics-signer@%d", time.Now().Unix()), lifetime)
	if err != nil {
		return nil, fmt.Errorf("making a self-signed CA: %w", err)
	}
	ca := &crypto.CA{Config: caConfig, SerialGenerator: &crypto.RandomSerialGenerator{}}
	serving, err := ca.MakeServerCertForDuration(sets.New(hosts...), lifetime)
	if err != nil {
		return nil, fmt.Errorf("making a self-signed serving certificate: %w", err)
	}
	certPEM, keyPEM, err := serving.GetPEMBytes()
	if err != nil {
		return nil, err
	}
	cert, err := tls.X509KeyPair(certPEM, keyPEM)
	if err != nil {
		return nil, err
	}
	if cert.Leaf == nil { // GODEBUG=x509keypairleaf=0
		if cert.Leaf, err = x509.ParseCertificate(cert.Certificate[0]); err != nil {
			return nil, err
		}
	}
	return &cert, nil
}
