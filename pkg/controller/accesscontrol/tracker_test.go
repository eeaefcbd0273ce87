package accesscontrol

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	authorizationv1 "k8s.io/api/authorization/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/kubernetes/fake"
	"k8s.io/client-go/rest"
	clienttesting "k8s.io/client-go/testing"
	"k8s.io/client-go/util/workqueue"
	"k8s.io/klog/v2"

	"github.com/go-logr/logr/funcr"

	"github.com/samples-operator-dev/cluster-samples-operator/pkg/access"
)

// fastRecheckMax keeps the rechecks of a missing grant within the test's patience.
const fastRecheckMax = 100 * time.Millisecond

// answers plays the API server: a status code per method, and an RBAC that denies some verbs.
type answers struct {
	mu       sync.Mutex
	code     map[string]int
	denied   map[string]bool // verb -> denied by RBAC
	reviews  int
	forbidSA bool // SelfSubjectAccessReviews themselves are forbidden
	// failReviews is how many of the next reviews the server fails with a 500.
	failReviews int
}

func (a *answers) set(method string, code int) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.code[method] = code
}

func (a *answers) deny(verbs ...string) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.denied = map[string]bool{}
	for _, v := range verbs {
		a.denied[v] = true
	}
}

func (a *answers) reviewCount() int {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.reviews
}

func (a *answers) RoundTrip(req *http.Request) (*http.Response, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	return &http.Response{StatusCode: a.code[req.Method], Body: http.NoBody, Request: req}, nil
}

func newTracker(t *testing.T, a *answers) (*Tracker, *atomic.Int32) {
	t.Helper()
	client := fake.NewClientset()
	client.PrependReactor("create", "selfsubjectaccessreviews", func(action clienttesting.Action) (bool, runtime.Object, error) {
		a.mu.Lock()
		defer a.mu.Unlock()
		if a.forbidSA {
			return true, nil, apierrors.NewForbidden(schema.GroupResource{Group: "authorization.k8s.io", Resource: "selfsubjectaccessreviews"}, "", nil)
		}
		if a.failReviews > 0 {
			a.failReviews--
			return true, nil, apierrors.NewInternalError(errors.New("etcdserver: request timed out"))
		}
		a.reviews++
		review := action.(clienttesting.CreateAction).GetObject().(*authorizationv1.SelfSubjectAccessReview)
		review.Status.Allowed = !a.denied[review.Spec.ResourceAttributes.Verb]
		return true, review, nil
	})
	tracker := New(client.AuthorizationV1().SelfSubjectAccessReviews(), true)
	tracker.recheck = workqueue.NewTypedItemExponentialFailureRateLimiter[access.Grant](fastRecheckMax/4, fastRecheckMax)
	w := &watchedWork{TypedRateLimitingInterface: tracker.queue}
	tracker.queue = w
	tracker.afterFunc = func(d time.Duration, f func()) {
		w.rechecksScheduled.Add(1)
		time.AfterFunc(d, func() {
			f()
			w.rechecksRun.Add(1)
		})
	}
	var changes atomic.Int32
	tracker.OnChange(func() { changes.Add(1) })
	return tracker, &changes
}

// watchedWork counts what the tracker takes from its queue and the rechecks it schedules, so
// that a test can wait until the tracker has done all it was going to do (settle) before it
// checks that something did not happen.
type watchedWork struct {
	workqueue.TypedRateLimitingInterface[access.Grant]
	gets, dones                    atomic.Int64
	rechecksScheduled, rechecksRun atomic.Int64
}

func (w *watchedWork) Get() (access.Grant, bool) {
	g, shutdown := w.TypedRateLimitingInterface.Get()
	w.gets.Add(1)
	return g, shutdown
}

func (w *watchedWork) Done(g access.Grant) {
	w.TypedRateLimitingInterface.Done(g)
	w.dones.Add(1)
}

