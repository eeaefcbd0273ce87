package metrics

import (
	"context"
	"crypto/tls"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	authenticationclient "k8s.io/client-go/kubernetes/typed/authentication/v1"
	clocktesting "k8s.io/utils/clock/testing"

	"github.com/samples-operator-dev/cluster-samples-operator/test/connflood"
)

// heldTokenReviews makes each TokenReview wait at gate before the fake API answers it. (A
// blocking reactor would not do: the fake clientset runs reactors under one lock.)
type heldTokenReviews struct {
	authenticationclient.TokenReviewInterface
	mu   sync.Mutex
	held int
	gate chan struct{}
}

func holdTokenReviews(api *fakeAPI) *heldTokenReviews {
	return &heldTokenReviews{TokenReviewInterface: api.AuthenticationV1().TokenReviews(), gate: make(chan struct{})}
}

func (h *heldTokenReviews) Create(ctx context.Context, tr *authenticationv1.TokenReview, opts metav1.CreateOptions) (*authenticationv1.TokenReview, error) {
	h.mu.Lock()
	h.held++
	h.mu.Unlock()
	<-h.gate
	return h.TokenReviewInterface.Create(ctx, tr, opts)
}

func (h *heldTokenReviews) waiting() int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.held
}

func (h *heldTokenReviews) release() { close(h.gate) }

func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("not within 5s: %s", what)
		}
		time.Sleep(time.Millisecond)
	}
}

// TestConcurrentReviewsOfOneTokenAreMerged: many requests with one token at once cost one
// TokenReview and one SubjectAccessReview, and all get its verdict.
func TestConcurrentReviewsOfOneTokenAreMerged(t *testing.T) {
	api := newFakeAPI()
	held := holdTokenReviews(api)
	r := newReviewer(held, api.AuthorizationV1().SubjectAccessReviews(), "/metrics", time.Minute, 4,
		clocktesting.NewFakePassiveClock(time.Now()))
	const callers = 50
	verdicts := make(chan verdict, callers)
	for i := 0; i < callers; i++ {
		go func() {
			v, err := r.review(context.Background(), "scraper-token")
			if err != nil {
				t.Error(err)
			}
			verdicts <- v
		}()
	}
	waitFor(t, "the first review to reach the API server", func() bool { return held.waiting() == 1 })
	waitFor(t, "every caller to wait for it", func() bool {
		r.mu.Lock()
		defer r.mu.Unlock()
		return len(r.inFlight) == 1 && len(r.slots) == 1
	})
	held.release()
	for i := 0; i < callers; i++ {
		if v := <-verdicts; v != allowed {
			t.Errorf("caller %d got verdict %d, want allowed", i, v)
		}
	}
	if tokenReviews, sars := api.calls(); tokenReviews != 1 || sars != 1 {
		t.Errorf("%d TokenReviews and %d SubjectAccessReviews for one token, want 1 and 1", tokenReviews, sars)
	}
}

// TestReviewsAboveTheCapAreRefusedWith429: with the cap's worth of tokens under review, a request
// with yet another token is answered 429 at once, without reaching the API server; the scraper,
// whose verdict is cached, is still served.
func TestReviewsAboveTheCapAreRefusedWith429(t *testing.T) {
	api := newFakeAPI()
	held := holdTokenReviews(api)
	ts := startServerWith(t, api, held)
	ts.ready.Store(true)
	held.release() // the scraper's first review goes through
	if resp, _ := ts.get(t, "/metrics", "scraper-token"); resp.StatusCode != http.StatusOK {
		t.Fatalf("scraper: %d", resp.StatusCode)
	}
	held.gate = make(chan struct{})
	held.held = 0
	done := make(chan int, DefaultMaxReviewsInFlight)
	for i := 0; i < DefaultMaxReviewsInFlight; i++ {
		go func() {
			resp, _ := ts.get(t, "/metrics", fmt.Sprintf("guess-%d", i))
			done <- resp.StatusCode
		}()
	}
	waitFor(t, "the cap's worth of reviews to be under way", func() bool { return held.waiting() == DefaultMaxReviewsInFlight })
	before, _ := ts.api.calls()
	resp, body := ts.get(t, "/metrics", "one-guess-too-many")
	if resp.StatusCode != http.StatusTooManyRequests || resp.Header.Get("Retry-After") == "" {
		t.Errorf("above the cap: %d %q (Retry-After %q), want 429 with Retry-After", resp.StatusCode, body, resp.Header.Get("Retry-After"))
	}
	if after, _ := ts.api.calls(); after != before {
		t.Errorf("the refused request still sent a TokenReview (%d, then %d)", before, after)
	}
	if resp, _ := ts.get(t, "/metrics", "scraper-token"); resp.StatusCode != http.StatusOK {
		t.Errorf("the scraper, whose verdict is cached, got %d during the flood", resp.StatusCode)
	}
	held.release()
	for i := 0; i < DefaultMaxReviewsInFlight; i++ {
		if code := <-done; code != http.StatusUnauthorized {
			t.Errorf("a guessed token got %d once reviewed, want 401", code)
		}
	}
}

