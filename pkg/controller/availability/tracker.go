// Package availability tells when an API the samples live in (image.openshift.io,
// template.openshift.io, served by openshift-apiserver behind kube-apiserver's aggregator) stops
// answering, from the answers to the requests the operator makes anyway, and makes the operator's
// caches return at once when it answers again.
//
// While openshift-apiserver is down the aggregator answers 503 to everything of its groups. An
// informer's reflector meets a 503 with a backoff of its own that grows to a minute, so after an
// outage of a minute its cache would stay stale for up to another: a sample an admin deleted
// meanwhile would come back that late. The observing transport therefore holds an informer's
// reads (GET) that meet a 503 and asks again every PollInterval, so the reflector sees the API
// back within PollInterval of its return. Writes are never held: the samples controller's own
// backoff (pkg/refusal) answers a refused write.
package availability

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"sort"
	"strings"
	"sync"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
	"k8s.io/klog/v2"
	"k8s.io/utils/clock"

	"github.com/samples-operator-dev/cluster-samples-operator/pkg/clusteroperator"
)

// PollInterval is how often a held read asks again while its API answers 503.
const PollInterval = 500 * time.Millisecond

// Tracker holds each observed API's state.
type Tracker struct {
	clock clock.PassiveClock
	// sleep waits d or until ctx is done; tests replace it.
	sleep func(ctx context.Context, d time.Duration) bool

	mu        sync.Mutex
	down      map[string]clusteroperator.Outage
	listeners []func()
}

// New returns a tracker that has seen no outage.
func New(clk clock.PassiveClock) *Tracker {
	return &Tracker{clock: clk, sleep: sleepContext, down: map[string]clusteroperator.Outage{}}
}

func sleepContext(ctx context.Context, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return false
	case <-t.C:
		return true
	}
}

// Observe returns a copy of cfg whose requests are evidence of api's availability ("image.openshift.io/v1").
func (t *Tracker) Observe(cfg *rest.Config, api string) *rest.Config {
	out := rest.CopyConfig(cfg)
	out.Wrap(func(next http.RoundTripper) http.RoundTripper {
		return &observer{next: next, api: api, tracker: t}
	})
	return out
}

// OnChange calls f (which must not block) whenever an API goes down or comes back.
func (t *Tracker) OnChange(f func()) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.listeners = append(t.listeners, f)
}

// Outages lists the APIs answering 503 now, by name.
func (t *Tracker) Outages() []clusteroperator.Outage {
	t.mu.Lock()
	defer t.mu.Unlock()
	out := make([]clusteroperator.Outage, 0, len(t.down))
	for _, o := range t.down {
		out = append(out, o)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].API < out[j].API })
	return out
}

// answered records an answer of api: unavailable is a 503, message its body.
func (t *Tracker) answered(api string, unavailable bool, message string) {
	t.mu.Lock()
	o, wasDown := t.down[api]
	switch {
	case unavailable && !wasDown:
		t.down[api] = clusteroperator.Outage{API: api, Since: t.clock.Now(), Message: message}
	case unavailable:
		o.Message = message
		t.down[api] = o
		t.mu.Unlock()
		return // still down: nothing for the listeners
	case wasDown:
		delete(t.down, api)
	default:
		t.mu.Unlock()
		return
	}
	listeners := append([]func(){}, t.listeners...)
	t.mu.Unlock()
	if unavailable {
		klog.InfoS("An API of the samples answers 503: the operator cannot see or repair the samples until it answers", "api", api, "answer", message)
	} else {
		klog.InfoS("An API of the samples answers again", "api", api, "downFor", t.clock.Since(o.Since).Round(time.Millisecond))
	}
	for _, f := range listeners {
		f()
	}
}

type observer struct {
	next    http.RoundTripper
	api     string
	tracker *Tracker
}

func (o *observer) RoundTrip(req *http.Request) (*http.Response, error) {
	for {
		resp, err := o.next.RoundTrip(req)
		if err != nil {
			return resp, err // no answer from kube-apiserver itself: nothing about this API
		}
		if resp.StatusCode != http.StatusServiceUnavailable {
			o.tracker.answered(o.api, false, "")
			return resp, nil
		}
		message := peekBody(resp)
		o.tracker.answered(o.api, true, message)
		if req.Method != http.MethodGet || req.Body != nil && req.Body != http.NoBody {
			return resp, nil
		}
		if !o.tracker.sleep(req.Context(), PollInterval) {
			return resp, nil
		}
		drain(resp)
	}
}

// peekBody returns the start of a response's body as one line and leaves the body readable.
func peekBody(resp *http.Response) string {
	if resp.Body == nil {
		return http.StatusText(resp.StatusCode)
	}
	data, _ := io.ReadAll(io.LimitReader(resp.Body, 4096))
	resp.Body.Close()
	resp.Body = io.NopCloser(bytes.NewReader(data))
	var status metav1.Status
	message := strings.Join(strings.Fields(string(data)), " ")
	if json.Unmarshal(data, &status) == nil && status.Message != "" {
		message = status.Message
	}
	if len(message) > 300 {
		message = message[:300] + "..."
	}
	if message == "" {
		message = http.StatusText(resp.StatusCode)
	}
	return message
}

func drain(resp *http.Response) {
	_, _ = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
}
