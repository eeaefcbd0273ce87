package metrics

import (
	"bytes"
	"context"
	"log"
	"net"
	"net/http"
	"net/netip"
	"sync"
	"time"

	"k8s.io/klog/v2"
	"k8s.io/utils/clock"
)

const (
	// prompt is how long a connection may stay open without a request in a handler (from its
	// accept, or from the end of its last request) and still keep its place when the listener is
	// full. Prometheus and the kubelet send their request right after the handshake; a second
	// is ample even on a loaded node.
	prompt = time.Second
)

// fairListener accepts every connection at once, keeps at most max of them open, and decides
// which one makes room for a newcomer, so that a client holding many connections cannot keep
// another out:
//   - a connection with a request in a handler stays;
//   - one from an address that holds at least two connections more than the newcomer's makes
//     room at once, whatever its age;
//   - one that has been open for prompt without a request (idle, or stuck in its handshake or
//     headers) makes room for a newcomer from an address that holds no more than its own;
//   - one that has answered makes room at once for a newcomer from its own address: its client
//     is done with it (a probe that closes its connection after each answer may not have yet);
//   - among those that may go, the one whose address holds the most goes: one that has answered
//     a request before one still waiting for its first (a kubelet's probe, which opens a new
//     connection each time, would fail; the finished one's client is done or retries), and
//     the oldest of them.
//
// So one client's flood of connections displaces its own, never the scrapers' and the
// kubelet's (each from an address of its own, holding one), not even one slow to send its
// request on a loaded node.
//
// A newcomer for whom nothing may go is closed when the table holds connections without a
// request (they will be gone within prompt, and the client retries), and waits to be accepted
// when every connection has a request in a handler (each ends within the server's timeouts).
// Where netutil.LimitListener kept newcomers in the kernel's queue, first come first served,
// behind every connection a flood had queued, this one never lets the queue grow: what the
// kernel holds is only what arrived in the last moments.
//
// The connections it returns must be served by an http.Server whose ConnContext is
// withTrackedConn and whose handler is wrapped by trackRequests.
type fairListener struct {
	net.Listener
	max   int
	clock clock.PassiveClock

	mu    sync.Mutex
	open  map[*trackedConn]struct{}
	perIP map[netip.Addr]int
	// changed is closed, and replaced, when a connection closes or leaves its handler: an
	// Accept waiting for every handler to finish looks again.
	changed chan struct{}

	closeOnce sync.Once
	closed    chan struct{}
}

func newFairListener(ln net.Listener, max int, clk clock.PassiveClock) *fairListener {
	return &fairListener{
		Listener: ln,
		max:      max,
		clock:    clk,
		open:     map[*trackedConn]struct{}{},
		perIP:    map[netip.Addr]int{},
		changed:  make(chan struct{}),
		closed:   make(chan struct{}),
	}
}

// trackedConn is a connection the listener counts until it closes.
type trackedConn struct {
	net.Conn
	l  *fairListener
	ip netip.Addr

	// Guarded by l.mu.
	busy     bool      // a request is in a handler
	answered bool      // a request has left a handler
	since    time.Time // accepted, or last left a handler
}

func (l *fairListener) Accept() (net.Conn, error) {
	for {
		c, err := l.Listener.Accept()
		if err != nil {
			return nil, err
		}
		if tc := l.admit(c); tc != nil {
			return tc, nil
		}
		// At once, with no pause: the kernel hands connections over first come first served,
		// and whatever slows this loop down lets a flood queue up ahead of a scraper.
		_ = c.Close()
	}
}

func (l *fairListener) Close() error {
	l.closeOnce.Do(func() { close(l.closed) })
	return l.Listener.Close()
}

// admit counts c in, closing another connection to make room if one may go for it; nil means
// c is refused.
func (l *fairListener) admit(c net.Conn) *trackedConn {
	ip := remoteIP(c)
	l.mu.Lock()
	for len(l.open) >= l.max {
		victim, anyWaiting := l.victimLocked(ip)
		switch {
		case victim != nil:
			l.forgetLocked(victim)
			_ = victim.Conn.Close()
		case anyWaiting:
			l.mu.Unlock()
			return nil
		default:
			changed := l.changed
			l.mu.Unlock()
			select {
			case <-changed:
			case <-l.closed:
				return nil
			}
			l.mu.Lock()
		}
	}
	tc := &trackedConn{Conn: c, l: l, ip: ip, since: l.clock.Now()}
	l.open[tc] = struct{}{}
	l.perIP[ip]++
	l.mu.Unlock()
	return tc
}

