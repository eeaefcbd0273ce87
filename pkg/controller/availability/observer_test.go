package availability

import (
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"k8s.io/client-go/rest"
	"k8s.io/client-go/util/flowcontrol"
	clocktesting "k8s.io/utils/clock/testing"
)

// answers is kube-apiserver seen from the observer: each request gets the next answer, the last
// one for ever.
type answers struct {
	next  []func() (*http.Response, error)
	asked atomic.Int32
}

func (a *answers) RoundTrip(*http.Request) (*http.Response, error) {
	i := int(a.asked.Add(1)) - 1
	return a.next[min(i, len(a.next)-1)]()
}

func answer(code int, body string) func() (*http.Response, error) {
	return func() (*http.Response, error) {
		return &http.Response{StatusCode: code, Body: io.NopCloser(strings.NewReader(body))}, nil
	}
}

// observerOf is an observer of api on a tracker that confirms nothing (no probe to ask) and
// holds reads as shortly as the tests need.
func observerOf(t *testing.T, next http.RoundTripper, hold flowcontrol.RateLimiter) (*observer, *Tracker) {
	tracker := New(t.Context(), &rest.Config{}, clocktesting.NewFakeClock(t0))
	tracker.pollInterval, tracker.maxHold, tracker.confirmFor = 10*time.Millisecond, 5*time.Second, 0
	tracker.confirming[api] = true // a confirmation would need a probe: these tests look at the answers alone
	return &observer{next: next, api: api, tracker: tracker, hold: hold}, tracker
}

func get(t *testing.T, body io.Reader, query string) *http.Request {
	req, err := http.NewRequestWithContext(t.Context(), http.MethodGet, "https://127.0.0.1"+imageStreams+query, body)
	if err != nil {
		t.Fatal(err)
	}
	return req
}

// roundTrip sends req through o and fails the test unless it is answered with code.
func roundTrip(t *testing.T, o *observer, req *http.Request, code int) *http.Response {
	t.Helper()
	resp, err := o.RoundTrip(req)
	if err != nil || resp.StatusCode != code {
		t.Fatalf("%s: answered %v, %v; want %d", req.URL, resp, err, code)
	}
	return resp
}

// A request kube-apiserver did not answer (a refused connection) says nothing about the API
// behind it: the error goes back as it came, and the API stays as it was.
func TestARequestWithoutAnAnswerSaysNothingOfTheAPI(t *testing.T) {
	refused := errors.New("connection refused")
	o, tracker := observerOf(t, &answers{next: []func() (*http.Response, error){
		answer(http.StatusServiceUnavailable, unavailableBody),
		func() (*http.Response, error) { return nil, refused },
	}}, nil)
	roundTrip(t, o, get(t, nil, ""), http.StatusServiceUnavailable)
	if resp, err := o.RoundTrip(get(t, nil, "")); !errors.Is(err, refused) || resp != nil {
		t.Errorf("the unanswered request returned %v, %v; want its error", resp, err)
	}
	if got := tracker.Outages(); len(got) != 1 {
		t.Errorf("outages after a request without an answer: %v, want the API still down", got)
	}
}

// Only an open watch's bytes are an answer that comes after the request: the body of a list read
// after the API went down (a slow reader) is what it answered before.
func TestOnlyAWatchsBodyIsALaterAnswer(t *testing.T) {
	o, tracker := observerOf(t, &answers{next: []func() (*http.Response, error){
		answer(http.StatusOK, `{"kind":"ImageStreamList"}`),
		answer(http.StatusServiceUnavailable, unavailableBody),
	}}, nil)
	list := roundTrip(t, o, get(t, nil, ""), http.StatusOK)
	roundTrip(t, o, get(t, nil, ""), http.StatusServiceUnavailable)
	if _, err := io.ReadAll(list.Body); err != nil {
		t.Fatal(err)
	}
	if got := tracker.Outages(); len(got) != 1 {
		t.Errorf("reading a list answered before the outage ended it: outages %v", got)
	}
}

// A watch that ends without an event is no answer: only bytes are.
func TestAWatchThatEndsWithoutAnEventIsNoAnswer(t *testing.T) {
	o, tracker := observerOf(t, &answers{next: []func() (*http.Response, error){
		answer(http.StatusOK, ""),
		answer(http.StatusServiceUnavailable, unavailableBody),
	}}, nil)
	watch := roundTrip(t, o, get(t, nil, "?watch=true"), http.StatusOK)
	roundTrip(t, o, get(t, nil, ""), http.StatusServiceUnavailable)
	if n, err := watch.Body.Read(make([]byte, 16)); n != 0 || err != io.EOF {
		t.Fatalf("the watch's end read %d bytes, %v", n, err)
	}
	if got := tracker.Outages(); len(got) != 1 {
		t.Errorf("a watch that ended without an event ended the outage: outages %v", got)
	}
}

// A GET without a body is held whether it says so with nil or with http.NoBody (as a request
// made with NewRequest(..., http.NoBody), or one a redirect rebuilt, does).
func TestAGetWithNoBodyIsHeld(t *testing.T) {
	for _, body := range []io.Reader{nil, http.NoBody} {
		o, _ := observerOf(t, &answers{next: []func() (*http.Response, error){
			answer(http.StatusServiceUnavailable, unavailableBody),
			answer(http.StatusOK, `{"kind":"ImageStreamList"}`),
		}}, flowcontrol.NewFakeAlwaysRateLimiter())
		resp, err := o.RoundTrip(get(t, body, ""))
		if err != nil || resp.StatusCode != http.StatusOK {
			t.Errorf("a GET with body %T met a 503: answered %v, %v; want held until the 200", body, resp, err)
		}
	}
}

// The outages are listed by API, whatever order they began in.
func TestOutagesAreListedByAPI(t *testing.T) {
	tracker := New(t.Context(), &rest.Config{}, clocktesting.NewFakeClock(t0))
	for _, name := range []string{"template.openshift.io/v1", "image.openshift.io/v1", "route.openshift.io/v1"} {
		tracker.confirming[name] = true
		tracker.answered(name, true, "down")
	}
	var got []string
	for _, o := range tracker.Outages() {
		got = append(got, o.API)
	}
	if fmt.Sprint(got) != "[image.openshift.io/v1 route.openshift.io/v1 template.openshift.io/v1]" {
		t.Errorf("outages listed as %v", got)
	}
}

// A held read does not spin: with New's poll it asks a few times a second, however many the
// client's rate limiter (here client-go's default, bursts of 10) would let through.
func TestAHeldReadAsksAFewTimesASecond(t *testing.T) {
	var down atomic.Bool
	down.Store(true)
	next := &answers{next: []func() (*http.Response, error){func() (*http.Response, error) {
		if down.Load() {
			return answer(http.StatusServiceUnavailable, unavailableBody)()
		}
		return answer(http.StatusOK, `{"kind":"ImageStreamList"}`)()
	}}}
	tracker := New(t.Context(), &rest.Config{}, clocktesting.NewFakeClock(t0))
	tracker.confirming[api] = true
	o := &observer{next: next, api: api, tracker: tracker, hold: limiterOf(&rest.Config{})}
	time.AfterFunc(time.Second, func() { down.Store(false) })
	start := time.Now()
	resp, err := o.RoundTrip(get(t, nil, ""))
	if err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("the held read answered %v, %v", resp, err)
	}
	// 500 ms apart: the first ask and about two more in the second down; on a loaded machine fewer.
	if asked := next.asked.Load(); asked > 4 {
		t.Errorf("%d asks in %s of outage, want at most 4", asked, time.Since(start).Round(time.Millisecond))
	}
}
