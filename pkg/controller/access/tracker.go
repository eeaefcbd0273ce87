// Package access keeps the operator's verdict on its own access to the samples namespace and to
// the pull secret (pkg/access), for readiness and for the Config status, without asking the API
// server anything in a loop.
//
// Its evidence is the answers to requests the operator makes anyway. The clients of each grant's
// scope go through an observing transport: a list or watch of the grant's informers answered 403
// means the grant is missing, one that authorization let through means it is there (the reflector
// retries a refused list with its own backoff, so both directions are seen without a loop of
// ours). Reads say nothing about writes, so a refused write, and the first write let through
// after a denial, make the tracker ask SelfSubjectAccessReviews for each of the grant's rules:
// a 403 can also come from admission, which is no business of RBAC. With every grant in place no
// review is ever asked.
package access

import (
	"context"
	"net/http"
	"slices"
	"sync"

	authorizationv1 "k8s.io/api/authorization/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	authorizationclient "k8s.io/client-go/kubernetes/typed/authorization/v1"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/util/workqueue"
	"k8s.io/klog/v2"

	"github.com/samples-operator-dev/cluster-samples-operator/pkg/access"
)

// Tracker holds the evidence and the verdict.
type Tracker struct {
	reviews authorizationclient.SelfSubjectAccessReviewInterface
	olm     bool
	// queue holds the grants whose rules are to be reviewed; a burst of refused writes is one
	// review round.
	queue workqueue.TypedRateLimitingInterface[access.Grant]

	mu sync.Mutex
	// reads is what each of a grant's readers (one per resource its informers list) was last told.
	reads     map[access.Grant]map[string]access.Read
	obs       map[access.Grant]access.Observation
	verdict   access.Verdict
	synced    map[access.Grant][]cache.InformerSynced
	listeners []func()
}

// New returns a tracker asking its reviews through reviews; olm picks the commands it logs.
func New(reviews authorizationclient.SelfSubjectAccessReviewInterface, olm bool) *Tracker {
	t := &Tracker{
		reviews: reviews,
		olm:     olm,
		queue: workqueue.NewTypedRateLimitingQueueWithConfig(workqueue.DefaultTypedControllerRateLimiter[access.Grant](),
			workqueue.TypedRateLimitingQueueConfig[access.Grant]{Name: "access-reviews"}),
		reads:  map[access.Grant]map[string]access.Read{},
		obs:    map[access.Grant]access.Observation{},
		synced: map[access.Grant][]cache.InformerSynced{},
	}
	t.verdict = access.Evaluate(t.obs)
	return t
}

// Observe returns a copy of cfg whose requests are evidence about grant g: use it only for the
// clients of one resource in the grant's scope (reader names it), its informer and its writes.
func (t *Tracker) Observe(cfg *rest.Config, g access.Grant, reader string) *rest.Config {
	t.mu.Lock()
	if t.reads[g] == nil {
		t.reads[g] = map[string]access.Read{}
	}
	t.reads[g][reader] = access.ReadUnknown
	t.mu.Unlock()
	out := rest.CopyConfig(cfg)
	out.Wrap(func(next http.RoundTripper) http.RoundTripper {
		return &observer{next: next, grant: g, reader: reader, tracker: t}
	})
	return out
}

// AddSynced registers the informers that fill the caches of grant g.
func (t *Tracker) AddSynced(g access.Grant, synced ...cache.InformerSynced) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.synced[g] = append(t.synced[g], synced...)
}

// Verdict is the current verdict.
func (t *Tracker) Verdict() access.Verdict {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.verdict
}

// InstalledByOLM tells which commands the messages give.
func (t *Tracker) InstalledByOLM() bool { return t.olm }

// OnChange calls f (which must not block) each time the verdict changes.
func (t *Tracker) OnChange(f func()) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.listeners = append(t.listeners, f)
}

// Run notes when each grant's caches are synced and answers review requests until ctx is done.
// It runs in every replica: readiness needs the verdict whether or not this one leads.
func (t *Tracker) Run(ctx context.Context) {
	defer t.queue.ShutDown()
	t.mu.Lock()
	for g, synced := range t.synced {
		go func() {
			// The same wait every controller makes before it starts, on local caches only; it
			// ends when the grant's informers first sync.
			if cache.WaitForCacheSync(ctx.Done(), synced...) {
				t.update(g, func(o *access.Observation) { o.Synced = true })
			}
		}()
	}
	t.mu.Unlock()
	go func() {
		for t.processNext(ctx) {
		}
	}()
	<-ctx.Done()
}

