package availability

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	imageclient "github.com/openshift/client-go/image/clientset/versioned"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/util/flowcontrol"
	clocktesting "k8s.io/utils/clock/testing"
)

const (
	api             = "image.openshift.io/v1"
	discoveryPath   = "/apis/" + api
	unavailableBody = `{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"service unavailable","reason":"ServiceUnavailable","code":503}`
)

var t0 = time.Date(2026, 11, 25, 12, 0, 0, 0, time.UTC)

// fakeAPI is kube-apiserver in front of an API that answers 503 while it is down. Watches stay
// open and send what is put on events.
type fakeAPI struct {
	*httptest.Server
	down      atomic.Bool
	downFor   atomic.Int32 // the API answers 503 to this many more requests, then comes back
	requests  atomic.Int32 // other than the discovery document's
	discovery atomic.Int32
	events    chan string
}

func newFakeAPI(t *testing.T) *fakeAPI {
	a := &fakeAPI{events: make(chan string)}
	a.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == discoveryPath {
			a.discovery.Add(1)
		} else {
			a.requests.Add(1)
		}
		w.Header().Set("Content-Type", "application/json")
		if a.down.Load() || a.downFor.Add(-1) >= 0 {
			w.WriteHeader(http.StatusServiceUnavailable)
			_, _ = io.WriteString(w, unavailableBody)
			return
		}
		switch {
		case r.URL.Path == discoveryPath:
			_, _ = io.WriteString(w, `{"kind":"APIResourceList","apiVersion":"v1","groupVersion":"image.openshift.io/v1","resources":[]}`)
		case r.URL.Query().Get("watch") == "true":
			w.WriteHeader(http.StatusOK)
			w.(http.Flusher).Flush()
			for {
				select {
				case e := <-a.events:
					_, _ = io.WriteString(w, e)
					w.(http.Flusher).Flush()
				case <-r.Context().Done():
					return
				}
			}
		default:
			_, _ = io.WriteString(w, `{"kind":"ImageStreamList","apiVersion":"image.openshift.io/v1","metadata":{},"items":[]}`)
		}
	}))
	t.Cleanup(a.Close)
	return a
}

func (a *fakeAPI) config() *rest.Config { return &rest.Config{Host: a.URL} }

// newTracker is a tracker confirming outages with a, whose clock says t0.
func newTracker(t *testing.T, a *fakeAPI) *Tracker {
	return New(t.Context(), a.config(), clocktesting.NewFakeClock(t0))
}

// bound sets how long a held read and a confirmation may last.
func bound(tracker *Tracker, hold, confirm time.Duration) {
	tracker.maxHold, tracker.confirmFor = hold, confirm
}

// send makes one request through cfg's transport and returns its status and body.
func send(t *testing.T, ctx context.Context, cfg *rest.Config, method, path string) (int, string) {
	t.Helper()
	client, err := rest.HTTPClientFor(cfg)
	if err != nil {
		t.Fatal(err)
	}
	var body io.Reader
	if method != http.MethodGet {
		body = strings.NewReader("{}")
	}
	req, err := http.NewRequestWithContext(ctx, method, cfg.Host+path, body)
	if err != nil {
		t.Fatal(err)
	}
	resp, err := client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	data, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(data)
}

const imageStreams = "/apis/image.openshift.io/v1/namespaces/openshift/imagestreams"

// within waits up to d for cond.
func within(d time.Duration, cond func() bool) bool {
	deadline := time.Now().Add(d)
	for !cond() {
		if time.Now().After(deadline) {
			return false
		}
		time.Sleep(10 * time.Millisecond)
	}
	return true
}

func TestAnInformersReadIsHeldWhileTheAPIAnswers503AndReturnsWhenItAnswers(t *testing.T) {
	t.Parallel()
	a := newFakeAPI(t)
	a.downFor.Store(3)
	tracker := newTracker(t, a)
	var mu sync.Mutex
	var states []int
	tracker.OnChange(func() {
		mu.Lock()
		defer mu.Unlock()
		states = append(states, len(tracker.Outages()))
	})

	start := time.Now()
	code, body := send(t, t.Context(), tracker.ObserveInformers(a.config(), api), http.MethodGet, imageStreams)
	if code != 200 || !strings.Contains(body, "ImageStreamList") {
		t.Fatalf("the held read ended with %d %s", code, body)
	}
	if took := time.Since(start); a.requests.Load() != 4 || took < 3*PollInterval {
		t.Errorf("%d requests in %s, want 4 a PollInterval apart", a.requests.Load(), took)
	}
	mu.Lock()
	defer mu.Unlock()
	if fmt.Sprint(states) != "[1 0]" || len(tracker.Outages()) != 0 {
		t.Errorf("outages told to the listeners: %v, want down then back; outages now %v", states, tracker.Outages())
	}
}