// settle waits until no review is queued or under way and every scheduled recheck has run. The
// counters are read around the queue's length so that a review taken or finished meanwhile is
// seen.
func settle(t *testing.T, tracker *Tracker) {
	t.Helper()
	w := tracker.queue.(*watchedWork)
	waitFor(t, "the tracker to settle", func() bool {
		scheduled, ran := w.rechecksScheduled.Load(), w.rechecksRun.Load()
		gets, dones := w.gets.Load(), w.dones.Load()
		queued := w.Len()
		return scheduled == ran && gets == dones && queued == 0 &&
			w.gets.Load() == gets && w.dones.Load() == dones && w.rechecksScheduled.Load() == scheduled
	})
}

// client is the transport of one reader's clients, as Observe makes it.
func client(tracker *Tracker, a *answers, g access.Grant, reader string) http.RoundTripper {
	return tracker.Observe(&rest.Config{Host: "https://127.0.0.1"}, g, reader).WrapTransport(a)
}

// do makes one request through a reader's transport.
func do(t *testing.T, rt http.RoundTripper, method string) {
	t.Helper()
	req, _ := http.NewRequest(method, "https://127.0.0.1/apis/x", nil)
	if _, err := rt.RoundTrip(req); err != nil {
		t.Fatal(err)
	}
}

func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

func TestTrackerFollowsReadsAndSync(t *testing.T) {
	a := &answers{code: map[string]int{}}
	tracker, changes := newTracker(t, a)
	streams := client(tracker, a, access.Samples, "imagestreams")
	pull := client(tracker, a, access.PullSecret, "secrets")
	var samplesSynced, pullSynced atomic.Bool
	tracker.AddSynced(access.Samples, samplesSynced.Load)
	tracker.AddSynced(access.PullSecret, pullSynced.Load)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go tracker.Run(ctx)

	if v := tracker.Verdict(); v.State(access.Samples) != access.Pending || v.Ready() {
		t.Fatalf("before any answer: %v", v)
	}
	// Both scopes refused: missing, told once however often the reflectors retry.
	a.set(http.MethodGet, 403)
	for range 5 {
		do(t, streams, http.MethodGet)
		do(t, pull, http.MethodGet)
	}
	if got := tracker.Verdict().Missing(); len(got) != 2 {
		t.Fatalf("Missing() = %v after refused lists", got)
	}
	if n := changes.Load(); n != 2 {
		t.Errorf("%d verdict changes for two grants refused (five times each), want 2", n)
	}
	// 401, 429 and 5xx say nothing about access.
	for _, code := range []int{401, 429, 500, 503} {
		a.set(http.MethodGet, code)
		do(t, streams, http.MethodGet)
	}
	if tracker.Verdict().State(access.Samples) != access.Missing {
		t.Errorf("an answer that is not about authorization changed the verdict: %v", tracker.Verdict())
	}

	// Granted: the list goes through, the grant counts once its caches have synced.
	a.set(http.MethodGet, 200)
	do(t, streams, http.MethodGet)
	if s := tracker.Verdict().State(access.Samples); s != access.Pending {
		t.Errorf("allowed but not synced: %s, want Pending", s)
	}
	samplesSynced.Store(true)
	waitFor(t, "the samples grant to count", func() bool { return tracker.Verdict().State(access.Samples) == access.Granted })
	do(t, pull, http.MethodGet)
	pullSynced.Store(true)
	waitFor(t, "ready", func() bool { return tracker.Verdict().Ready() })

	// Revoked after the caches synced: a refused relist is missing access at once.
	a.set(http.MethodGet, 403)
	do(t, pull, http.MethodGet)
	if got := tracker.Verdict().Missing(); len(got) != 1 || got[0] != access.PullSecret {
		t.Errorf("Missing() = %v after the pull secret list was refused", got)
	}
	a.set(http.MethodGet, 200)
	do(t, pull, http.MethodGet)
	if !tracker.Verdict().Ready() {
		t.Errorf("not ready again after the relist went through: %v", tracker.Verdict())
	}
	// Every user may read the samples on OpenShift, so their first allowed read brings one
	// round of reviews; the pull secret's reads are evidence enough, revoked or not.
	if n, rules := a.reviewCount(), len(access.Rules(access.Samples)); n != rules {
		t.Errorf("%d SelfSubjectAccessReviews asked, want one round of %d for the samples grant", n, rules)
	}
}

