package registryprobe

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"io"
	"log"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// Every listener and address in this file is on 127.0.0.1: the probe must never leave the host.

func mustLoopback(t *testing.T, addr string) {
	t.Helper()
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		t.Fatalf("address %q: %v", addr, err)
	}
	if ip := net.ParseIP(host); ip == nil || !ip.IsLoopback() || ip.To4() == nil {
		t.Fatalf("address %q is not in 127.0.0.0/8; refusing to probe it", addr)
	}
}

// tlsServer is an httptest TLS server on 127.0.0.1 and a pool that trusts its certificate.
func tlsServer(t *testing.T) (addr string, roots *x509.CertPool) {
	t.Helper()
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) {}))
	srv.Config.ErrorLog = log.New(io.Discard, "", 0) // the probe closes after the handshake
	srv.StartTLS()
	t.Cleanup(srv.Close)
	roots = x509.NewCertPool()
	roots.AddCert(srv.Certificate())
	addr = srv.Listener.Addr().String()
	mustLoopback(t, addr)
	return addr, roots
}

// refusedAddr is a loopback port with nothing listening.
func refusedAddr(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp4", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	mustLoopback(t, addr)
	return addr
}

// blackHole accepts connections and never writes, so a TLS handshake waits for ever. It counts
// the connections it accepted.
func blackHole(t *testing.T) (addr string, accepted *atomic.Int32) {
	t.Helper()
	l, err := net.Listen("tcp4", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	accepted = &atomic.Int32{}
	var mu sync.Mutex
	var conns []net.Conn
	done := make(chan struct{})
	go func() {
		defer close(done)
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			accepted.Add(1)
			mu.Lock()
			conns = append(conns, c)
			mu.Unlock()
		}
	}()
	t.Cleanup(func() {
		l.Close()
		<-done
		mu.Lock()
		defer mu.Unlock()
		for _, c := range conns {
			c.Close()
		}
	})
	addr = l.Addr().String()
	mustLoopback(t, addr)
	return addr, accepted
}

// closer accepts connections and closes them at once: each try fails fast and is counted.
func closer(t *testing.T) (addr string, accepted *atomic.Int32) {
	t.Helper()
	l, err := net.Listen("tcp4", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	accepted = &atomic.Int32{}
	done := make(chan struct{})
	go func() {
		defer close(done)
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			accepted.Add(1)
			c.Close()
		}
	}()
	t.Cleanup(func() { l.Close(); <-done })
	addr = l.Addr().String()
	mustLoopback(t, addr)
	return addr, accepted
}