// TestTheWritersClientNeverHolds: the samples controller's whole-object reads and the
// finalizer's LIST go back at once, as its writes do; each has a backoff of its own.
func TestTheWritersClientNeverHolds(t *testing.T) {
	t.Parallel()
	a := newFakeAPI(t)
	a.down.Store(true)
	tracker := newTracker(t, a)
	cfg := tracker.Observe(a.config(), api)
	for i, method := range []string{http.MethodGet, http.MethodPost, http.MethodGet} {
		// The deadline only keeps a held request from hanging the test.
		ctx, cancel := context.WithTimeout(t.Context(), 4*PollInterval)
		start := time.Now()
		code, body := send(t, ctx, cfg, method, imageStreams)
		cancel()
		if took := time.Since(start); code != 503 || body != unavailableBody || took > PollInterval {
			t.Errorf("%s: the caller got %d %q after %s, not the server's answer at once", method, code, body, took)
		}
		if n := a.requests.Load(); n != int32(i+1) {
			t.Errorf("after %d requests the API was asked %d times", i+1, n)
		}
	}
	outages := tracker.Outages()
	if len(outages) != 1 || outages[0].API != api || !outages[0].Since.Equal(t0) || outages[0].Message != "service unavailable" {
		t.Errorf("outages %+v", outages)
	}
}

func TestAHeldReadGivesUpAfterItsBound(t *testing.T) {
	t.Parallel()
	a := newFakeAPI(t)
	a.down.Store(true)
	tracker := newTracker(t, a)
	const hold = 4 * PollInterval
	bound(tracker, hold, ConfirmFor)
	// The request's own context has no say here; its deadline only keeps a hold without a
	// bound from hanging the test.
	ctx, cancel := context.WithTimeout(t.Context(), hold+5*time.Second)
	defer cancel()
	start := time.Now()
	code, _ := send(t, ctx, tracker.ObserveInformers(a.config(), api), http.MethodGet, imageStreams)
	took := time.Since(start)
	if code != 503 || took < hold-PollInterval || took > hold+2*time.Second {
		t.Errorf("the held read ended with %d after %s, want 503 after %s", code, took, hold)
	}
	if n := a.requests.Load(); n < 3 || n > 5 {
		t.Errorf("the API was asked %d times while the read was held %s", n, hold)
	}
}

func TestAHeldReadEndsWithItsContext(t *testing.T) {
	t.Parallel()
	a := newFakeAPI(t)
	a.down.Store(true)
	tracker := newTracker(t, a)
	ctx, cancel := context.WithTimeout(t.Context(), 3*PollInterval)
	defer cancel()
	client, err := rest.HTTPClientFor(tracker.ObserveInformers(a.config(), api))
	if err != nil {
		t.Fatal(err)
	}
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, a.URL+imageStreams, nil)
	resp, err := client.Do(req)
	if err == nil {
		resp.Body.Close()
		if resp.StatusCode != 503 {
			t.Errorf("got %d", resp.StatusCode)
		}
	}
	// Its deadline, not ctx.Err: the rate limiter may refuse a wait past the deadline before
	// the context says it is done.
	if deadline, _ := ctx.Deadline(); time.Now().Before(deadline) {
		t.Errorf("the read returned %s before its context ended while the API was down", time.Until(deadline))
	}
}

