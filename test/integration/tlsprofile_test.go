package integration

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"net"
	"testing"
	"time"

	configv1 "github.com/openshift/api/config/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// TestMetricsServerFollowsTheClusterTLSProfile: the metrics endpoint takes its TLS versions and
// ciphers from apiservers.config.openshift.io/cluster and follows changes without a restart;
// ciphers Go cannot use are left out and reported; a profile left with nothing usable is reported
// and changes nothing.
func TestMetricsServerFollowsTheClusterTLSProfile(t *testing.T) {
	parallel(t, 0)
	e := newEnv(t)
	ctx := context.Background()
	_, addr, pool := e.startOperatorServing(t, defaultOptions())

	handshake := func(version uint16) error {
		conn, err := tls.DialWithDialer(&net.Dialer{Timeout: 5 * time.Second}, "tcp", addr,
			&tls.Config{RootCAs: pool, MinVersion: version, MaxVersion: version})
		if err != nil {
			return err
		}
		return conn.Close()
	}
	accepts := func(version uint16, want bool) func() (bool, string) {
		return func() (bool, string) {
			err := handshake(version)
			return (err == nil) == want, fmt.Sprintf("%s handshake: %v, want accepted=%v", tls.VersionName(version), err, want)
		}
	}
	// Without an APIServer object: Intermediate, TLS 1.2 and 1.3.
	eventually(t, 30*time.Second, accepts(tls.VersionTLS12, true))
	if err := handshake(tls.VersionTLS13); err != nil {
		t.Fatalf("TLS 1.3 under the default profile: %v", err)
	}

	apiServer, err := e.config.ConfigV1().APIServers().Create(ctx, &configv1.APIServer{
		ObjectMeta: metav1.ObjectMeta{Name: "cluster"},
		Spec:       configv1.APIServerSpec{TLSSecurityProfile: &configv1.TLSSecurityProfile{Type: configv1.TLSProfileModernType, Modern: &configv1.ModernTLSProfile{}}},
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	eventually(t, 10*time.Second, accepts(tls.VersionTLS12, false))
	if err := handshake(tls.VersionTLS13); err != nil {
		t.Fatalf("TLS 1.3 under Modern: %v", err)
	}

	setProfile := func(p *configv1.TLSSecurityProfile) {
		t.Helper()
		apiServer.Spec.TLSSecurityProfile = p
		if apiServer, err = e.config.ConfigV1().APIServers().Update(ctx, apiServer, metav1.UpdateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	setProfile(&configv1.TLSSecurityProfile{Type: configv1.TLSProfileIntermediateType, Intermediate: &configv1.IntermediateTLSProfile{}})
	eventually(t, 10*time.Second, accepts(tls.VersionTLS12, true))

	// A Custom TLS 1.3 profile that also names a DHE suite, which Go cannot serve: the suite is
	// left out and reported, and TLS 1.3 applies (it used to keep the server on Intermediate).
	setProfile(&configv1.TLSSecurityProfile{Type: configv1.TLSProfileCustomType, Custom: &configv1.CustomTLSProfile{
		TLSProfileSpec: configv1.TLSProfileSpec{MinTLSVersion: configv1.VersionTLS13, Ciphers: []string{"TLS_AES_128_GCM_SHA256", "DHE-RSA-AES128-GCM-SHA256"}},
	}})
	eventually(t, 10*time.Second, accepts(tls.VersionTLS12, false))
	if err := handshake(tls.VersionTLS13); err != nil {
		t.Fatalf("TLS 1.3 under the Custom profile: %v", err)
	}
	e.waitEvent(t, "TLSProfileCiphersIgnored", "DHE-RSA-AES128-GCM-SHA256")

	// A profile with nothing usable for the versions it allows: reported, and the server keeps
	// the profile in force.
	setProfile(&configv1.TLSSecurityProfile{Type: configv1.TLSProfileCustomType, Custom: &configv1.CustomTLSProfile{
		TLSProfileSpec: configv1.TLSProfileSpec{MinTLSVersion: configv1.VersionTLS12, Ciphers: []string{"NO-SUCH-CIPHER"}},
	}})
	e.waitEvent(t, "TLSProfileInvalid", "NO-SUCH-CIPHER")
	e.waitEvent(t, "TLSProfileInvalid", "it keeps Custom (minimum VersionTLS13")
	if err := handshake(tls.VersionTLS12); err == nil {
		t.Errorf("TLS 1.2 accepted after an unusable profile: the Custom TLS 1.3 profile must stay in force")
	}
	// The server still serves with its certificate.
	conn, err := tls.Dial("tcp", addr, &tls.Config{RootCAs: pool})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := conn.ConnectionState().PeerCertificates[0].Verify(x509.VerifyOptions{Roots: pool}); err != nil {
		t.Errorf("serving certificate: %v", err)
	}
	conn.Close()
}
