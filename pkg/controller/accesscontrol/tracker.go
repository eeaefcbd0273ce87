// Package accesscontrol keeps the operator's verdict on its own access to the samples namespace and to
// the pull secret (pkg/access), for readiness and for the Config status, without asking the API
// server anything in a loop.
//
// Its evidence is the answers to requests the operator makes anyway. The clients of each grant's
// scope go through an observing transport: a list or watch of the grant's informers answered 403
// means the grant is missing, one that authorization let through means it may be there (the
// reflector retries a refused list with its own backoff, so both directions are seen without a
// loop of ours). Reads say nothing about writes, and on OpenShift every authenticated user may
// read the samples, so SelfSubjectAccessReviews of each of the grant's rules are asked once the
// reads of a grant that writes are allowed, after a refused write (a 403 can also come from
// admission, which is no business of RBAC), and after the first write let through once reviews
// had found something missing. With every grant in place that is one round of reviews per start;
// while a grant that writes is found missing, its reviews are asked again on a backoff, since an
// administrator binding it changes nothing else the operator sees.
package accesscontrol

import (
	"context"
	"net/http"
	"slices"
	"sync"
	"time"

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
	// recheck paces new reviews of a grant whose reads prove nothing while reviews find rules
	// missing: nothing else the operator sees changes when an administrator binds the grant.
	recheck workqueue.TypedRateLimiter[access.Grant]
	// afterFunc runs a recheck later; tests replace it to know when every recheck has run.
	afterFunc func(time.Duration, func())

	mu sync.Mutex
	// reads is what each of a grant's readers (one per resource its informers list) was last told.
	reads     map[access.Grant]map[string]access.Read
	obs       map[access.Grant]access.Observation
	verdict   access.Verdict
	synced    map[access.Grant][]cache.InformerSynced
	listeners []func()
	// changed says the verdict has changed since New: a listener registered since may have
	// missed it.
	changed bool
}

// Reviews of a grant found missing, whose reads prove nothing, are asked again from RecheckMin
// after the last, doubling up to RecheckMax: an administrator who binds the grant waits at most
// that long for the operator to notice.
const (
	RecheckMin = 5 * time.Second
	RecheckMax = time.Minute
)

// New returns a tracker asking its reviews through reviews; olm picks the commands it logs.
func New(reviews authorizationclient.SelfSubjectAccessReviewInterface, olm bool) *Tracker {
	t := &Tracker{
		reviews: reviews,
		olm:     olm,
		queue: workqueue.NewTypedRateLimitingQueueWithConfig(workqueue.DefaultTypedControllerRateLimiter[access.Grant](),
			workqueue.TypedRateLimitingQueueConfig[access.Grant]{Name: "access-reviews"}),
		recheck:   workqueue.NewTypedItemExponentialFailureRateLimiter[access.Grant](RecheckMin, RecheckMax),
		afterFunc: func(d time.Duration, f func()) { time.AfterFunc(d, f) },
		reads:     map[access.Grant]map[string]access.Read{},
		obs:       map[access.Grant]access.Observation{},
		synced:    map[access.Grant][]cache.InformerSynced{},
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

// OnChange calls f (which must not block) each time the verdict changes. A controller registers
// it once started, after its first syncs may have read the verdict: so that a change made before
// it registered is not lost, OnChange also calls f once at once, before it returns, when the
// verdict has changed since the tracker was made.
func (t *Tracker) OnChange(f func()) {
	t.mu.Lock()
	t.listeners = append(t.listeners, f)
	missed := t.changed
	t.mu.Unlock()
	if missed {
		f()
	}
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
		t.update(g, func(o *access.Observation) { o.Denied, o.Reviewed = nil, true })
	case err != nil:
		if ctx.Err() == nil {
			klog.InfoS("Reviewing access failed; will retry", "grant", g, "err", err)
			t.queue.AddRateLimited(g)
		}
	default:
		t.queue.Forget(g)
		if len(denied) > 0 {
			klog.InfoS("Access reviews found missing permissions", "grant", g, "denied", denied)
			if access.ReadsProveNothing(g) {
				t.afterFunc(t.recheck.When(g), func() {
					// Something else (a write let through) may have found the grant since.
					if t.stillDenied(g) {
						t.queue.Add(g)
					}
				})
			}
		} else {
			t.recheck.Forget(g)
		}
		t.update(g, func(o *access.Observation) { o.Denied, o.Reviewed = denied, true })
	}
	return true
}

func (t *Tracker) stillDenied(g access.Grant) bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	return len(t.obs[g].Denied) > 0
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
	unconfirmed := access.ReadsProveNothing(g) && !t.obs[g].Reviewed
	if read {
		t.reads[g][reader] = access.ReadAllowed
		if outcome == access.Denied {
			t.reads[g][reader] = access.ReadDenied
		}
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
	// Combined under the lock that writes it: two readers' first reads come at once, and a
	// combination made before the other's read would, written after it, hide that read until
	// the next one, which may never come (informers only watch once listed).
	var combined access.Read
	changed := t.update(g, func(o *access.Observation) {
		var all []access.Read
		for _, r := range t.reads[g] {
			all = append(all, r)
		}
		combined = access.CombineReads(all...)
		o.Read = combined
	})
	switch {
	case changed && reviewed:
		// Reads changed while reviews had found rules missing: whatever changed the one may
		// have changed the other.
		t.queue.Add(g)
	case changed && combined == access.ReadAllowed && unconfirmed:
		// Anyone may read the samples: only reviews tell whether this grant is bound.
		t.queue.Add(g)
	}
}

// update changes one observation, tells the listeners when the verdict changes, and reports
// whether the observation changed. change runs with t.mu held.
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
	t.changed = true
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