// On OpenShift the bootstrap policy lets every authenticated user list the samples: an operator
// whose own grant is not bound (an OLM install before the administrator binds it) sees its
// lists go through. It must not count that as the grant, nor find out by sending writes.
func TestTrackerDoesNotTakeReadsEveryoneHasForTheSamplesGrant(t *testing.T) {
	a := &answers{code: map[string]int{http.MethodGet: 200}}
	a.deny("create", "update", "delete")
	tracker, _ := newTracker(t, a)
	streams := client(tracker, a, access.Samples, "imagestreams")
	pull := client(tracker, a, access.PullSecret, "secrets")
	tracker.AddSynced(access.Samples, func() bool { return true })
	tracker.AddSynced(access.PullSecret, func() bool { return true })
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go tracker.Run(ctx)

	do(t, streams, http.MethodGet)
	do(t, pull, http.MethodGet)
	waitFor(t, "the reviews to find the writes missing", func() bool { return tracker.Verdict().State(access.Samples) == access.Missing })
	if s := tracker.Verdict().State(access.PullSecret); s != access.Granted {
		t.Errorf("pull secret grant: %s, want Granted from its reads alone", s)
	}
	if tracker.Verdict().Ready() {
		t.Errorf("ready without the samples grant: %v", tracker.Verdict())
	}

	// The administrator binds the grant: no read or write of the operator changes, the
	// recheck finds it.
	a.deny()
	waitFor(t, "the recheck to find the grant bound", func() bool { return tracker.Verdict().Ready() })
	reviews := a.reviewCount()
	do(t, streams, http.MethodGet)
	do(t, streams, http.MethodPost)
	settle(t, tracker)
	if n := a.reviewCount(); n != reviews {
		t.Errorf("%d reviews after the grant was found bound, want none", n-reviews)
	}
}

// readyTracker runs a tracker whose samples and pull-secret reads have both gone through, and
// returns it with the imagestream client.
func readyTracker(t *testing.T, a *answers) (*Tracker, http.RoundTripper) {
	t.Helper()
	tracker, _ := newTracker(t, a)
	streams := client(tracker, a, access.Samples, "imagestreams")
	pull := client(tracker, a, access.PullSecret, "secrets")
	tracker.AddSynced(access.Samples, func() bool { return true })
	tracker.AddSynced(access.PullSecret, func() bool { return true })
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	go tracker.Run(ctx)
	do(t, streams, http.MethodGet)
	do(t, pull, http.MethodGet)
	waitFor(t, "ready", func() bool { return tracker.Verdict().Ready() })
	return tracker, streams
}

func TestTrackerReviewsRefusedWrites(t *testing.T) {
	a := &answers{code: map[string]int{http.MethodGet: 200}}
	tracker, streams := readyTracker(t, a)
	rules := len(access.Rules(access.Samples))
	// Readiness took the one round the samples grant's reads bring.
	if n := a.reviewCount(); n != rules {
		t.Fatalf("%d reviews to become ready, want %d", n, rules)
	}

	// Writes that go through cost nothing.
	a.set(http.MethodPost, 201)
	do(t, streams, http.MethodPost)
	settle(t, tracker)
	if n := a.reviewCount(); n != rules {
		t.Fatalf("%d reviews after a write that went through", n-rules)
	}

	// A 403 that RBAC does not explain (admission) is asked about once and changes nothing.
	a.set(http.MethodPost, 403)
	do(t, streams, http.MethodPost)
	waitFor(t, "one review round", func() bool { return a.reviewCount() == 2*rules })
	settle(t, tracker)
	if n := a.reviewCount(); n != 2*rules {
		t.Errorf("%d reviews after one admission 403, want one round of %d", n-rules, rules)
	}
	if !tracker.Verdict().Ready() {
		t.Errorf("an admission 403 made the operator not ready: %v", tracker.Verdict())
	}

	// Reads granted, writes not: missing.
	a.deny("create", "update")
	do(t, streams, http.MethodPost)
	waitFor(t, "the refused write to count", func() bool { return tracker.Verdict().State(access.Samples) == access.Missing })
	// Granted since: the next write that goes through brings a new round, and the grant back.
	a.deny()
	a.set(http.MethodPost, 201)
	do(t, streams, http.MethodPost)
	waitFor(t, "ready again", func() bool { return tracker.Verdict().Ready() })
	reviews := a.reviewCount()
	do(t, streams, http.MethodPut)
	settle(t, tracker)
	if n := a.reviewCount(); n != reviews {
		t.Errorf("%d more reviews after a write that went through with nothing denied", n-reviews)
	}
}

