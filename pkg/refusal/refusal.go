// Package refusal keeps what the API server refused of the operator's sample writes: which
// answers count as a refusal an admin must see, how long to wait before writing a refused sample
// again, and the records the Config status, the ClusterOperator, events and metrics report from.
//
// A refusal is an answer a retry will not soon change: a quota or an admission plugin saying no
// (403 for a reason other than RBAC), a webhook's denial, 400, 413 or 422, or a 5xx. Missing RBAC is
// not one: pkg/controller/accesscontrol reviews the operator's grants and reports them with a reason of
// their own. A conflict, a 404 or an AlreadyExists is the cache being behind, not a refusal.
package refusal

import (
	"errors"
	"fmt"
	"net/http"
	"regexp"
	"sort"
	"strings"
	"sync"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/util/workqueue"
	"k8s.io/utils/clock"
)

const (
	// FirstRefusalRetry is the wait after a sample's first refusal; it doubles with each refusal
	// up to MaxRefusalRetry, so that after the first minute a refused sample costs one write a
	// minute, and a cause gone away with no event the operator sees heals within MaxRefusalRetry.
	FirstRefusalRetry = time.Second
	MaxRefusalRetry   = time.Minute
	// TransientPatience is how long a 5xx must last before it is reported: a server restarting
	// answers 5xx for seconds, and that is nothing to tell an admin.
	TransientPatience = 30 * time.Second
)

// Refusal is the API server's answer to a write.
type Refusal struct {
	Code    int32
	Reason  metav1.StatusReason
	Message string
}

// String is the answer as an admin reads it: "403 Forbidden: exceeded quota: ...".
func (r Refusal) String() string {
	return fmt.Sprintf("%d %s: %s", r.Code, r.Reason, r.Message)
}

// transient answers are reported only once they last (TransientPatience).
func (r Refusal) transient() bool { return r.Code >= 500 }

// rbacDenial is how kube-apiserver's authorizer words a 403: `... is forbidden: User "x" cannot
// create resource "imagestreams" ...`. Quotas and admission plugins word theirs otherwise.
var rbacDenial = regexp.MustCompile(`is forbidden: User "[^"]*" cannot `)

// Classify tells whether err is a refusal to report and retry on a backoff of its own.
func Classify(err error) (Refusal, bool) {
	var status apierrors.APIStatus
	if !errors.As(err, &status) {
		return Refusal{}, false
	}
	s := status.Status()
	r := Refusal{Code: s.Code, Reason: s.Reason, Message: s.Message}
	if r.Reason == "" {
		r.Reason = metav1.StatusReason(http.StatusText(int(r.Code)))
	}
	switch {
	case s.Code == http.StatusForbidden:
		return r, !rbacDenial.MatchString(s.Message)
	case s.Code == http.StatusBadRequest, s.Code == http.StatusUnprocessableEntity, s.Code == http.StatusRequestEntityTooLarge:
		return r, true
	case s.Code >= 500:
		return r, true
	}
	// 409 Conflict, 404, AlreadyExists, 429 and the rest: the cache or the server's load, which
	// the ordinary retry covers.
	return r, false
}

// Cause is what several samples refused for the same reason share: the answer without the
// sample's own name and figures, so that a quota refusing 40 creates, or a LimitRange refusing
// streams of 5 and of 12 tags, is one cause, told once.
func Cause(name string, r Refusal) string {
	message := strings.ReplaceAll(r.Message, `"`+name+`"`, `"*"`)
	message = limitExceeded.ReplaceAllString(message, "(* > $1)")
	return fmt.Sprintf("%d %s: %s", r.Code, r.Reason, message)
}

// limitExceeded is the figures openshift-apiserver's image LimitRange admission gives a refusal:
// "requested usage of openshift.io/image-tags exceeds the maximum limit per
// openshift.io/ImageStream (12 > 3)". The request's own figure differs by sample; the limit is
// the cause's.
var limitExceeded = regexp.MustCompile(`\(\S+ > (\S+)\)`)

// Record is one sample's last refused write.
type Record struct {
	Kind, Name string
	// Verb is the write refused: create, update, delete.
	Verb string
	Refusal
	Cause string
	// First is when this sample's writes began to be refused, Last the latest refusal.
	First, Last time.Time
	// decision identifies the write refused (what the controller decided, on which live object):
	// a different decision is written at once, the same one waits until next.
	decision string
	next     time.Time
}

// Key is "Kind/name", as the Config status names samples.
func (r Record) Key() string { return r.Kind + "/" + r.Name }

// Reported says whether the record is for an admin to see now.
func (r Record) Reported(now time.Time) bool {
	return !r.transient() || now.Sub(r.First) >= TransientPatience
}

