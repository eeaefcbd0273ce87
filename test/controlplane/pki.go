package controlplane

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"path/filepath"

	"github.com/samples-operator-dev/cluster-samples-operator/test/testpki"
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
	// The test registries' own CA, which the real openshift-apiserver trusts through
	// SSL_CERT_FILE (a cluster trusts a mirror's CA through additionalTrustedCA), and the
	// certificate for 127.0.0.1 it signed, which every registry started with TLS serves.
	registryCAFile   string
	registryCertFile string
	registryKeyFile  string
}

func newPKI(dir string, forOpenShiftAPIServer bool) (*pki, error) {
	ca, err := testpki.NewCA("local-control-plane-ca")
	if err != nil {
		return nil, err
	}
	serving, err := ca.Issue(testpki.ServerCert("kube-apiserver", "127.0.0.1", "localhost"))
	if err != nil {
		return nil, err
	}
	saKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, err
	}

	p := &pki{
		caPEM:            ca.PEM(),
		servingCertFile:  filepath.Join(dir, "serving.crt"),
		servingKeyFile:   filepath.Join(dir, "serving.key"),
		saSigningKeyFile: filepath.Join(dir, "sa.key"),
		saPublicKeyFile:  filepath.Join(dir, "sa.pub"),
	}
	if err := serving.WriteFiles(p.servingCertFile, p.servingKeyFile); err != nil {
		return nil, err
	}
	if err := testpki.WriteECKey(p.saSigningKeyFile, saKey); err != nil {
		return nil, err
	}
	saPub, err := x509.MarshalPKIXPublicKey(&saKey.PublicKey)
	if err != nil {
		return nil, err
	}
	if err := testpki.WritePEM(p.saPublicKeyFile, "PUBLIC KEY", saPub); err != nil {
		return nil, err
	}
	if forOpenShiftAPIServer {
		if err := p.addOpenShiftAPIServer(dir, ca); err != nil {
			return nil, err
		}
	}
	return p, nil
}

func (p *pki) addOpenShiftAPIServer(dir string, ca *testpki.CA) error {
	p.frontProxyCAFile = filepath.Join(dir, "front-proxy-ca.crt")
	p.frontProxyClientCertFile = filepath.Join(dir, "front-proxy-client.crt")
	p.frontProxyClientKeyFile = filepath.Join(dir, "front-proxy-client.key")
	p.osaServingCertFile = filepath.Join(dir, "openshift-apiserver.crt")
	p.osaServingKeyFile = filepath.Join(dir, "openshift-apiserver.key")

	proxyCA, err := testpki.NewCA("local-front-proxy-ca")
	if err != nil {
		return err
	}
	if err := proxyCA.WriteCert(p.frontProxyCAFile); err != nil {
		return err
	}
	client, err := proxyCA.Issue(testpki.ClientCert(frontProxyClientName))
	if err != nil {
		return err
	}
	if err := client.WriteFiles(p.frontProxyClientCertFile, p.frontProxyClientKeyFile); err != nil {
		return err
	}
	serving, err := ca.Issue(testpki.ServerCert(openShiftAPIServerHost,
		openShiftAPIServerHost, openShiftAPIServerHost+".cluster.local", "127.0.0.1"))
	if err != nil {
		return err
	}
	if err := serving.WriteFiles(p.osaServingCertFile, p.osaServingKeyFile); err != nil {
		return err
	}
	return p.addRegistry(dir)
}

// addRegistry makes the registries' CA and their serving certificate. The CA is not the
// control plane's: what trusts it trusts the registries and nothing else.
func (p *pki) addRegistry(dir string) error {
	p.registryCAFile = filepath.Join(dir, "registry-ca.crt")
	p.registryCertFile = filepath.Join(dir, "registry.crt")
	p.registryKeyFile = filepath.Join(dir, "registry.key")
	ca, err := testpki.NewCA("local-registry-ca")
	if err != nil {
		return err
	}
	if err := ca.WriteCert(p.registryCAFile); err != nil {
		return err
	}
	serving, err := ca.Issue(testpki.ServerCert("local-registry", "127.0.0.1", "localhost"))
	if err != nil {
		return err
	}
	return serving.WriteFiles(p.registryCertFile, p.registryKeyFile)
}