// TestProbesAndScrapesOutlastAConnectionFlood: a client without any token, from an address of
// its own, holds three times the cap of connections to the metrics port (silent, idle after
// the handshake, and stuck halfway through a request's headers) and three times the health
// listener's cap to that one, opening each again as soon as it is closed, for longer than the
// server's header and idle timeouts. Meanwhile the kubelet's probes, on the health listener,
// each answer within a second, and every scrape with a valid token succeeds.
func TestProbesAndScrapesOutlastAConnectionFlood(t *testing.T) {
	ts := startServer(t)
	ts.ready.Store(true)
	metricsAddr, healthAddr := strings.TrimPrefix(ts.url, "https://"), strings.TrimPrefix(ts.health, "http://")
	const attacker = "127.0.0.2" // a pod of its own; the probes and the scraper come from 127.0.0.1
	flood := connflood.Start(connflood.Hold{
		Addr: metricsAddr, From: attacker, TLS: &tls.Config{RootCAs: ts.pool},
		Silent: DefaultMaxConnections, Idle: DefaultMaxConnections, Partial: DefaultMaxConnections,
	})
	defer flood.Stop()
	healthFlood := connflood.Start(connflood.Hold{
		Addr: healthAddr, From: attacker, Silent: 2 * healthMaxConnections, Partial: healthMaxConnections,
	})
	defer healthFlood.Stop()
	waitFor(t, "the flood to hold the metrics port full", func() bool { return flood.Opened() >= 3*DefaultMaxConnections })

	probe := &http.Client{Timeout: time.Second, Transport: &http.Transport{DisableKeepAlives: true}}
	scraper := &http.Client{Timeout: 3 * time.Second, Transport: &http.Transport{
		TLSClientConfig: &tls.Config{RootCAs: ts.pool}, DisableKeepAlives: true,
	}}
	// Longer than ReadHeaderTimeout and idleTimeout: the connections they close come back.
	ctx, cancel := context.WithTimeout(context.Background(), idleTimeout+time.Second)
	defer cancel()
	results := connflood.Repeat(ctx,
		connflood.Probe{Name: "liveness", URL: ts.health + "/healthz", Client: probe, Period: 100 * time.Millisecond},
		connflood.Probe{Name: "readiness", URL: ts.health + "/readyz", Client: probe, Period: 100 * time.Millisecond},
		connflood.Probe{Name: "scrape", URL: ts.url + "/metrics", Client: scraper, Period: 500 * time.Millisecond,
			Header: http.Header{"Authorization": {"Bearer scraper-token"}}},
	)
	t.Logf("the flood opened %d connections to the metrics port and %d to the health listener",
		flood.Opened(), healthFlood.Opened())
	connflood.Expect(t, "liveness", results["liveness"], probe.Timeout)
	connflood.Expect(t, "readiness", results["readiness"], probe.Timeout)
	connflood.Expect(t, "scrape", results["scrape"], scraper.Timeout)
}
