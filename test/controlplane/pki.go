package controlplane

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"fmt"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"time"
)

// pki is the key material of one control plane: a CA, the kube-apiserver's serving certificate
// for 127.0.0.1, and the service-account signing key. All of it lives in the control plane's
// temporary directory and dies with it.
type pki struct {
	caPEM            []byte
	servingCertFile  string
	servingKeyFile   string
	saSigningKeyFile string
	saPublicKeyFile  string

	// Only for the real openshift-apiserver (newPKI with forOpenShiftAPIServer): a separate CA
	// for the front proxy and the client certificate kube-apiserver proxies with, and the
	// server's serving certificate, signed by the CA above, for the Service name it is reached
	// under and for 127.0.0.1, where the harness checks its health.
	frontProxyCAFile         string
	frontProxyClientCertFile string
	frontProxyClientKeyFile  string
	osaServingCertFile       string
	osaServingKeyFile        string
}

func newPKI(dir string, forOpenShiftAPIServer bool) (*pki, error) {
	caCert, caKey, caDER, err := newCA("local-control-plane-ca")
	if err != nil {
		return nil, err
	}
	now := time.Now()

	servingKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, err
	}
	servingTemplate := &x509.Certificate{
		SerialNumber: big.NewInt(2),
		Subject:      pkix.Name{CommonName: "kube-apiserver"},
		NotBefore:    now.Add(-time.Hour),
		NotAfter:     now.Add(24 * time.Hour),
		KeyUsage:     x509.KeyUsageDigitalSignature,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		IPAddresses:  []net.IP{net.ParseIP("127.0.0.1")},
		DNSNames:     []string{"localhost"},
	}
	servingDER, err := x509.CreateCertificate(rand.Reader, servingTemplate, caCert, &servingKey.PublicKey, caKey)
	if err != nil {
		return nil, err
	}

	saKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, err
	}

	p := &pki{
		caPEM:            pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: caDER}),
		servingCertFile:  filepath.Join(dir, "serving.crt"),
		servingKeyFile:   filepath.Join(dir, "serving.key"),
		saSigningKeyFile: filepath.Join(dir, "sa.key"),
		saPublicKeyFile:  filepath.Join(dir, "sa.pub"),
	}
	if err := writePEM(p.servingCertFile, "CERTIFICATE", servingDER); err != nil {
		return nil, err
	}
	if err := writeECKey(p.servingKeyFile, servingKey); err != nil {
		return nil, err
	}
	if err := writeECKey(p.saSigningKeyFile, saKey); err != nil {
		return nil, err
	}
	saPub, err := x509.MarshalPKIXPublicKey(&saKey.PublicKey)
	if err != nil {
		return nil, err
	}
	if err := writePEM(p.saPublicKeyFile, "PUBLIC KEY", saPub); err != nil {
		return nil, err
	}
	if forOpenShiftAPIServer {
		if err := p.addOpenShiftAPIServer(dir, caCert, caKey); err != nil {
			return nil, err
		}
	}
	return p, nil
}

func newCA(name string) (*x509.Certificate, *ecdsa.PrivateKey, []byte, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, nil, nil, err
	}
	now := time.Now()
	template := &x509.Certificate{
		SerialNumber:          big.NewInt(1),
		Subject:               pkix.Name{CommonName: name},
		NotBefore:             now.Add(-time.Hour),
		NotAfter:              now.Add(24 * time.Hour),
		KeyUsage:              x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature,
		BasicConstraintsValid: true,
		IsCA:                  true,
	}
	der, err := x509.CreateCertificate(rand.Reader, template, template, &key.PublicKey, key)
	if err != nil {
		return nil, nil, nil, err
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		return nil, nil, nil, err
	}
	return cert, key, der, nil
}

// issue writes a key and a certificate for template, signed by ca, to certFile and keyFile.
func issue(template, ca *x509.Certificate, caKey *ecdsa.PrivateKey, certFile, keyFile string) error {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return err
	}
	now := time.Now()
	template.NotBefore, template.NotAfter = now.Add(-time.Hour), now.Add(24*time.Hour)
	template.KeyUsage = x509.KeyUsageDigitalSignature
	der, err := x509.CreateCertificate(rand.Reader, template, ca, &key.PublicKey, caKey)
	if err != nil {
		return err
	}
	if err := writePEM(certFile, "CERTIFICATE", der); err != nil {
		return err
	}
	return writeECKey(keyFile, key)
}

func (p *pki) addOpenShiftAPIServer(dir string, ca *x509.Certificate, caKey *ecdsa.PrivateKey) error {
	p.frontProxyCAFile = filepath.Join(dir, "front-proxy-ca.crt")
	p.frontProxyClientCertFile = filepath.Join(dir, "front-proxy-client.crt")
	p.frontProxyClientKeyFile = filepath.Join(dir, "front-proxy-client.key")
	p.osaServingCertFile = filepath.Join(dir, "openshift-apiserver.crt")
	p.osaServingKeyFile = filepath.Join(dir, "openshift-apiserver.key")

	proxyCA, proxyCAKey, proxyCADER, err := newCA("local-front-proxy-ca")
	if err != nil {
		return err
	}
	if err := writePEM(p.frontProxyCAFile, "CERTIFICATE", proxyCADER); err != nil {
		return err
	}
	client := &x509.Certificate{
		SerialNumber: big.NewInt(2),
		Subject:      pkix.Name{CommonName: frontProxyClientName},
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth},
	}
	if err := issue(client, proxyCA, proxyCAKey, p.frontProxyClientCertFile, p.frontProxyClientKeyFile); err != nil {
		return err
	}
	serving := &x509.Certificate{
		SerialNumber: big.NewInt(3),
		Subject:      pkix.Name{CommonName: openShiftAPIServerHost},
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		DNSNames:     []string{openShiftAPIServerHost, openShiftAPIServerHost + ".cluster.local"},
		IPAddresses:  []net.IP{net.ParseIP("127.0.0.1")},
	}
	return issue(serving, ca, caKey, p.osaServingCertFile, p.osaServingKeyFile)
}

func writeECKey(path string, key *ecdsa.PrivateKey) error {
	der, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		return err
	}
	return writePEM(path, "EC PRIVATE KEY", der)
}

func writePEM(path, blockType string, der []byte) error {
	if err := os.WriteFile(path, pem.EncodeToMemory(&pem.Block{Type: blockType, Bytes: der}), 0o600); err != nil {
		return fmt.Errorf("writing %s: %w", path, err)
	}
	return nil
}
