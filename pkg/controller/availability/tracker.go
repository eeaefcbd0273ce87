// Package availability tells when an API the samples live in (image.openshift.io,
// template.openshift.io, served by openshift-apiserver behind kube-apiserver's aggregator) stops
// answering, from the answers to the requests the operator makes anyway, and makes the operator's
// caches return soon when it answers again.
//
// While openshift-apiserver is down the aggregator answers 503 to everything of its groups. An
// informer's reflector meets a 503 with a backoff of its own that grows to between 30 s and a
// minute, so after an outage its cache could stay stale that long: a sample an admin deleted
// meanwhile would come back that late. The informers' client therefore holds a read (GET) that
// meets a 503 and asks again every PollInterval, through the client's own rate limiter, for up
// to MaxHold: the reflector sees an outage shorter than that end within PollInterval, and a
// longer one within its own backoff. Every other client (the writers', the finalizer's) is never
// held: those callers have backoffs of their own, and holding them would stall their workers.
//
// Any answer but a 503 ends an outage, and so do bytes arriving on an open watch. A 503 handed
// back to a caller may have nothing after it, a write's say: a confirmation then asks the API's
// discovery document until the API answers, so that the outage does not outlive the API's return
// until some other request happens by.
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
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/util/flowcontrol"
	"k8s.io/klog/v2"
	"k8s.io/utils/clock"

	"github.com/samples-operator-dev/cluster-samples-operator/pkg/clusteroperator"
)

const (
	// PollInterval is how often a held read, or a confirmation, asks again while its API answers 503.
	PollInterval = 500 * time.Millisecond
	// MaxHold bounds a held read: then its 503 goes back to the reflector, whose backoff takes over.
	MaxHold = 30 * time.Second
	// ConfirmFor bounds a confirmation. It outlasts the reflector's longest backoff (under a
	// minute), so that in a long outage the API's return is seen between two held reads too.
	ConfirmFor = time.Minute
)

// Tracker holds each observed API's state.
type Tracker struct {
	// ctx ends the confirmations, which ask with probe's credentials and rate limiter.
	ctx   context.Context
	probe *rest.Config
	clock clock.PassiveClock
	// The constants above; tests shorten them.
	pollInterval, maxHold, confirmFor time.Duration

	mu         sync.Mutex
	down       map[string]clusteroperator.Outage
	confirming map[string]bool
	listeners  []func()
}

// New returns a tracker that has seen no outage. It confirms an outage by asking the API with
// cfg, until ctx is done.
func New(ctx context.Context, cfg *rest.Config, clk clock.PassiveClock) *Tracker {
	return &Tracker{
		ctx: ctx, probe: rest.CopyConfig(cfg), clock: clk,
		pollInterval: PollInterval, maxHold: MaxHold, confirmFor: ConfirmFor,
		down: map[string]clusteroperator.Outage{}, confirming: map[string]bool{},
	}
}

// Observe returns a copy of cfg whose requests are evidence of api's availability
// ("image.openshift.io/v1"). Its requests are never held: a 503 goes back to the caller at once.
func (t *Tracker) Observe(cfg *rest.Config, api string) *rest.Config {
	return t.observe(cfg, api, nil)
}

// ObserveInformers is Observe for the client of api's informers: its reads that meet a 503 are
// held, asking again through the same rate limiter as the client's requests.
func (t *Tracker) ObserveInformers(cfg *rest.Config, api string) *rest.Config {
	limiter := limiterOf(cfg)
	out := t.observe(cfg, api, limiter)
	out.RateLimiter = limiter
	return out
}

func (t *Tracker) observe(cfg *rest.Config, api string, hold flowcontrol.RateLimiter) *rest.Config {
	out := rest.CopyConfig(cfg)
	out.Wrap(func(next http.RoundTripper) http.RoundTripper {
		return &observer{next: next, api: api, tracker: t, hold: hold}
	})
	return out
}