func TestProbe(t *testing.T) {
	type target struct {
		addr     string
		roots    *x509.CertPool
		accepted *atomic.Int32
	}
	cases := []struct {
		name   string
		target func(t *testing.T) target
		prober func(target) Prober
		// wantErr is a substring of the error; "" means success.
		wantErr      string
		wantAccepted int32 // -1: not counted
		maxDuration  time.Duration
		minDuration  time.Duration
	}{
		{
			name: "TLS server trusted through RootCAs",
			target: func(t *testing.T) target {
				a, r := tlsServer(t)
				return target{addr: a, roots: r}
			},
			prober: func(tg target) Prober {
				return Prober{Address: tg.addr, TLSConfig: &tls.Config{RootCAs: tg.roots}, Tries: 1, DialTimeout: time.Second}
			},
			wantAccepted: -1,
			maxDuration:  time.Second,
		},
		{
			name: "TLS server with the certificate's DNS name as ServerName",
			target: func(t *testing.T) target {
				a, r := tlsServer(t)
				return target{addr: a, roots: r}
			},
			prober: func(tg target) Prober {
				return Prober{Address: tg.addr, TLSConfig: &tls.Config{RootCAs: tg.roots, ServerName: "example.com"}, Tries: 1, DialTimeout: time.Second}
			},
			wantAccepted: -1,
			maxDuration:  time.Second,
		},
		{
			name: "TLS server with defaults for tries, timeout and interval answers at once",
			target: func(t *testing.T) target {
				a, r := tlsServer(t)
				return target{addr: a, roots: r}
			},
			prober: func(tg target) Prober {
				return Prober{Address: tg.addr, TLSConfig: &tls.Config{RootCAs: tg.roots}}
			},
			wantAccepted: -1,
			maxDuration:  time.Second,
		},
		{
			name: "TLS server whose certificate is not trusted",
			target: func(t *testing.T) target {
				a, _ := tlsServer(t)
				return target{addr: a}
			},
			prober: func(tg target) Prober {
				return Prober{Address: tg.addr, Tries: 2, DialTimeout: time.Second, Interval: 10 * time.Millisecond}
			},
			wantErr:      "2 tries failed, the last with: tls: failed to verify certificate",
			wantAccepted: -1,
			maxDuration:  2 * time.Second,
		},
		{
			name: "TLS server with a ServerName its certificate does not name",
			target: func(t *testing.T) target {
				a, r := tlsServer(t)
				return target{addr: a, roots: r}
			},
			prober: func(tg target) Prober {
				return Prober{Address: tg.addr, TLSConfig: &tls.Config{RootCAs: tg.roots, ServerName: "registry.invalid"}, Tries: 1, DialTimeout: time.Second}
			},
			wantErr:      "registry.invalid",
			wantAccepted: -1,
			maxDuration:  time.Second,
		},
		{
			name:   "connection refused",
			target: func(t *testing.T) target { return target{addr: refusedAddr(t)} },
			prober: func(tg target) Prober {
				return Prober{Address: tg.addr, Tries: 3, DialTimeout: time.Second, Interval: 50 * time.Millisecond}
			},
			wantErr:      "3 tries failed, the last with: ",
			wantAccepted: -1,
			minDuration:  100 * time.Millisecond, // two intervals
			maxDuration:  time.Second,
		},
		{
			name: "a peer that closes at once is tried Tries times",
			target: func(t *testing.T) target {
				a, n := closer(t)
				return target{addr: a, accepted: n}
			},
			prober: func(tg target) Prober {
				return Prober{Address: tg.addr, Tries: 4, DialTimeout: time.Second, Interval: 20 * time.Millisecond}
			},
			wantErr:      "4 tries failed",
			wantAccepted: 4,
			minDuration:  60 * time.Millisecond,
			maxDuration:  time.Second,
		},
		{
			name: "a black hole times out after Tries x DialTimeout plus the gaps",
			target: func(t *testing.T) target {
				a, n := blackHole(t)
				return target{addr: a, accepted: n}
			},
			prober: func(tg target) Prober {
				return Prober{Address: tg.addr, Tries: 3, DialTimeout: 200 * time.Millisecond, Interval: 100 * time.Millisecond}
			},
			wantErr:      "3 tries failed, the last with: ",
			wantAccepted: 3,
			minDuration:  800 * time.Millisecond, // 3 × 200 ms + 2 × 100 ms
			maxDuration:  time.Second,
		},
		{
			name: "one try against a black hole",
			target: func(t *testing.T) target {
				a, n := blackHole(t)
				return target{addr: a, accepted: n}
			},
			prober: func(tg target) Prober {
				return Prober{Address: tg.addr, Tries: 1, DialTimeout: 100 * time.Millisecond, Interval: time.Hour}
			},
			wantErr:      "1 tries failed",
			wantAccepted: 1,
			minDuration:  100 * time.Millisecond,
			maxDuration:  500 * time.Millisecond, // no interval after the last try
		},
		{
			name:   "an address without a port fails without dialling",
			target: func(t *testing.T) target { return target{addr: "127.0.0.1"} },
			prober: func(tg target) Prober {
				return Prober{Address: tg.addr, Tries: 2, DialTimeout: time.Second, Interval: 10 * time.Millisecond}
			},
			wantErr:      "missing port in address",
			wantAccepted: -1,
			maxDuration:  time.Second,
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			tg := tc.target(t)
			p := tc.prober(tg)
			if p.Address != "127.0.0.1" {
				mustLoopback(t, p.Address)
			}
			start := time.Now()
			err := p.Probe(context.Background())
			elapsed := time.Since(start)

			switch {
			case tc.wantErr == "" && err != nil:
				t.Errorf("Probe = %v, want nil", err)
			case tc.wantErr != "" && err == nil:
				t.Errorf("Probe = nil, want an error containing %q", tc.wantErr)
			case tc.wantErr != "" && !strings.Contains(err.Error(), tc.wantErr):
				t.Errorf("Probe = %q, want it to contain %q", err, tc.wantErr)
			}
			// The bound shows the probe gives up; the slack keeps a loaded CI machine from failing it.
			if limit := 3 * tc.maxDuration; elapsed > limit {
				t.Errorf("Probe took %v, want at most %v", elapsed, limit)
			}
			if elapsed < tc.minDuration {
				t.Errorf("Probe took %v, want at least %v", elapsed, tc.minDuration)
			}
			if tc.wantAccepted >= 0 {
				// The listener may count the last connection just after Probe returns.
				deadline := time.Now().Add(time.Second)
				for tg.accepted.Load() < tc.wantAccepted && time.Now().Before(deadline) {
					time.Sleep(5 * time.Millisecond)
				}
				if n := tg.accepted.Load(); n != tc.wantAccepted {
					t.Errorf("%d connections, want %d", n, tc.wantAccepted)
				}
			}
		})
	}
}

