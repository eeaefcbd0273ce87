package tlsprofile

import (
	"crypto/tls"
	"slices"
	"strings"
	"testing"

	configv1 "github.com/openshift/api/config/v1"
)

func TestFromProfile(t *testing.T) {
	custom := func(min configv1.TLSProtocolVersion, ciphers ...string) *configv1.TLSSecurityProfile {
		return &configv1.TLSSecurityProfile{Type: configv1.TLSProfileCustomType, Custom: &configv1.CustomTLSProfile{
			TLSProfileSpec: configv1.TLSProfileSpec{MinTLSVersion: min, Ciphers: ciphers}}}
	}
	cases := []struct {
		name        string
		profile     *configv1.TLSSecurityProfile
		wantProfile configv1.TLSProfileType
		wantMin     uint16
		wantSuite   uint16 // one suite that must be accepted; 0 when none may be
		wantErr     string
	}{
		{"none set: Intermediate", nil, configv1.TLSProfileIntermediateType, tls.VersionTLS12, tls.TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256, ""},
		{"empty type: Intermediate", &configv1.TLSSecurityProfile{}, configv1.TLSProfileIntermediateType, tls.VersionTLS12, tls.TLS_ECDHE_ECDSA_WITH_CHACHA20_POLY1305, ""},
		{"Old", &configv1.TLSSecurityProfile{Type: configv1.TLSProfileOldType}, configv1.TLSProfileOldType, tls.VersionTLS10, tls.TLS_RSA_WITH_AES_128_CBC_SHA, ""},
		{"Modern: TLS 1.3 only", &configv1.TLSSecurityProfile{Type: configv1.TLSProfileModernType}, configv1.TLSProfileModernType, tls.VersionTLS13, 0, ""},
		{"Custom", custom(configv1.VersionTLS12, "ECDHE-RSA-AES256-GCM-SHA384", "TLS_AES_128_GCM_SHA256"), configv1.TLSProfileCustomType, tls.VersionTLS12, tls.TLS_ECDHE_RSA_WITH_AES_256_GCM_SHA384, ""},
		{"Custom with an unknown cipher: left out", custom(configv1.VersionTLS12, "ECDHE-RSA-AES256-GCM-SHA384", "NOT-A-CIPHER"), configv1.TLSProfileCustomType, tls.VersionTLS12, tls.TLS_ECDHE_RSA_WITH_AES_256_GCM_SHA384, ""},
		{"Custom with an unknown cipher first: the ciphers after it apply", custom(configv1.VersionTLS12, "NOT-A-CIPHER", "ECDHE-RSA-AES256-GCM-SHA384"), configv1.TLSProfileCustomType, tls.VersionTLS12, tls.TLS_ECDHE_RSA_WITH_AES_256_GCM_SHA384, ""},
		// The case other components handle: a TLS 1.3 minimum plus a DHE suite Go has no code for.
		{"Custom TLS 1.3 with a DHE cipher: TLS 1.3 applies", custom(configv1.VersionTLS13, "TLS_AES_128_GCM_SHA256", "DHE-RSA-AES128-GCM-SHA256"), configv1.TLSProfileCustomType, tls.VersionTLS13, 0, ""},
		{"Custom TLS 1.2 with only unusable ciphers", custom(configv1.VersionTLS12, "DHE-RSA-AES128-GCM-SHA256", "NOT-A-CIPHER"), "", 0, 0, "not usable: DHE-RSA-AES128-GCM-SHA256, NOT-A-CIPHER"},
		{"Custom without settings", &configv1.TLSSecurityProfile{Type: configv1.TLSProfileCustomType}, "", 0, 0, "no custom settings"},
		{"Custom with an unknown version", custom("VersionTLS99", "ECDHE-RSA-AES256-GCM-SHA384"), "", 0, 0, "minTLSVersion \"VersionTLS99\""},
		{"Custom TLS 1.2 without TLS 1.2 ciphers", custom(configv1.VersionTLS12, "TLS_AES_128_GCM_SHA256"), "", 0, 0, "names no cipher for it"},
		{"unknown type", &configv1.TLSSecurityProfile{Type: "Paranoid"}, "", 0, 0, "unknown TLS profile type \"Paranoid\""},
	}
	for _, c := range cases {
		got, err := FromProfile(c.profile)
		if c.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), c.wantErr) {
				t.Errorf("%s: error %v, want one containing %q", c.name, err, c.wantErr)
			}
			continue
		}
		if err != nil {
			t.Errorf("%s: %v", c.name, err)
			continue
		}
		if got.Profile != c.wantProfile || got.MinVersion != c.wantMin {
			t.Errorf("%s: %s, want %s minimum %x", c.name, got, c.wantProfile, c.wantMin)
		}
		if c.wantSuite == 0 && len(got.CipherSuites) != 0 {
			t.Errorf("%s: TLS 1.2 suites %v, want none", c.name, got.CipherSuites)
		}
		if c.wantSuite != 0 && !slices.Contains(got.CipherSuites, c.wantSuite) {
			t.Errorf("%s: %s lacks %s", c.name, got, tls.CipherSuiteName(c.wantSuite))
		}
		for _, s := range got.CipherSuites {
			if isTLS13Suite(s) {
				t.Errorf("%s: lists the TLS 1.3 suite %s, which Go does not configure", c.name, tls.CipherSuiteName(s))
			}
		}
	}
	if got, _ := FromProfile(custom(configv1.VersionTLS13, "TLS_AES_128_GCM_SHA256", "DHE-RSA-AES128-GCM-SHA256", "NOT-A-CIPHER")); !slices.Equal(got.Ignored, []string{"DHE-RSA-AES128-GCM-SHA256", "NOT-A-CIPHER"}) {
		t.Errorf("Ignored = %v, want the DHE suite and the unknown name", got.Ignored)
	} else if !strings.Contains(got.String(), "ignored DHE-RSA-AES128-GCM-SHA256,NOT-A-CIPHER") {
		t.Errorf("String() does not name what was ignored: %s", got)
	}
	if d := Default(); d.Profile != configv1.TLSProfileIntermediateType {
		t.Errorf("default profile %s", d)
	}
}

// The log line of a profile names what is in force and, after it, what was ignored, only when
// something was.
func TestStringSaysWhatWasIgnoredOnlyWhenSomethingWas(t *testing.T) {
	s := Default().String()
	if !strings.HasPrefix(s, "Intermediate (minimum VersionTLS12, ciphers TLS_") || !strings.HasSuffix(s, ")") || strings.Contains(s, "ignored") {
		t.Errorf("Default() reads %q, want Intermediate, its minimum and ciphers, and nothing ignored", s)
	}
	custom := &configv1.TLSSecurityProfile{Type: configv1.TLSProfileCustomType, Custom: &configv1.CustomTLSProfile{
		TLSProfileSpec: configv1.TLSProfileSpec{MinTLSVersion: configv1.VersionTLS13, Ciphers: []string{"TLS_AES_128_GCM_SHA256", "NOT-A-CIPHER"}}}}
	settings, err := FromProfile(custom)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := settings.String(), "Custom (minimum VersionTLS13, ciphers ), ignored NOT-A-CIPHER"; got != want {
		t.Errorf("String() = %q, want %q", got, want)
	}
}