func (t *Tracker) processNext(ctx context.Context) bool {
	g, shutdown := t.queue.Get()
	if shutdown {
		return false
	}
	defer t.queue.Done(g)
	denied, err := t.review(ctx, g)
	switch {
	case apierrors.IsForbidden(err):
		// Every authenticated user may ask (system:basic-user); a cluster that took that away
		// leaves only the reads as evidence.
		klog.InfoS("Cannot ask SelfSubjectAccessReviews; judging access by reads alone", "grant", g, "err", err)
		t.queue.Forget(g)
		t.update(g, func(o *access.Observation) { o.Denied = nil })
	case err != nil:
		if ctx.Err() == nil {
			klog.InfoS("Reviewing access failed; will retry", "grant", g, "err", err)
			t.queue.AddRateLimited(g)
		}
	default:
		t.queue.Forget(g)
		if len(denied) > 0 {
			klog.InfoS("Access reviews found missing permissions", "grant", g, "denied", denied)
		}
		t.update(g, func(o *access.Observation) { o.Denied = denied })
	}
	return true
}

// review asks about every rule of a grant and returns those denied.
func (t *Tracker) review(ctx context.Context, g access.Grant) ([]access.Rule, error) {
	var denied []access.Rule
	for _, r := range access.Rules(g) {
		answer, err := t.reviews.Create(ctx, &authorizationv1.SelfSubjectAccessReview{Spec: authorizationv1.SelfSubjectAccessReviewSpec{
			ResourceAttributes: &authorizationv1.ResourceAttributes{
				Namespace: r.Namespace, Verb: r.Verb, Group: r.Group, Resource: r.Resource, Name: r.Name,
			},
		}}, metav1.CreateOptions{})
		if err != nil {
			return nil, err
		}
		if !answer.Status.Allowed {
			denied = append(denied, r)
		}
	}
	return denied, nil
}

// observed records the outcome of one request of a grant's reader.
func (t *Tracker) observed(g access.Grant, reader string, read bool, outcome access.Outcome) {
	if outcome == access.Unknown {
		return
	}
	t.mu.Lock()
	reviewed := len(t.obs[g].Denied) > 0
	var combined access.Read
	if read {
		t.reads[g][reader] = access.ReadAllowed
		if outcome == access.Denied {
			t.reads[g][reader] = access.ReadDenied
		}
		var all []access.Read
		for _, r := range t.reads[g] {
			all = append(all, r)
		}
		combined = access.CombineReads(all...)
	}
	t.mu.Unlock()
	if !read {
		// A refused write may be RBAC or admission: ask. A write let through only matters when
		// reviews had found something missing: ask again, it may have been granted since.
		if outcome == access.Denied || reviewed {
			t.queue.Add(g)
		}
		return
	}
	if t.update(g, func(o *access.Observation) { o.Read = combined }) && reviewed {
		// Reads changed while reviews had found rules missing: whatever changed the one may
		// have changed the other.
		t.queue.Add(g)
	}
}

// update changes one observation, tells the listeners when the verdict changes, and reports
// whether the observation changed.
func (t *Tracker) update(g access.Grant, change func(*access.Observation)) bool {
	t.mu.Lock()
	before := t.obs[g]
	o := before
	o.Denied = append([]access.Rule(nil), before.Denied...)
	change(&o)
	t.obs[g] = o
	changed := o.Read != before.Read || o.Synced != before.Synced || !slices.Equal(o.Denied, before.Denied)
	previous := t.verdict
	t.verdict = access.Evaluate(t.obs)
	if previous.Equal(t.verdict) {
		t.mu.Unlock()
		return changed
	}
	verdict := t.verdict
	listeners := append([]func(){}, t.listeners...)
	t.mu.Unlock()

	if missing := verdict.Missing(); len(missing) > 0 && !slices.Equal(missing, previous.Missing()) {
		klog.InfoS("The operator lacks access; it is not ready until an administrator grants it", "missing", missing,
			"message", access.Message(missing, t.olm))
	} else if verdict.Ready() {
		klog.InfoS("The operator has the access it needs")
	}
	for _, f := range listeners {
		f()
	}
	return changed
}

// observer is the transport of a grant's clients.
type observer struct {
	next    http.RoundTripper
	grant   access.Grant
	reader  string
	tracker *Tracker
}

func (o *observer) RoundTrip(req *http.Request) (*http.Response, error) {
	resp, err := o.next.RoundTrip(req)
	if err == nil {
		// Informers only GET (list, and watch); everything else the operator sends is a write.
		o.tracker.observed(o.grant, o.reader, req.Method == http.MethodGet, access.Classify(resp.StatusCode))
	}
	return resp, err
}
