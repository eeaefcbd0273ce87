package metrics

import (
	"net"
	"net/netip"
	"sync/atomic"
	"testing"
	"time"

	clocktesting "k8s.io/utils/clock/testing"
)

// fakeConn is a connection from one address that records whether it was closed.
type fakeConn struct {
	net.Conn
	from   string
	closed atomic.Bool
}

func (c *fakeConn) RemoteAddr() net.Addr { return &net.TCPAddr{IP: net.ParseIP(c.from), Port: 40000} }
func (c *fakeConn) Close() error         { c.closed.Store(true); return nil }

type fairListenerTest struct {
	t     *testing.T
	l     *fairListener
	clock *clocktesting.FakePassiveClock
}

func newFairListenerTest(t *testing.T, max int) *fairListenerTest {
	clk := clocktesting.NewFakePassiveClock(time.Now())
	return &fairListenerTest{t: t, l: newFairListener(nil, max, clk), clock: clk}
}

// arrive offers a connection from the address; nil means it was refused (and it is then the
// caller's to close, as Accept does).
func (ft *fairListenerTest) arrive(from string) (*fakeConn, *trackedConn) {
	c := &fakeConn{from: from}
	return c, ft.l.admit(c)
}

func (ft *fairListenerTest) mustAdmit(from string) (*fakeConn, *trackedConn) {
	ft.t.Helper()
	c, tc := ft.arrive(from)
	if tc == nil {
		ft.t.Fatalf("a connection from %s was refused; open: %v", from, ft.l.perIP)
	}
	return c, tc
}

func (ft *fairListenerTest) later(d time.Duration) { ft.clock.SetTime(ft.clock.Now().Add(d)) }

// TestOneAddressFloodingMakesRoomForTheOthers: connections from an address that holds two more
// than the newcomer's make room for it at once; the flooding address's own newcomers wait for
// its connections to go stale, and then displace its own, not the others'.
func TestOneAddressFloodingMakesRoomForTheOthers(t *testing.T) {
	ft := newFairListenerTest(t, 4)
	var flood []*fakeConn
	for i := 0; i < 4; i++ {
		c, _ := ft.mustAdmit("10.0.0.66")
		flood = append(flood, c)
		ft.later(time.Millisecond)
	}
	// The listener is full of the flood's connections, none older than prompt.
	scraper, _ := ft.mustAdmit("10.0.0.1")
	if !flood[0].closed.Load() || flood[1].closed.Load() {
		t.Fatalf("the scraper's arrival should close the flood's oldest connection and only it")
	}
	if c, tc := ft.arrive("10.0.0.66"); tc != nil || c.closed.Load() {
		t.Fatalf("a flood connection was let in while the flood's own are fresh and the scraper's is alone")
	}
	kubelet, _ := ft.mustAdmit("10.0.0.2")
	if !flood[1].closed.Load() {
		t.Fatalf("the second newcomer should displace the flood's next oldest connection")
	}
	// Once the flood's connections are stale its newcomers take their places, never the
	// scraper's or the kubelet's, stale as they are too.
	ft.later(prompt)
	for i := 0; i < 10; i++ {
		ft.mustAdmit("10.0.0.66")
		ft.later(prompt)
	}
	if scraper.closed.Load() || kubelet.closed.Load() {
		t.Fatalf("a flood connection displaced the scraper's or the kubelet's, while the flood held more")
	}
	if got := ft.l.perIP; len(ft.l.open) != 4 || got[netip.MustParseAddr("10.0.0.66")] != 2 {
		t.Fatalf("open connections by address: %v, want 1 from each of the others and 2 of the flood's", got)
	}
	// Nor when the flood's own are fresh: the scraper's, stale, is not the flood's to take.
	ft.mustAdmit("10.0.0.66")
	ft.mustAdmit("10.0.0.66")
	if c, tc := ft.arrive("10.0.0.66"); tc != nil || c.closed.Load() || scraper.closed.Load() || kubelet.closed.Load() {
		t.Fatalf("a flood connection took the place of a lone stale one")
	}
}

// TestAStaleConnectionMakesRoomForAnyone: with one connection per address, nobody holds more
// than a newcomer; the one open longest without a request, once stale, makes room.
func TestAStaleConnectionMakesRoomForAnyone(t *testing.T) {
	ft := newFairListenerTest(t, 3)
	first, _ := ft.mustAdmit("10.0.0.1")
	ft.later(time.Millisecond)
	second, _ := ft.mustAdmit("10.0.0.2")
	_, third := ft.mustAdmit("10.0.0.3")
	if _, tc := ft.arrive("10.0.0.4"); tc != nil {
		t.Fatal("a newcomer was let in while every open connection is fresh and alone")
	}
	// A request keeps its connection; one that answered starts anew.
	third.serving(true)
	ft.later(prompt)
	ft.mustAdmit("10.0.0.4")
	if !first.closed.Load() || second.closed.Load() {
		t.Fatal("the connection open longest without a request should go first, and only it")
	}
	third.serving(false)
	ft.mustAdmit("10.0.0.5")
	if !second.closed.Load() {
		t.Fatal("the stale connection should make room")
	}
	if third.Conn.(*fakeConn).closed.Load() {
		t.Fatal("a connection that has just answered a request was closed")
	}
}

