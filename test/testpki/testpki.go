// Package testpki makes the certificate authorities and certificates of the servers the tests
// run: the local control plane, the admission webhooks, the service CA that signs the metrics
// certificate, a metrics server of a test's own. Every key is a fresh P-256 key that lives as
// long as the test's temporary files.
package testpki

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"fmt"
	"math/big"
	"net"
	"os"
	"sync"
	"time"
)

// validity is long enough for the longest test run and short enough that nothing made here is
// worth keeping.
const validity = 7 * 24 * time.Hour

// CA is a certificate authority that signs what Issue is given.
type CA struct {
	Cert *x509.Certificate
	DER  []byte
	key  *ecdsa.PrivateKey

	mu     sync.Mutex
	serial int64
}

// NewCA makes a self-signed CA named commonName.
func NewCA(commonName string) (*CA, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, err
	}
	now := time.Now()
	template := &x509.Certificate{
		SerialNumber:          big.NewInt(1),
		Subject:               pkix.Name{CommonName: commonName},
		NotBefore:             now.Add(-time.Hour),
		NotAfter:              now.Add(validity),
		KeyUsage:              x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature,
		BasicConstraintsValid: true,
		IsCA:                  true,
	}
	der, err := x509.CreateCertificate(rand.Reader, template, template, &key.PublicKey, key)
	if err != nil {
		return nil, err
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		return nil, err
	}
	return &CA{Cert: cert, DER: der, key: key, serial: 1}, nil
}

// PEM is the CA's certificate, for a client's trust bundle.
func (ca *CA) PEM() []byte { return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: ca.DER}) }

// Pool trusts the CA alone.
func (ca *CA) Pool() *x509.CertPool {
	pool := x509.NewCertPool()
	pool.AddCert(ca.Cert)
	return pool
}

// WriteCert writes the CA's certificate to path.
func (ca *CA) WriteCert(path string) error { return WritePEM(path, "CERTIFICATE", ca.DER) }

// Issue signs a certificate of template (its subject, usages and names: see ServerCert and
// ClientCert) for a fresh key. The serial number and validity are set here.
func (ca *CA) Issue(template *x509.Certificate) (*Pair, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, err
	}
	ca.mu.Lock()
	ca.serial++
	serial := ca.serial
	ca.mu.Unlock()
	t := *template
	now := time.Now()
	t.SerialNumber = big.NewInt(serial)
	t.NotBefore, t.NotAfter = now.Add(-time.Hour), now.Add(validity)
	t.KeyUsage = x509.KeyUsageDigitalSignature
	der, err := x509.CreateCertificate(rand.Reader, &t, ca.Cert, &key.PublicKey, ca.key)
	if err != nil {
		return nil, err
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		return nil, err
	}
	return &Pair{Cert: cert, DER: der, Key: key}, nil
}

// ServerCert is the template of a serving certificate for hosts, each an IP address or a DNS
// name.
func ServerCert(commonName string, hosts ...string) *x509.Certificate {
	t := &x509.Certificate{
		Subject:     pkix.Name{CommonName: commonName},
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	}
	for _, h := range hosts {
		if ip := net.ParseIP(h); ip != nil {
			t.IPAddresses = append(t.IPAddresses, ip)
		} else {
			t.DNSNames = append(t.DNSNames, h)
		}
	}
	return t
}

// ClientCert is the template of a client certificate for commonName.
func ClientCert(commonName string) *x509.Certificate {
	return &x509.Certificate{
		Subject:     pkix.Name{CommonName: commonName},
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth},
	}
}

// Pair is a certificate and its key.
type Pair struct {
	Cert *x509.Certificate
	DER  []byte
	Key  *ecdsa.PrivateKey
}

// TLS is the pair for a tls.Config.
func (p *Pair) TLS() tls.Certificate {
	return tls.Certificate{Certificate: [][]byte{p.DER}, PrivateKey: p.Key, Leaf: p.Cert}
}

// WriteFiles writes the certificate and the key, PEM-encoded, as servers read them.
func (p *Pair) WriteFiles(certFile, keyFile string) error {
	if err := WritePEM(certFile, "CERTIFICATE", p.DER); err != nil {
		return err
	}
	return WriteECKey(keyFile, p.Key)
}

// WriteECKey writes key PEM-encoded (SEC 1, "EC PRIVATE KEY").
func WriteECKey(path string, key *ecdsa.PrivateKey) error {
	der, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		return err
	}
	return WritePEM(path, "EC PRIVATE KEY", der)
}

// WritePEM writes one PEM block, readable by the test's user only.
func WritePEM(path, blockType string, der []byte) error {
	if err := os.WriteFile(path, pem.EncodeToMemory(&pem.Block{Type: blockType, Bytes: der}), 0o600); err != nil {
		return fmt.Errorf("writing %s: %w", path, err)
	}
	return nil
}