// TestProbeBlackHoleErrorIsATimeout checks that the error of a handshake that never completes
// says it timed out, not something misleading.
func TestProbeBlackHoleErrorIsATimeout(t *testing.T) {
	addr, _ := blackHole(t)
	err := Prober{Address: addr, Tries: 1, DialTimeout: 50 * time.Millisecond}.Probe(context.Background())
	if !errors.Is(err, context.DeadlineExceeded) {
		var ne net.Error
		if !errors.As(err, &ne) || !ne.Timeout() {
			t.Errorf("Probe = %v, want a timeout", err)
		}
	}
}

func TestProbeCancel(t *testing.T) {
	cases := []struct {
		name   string
		target func(t *testing.T) string
		// A prober that, left alone, would take many seconds.
		prober func(addr string) Prober
		cancel time.Duration
	}{
		{
			name:   "cancelled during a handshake",
			target: func(t *testing.T) string { a, _ := blackHole(t); return a },
			prober: func(a string) Prober {
				return Prober{Address: a, Tries: 10, DialTimeout: 10 * time.Second, Interval: 10 * time.Second}
			},
			cancel: 100 * time.Millisecond,
		},
		{
			name:   "cancelled during the only try",
			target: func(t *testing.T) string { a, _ := blackHole(t); return a },
			prober: func(a string) Prober {
				return Prober{Address: a, Tries: 1, DialTimeout: 10 * time.Second}
			},
			cancel: 100 * time.Millisecond,
		},
		{
			name:   "cancelled during the interval",
			target: refusedAddr,
			prober: func(a string) Prober {
				return Prober{Address: a, Tries: 10, DialTimeout: 10 * time.Second, Interval: 10 * time.Second}
			},
			cancel: 100 * time.Millisecond,
		},
		{
			name:   "cancelled before the probe",
			target: func(t *testing.T) string { a, _ := blackHole(t); return a },
			prober: func(a string) Prober {
				return Prober{Address: a, Tries: 10, DialTimeout: 10 * time.Second, Interval: 10 * time.Second}
			},
			cancel: 0,
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			p := tc.prober(tc.target(t))
			mustLoopback(t, p.Address)
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			if tc.cancel == 0 {
				cancel()
			} else {
				time.AfterFunc(tc.cancel, cancel)
			}
			start := time.Now()
			err := p.Probe(ctx)
			elapsed := time.Since(start)
			if err == nil {
				t.Fatalf("Probe = nil after cancellation")
			}
			if !errors.Is(err, context.Canceled) {
				t.Errorf("Probe = %v, want it to wrap context.Canceled", err)
			}
			if elapsed > tc.cancel+500*time.Millisecond {
				t.Errorf("Probe took %v after a cancel at %v", elapsed, tc.cancel)
			}
		})
	}
}

func TestProbeDeadline(t *testing.T) {
	addr, _ := blackHole(t)
	ctx, cancel := context.WithTimeout(context.Background(), 150*time.Millisecond)
	defer cancel()
	start := time.Now()
	err := Prober{Address: addr, Tries: 5, DialTimeout: 10 * time.Second, Interval: 10 * time.Second}.Probe(ctx)
	if err == nil || time.Since(start) > 3*time.Second {
		t.Errorf("Probe = %v after %v, want an error shortly after the 150ms deadline", err, time.Since(start))
	}
}