// TestAWrites503WithNothingAfterItEndsOnceTheAPIAnswers: nothing else may ask the API for
// minutes (the informers' watches were never cut): the tracker asks itself.
func TestAWrites503WithNothingAfterItEndsOnceTheAPIAnswers(t *testing.T) {
	t.Parallel()
	a := newFakeAPI(t)
	a.down.Store(true)
	tracker := newTracker(t, a)
	if code, _ := send(t, t.Context(), tracker.Observe(a.config(), api), http.MethodPost, imageStreams); code != 503 {
		t.Fatalf("the write got %d", code)
	}
	if len(tracker.Outages()) != 1 {
		t.Fatalf("outages after the write's 503: %v", tracker.Outages())
	}
	time.Sleep(2 * PollInterval)
	if len(tracker.Outages()) != 1 || a.discovery.Load() == 0 {
		t.Errorf("while the API answers 503: outages %v, %d asks of its discovery document", tracker.Outages(), a.discovery.Load())
	}
	a.down.Store(false)
	back := time.Now()
	if !within(3*PollInterval, func() bool { return len(tracker.Outages()) == 0 }) {
		t.Errorf("still down %s after the API answers again: %v", time.Since(back), tracker.Outages())
	}
	if a.requests.Load() != 1 {
		t.Errorf("the write was sent %d times", a.requests.Load())
	}
}

func TestOneConfirmationPerAPIAtATimeAndForABoundedTime(t *testing.T) {
	t.Parallel()
	a := newFakeAPI(t)
	a.down.Store(true)
	tracker := newTracker(t, a)
	const confirm = 4 * PollInterval
	bound(tracker, MaxHold, confirm)
	cfg := tracker.Observe(a.config(), api)
	for i := 0; i < 20; i++ {
		send(t, t.Context(), cfg, http.MethodPut, imageStreams)
	}
	time.Sleep(confirm + 3*PollInterval)
	if n := a.discovery.Load(); n < 2 || n > 5 {
		t.Errorf("%d asks of the discovery document after 20 writes met 503, want one every PollInterval for %s", n, confirm)
	}
	if len(tracker.Outages()) != 1 {
		t.Errorf("outages %v, want the API still down", tracker.Outages())
	}
}

// TestAHeldReadThatGivesUpIsConfirmed: the reflector waits up to a minute before it asks again.
func TestAHeldReadThatGivesUpIsConfirmed(t *testing.T) {
	t.Parallel()
	a := newFakeAPI(t)
	a.down.Store(true)
	tracker := newTracker(t, a)
	bound(tracker, 2*PollInterval, ConfirmFor)
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	defer cancel()
	if code, _ := send(t, ctx, tracker.ObserveInformers(a.config(), api), http.MethodGet, imageStreams); code != 503 {
		t.Fatalf("the held read got %d", code)
	}
	a.down.Store(false)
	if !within(3*PollInterval, func() bool { return len(tracker.Outages()) == 0 }) {
		t.Errorf("still down after the API answers again: %v", tracker.Outages())
	}
}

func TestBytesOnAnOpenWatchAreAnAnswer(t *testing.T) {
	t.Parallel()
	a := newFakeAPI(t)
	tracker := newTracker(t, a)
	bound(tracker, MaxHold, 0) // no confirmation: only the watch can tell
	client, err := rest.HTTPClientFor(tracker.ObserveInformers(a.config(), api))
	if err != nil {
		t.Fatal(err)
	}
	req, _ := http.NewRequestWithContext(t.Context(), http.MethodGet, a.URL+imageStreams+"?watch=true", nil)
	watch, err := client.Do(req)
	if err != nil || watch.StatusCode != 200 {
		t.Fatalf("watch: %v %v", watch, err)
	}
	defer watch.Body.Close()

	a.down.Store(true)
	if code, _ := send(t, t.Context(), tracker.Observe(a.config(), api), http.MethodPost, imageStreams); code != 503 || len(tracker.Outages()) != 1 {
		t.Fatalf("the write got %d; outages %v", code, tracker.Outages())
	}
	event := `{"type":"BOOKMARK","object":{"kind":"ImageStream","apiVersion":"image.openshift.io/v1","metadata":{"resourceVersion":"7"}}}` + "\n"
	a.events <- event
	buf := make([]byte, len(event))
	if _, err := io.ReadFull(watch.Body, buf); err != nil {
		t.Fatal(err)
	}
	if len(tracker.Outages()) != 0 {
		t.Errorf("an event arrived on a watch of the API, yet it is down: %v", tracker.Outages())
	}
}

// countingLimiter lets everything through and counts the waits.
type countingLimiter struct {
	flowcontrol.RateLimiter
	waits atomic.Int32
}

func (l *countingLimiter) Wait(ctx context.Context) error {
	l.waits.Add(1)
	return l.RateLimiter.Wait(ctx)
}

