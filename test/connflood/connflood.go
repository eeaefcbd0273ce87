// Package connflood holds connections open against a server, as a client without any token
// can, and times probes made meanwhile: for the tests that show the operator's probes and
// scrapes outlast such a flood (pkg/metrics and test/integration).
package connflood

import (
	"context"
	"crypto/tls"
	"fmt"
	"io"
	"net"
	"net/http"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// Hold says what a flood keeps open against Addr, from the local address From (an address of
// the loopback network other than the scrapers' and probes', 127.0.0.2 say, as a pod of its own
// would have). Each connection the server closes is opened again at once.
type Hold struct {
	Addr string
	From string
	// Silent connections send nothing, not even a TLS ClientHello.
	Silent int
	// Idle connections finish the TLS handshake (with TLS set) and send nothing more.
	Idle int
	// Partial connections (after the handshake, with TLS set) send the start of a request's
	// headers and never the end.
	Partial int
	// TLS, when set, is how Idle and Partial connections shake hands.
	TLS *tls.Config
}

// redial is how long a holder waits before opening again a connection that was closed.
const redial = 50 * time.Millisecond

// Flood is a Hold under way.
type Flood struct {
	cancel context.CancelFunc
	wg     sync.WaitGroup
	mu     sync.Mutex
	conns  map[net.Conn]struct{}
	opened atomic.Int64
	open   atomic.Int64
	// handshakes counts the TLS handshakes completed; held the connections whose handshake
	// completed and that are still open, peakHeld the most at once: a flood the server turns
	// away at the handshake opens many connections and holds none.
	handshakes atomic.Int64
	held       atomic.Int64
	peakHeld   atomic.Int64
}

// Start opens the connections and keeps them open until Stop.
func Start(h Hold) *Flood {
	ctx, cancel := context.WithCancel(context.Background())
	f := &Flood{cancel: cancel, conns: map[net.Conn]struct{}{}}
	tlsConfig := h.TLS
	if tlsConfig != nil {
		tlsConfig = tlsConfig.Clone()
		if tlsConfig.ServerName == "" {
			tlsConfig.ServerName, _, _ = net.SplitHostPort(h.Addr)
		}
		// The cheapest key exchange: what the flood spends, the machine's other work (the
		// server under test, when it shares the machine) does not get.
		tlsConfig.CurvePreferences = []tls.CurveID{tls.X25519}
	}
	dialer := &net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP(h.From)}, Timeout: 5 * time.Second}
	shake := func(c net.Conn) (net.Conn, error) {
		c, err := handshake(c, tlsConfig)
		if err == nil && tlsConfig != nil {
			f.handshakes.Add(1)
		}
		return c, err
	}
	kinds := []struct {
		n     int
		greet func(net.Conn) (net.Conn, error)
	}{
		{h.Silent, func(c net.Conn) (net.Conn, error) { return c, nil }},
		{h.Idle, shake},
		{h.Partial, func(c net.Conn) (net.Conn, error) {
			c, err := shake(c)
			if err == nil {
				_, err = io.WriteString(c, "GET /metrics HTTP/1.1\r\nHost: "+h.Addr+"\r\n")
			}
			return c, err
		}},
	}
	for _, k := range kinds {
		for i := 0; i < k.n; i++ {
			f.wg.Add(1)
			go func() {
				defer f.wg.Done()
				for ctx.Err() == nil {
					f.holdOne(ctx, dialer, h.Addr, k.greet)
					// Open it again almost at once: a flood that holds its connections, not
					// one that spends its own CPU (the machine's, in a test) hammering the port.
					select {
					case <-ctx.Done():
					case <-time.After(redial):
					}
				}
			}()
		}
	}
	return f
}

func handshake(c net.Conn, cfg *tls.Config) (net.Conn, error) {
	if cfg == nil {
		return c, nil
	}
	tc := tls.Client(c, cfg)
	return tc, tc.Handshake()
}