func TestTrackerWithoutReviews(t *testing.T) {
	a := &answers{code: map[string]int{http.MethodGet: 200, http.MethodPost: 403}, forbidSA: true}
	tracker, streams := readyTracker(t, a)
	do(t, streams, http.MethodPost)
	settle(t, tracker)
	if !tracker.Verdict().Ready() {
		t.Errorf("without reviews a refused write should leave the verdict to the reads: %v", tracker.Verdict())
	}
}

// One grant, two resources, two informers: a role that lets one list and not the other is
// missing access, steadily, whichever informer asked last.
func TestTrackerCombinesTheReadersOfAGrant(t *testing.T) {
	allowed := &answers{code: map[string]int{http.MethodGet: 200}}
	refused := &answers{code: map[string]int{http.MethodGet: 403}}
	tracker, changes := newTracker(t, allowed)
	streams := tracker.Observe(&rest.Config{Host: "https://127.0.0.1"}, access.Samples, "imagestreams").WrapTransport(allowed)
	templates := tracker.Observe(&rest.Config{Host: "https://127.0.0.1"}, access.Samples, "templates").WrapTransport(refused)
	tracker.AddSynced(access.Samples, func() bool { return true })
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go tracker.Run(ctx)

	do(t, streams, http.MethodGet)
	waitFor(t, "the caches to be seen synced", func() bool {
		tracker.mu.Lock()
		defer tracker.mu.Unlock()
		return tracker.obs[access.Samples].Synced
	})
	if s := tracker.Verdict().State(access.Samples); s != access.Pending {
		t.Errorf("one of two resources allowed, the other not asked yet: %s, want Pending", s)
	}
	for range 3 {
		do(t, templates, http.MethodGet)
		do(t, streams, http.MethodGet)
		if s := tracker.Verdict().State(access.Samples); s != access.Missing {
			t.Fatalf("templates refused, imagestreams allowed: %s, want Missing", s)
		}
	}
	if n := changes.Load(); n != 1 {
		t.Errorf("%d verdict changes, want 1: the verdict must not flap between the informers", n)
	}
}

// TestALateListenerLearnsOfAChangeItMissed: the controllers register OnChange in post-start
// hooks, which run after their workers have started and read the verdict. A verdict that changed
// before a listener registered reaches it at registration; without a change there is nothing to
// tell, and later changes reach it as they come.
func TestALateListenerLearnsOfAChangeItMissed(t *testing.T) {
	a := &answers{code: map[string]int{}}
	unchanged, _ := newTracker(t, a)
	var quiet atomic.Int32
	unchanged.OnChange(func() { quiet.Add(1) })
	if n := quiet.Load(); n != 0 {
		t.Errorf("a listener of a tracker whose verdict never changed was called %d times, want 0", n)
	}

	tracker, early := newTracker(t, a)
	pull := client(tracker, a, access.PullSecret, "secrets")
	a.set(http.MethodGet, 403)
	do(t, pull, http.MethodGet)
	if got := tracker.Verdict().Missing(); len(got) != 1 || early.Load() != 1 {
		t.Fatalf("after a refused list: missing %v, %d changes told; want the pull secret, 1", got, early.Load())
	}
	var late atomic.Int32
	tracker.OnChange(func() { late.Add(1) })
	if n := late.Load(); n != 1 {
		t.Errorf("a listener registered after the verdict changed was called %d times at registration, want 1", n)
	}
	a.set(http.MethodGet, 200)
	do(t, pull, http.MethodGet)
	if n, e := late.Load(), early.Load(); n != 2 || e != 2 {
		t.Errorf("after the next change: late listener called %d times, early one %d; want 2 and 2", n, e)
	}
}