// limiterOf is the rate limiter a client built from cfg waits on: cfg's own, or the one
// rest.RESTClientFor would make for it.
func limiterOf(cfg *rest.Config) flowcontrol.RateLimiter {
	if cfg.RateLimiter != nil {
		return cfg.RateLimiter
	}
	qps, burst := cfg.QPS, cfg.Burst
	if qps == 0 {
		qps = rest.DefaultQPS
	}
	if burst == 0 {
		burst = rest.DefaultBurst
	}
	if qps < 0 {
		return flowcontrol.NewFakeAlwaysRateLimiter() // no limit asked for
	}
	return flowcontrol.NewTokenBucketRateLimiter(qps, burst)
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

func (t *Tracker) isDown(api string) bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	_, down := t.down[api]
	return down
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

// confirm asks api's discovery document every PollInterval, for at most ConfirmFor, until api is
// no longer down. The answers go through an observer like any other: one that is not a 503 ends
// the outage. One confirmation runs per API at a time; a 503 of its own starts none.
func (t *Tracker) confirm(api string) {
	t.mu.Lock()
	if t.confirming[api] || t.ctx.Err() != nil {
		t.mu.Unlock()
		return
	}
	t.confirming[api] = true
	t.mu.Unlock()
	go func() {
		defer func() {
			t.mu.Lock()
			delete(t.confirming, api)
			t.mu.Unlock()
		}()
		client, err := discovery.NewDiscoveryClientForConfig(t.observe(t.probe, api, nil))
		if err != nil {
			klog.ErrorS(err, "Cannot ask an API whether it answers again", "api", api)
			return
		}
		ctx, cancel := context.WithTimeout(t.ctx, t.confirmFor)
		defer cancel()
		_ = wait.PollUntilContextCancel(ctx, t.pollInterval, false, func(ctx context.Context) (bool, error) {
			if t.isDown(api) {
				_ = client.RESTClient().Get().AbsPath("/apis", api).Do(ctx).Error()
			}
			return !t.isDown(api), nil
		})
	}()
}

type observer struct {
	next    http.RoundTripper
	api     string
	tracker *Tracker
	// hold is the rate limiter of an informers' client, whose reads are held; nil for others.
	hold flowcontrol.RateLimiter
}

func (o *observer) RoundTrip(req *http.Request) (*http.Response, error) {
	resp, err := o.ask(req)
	if err == nil && resp.StatusCode == http.StatusServiceUnavailable && o.holds(req) {
		resp, err = o.held(req, resp)
	}
	if err == nil && resp.StatusCode == http.StatusServiceUnavailable {
		o.tracker.confirm(o.api)
	}
	return resp, err
}

// ask sends req once and records the answer.
func (o *observer) ask(req *http.Request) (*http.Response, error) {
	resp, err := o.next.RoundTrip(req)
	if err != nil {
		return resp, err // no answer from kube-apiserver itself: nothing about this API
	}
	if resp.StatusCode == http.StatusServiceUnavailable {
		o.tracker.answered(o.api, true, peekBody(resp))
		return resp, nil
	}
	o.tracker.answered(o.api, false, "")
	if req.URL.Query().Get("watch") == "true" && resp.Body != nil {
		// An open watch may be the only request of the API after a write met 503.
		resp.Body = watchBody{ReadCloser: resp.Body, observer: o}
	}
	return resp, nil
}

func (o *observer) holds(req *http.Request) bool {
	return o.hold != nil && req.Method == http.MethodGet && (req.Body == nil || req.Body == http.NoBody)
}

// held asks req again every PollInterval, each time through the client's rate limiter, until the
// API answers other than 503, for at most MaxHold or until req's context is done. It returns the
// last answer.
func (o *observer) held(req *http.Request, resp *http.Response) (*http.Response, error) {
	ctx, cancel := context.WithTimeout(req.Context(), o.tracker.maxHold)
	defer cancel()
	var err error
	_ = wait.PollUntilContextCancel(ctx, o.tracker.pollInterval, false, func(ctx context.Context) (bool, error) {
		if waitErr := o.hold.Wait(ctx); waitErr != nil {
			return false, waitErr // the bound, or the request's end, comes first
		}
		drain(resp)
		resp, err = o.ask(req)
		return err != nil || resp.StatusCode != http.StatusServiceUnavailable, nil
	})
	return resp, err
}

// watchBody counts each read of a watch's events as an answer of its API.
type watchBody struct {
	io.ReadCloser
	observer *observer
}

func (b watchBody) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	if n > 0 {
		b.observer.tracker.answered(b.observer.api, false, "")
	}
	return n, err
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