// holdOne opens one connection and holds it until the server closes it or the flood stops.
func (f *Flood) holdOne(ctx context.Context, dialer *net.Dialer, addr string, greet func(net.Conn) (net.Conn, error)) {
	raw, err := dialer.DialContext(ctx, "tcp", addr)
	if err != nil {
		return
	}
	f.opened.Add(1)
	f.track(raw, true)
	defer f.track(raw, false)
	f.open.Add(1)
	defer f.open.Add(-1)
	c, err := greet(raw)
	if err != nil {
		_ = raw.Close()
		return
	}
	if tc, ok := c.(*tls.Conn); ok && tc.ConnectionState().HandshakeComplete {
		// The server took it: held until it closes.
		held := f.held.Add(1)
		defer f.held.Add(-1)
		for peak := f.peakHeld.Load(); held > peak && !f.peakHeld.CompareAndSwap(peak, held); peak = f.peakHeld.Load() {
		}
	}
	// Whatever the server answers (nothing, an error page), read until it closes.
	_, _ = io.Copy(io.Discard, c)
	_ = raw.Close()
}

func (f *Flood) track(c net.Conn, add bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if add {
		f.conns[c] = struct{}{}
	} else {
		delete(f.conns, c)
	}
}

// Open is how many of the flood's connections are open now (connected, not yet closed).
func (f *Flood) Open() int { return int(f.open.Load()) }

// Opened is how many connections the flood has opened so far.
func (f *Flood) Opened() int { return int(f.opened.Load()) }

// Handshakes is how many TLS handshakes the flood's connections completed so far.
func (f *Flood) Handshakes() int { return int(f.handshakes.Load()) }

// PeakHeld is the most connections the flood held at once after a completed TLS handshake (the
// server accepted them; of a silent connection, or one without TLS, that cannot be told).
func (f *Flood) PeakHeld() int { return int(f.peakHeld.Load()) }

// Stop closes every connection and waits for the holders to end.
func (f *Flood) Stop() {
	f.cancel()
	f.mu.Lock()
	for c := range f.conns {
		_ = c.Close()
	}
	f.mu.Unlock()
	f.wg.Wait()
}

// Probe is one GET repeated on a new connection each time, as the kubelet probes.
type Probe struct {
	Name   string
	URL    string
	Client *http.Client
	// Header is added to each request (a scraper's bearer token, say).
	Header http.Header
	// Period is how often it is made.
	Period time.Duration
}

// Result is what one probe got.
type Result struct {
	At     time.Time
	Took   time.Duration
	Status int // 0 when the request failed
	Err    error
}

func (r Result) String() string {
	if r.Err != nil {
		return fmt.Sprintf("%s after %s: %v", r.At.Format("15:04:05.000"), r.Took.Round(time.Millisecond), r.Err)
	}
	return fmt.Sprintf("%s after %s: %d", r.At.Format("15:04:05.000"), r.Took.Round(time.Millisecond), r.Status)
}

// Once makes the request once.
func (p Probe) Once() Result {
	start := time.Now()
	r := Result{At: start}
	req, err := http.NewRequest(http.MethodGet, p.URL, nil)
	if err != nil {
		r.Err = err
		return r
	}
	for k, vs := range p.Header {
		req.Header[k] = vs
	}
	req.Close = true
	resp, err := p.Client.Do(req)
	if err == nil {
		_, err = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		r.Status = resp.StatusCode
	}
	r.Took, r.Err = time.Since(start), err
	return r
}

// Repeat makes each probe every its Period until ctx ends, and returns what each got, by name.
func Repeat(ctx context.Context, probes ...Probe) map[string][]Result {
	var mu sync.Mutex
	results := map[string][]Result{}
	var wg sync.WaitGroup
	for _, p := range probes {
		wg.Add(1)
		go func() {
			defer wg.Done()
			tick := time.NewTicker(p.Period)
			defer tick.Stop()
			for {
				r := p.Once()
				mu.Lock()
				results[p.Name] = append(results[p.Name], r)
				mu.Unlock()
				select {
				case <-ctx.Done():
					return
				case <-tick.C:
				}
			}
		}()
	}
	wg.Wait()
	return results
}

// Expect logs how the tries of one probe went, and fails t unless there were at least five and
// each got 200 within limit.
func Expect(t testing.TB, name string, results []Result, limit time.Duration) {
	t.Helper()
	var slowest time.Duration
	late := 0
	for _, r := range results {
		slowest = max(slowest, r.Took)
		if r.Err != nil || r.Status != http.StatusOK || r.Took > limit {
			late++
			t.Errorf("%s: %s, want 200 within %s", name, r, limit)
		}
	}
	t.Logf("%s: %d tries, %d failed or late, slowest %s", name, len(results), late, slowest.Round(time.Millisecond))
	if len(results) < 5 {
		t.Errorf("%s: only %d tries", name, len(results))
	}
}