// TestProbeDoesNotModifyTLSConfig: the ServerName default is applied to a clone.
func TestProbeDoesNotModifyTLSConfig(t *testing.T) {
	addr, roots := tlsServer(t)
	cfg := &tls.Config{RootCAs: roots}
	if err := (Prober{Address: addr, TLSConfig: cfg, Tries: 1, DialTimeout: time.Second}).Probe(context.Background()); err != nil {
		t.Fatalf("Probe = %v", err)
	}
	if cfg.ServerName != "" {
		t.Errorf("Probe set ServerName %q on the caller's TLS config", cfg.ServerName)
	}
}

// TestProbeWorstCase checks the documented bound: with the defaults (a zero Prober), a registry
// that never answers costs under 20 s, the bootstrap's budget. The defaults are too slow to run,
// so worstCase is measured at a smaller scale and then evaluated for the defaults.
func TestProbeWorstCase(t *testing.T) {
	if got := (Prober{}).worstCase(); got >= 20*time.Second {
		t.Errorf("default worst case %v, want under 20s", got)
	}
	if tries, dial, interval := (Prober{}).settings(); tries != 3 || dial != 5*time.Second || interval != 2*time.Second {
		t.Errorf("defaults %d tries, %v dial timeout, %v interval; the Prober's comment and docs/admin-guide.md say 3, 5s, 2s", tries, dial, interval)
	}

	addr, accepted := blackHole(t)
	p := Prober{Address: addr, Tries: 3, DialTimeout: 200 * time.Millisecond, Interval: 100 * time.Millisecond}
	want := p.worstCase()
	if want != 3*200*time.Millisecond+2*100*time.Millisecond {
		t.Fatalf("worstCase = %v for 3 tries of 200ms 100ms apart, want 800ms", want)
	}
	start := time.Now()
	err := p.Probe(context.Background())
	elapsed := time.Since(start)
	if err == nil {
		t.Fatal("Probe of a black hole succeeded")
	}
	// Far below the 10 s the defaults would take; the slack is for a loaded CI machine.
	if elapsed < want || elapsed > 3*time.Second {
		t.Errorf("Probe took %v, want between %v and 3s", elapsed, want)
	}
	if n := accepted.Load(); n != 3 {
		t.Errorf("%d connections, want 3", n)
	}
}

// TestProbeDefaultTries checks that zero Tries means three tries (and a default Interval of
// about 2 s between them) against a loopback peer that closes every connection.
func TestProbeDefaultTries(t *testing.T) {
	if testing.Short() {
		t.Skip("waits for two default intervals (4s)")
	}
	t.Parallel()
	addr, accepted := closer(t)
	start := time.Now()
	err := Prober{Address: addr, DialTimeout: time.Second}.Probe(context.Background())
	elapsed := time.Since(start)
	if err == nil || !strings.Contains(err.Error(), "3 tries failed") {
		t.Errorf("Probe = %v, want 3 tries failed", err)
	}
	if elapsed < 4*time.Second || elapsed > 5*time.Second {
		t.Errorf("Probe took %v, want about 2 × 2s", elapsed)
	}
	if n := accepted.Load(); n != 3 {
		t.Errorf("%d connections, want 3", n)
	}
}

func TestDefaultAddress(t *testing.T) {
	host, port, err := net.SplitHostPort(DefaultAddress)
	if err != nil || host != "registry.redhat.io" || port != "443" {
		t.Errorf("DefaultAddress = %q", DefaultAddress)
	}
}

// TestProbeMirror: a mirror answers when its TLS handshake completes, whatever CA signed its
// certificate (the cluster's additionalTrustedCA, which the operator is not given); one that
// refuses the connection does not.
func TestProbeMirror(t *testing.T) {
	addr, _ := tlsServer(t)
	if err := (Prober{Address: addr, Tries: 1}).Probe(context.Background()); err == nil {
		t.Fatalf("the plain probe trusted a certificate of a private CA: the test proves nothing")
	}
	if err := ProbeMirror(context.Background(), addr); err != nil {
		t.Errorf("ProbeMirror of a mirror with a private CA: %v", err)
	}
	refused := refusedAddr(t)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := ProbeMirror(ctx, refused); err == nil {
		t.Errorf("ProbeMirror of %s, which refuses connections, answered", refused)
	}
}

// worstCase is how long a probe of a registry that never answers takes at most.
func (p Prober) worstCase() time.Duration {
	tries, dialTimeout, interval := p.settings()
	return time.Duration(tries)*dialTimeout + time.Duration(tries-1)*interval
}