// TestTheFirstReadsOfTwoReadersAtOnceLeaveTheGrantRead: the informers of a grant make their
// first lists at the same moment. The read seen last must be the one the observation keeps; a
// reader's older combination written over a newer one left the samples grant Pending for good,
// as no later read came to correct it (the informers then only watch), and the Config status
// was never written.
func TestTheFirstReadsOfTwoReadersAtOnceLeaveTheGrantRead(t *testing.T) {
	for i := range 3000 {
		tracker := New(fake.NewClientset().AuthorizationV1().SelfSubjectAccessReviews(), false)
		tracker.Observe(&rest.Config{Host: "https://127.0.0.1"}, access.Samples, "imagestreams")
		tracker.Observe(&rest.Config{Host: "https://127.0.0.1"}, access.Samples, "templates")
		var start, done sync.WaitGroup
		start.Add(1)
		for _, reader := range []string{"imagestreams", "templates"} {
			done.Add(1)
			go func() {
				defer done.Done()
				start.Wait()
				tracker.observed(access.Samples, reader, true, access.Authorized)
			}()
		}
		start.Done()
		done.Wait()
		tracker.mu.Lock()
		read := tracker.obs[access.Samples].Read
		tracker.mu.Unlock()
		if read != access.ReadAllowed {
			t.Fatalf("round %d: both readers were allowed, the observation keeps %v", i, read)
		}
	}
}

// A review the server fails (a 500, a timeout) is asked again on the queue's backoff: the
// samples grant, whose reads prove nothing, would otherwise stay Pending for good.
func TestAReviewThatFailsIsAskedAgain(t *testing.T) {
	a := &answers{code: map[string]int{http.MethodGet: 200}, failReviews: 3}
	tracker, _ := readyTracker(t, a)
	a.mu.Lock()
	left := a.failReviews
	a.mu.Unlock()
	if left != 0 {
		t.Errorf("%d failed reviews left unasked", left)
	}
	if n, rules := a.reviewCount(), len(access.Rules(access.Samples)); n != rules {
		t.Errorf("%d reviews answered, want one round of %d after the failures", n, rules)
	}
	if !tracker.Verdict().Ready() {
		t.Errorf("verdict %v, want ready", tracker.Verdict())
	}
}

// A read that says what the grant's readers already said is no news: while reviews have found
// a rule missing, only a read that changes brings another round. Informers relist and the
// reflector retries a refused list on its own backoff, so the same answer comes again and again.
func TestAReadThatRepeatsItselfAsksNoReview(t *testing.T) {
	a := &answers{code: map[string]int{http.MethodGet: 200, http.MethodPost: 403}}
	tracker, _ := readyTracker(t, a)
	pull := client(tracker, a, access.PullSecret, "secret-writer")
	do(t, pull, http.MethodGet)
	// A refused write of the pull-secret grant's scope, and RBAC that denies its reads: the
	// reviews find them missing. Its reads prove something, so no recheck follows.
	a.deny("get")
	do(t, pull, http.MethodPost)
	waitFor(t, "the reviews to find the pull secret missing", func() bool {
		return tracker.Verdict().State(access.PullSecret) == access.Missing
	})
	settle(t, tracker)
	reviews := a.reviewCount()
	for range 3 {
		do(t, pull, http.MethodGet)
	}
	settle(t, tracker)
	if n := a.reviewCount() - reviews; n != 0 {
		t.Errorf("%d reviews after three reads that repeat the last one, want none", n)
	}
	a.set(http.MethodGet, 403)
	do(t, pull, http.MethodGet)
	settle(t, tracker)
	if n, rules := a.reviewCount()-reviews, len(access.Rules(access.PullSecret)); n != rules {
		t.Errorf("%d reviews after a read that changed, want one round of %d", n, rules)
	}
}

