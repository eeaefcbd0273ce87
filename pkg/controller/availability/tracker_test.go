package availability

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	clocktesting "k8s.io/utils/clock/testing"
)

const unavailableBody = `{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"service unavailable","reason":"ServiceUnavailable","code":503}`

// server answers 503 to its first `down` requests, then 200.
func server(t *testing.T, down int32) (*httptest.Server, *atomic.Int32) {
	var requests atomic.Int32
	s := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if requests.Add(1) <= down {
			w.WriteHeader(http.StatusServiceUnavailable)
			_, _ = io.WriteString(w, unavailableBody)
			return
		}
		_, _ = io.WriteString(w, `{"kind":"ImageStreamList"}`)
	}))
	t.Cleanup(s.Close)
	return s, &requests
}

func TestAReadIsHeldWhileTheAPIAnswers503AndReturnsWhenItAnswers(t *testing.T) {
	clk := clocktesting.NewFakeClock(time.Date(2026, 11, 25, 12, 0, 0, 0, time.UTC))
	tracker := New(clk)
	var slept []time.Duration
	var states []int
	tracker.sleep = func(_ context.Context, d time.Duration) bool {
		slept = append(slept, d)
		states = append(states, len(tracker.Outages()))
		clk.Step(d)
		return true
	}
	changes := 0
	tracker.OnChange(func() { changes++ })
	s, requests := server(t, 3)
	rt := &observer{next: http.DefaultTransport, api: "image.openshift.io/v1", tracker: tracker}

	req, _ := http.NewRequest(http.MethodGet, s.URL+"/apis/image.openshift.io/v1/namespaces/openshift/imagestreams", nil)
	resp, err := rt.RoundTrip(req)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 || !strings.Contains(string(body), "ImageStreamList") {
		t.Fatalf("the held read ended with %d %s", resp.StatusCode, body)
	}
	if requests.Load() != 4 || len(slept) != 3 || slept[0] != PollInterval {
		t.Errorf("%d requests, slept %v", requests.Load(), slept)
	}
	for i, n := range states {
		if n != 1 {
			t.Errorf("while held (poll %d) the tracker knew %d outages", i, n)
		}
	}
	if len(tracker.Outages()) != 0 || changes != 2 {
		t.Errorf("after the API answered: outages %v, %d changes told (want 2: down, back)", tracker.Outages(), changes)
	}
}

func TestAWriteMeeting503IsNotHeldAndTheOutageIsKept(t *testing.T) {
	t0 := time.Date(2026, 11, 25, 12, 0, 0, 0, time.UTC)
	clk := clocktesting.NewFakeClock(t0)
	tracker := New(clk)
	tracker.sleep = func(context.Context, time.Duration) bool { t.Error("a write was held"); return false }
	s, requests := server(t, 100)
	rt := &observer{next: http.DefaultTransport, api: "template.openshift.io/v1", tracker: tracker}
	for i := 0; i < 2; i++ {
		req, _ := http.NewRequest(http.MethodPost, s.URL+"/apis/template.openshift.io/v1/namespaces/openshift/templates", strings.NewReader("{}"))
		resp, err := rt.RoundTrip(req)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != 503 || string(body) != unavailableBody {
			t.Errorf("the caller got %d %q, not the server's answer", resp.StatusCode, body)
		}
		clk.Step(time.Minute)
	}
	outages := tracker.Outages()
	if requests.Load() != 2 || len(outages) != 1 || outages[0].API != "template.openshift.io/v1" || !outages[0].Since.Equal(t0) || outages[0].Message != "service unavailable" {
		t.Errorf("%d requests; outages %+v", requests.Load(), outages)
	}
}

func TestAHeldReadEndsWithItsContext(t *testing.T) {
	tracker := New(clocktesting.NewFakeClock(time.Now()))
	s, _ := server(t, 1000)
	rt := &observer{next: http.DefaultTransport, api: "image.openshift.io/v1", tracker: tracker}
	ctx, cancel := context.WithTimeout(context.Background(), 3*PollInterval)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, s.URL, nil)
	resp, err := rt.RoundTrip(req)
	if err == nil {
		resp.Body.Close()
		if resp.StatusCode != 503 {
			t.Errorf("got %d", resp.StatusCode)
		}
	}
	if ctx.Err() == nil {
		t.Error("the read returned before its context ended while the API was down")
	}
}