func TestAHeldReadAsksAgainThroughTheClientsRateLimiter(t *testing.T) {
	t.Parallel()
	a := newFakeAPI(t)
	a.downFor.Store(3)
	tracker := newTracker(t, a)
	limiter := &countingLimiter{RateLimiter: flowcontrol.NewFakeAlwaysRateLimiter()}
	cfg := a.config()
	cfg.RateLimiter = limiter
	client, err := imageclient.NewForConfig(tracker.ObserveInformers(cfg, api))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := client.ImageV1().ImageStreams("openshift").List(t.Context(), metav1.ListOptions{}); err != nil {
		t.Fatal(err)
	}
	if n := limiter.waits.Load(); n != 4 || a.requests.Load() != 4 {
		t.Errorf("%d requests waited %d times on the client's limiter, want once each", a.requests.Load(), n)
	}

	// A config without a limiter gets one, which the clientset and the held reads share.
	if out := tracker.ObserveInformers(a.config(), api); out.RateLimiter == nil {
		t.Error("no limiter to share")
	}
}

// TestAnOutagesMessageIsTheAnswerInOneLine: the message an outage keeps is the Status's message,
// else the body's text on one line, cut at 300 characters, else the status's name; the body
// stays readable for the caller.
func TestAnOutagesMessageIsTheAnswerInOneLine(t *testing.T) {
	long := strings.Repeat("x", 301)
	for _, tc := range []struct {
		name, body, want string
	}{
		{"a Status", unavailableBody, "service unavailable"},
		{"a Status without a message", `{"kind":"Status","code":503}`, `{"kind":"Status","code":503}`},
		{"text over lines", "no endpoints\n  available for\tservice", "no endpoints available for service"},
		{"longer than 300", long, long[:300] + "..."},
		{"exactly 300", long[:300], long[:300]},
		{"empty", "", "Service Unavailable"},
	} {
		resp := &http.Response{StatusCode: http.StatusServiceUnavailable, Body: io.NopCloser(strings.NewReader(tc.body))}
		if got := peekBody(resp); got != tc.want {
			t.Errorf("%s: %q, want %q", tc.name, got, tc.want)
		}
		if rest, _ := io.ReadAll(resp.Body); string(rest) != tc.body {
			t.Errorf("%s: the body reads %q after the peek, want %q", tc.name, rest, tc.body)
		}
	}
	if got := peekBody(&http.Response{StatusCode: http.StatusServiceUnavailable}); got != "Service Unavailable" {
		t.Errorf("no body: %q, want the status's name", got)
	}
}

// TestAHeldReadWaitsOnTheLimiterTheClientWouldHave: the informers' client without a limiter of
// its own gets the one client-go would give it (5 requests a second, bursts of 10), or none when
// it asked for none (a negative QPS).
func TestAHeldReadWaitsOnTheLimiterTheClientWouldHave(t *testing.T) {
	own := flowcontrol.NewTokenBucketRateLimiter(1, 1)
	if got := limiterOf(&rest.Config{RateLimiter: own}); got != own {
		t.Errorf("a config with a limiter: %v, want its own", got)
	}
	for _, tc := range []struct {
		name       string
		qps        float32
		burst      int
		wantQPS    float32
		wantBursts int // requests let through at once
	}{
		{"defaults", 0, 0, rest.DefaultQPS, rest.DefaultBurst},
		{"its own rate", 20, 30, 20, 30},
		{"a rate, the default burst", 20, 0, 20, rest.DefaultBurst},
		{"a burst, the default rate", 0, 3, rest.DefaultQPS, 3},
	} {
		limiter := limiterOf(&rest.Config{QPS: tc.qps, Burst: tc.burst})
		if limiter.QPS() != tc.wantQPS {
			t.Errorf("%s: %v a second, want %v", tc.name, limiter.QPS(), tc.wantQPS)
		}
		bursts := 0
		for limiter.TryAccept() && bursts < 1000 {
			bursts++
		}
		if bursts != tc.wantBursts {
			t.Errorf("%s: %d let through at once, want %d", tc.name, bursts, tc.wantBursts)
		}
	}
	unlimited := limiterOf(&rest.Config{QPS: -1})
	for i := 0; i < 1000; i++ {
		if !unlimited.TryAccept() {
			t.Fatalf("no limit asked for: request %d held back", i+1)
		}
	}
}