// Reviews that find every rule in place schedule no recheck, and reset the recheck's backoff:
// a grant found missing again later is looked at again after RecheckMin, not after the backoff
// it had grown to before.
func TestReviewsThatFindEverythingScheduleNoRecheck(t *testing.T) {
	a := &answers{code: map[string]int{http.MethodGet: 200}}
	a.deny("create")
	tracker, _ := newTracker(t, a)
	streams := client(tracker, a, access.Samples, "imagestreams")
	tracker.AddSynced(access.Samples, func() bool { return true })
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go tracker.Run(ctx)
	do(t, streams, http.MethodGet)
	w := tracker.queue.(*watchedWork)
	waitFor(t, "two rechecks", func() bool { return w.rechecksRun.Load() >= 2 })
	a.deny()
	waitFor(t, "the grant found bound", func() bool { return tracker.Verdict().State(access.Samples) == access.Granted })
	settle(t, tracker)
	scheduled := w.rechecksScheduled.Load()
	if n := tracker.recheck.NumRequeues(access.Samples); n != 0 {
		t.Errorf("the recheck backoff kept %d steps after the grant was found bound, want 0", n)
	}
	do(t, streams, http.MethodPost)
	a.set(http.MethodPost, 403)
	do(t, streams, http.MethodPost)
	settle(t, tracker)
	if n := w.rechecksScheduled.Load() - scheduled; n != 0 {
		t.Errorf("%d rechecks scheduled after reviews that found every rule, want none", n)
	}
}

// An administrator who binds a missing grant waits at most RecheckMax for the operator to
// notice; the first look again comes RecheckMin after the reviews that found it missing.
func TestRechecksStartAtRecheckMinAndDoubleUpToRecheckMax(t *testing.T) {
	tracker := New(fake.NewClientset().AuthorizationV1().SelfSubjectAccessReviews(), false)
	var got []time.Duration
	for range 6 {
		got = append(got, tracker.recheck.When(access.Samples))
	}
	want := []time.Duration{5 * time.Second, 10 * time.Second, 20 * time.Second, 40 * time.Second, time.Minute, time.Minute}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("recheck delays %v, want %v", got, want)
	}
}

// The log tells an administrator once what is missing, and tells again when the access is all
// there: "lacks access" with nothing missing, or silence when a grant goes, would mislead.
func TestTheLogTellsWhatIsMissingAndWhenItIsBack(t *testing.T) {
	var mu sync.Mutex
	var lines []string
	klog.SetLogger(funcr.New(func(prefix, args string) {
		mu.Lock()
		defer mu.Unlock()
		lines = append(lines, args)
	}, funcr.Options{}))
	defer klog.ClearLogger()
	logged := func() []string {
		mu.Lock()
		defer mu.Unlock()
		var told []string
		for _, l := range lines {
			if strings.Contains(l, "lacks access") || strings.Contains(l, "has the access") {
				told = append(told, l)
			}
		}
		lines = nil
		return told
	}

	a := &answers{code: map[string]int{http.MethodGet: 200}}
	tracker, _ := readyTracker(t, a)
	pull := client(tracker, a, access.PullSecret, "secrets-again")
	if got := logged(); len(got) != 1 || !strings.Contains(got[0], "has the access") {
		t.Errorf("on becoming ready the log told %q, want that the access is there", got)
	}
	a.set(http.MethodGet, 403)
	do(t, pull, http.MethodGet)
	do(t, pull, http.MethodGet)
	if got := logged(); len(got) != 1 || !strings.Contains(got[0], "lacks access") || !strings.Contains(got[0], string(access.PullSecret)) {
		t.Errorf("after two refused reads the log told %q, want once that the pull secret is missing", got)
	}
	a.set(http.MethodGet, 200)
	do(t, pull, http.MethodGet)
	if got := logged(); len(got) != 1 || !strings.Contains(got[0], "has the access") {
		t.Errorf("after the read went through again the log told %q, want that the access is back", got)
	}
}