// Store holds the records of the samples whose last write was refused. Safe for concurrent use.
type Store struct {
	clock clock.PassiveClock
	// backoff is each sample's wait before its next try, by Record.Key: FirstRefusalRetry doubling with
	// each refusal in a row up to MaxRefusalRetry, forgotten when a write goes through or RetryNow.
	backoff workqueue.TypedRateLimiter[string]

	mu        sync.Mutex
	records   map[string]*Record
	listeners []func()
}

// NewBackoff is the waits between the tries of one refused sample: client-go's per-item
// exponential limiter, from FirstRefusalRetry doubling up to MaxRefusalRetry.
func NewBackoff() workqueue.TypedRateLimiter[string] {
	return workqueue.NewTypedItemExponentialFailureRateLimiter[string](FirstRefusalRetry, MaxRefusalRetry)
}

// NewStore returns an empty store.
func NewStore(clk clock.PassiveClock) *Store {
	return &Store{clock: clk, records: map[string]*Record{}, backoff: NewBackoff()}
}

// OnChange calls f (which must not block) whenever a record is added, changed or removed.
func (s *Store) OnChange(f func()) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.listeners = append(s.listeners, f)
}

func (s *Store) notify() {
	s.mu.Lock()
	listeners := append([]func(){}, s.listeners...)
	s.mu.Unlock()
	for _, f := range listeners {
		f()
	}
}

// Held reports whether the write decided (decision) of a sample must wait, and how long: it was
// refused, and the backoff of that refusal has not run out. A different decision is never held.
func (s *Store) Held(kind, name, decision string) (time.Duration, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	rec, ok := s.records[kind+"/"+name]
	if !ok || rec.decision != decision {
		return 0, false
	}
	wait := rec.next.Sub(s.clock.Now())
	return wait, wait > 0
}

// Refused records a refused write and returns the wait before the next try, and whether its
// cause is new: no other sample is refused for it now (an event per cause, not per retry).
func (s *Store) Refused(kind, name, verb, decision string, r Refusal) (wait time.Duration, newCause bool) {
	now := s.clock.Now()
	cause := Cause(name, r)
	s.mu.Lock()
	key := kind + "/" + name
	rec, ok := s.records[key]
	if !ok {
		rec = &Record{Kind: kind, Name: name, First: now}
		s.records[key] = rec
	}
	newCause = true
	for k, other := range s.records {
		if k != key && other.Cause == cause {
			newCause = false
		}
	}
	if ok && rec.Cause == cause {
		newCause = false
	}
	rec.Verb, rec.Refusal, rec.Cause, rec.Last, rec.decision = verb, r, cause, now, decision
	wait = s.backoff.When(key)
	rec.next = now.Add(wait)
	s.mu.Unlock()
	s.notify()
	return wait, newCause
}

// Accepted forgets a sample's refusal: a write of it went through, or nothing is to be written.
// It returns the cause no sample is refused for any more, "" when none.
func (s *Store) Accepted(kind, name string) (endedCause string) {
	s.mu.Lock()
	key := kind + "/" + name
	rec, ok := s.records[key]
	if !ok {
		s.mu.Unlock()
		return ""
	}
	delete(s.records, key)
	s.backoff.Forget(key)
	endedCause = rec.Cause
	for _, other := range s.records {
		if other.Cause == rec.Cause {
			endedCause = ""
		}
	}
	s.mu.Unlock()
	s.notify()
	return endedCause
}

// Samples are the kind and name of every sample with a record, sorted.
func (s *Store) Samples() []Record {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]Record, 0, len(s.records))
	for _, rec := range s.records {
		out = append(out, Record{Kind: rec.Kind, Name: rec.Name})
	}
	sortRecords(out)
	return out
}

// RetryNow ends every backoff, for when something changed that may have been the cause (a
// ResourceQuota, a LimitRange, the operator's RBAC), and returns the records. The backoff starts
// again from FirstRefusalRetry: the server's own caches may take a moment to see the change, and a
// refusal then must not wait out the minute the old backoff had reached.
func (s *Store) RetryNow() []Record {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []Record
	for _, rec := range s.records {
		rec.next = time.Time{}
		s.backoff.Forget(rec.Key())
		out = append(out, *rec)
	}
	sortRecords(out)
	return out
}

// Reported lists the records an admin is to see now, sorted by kind and name, and when the
// earliest of them began (zero when none). NextReport is when a record not reported yet will be.
func (s *Store) Reported() (records []Record, since time.Time, nextReport time.Duration) {
	now := s.clock.Now()
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, rec := range s.records {
		if !rec.Reported(now) {
			if wait := rec.First.Add(TransientPatience).Sub(now); nextReport == 0 || wait < nextReport {
				nextReport = wait
			}
			continue
		}
		records = append(records, *rec)
		if since.IsZero() || rec.First.Before(since) {
			since = rec.First
		}
	}
	sortRecords(records)
	return records, since, nextReport
}

func sortRecords(records []Record) {
	sort.Slice(records, func(i, j int) bool { return records[i].Key() < records[j].Key() })
}