// TestConnectionsWithARequestAreNeverClosedForANewcomer: when every open connection has a
// request in a handler, a newcomer waits to be admitted until one of them finishes, and a
// closed listener lets it go.
func TestConnectionsWithARequestAreNeverClosedForANewcomer(t *testing.T) {
	ft := newFairListenerTest(t, 2)
	a, ta := ft.mustAdmit("10.0.0.66")
	b, tb := ft.mustAdmit("10.0.0.66")
	ta.serving(true)
	tb.serving(true)
	ft.later(time.Hour)
	admitted := make(chan *trackedConn, 1)
	go func() { _, tc := ft.arrive("10.0.0.1"); admitted <- tc }()
	select {
	case <-admitted:
		t.Fatal("a newcomer was let in while every connection has a request")
	case <-time.After(50 * time.Millisecond):
	}
	if a.closed.Load() || b.closed.Load() {
		t.Fatal("a connection with a request was closed")
	}
	tb.serving(false)
	select {
	case tc := <-admitted:
		if tc == nil || !b.closed.Load() || a.closed.Load() {
			t.Fatal("once one request ended, its connection should make room, and only it")
		}
	case <-time.After(5 * time.Second):
		t.Fatal("the newcomer still waits after a request ended")
	}

	// Closing the listener lets a newcomer that waits go.
	ft2 := newFairListenerTest(t, 1)
	_, only := ft2.mustAdmit("10.0.0.66")
	only.serving(true)
	go func() { _, tc := ft2.arrive("10.0.0.1"); admitted <- tc }()
	ft2.l.closeOnce.Do(func() { close(ft2.l.closed) })
	select {
	case tc := <-admitted:
		if tc != nil {
			t.Fatal("a newcomer was admitted by a closed listener")
		}
	case <-time.After(5 * time.Second):
		t.Fatal("closing the listener did not release a waiting newcomer")
	}
}

// TestAnAnsweredConnectionMakesRoomBeforeAFreshOne: the kubelet's probes open a new connection
// each time, so its address may hold one that has just answered beside new ones still waiting
// for their request (slow to come on a loaded node). When its address must make room, the
// answered one goes, even though the new ones were accepted before it last left its handler:
// closing a new one fails its probe.
func TestAnAnsweredConnectionMakesRoomBeforeAFreshOne(t *testing.T) {
	ft := newFairListenerTest(t, 4)
	const kubelet, flood = "10.0.0.2", "10.0.0.66"
	_, answered := ft.mustAdmit(kubelet)
	answered.serving(true)
	ft.later(time.Millisecond)
	liveness, _ := ft.mustAdmit(kubelet)
	readiness, _ := ft.mustAdmit(kubelet)
	ft.later(time.Millisecond)
	answered.serving(false)
	ft.mustAdmit(flood)
	ft.mustAdmit(flood)
	if liveness.closed.Load() || readiness.closed.Load() {
		t.Fatal("a probe's connection waiting for its request made room while one that had answered was open")
	}
	if !answered.Conn.(*fakeConn).closed.Load() {
		t.Fatal("the connection that had answered a request should have made room")
	}
}

// TestAProbeDisplacesItsOwnAddressesAnsweredConnection: the kubelet's readiness probe arrives
// while its liveness probe waits for its request and the connection of the probe before has
// answered but is not closed yet; the flood holds the rest, all fresh. The answered connection is
// the kubelet's own and done: it makes room, rather than the probe being closed unanswered.
func TestAProbeDisplacesItsOwnAddressesAnsweredConnection(t *testing.T) {
	ft := newFairListenerTest(t, 4)
	const kubelet, flood = "10.0.0.2", "10.0.0.66"
	_, answered := ft.mustAdmit(kubelet)
	answered.serving(true)
	liveness, _ := ft.mustAdmit(kubelet)
	floodA, _ := ft.mustAdmit(flood)
	floodB, _ := ft.mustAdmit(flood)
	answered.serving(false)
	ft.later(time.Millisecond)
	if _, readiness := ft.arrive(kubelet); readiness == nil {
		t.Fatal("the readiness probe's connection was refused while its own address held one that had answered")
	}
	if !answered.Conn.(*fakeConn).closed.Load() {
		t.Fatal("the kubelet's answered connection should have made room")
	}
	if liveness.closed.Load() || floodA.closed.Load() || floodB.closed.Load() {
		t.Fatal("a connection other than the kubelet's answered one made room")
	}
}