// victimLocked picks the connection that makes room for a newcomer from arrival (nil when none
// may go), and says whether any open connection is without a request.
func (l *fairListener) victimLocked(arrival netip.Addr) (victim *trackedConn, anyWaiting bool) {
	now := l.clock.Now()
	newcomer := l.perIP[arrival]
	for c := range l.open {
		if c.busy {
			continue
		}
		anyWaiting = true
		held := l.perIP[c.ip]
		ownAnswered := c.answered && c.ip == arrival
		if !ownAnswered && held < newcomer+2 && (held < newcomer || now.Sub(c.since) < prompt) {
			continue
		}
		if victim == nil {
			victim = c
			continue
		}
		if most := l.perIP[victim.ip]; held > most || held == most && goesBefore(c, victim) {
			victim = c
		}
	}
	return victim, anyWaiting
}

// goesBefore orders two connections of addresses that hold as many: the one that has answered
// a request first, then the one open longest without a request.
func goesBefore(c, other *trackedConn) bool {
	if c.answered != other.answered {
		return c.answered
	}
	return c.since.Before(other.since)
}

// forgetLocked stops counting c, if it still is.
func (l *fairListener) forgetLocked(c *trackedConn) {
	if _, ok := l.open[c]; !ok {
		return
	}
	delete(l.open, c)
	if l.perIP[c.ip]--; l.perIP[c.ip] <= 0 {
		delete(l.perIP, c.ip)
	}
	l.changedLocked()
}

func (l *fairListener) changedLocked() {
	close(l.changed)
	l.changed = make(chan struct{})
}

func (c *trackedConn) Close() error {
	c.l.mu.Lock()
	c.l.forgetLocked(c)
	c.l.mu.Unlock()
	return c.Conn.Close()
}

// serving marks c as having a request in a handler, or no longer.
func (c *trackedConn) serving(busy bool) {
	l := c.l
	l.mu.Lock()
	defer l.mu.Unlock()
	if _, ok := l.open[c]; !ok {
		return
	}
	c.busy = busy
	if !busy {
		c.answered = true
		c.since = l.clock.Now()
		l.changedLocked()
	}
}

func remoteIP(c net.Conn) netip.Addr {
	if a, ok := c.RemoteAddr().(*net.TCPAddr); ok {
		if ip, ok := netip.AddrFromSlice(a.IP); ok {
			return ip.Unmap()
		}
	}
	return netip.Addr{}
}

type trackedConnKey struct{}

// withTrackedConn is an http.Server's ConnContext for a fairListener's connections, plain or
// under TLS.
func withTrackedConn(ctx context.Context, c net.Conn) context.Context {
	if u, ok := c.(interface{ NetConn() net.Conn }); ok {
		c = u.NetConn()
	}
	if tc, ok := c.(*trackedConn); ok {
		return context.WithValue(ctx, trackedConnKey{}, tc)
	}
	return ctx
}

// trackRequests tells the listener when a connection has a request in h.
func trackRequests(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if tc, ok := r.Context().Value(trackedConnKey{}).(*trackedConn); ok {
			tc.serving(true)
			defer tc.serving(false)
		}
		h.ServeHTTP(w, r)
	})
}

// serverErrors is the servers' ErrorLog: klog, with the line per failed TLS handshake only at
// -v=4, since a flood of connections (or a port scan) would write it thousands of times a
// second.
var serverErrors = log.New(serverErrorWriter{}, "", 0)

type serverErrorWriter struct{}

func (serverErrorWriter) Write(p []byte) (int, error) {
	msg := string(bytes.TrimSpace(p))
	if bytes.Contains(p, []byte("TLS handshake error")) {
		klog.V(4).Info(msg)
	} else {
		klog.Error(msg)
	}
	return len(p), nil
}
