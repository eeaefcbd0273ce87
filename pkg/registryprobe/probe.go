// Package registryprobe checks whether the samples registry answers: a TCP connection and a TLS
// handshake, with a short timeout and a bounded number of tries. The target is a parameter, so
// tests point it at loopback listeners.
package registryprobe

import (
	"context"
	"crypto/tls"
	"fmt"
	"net"
	"time"
)

// DefaultAddress is the registry the OCP samples are pulled from.
const DefaultAddress = "registry.redhat.io:443"

// Prober probes one address. The zero durations and tries take the defaults, which bound a probe
// of a registry that never answers to 3 × 5 s + 2 × 2 s = 19 s.
type Prober struct {
	Address string
	// TLSConfig is cloned for each handshake; ServerName defaults to the address's host.
	TLSConfig   *tls.Config
	Tries       int
	DialTimeout time.Duration
	Interval    time.Duration
}

// Probe returns nil on the first successful handshake, or the last error.
func (p Prober) Probe(ctx context.Context) error {
	tries, timeout, interval := p.settings()
	var last error
	for i := 0; i < tries; i++ {
		if i > 0 {
			select {
			case <-ctx.Done():
				return ctx.Err()
			case <-time.After(interval):
			}
		}
		if last = p.handshake(ctx, timeout); last == nil {
			return nil
		}
	}
	return fmt.Errorf("%d tries failed, the last with: %w", tries, last)
}

// settings are the tries, dial timeout and interval a probe uses, defaults applied.
func (p Prober) settings() (tries int, dialTimeout, interval time.Duration) {
	tries, dialTimeout, interval = p.Tries, p.DialTimeout, p.Interval
	if tries <= 0 {
		tries = 3
	}
	if dialTimeout <= 0 {
		dialTimeout = 5 * time.Second
	}
	if interval <= 0 {
		interval = 2 * time.Second
	}
	return tries, dialTimeout, interval
}

func (p Prober) handshake(ctx context.Context, timeout time.Duration) error {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	host, _, err := net.SplitHostPort(p.Address)
	if err != nil {
		return err
	}
	cfg := &tls.Config{}
	if p.TLSConfig != nil {
		cfg = p.TLSConfig.Clone()
	}
	if cfg.ServerName == "" {
		cfg.ServerName = host
	}
	dialer := &tls.Dialer{NetDialer: &net.Dialer{}, Config: cfg}
	conn, err := dialer.DialContext(ctx, "tcp", p.Address)
	if err != nil {
		return err
	}
	return conn.Close()
}

// ProbeMirror probes a mirror (or a registry no mirror serves) at address with the default tries
// and timeouts. The handshake does not verify the certificate: a mirror's CA is the cluster's
// (image.config.openshift.io additionalTrustedCA), which openshift-apiserver trusts when it imports
// and the operator need not; the probe asks only whether the mirror answers.
func ProbeMirror(ctx context.Context, address string) error {
	return Prober{Address: address, TLSConfig: &tls.Config{InsecureSkipVerify: true}}.Probe(ctx) //nolint:gosec // reachability only, see above
}
