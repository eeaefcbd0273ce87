// Package tlsprofile turns the cluster's TLS security profile (apiservers.config.openshift.io
// cluster, spec.tlsSecurityProfile) into the settings of a Go TLS server, so that the operator's
// metrics endpoint accepts what every other OpenShift component accepts.
package tlsprofile

import (
	"crypto/tls"
	"fmt"
	"strings"

	configv1 "github.com/openshift/api/config/v1"
	"github.com/openshift/library-go/pkg/crypto"
)

// Settings are what a TLS server takes from a profile.
type Settings struct {
	// Profile names the profile in force: Old, Intermediate, Modern or Custom.
	Profile configv1.TLSProfileType
	// MinVersion is the oldest protocol version accepted.
	MinVersion uint16
	// CipherSuites are the TLS 1.2 (and older) suites accepted; Go negotiates TLS 1.3 suites by
	// itself, so those of the profile are not listed here.
	CipherSuites []uint16
	// Ignored are the profile's cipher names Go cannot use (DHE suites, or names it does not
	// know), left out as the other OpenShift components leave them out.
	Ignored []string
}

// String says which profile is in force, for logs.
func (s Settings) String() string {
	names := make([]string, 0, len(s.CipherSuites))
	for _, c := range s.CipherSuites {
		names = append(names, tls.CipherSuiteName(c))
	}
	out := fmt.Sprintf("%s (minimum %s, ciphers %s)", s.Profile, crypto.TLSVersionToNameOrDie(s.MinVersion), strings.Join(names, ","))
	if len(s.Ignored) > 0 {
		out += fmt.Sprintf(", ignored %s", strings.Join(s.Ignored, ","))
	}
	return out
}

// Default is the profile of a cluster that sets none: Intermediate.
func Default() Settings {
	s, err := FromProfile(nil)
	if err != nil {
		panic(err) // openshift/api's own Intermediate profile always converts
	}
	return s
}

// FromProfile converts a tlsSecurityProfile; nil or an empty type means Intermediate, as on the
// API servers. Cipher names Go cannot use are left out and listed in Ignored, as library-go's
// conversion leaves them out for the other OpenShift components: one such name must not keep a
// profile's minimum version from applying. An error names what makes the profile unusable (an
// unknown version, a Custom profile without settings, no usable cipher for the versions it
// allows), so that the admin can fix it; the caller keeps what it had.
func FromProfile(profile *configv1.TLSSecurityProfile) (Settings, error) {
	typ := configv1.TLSProfileIntermediateType
	if profile != nil && profile.Type != "" {
		typ = profile.Type
	}
	var spec *configv1.TLSProfileSpec
	switch typ {
	case configv1.TLSProfileCustomType:
		if profile.Custom == nil {
			return Settings{}, fmt.Errorf("the Custom TLS profile has no custom settings")
		}
		spec = &profile.Custom.TLSProfileSpec
	default:
		spec = configv1.TLSProfiles[typ]
		if spec == nil {
			return Settings{}, fmt.Errorf("unknown TLS profile type %q (want Old, Intermediate, Modern or Custom)", typ)
		}
	}
	minVersion, err := crypto.TLSVersion(string(spec.MinTLSVersion))
	if err != nil {
		return Settings{}, fmt.Errorf("TLS profile %s: minTLSVersion %q: %w", typ, spec.MinTLSVersion, err)
	}
	var suites []uint16
	var unknown []string
	for _, name := range spec.Ciphers {
		iana := crypto.OpenSSLToIANACipherSuites([]string{name})
		if len(iana) == 0 {
			unknown = append(unknown, name)
			continue
		}
		id, err := crypto.CipherSuite(iana[0])
		if err != nil {
			unknown = append(unknown, name)
			continue
		}
		if isTLS13Suite(id) {
			continue
		}
		suites = append(suites, id)
	}
	if len(suites) == 0 && minVersion < tls.VersionTLS13 {
		if len(unknown) > 0 {
			return Settings{}, fmt.Errorf("TLS profile %s allows %s but names no cipher Go can use for it (not usable: %s; use OpenSSL names such as ECDHE-RSA-AES128-GCM-SHA256)",
				typ, spec.MinTLSVersion, strings.Join(unknown, ", "))
		}
		return Settings{}, fmt.Errorf("TLS profile %s allows %s but names no cipher for it", typ, spec.MinTLSVersion)
	}
	return Settings{Profile: typ, MinVersion: minVersion, CipherSuites: suites, Ignored: unknown}, nil
}

func isTLS13Suite(id uint16) bool {
	switch id {
	case tls.TLS_AES_128_GCM_SHA256, tls.TLS_AES_256_GCM_SHA384, tls.TLS_CHACHA20_POLY1305_SHA256:
		return true
	}
	return false
}
