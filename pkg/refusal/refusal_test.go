package refusal

import (
	"errors"
	"fmt"
	"net/http"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation/field"
	clocktesting "k8s.io/utils/clock/testing"
)

var imageStreams = schema.GroupResource{Group: "image.openshift.io", Resource: "imagestreams"}

// The answers below are worded as kube-apiserver and openshift-apiserver word them.
func TestClassify(t *testing.T) {
	quota := apierrors.NewForbidden(imageStreams, "python",
		errors.New("exceeded quota: samples, requested: count/imagestreams.image.openshift.io=1, used: count/imagestreams.image.openshift.io=10, limited: count/imagestreams.image.openshift.io=10"))
	rbac := apierrors.NewForbidden(imageStreams, "python",
		errors.New(`User "system:serviceaccount:openshift-cluster-samples-operator:cluster-samples-operator" cannot create resource "imagestreams" in API group "image.openshift.io" in the namespace "openshift"`))
	webhook := &apierrors.StatusError{ErrStatus: metav1.Status{Status: metav1.StatusFailure, Code: http.StatusBadRequest,
		Message: `admission webhook "deny.example.com" denied the request: no samples here`}}
	webhookNoReason := &apierrors.StatusError{ErrStatus: metav1.Status{Status: metav1.StatusFailure, Code: http.StatusForbidden,
		Message: `admission webhook "deny.example.com" denied the request: no`}}
	invalid := apierrors.NewInvalid(schema.GroupKind{Group: "image.openshift.io", Kind: "ImageStream"}, "python",
		field.ErrorList{field.Forbidden(field.NewPath("spec", "tags").Index(0).Child("from", "name"), "registry \"quay.io\" not allowed by whitelist")})
	for _, tc := range []struct {
		name    string
		err     error
		refused bool
		code    int32
		reason  metav1.StatusReason
	}{
		{"nil", nil, false, 0, ""},
		{"a plain error", errors.New("connection refused"), false, 0, ""},
		{"a quota", quota, true, 403, metav1.StatusReasonForbidden},
		{"a quota, wrapped", fmt.Errorf("create ImageStream python: %w", quota), true, 403, metav1.StatusReasonForbidden},
		{"RBAC", rbac, false, 403, metav1.StatusReasonForbidden},
		{"a webhook's denial", webhook, true, 400, "Bad Request"},
		{"a webhook's 403", webhookNoReason, true, 403, "Forbidden"},
		{"invalid", invalid, true, 422, metav1.StatusReasonInvalid},
		{"bad request", apierrors.NewBadRequest("no"), true, 400, metav1.StatusReasonBadRequest},
		{"unavailable", apierrors.NewServiceUnavailable("down"), true, 503, metav1.StatusReasonServiceUnavailable},
		{"internal", apierrors.NewInternalError(errors.New("etcd")), true, 500, metav1.StatusReasonInternalError},
		{"conflict", apierrors.NewConflict(imageStreams, "python", errors.New("changed")), false, 409, metav1.StatusReasonConflict},
		{"not found", apierrors.NewNotFound(imageStreams, "python"), false, 404, metav1.StatusReasonNotFound},
		{"already exists", apierrors.NewAlreadyExists(imageStreams, "python"), false, 409, metav1.StatusReasonAlreadyExists},
		// A sample larger than the server takes (--max-request-bytes, etcd's limit) stays so.
		{"too large", apierrors.NewRequestEntityTooLargeError("limit is 3145728"), true, 413, metav1.StatusReasonRequestEntityTooLarge},
		{"too many requests", apierrors.NewTooManyRequests("slow down", 1), false, 429, metav1.StatusReasonTooManyRequests},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r, refused := Classify(tc.err)
			if refused != tc.refused {
				t.Fatalf("refused = %v, want %v (%v)", refused, tc.refused, r)
			}
			if tc.code != 0 && (r.Code != tc.code || r.Reason != tc.reason) {
				t.Errorf("got %d %q, want %d %q", r.Code, r.Reason, tc.code, tc.reason)
			}
		})
	}
}

func TestCauseLeavesOutTheSamplesName(t *testing.T) {
	r := func(name string) Refusal {
		return Refusal{Code: 403, Reason: metav1.StatusReasonForbidden,
			Message: `imagestreams.image.openshift.io "` + name + `" is forbidden: exceeded quota: samples`}
	}
	if a, b := Cause("python", r("python")), Cause("ruby", r("ruby")); a != b {
		t.Errorf("one quota, two causes: %q and %q", a, b)
	}
	want := `403 Forbidden: imagestreams.image.openshift.io "*" is forbidden: exceeded quota: samples`
	if got := Cause("python", r("python")); got != want {
		t.Errorf("Cause = %q, want %q", got, want)
	}
}

// A LimitRange on openshift.io/image-tags refuses each stream with its own tag count: five
// streams of different sizes are one cause, which keeps the limit.
func TestCauseLeavesOutTheSamplesFigures(t *testing.T) {
	causes := map[string]bool{}
	for i, name := range []string{"python", "ruby", "nodejs", "perl", "php"} {
		r := Refusal{Code: 403, Reason: metav1.StatusReasonForbidden, Message: fmt.Sprintf(
			`imagestreams.image.openshift.io "%s" is forbidden: requested usage of openshift.io/image-tags exceeds the maximum limit per openshift.io/ImageStream (%d > 3)`, name, 4+i*2)}
		causes[Cause(name, r)] = true
	}
	want := `403 Forbidden: imagestreams.image.openshift.io "*" is forbidden: requested usage of openshift.io/image-tags exceeds the maximum limit per openshift.io/ImageStream (* > 3)`
	if len(causes) != 1 || !causes[want] {
		t.Errorf("causes %v, want the one %q", causes, want)
	}
}

func TestBackoffDoublesUpToAMinute(t *testing.T) {
	backoff := NewBackoff()
	want := []time.Duration{time.Second, 2 * time.Second, 4 * time.Second, 8 * time.Second, 16 * time.Second, 32 * time.Second, time.Minute, time.Minute}
	for i, w := range want {
		if got := backoff.When("ImageStream/ruby"); got != w {
			t.Errorf("wait after refusal %d = %s, want %s", i+1, got, w)
		}
	}
	backoff = NewBackoff()
	// At most two refused writes per sample in any minute after the first: tries at the
	// cumulative waits, counted per minute.
	at := time.Duration(0)
	perMinute := map[int]int{}
	for n := 1; at < 10*time.Minute; n++ {
		perMinute[int(at/time.Minute)]++
		at += backoff.When("ImageStream/ruby")
	}
	if perMinute[0] > 7 {
		t.Errorf("%d writes in the first minute", perMinute[0])
	}
	for m := 1; m < 10; m++ {
		if perMinute[m] > 2 || perMinute[m] < 1 {
			t.Errorf("minute %d: %d writes, want 1 or 2", m, perMinute[m])
		}
	}
}

func TestStoreHoldsTheSameWriteUntilItsBackoffRunsOut(t *testing.T) {
	clk := clocktesting.NewFakeClock(time.Date(2026, 11, 25, 12, 0, 0, 0, time.UTC))
	s := NewStore(clk)
	changes := 0
	s.OnChange(func() { changes++ })
	quota := func(name string) Refusal {
		return Refusal{Code: 403, Reason: metav1.StatusReasonForbidden, Message: `imagestreams "` + name + `" is forbidden: exceeded quota`}
	}

	if _, held := s.Held("ImageStream", "python", "create/1/"); held {
		t.Fatal("nothing refused yet, yet held")
	}
	wait, newCause := s.Refused("ImageStream", "python", "create", "create/1/", quota("python"))
	if wait != time.Second || !newCause {
		t.Errorf("first refusal: wait %s, new cause %v; want 1s, true", wait, newCause)
	}
	if _, newCause = s.Refused("ImageStream", "ruby", "create", "create/1/", quota("ruby")); newCause {
		t.Error("a second sample refused for the same quota is a new cause")
	}
	if wait, held := s.Held("ImageStream", "python", "create/1/"); !held || wait != time.Second {
		t.Errorf("held %v for %s, want true for 1s", held, wait)
	}
	if _, held := s.Held("ImageStream", "python", "create/2/"); held {
		t.Error("a write decided on another Config generation is held")
	}
	if _, held := s.Held("Template", "python", "create/1/"); held {
		t.Error("a template is held for an imagestream's refusal")
	}
	clk.Step(time.Second)
	if _, held := s.Held("ImageStream", "python", "create/1/"); held {
		t.Error("still held once the backoff ran out")
	}
	if wait, _ := s.Refused("ImageStream", "python", "create", "create/1/", quota("python")); wait != 2*time.Second {
		t.Errorf("second refusal: wait %s, want 2s", wait)
	}

	records, since, next := s.Reported()
	if len(records) != 2 || records[0].Key() != "ImageStream/python" || records[1].Key() != "ImageStream/ruby" || next != 0 {
		t.Fatalf("reported %v (next %s)", records, next)
	}
	if !since.Equal(clk.Now().Add(-time.Second)) {
		t.Errorf("since %s, want the first refusal's time", since)
	}

	retried := s.RetryNow()
	if len(retried) != 2 {
		t.Errorf("RetryNow returned %v", retried)
	}
	if _, held := s.Held("ImageStream", "python", "create/1/"); held {
		t.Error("held after RetryNow")
	}
	// A refusal right after RetryNow (the server's quota cache still behind) waits a second again,
	// not the minute the backoff had grown to.
	if wait, _ := s.Refused("ImageStream", "python", "create", "create/1/", quota("python")); wait != time.Second {
		t.Errorf("refused after RetryNow: wait %s, want 1s", wait)
	}
	s.RetryNow()

	if ended := s.Accepted("ImageStream", "python"); ended != "" {
		t.Errorf("ruby is still refused for it, yet the cause ended: %q", ended)
	}
	if ended := s.Accepted("ImageStream", "ruby"); ended == "" {
		t.Error("the last sample of a cause accepted, and no cause ended")
	}
	if ended := s.Accepted("ImageStream", "ruby"); ended != "" {
		t.Error("a sample without a record ended a cause")
	}
	if records, since, _ := s.Reported(); len(records) != 0 || !since.IsZero() {
		t.Errorf("left %v since %s", records, since)
	}
	if changes != 6 { // four refusals, two acceptances
		t.Errorf("%d changes told, want 6", changes)
	}
}

func TestA5xxIsReportedOnlyOnceItLasts(t *testing.T) {
	clk := clocktesting.NewFakeClock(time.Date(2026, 11, 25, 12, 0, 0, 0, time.UTC))
	s := NewStore(clk)
	s.Refused("Template", "rails", "update", "update/1/7", Refusal{Code: 503, Reason: metav1.StatusReasonServiceUnavailable, Message: "down"})
	if records, _, next := s.Reported(); len(records) != 0 || next != TransientPatience {
		t.Errorf("a fresh 503 reported: %v, next report in %s", records, next)
	}
	clk.Step(TransientPatience)
	if records, _, next := s.Reported(); len(records) != 1 || next != 0 {
		t.Errorf("a 503 that lasted %s not reported: %v (next %s)", TransientPatience, records, next)
	}
}

// A sample refused again for what refused it before is no new cause; refused for something else,
// it is.
func TestTheSameSampleRefusedAgainIsANewCauseOnlyForANewReason(t *testing.T) {
	s := NewStore(clocktesting.NewFakeClock(time.Date(2026, 11, 25, 12, 0, 0, 0, time.UTC)))
	quota := Refusal{Code: 403, Reason: metav1.StatusReasonForbidden, Message: `imagestreams "python" is forbidden: exceeded quota`}
	s.Refused("ImageStream", "python", "create", "create/1/", quota)
	if _, newCause := s.Refused("ImageStream", "python", "create", "create/1/", quota); newCause {
		t.Error("refused again for the same quota: a new cause")
	}
	tooLarge := Refusal{Code: 413, Reason: metav1.StatusReasonRequestEntityTooLarge, Message: "request is too large"}
	if _, newCause := s.Refused("ImageStream", "python", "create", "create/1/", tooLarge); !newCause {
		t.Error("refused again for another reason: not a new cause")
	}
	webhook := Refusal{Code: 400, Reason: metav1.StatusReasonBadRequest, Message: `admission webhook "policy.example" denied the request`}
	if _, newCause := s.Refused("Template", "rails", "create", "create/1/", webhook); !newCause {
		t.Error("another sample refused for a reason no sample has: not a new cause")
	}
}

// A 5xx not reported yet hides none of the records that are, in whatever order the store holds
// them.
func TestAFresh5xxHidesNoReportedRecord(t *testing.T) {
	clk := clocktesting.NewFakeClock(time.Date(2026, 11, 25, 12, 0, 0, 0, time.UTC))
	s := NewStore(clk)
	for _, name := range []string{"python", "ruby", "nodejs"} {
		s.Refused("ImageStream", name, "create", "create/1/", Refusal{Code: 403, Reason: metav1.StatusReasonForbidden, Message: `imagestreams "` + name + `" is forbidden: exceeded quota`})
	}
	s.Refused("Template", "rails", "update", "update/1/7", Refusal{Code: 503, Reason: metav1.StatusReasonServiceUnavailable, Message: "down"})
	for i := 0; i < 20; i++ { // the map's order changes from one look to the next
		records, _, next := s.Reported()
		if len(records) != 3 || next != TransientPatience {
			t.Fatalf("reported %v, next report in %s; want the three quota refusals, the 503 in %s", records, next, TransientPatience)
		}
	}
}

// Every 5xx waits TransientPatience, 500 included, and the next report is the earliest due.
func TestTheNextReportIsTheEarliestTransientDue(t *testing.T) {
	clk := clocktesting.NewFakeClock(time.Date(2026, 11, 25, 12, 0, 0, 0, time.UTC))
	s := NewStore(clk)
	s.Refused("Template", "rails", "update", "update/1/7", Refusal{Code: 500, Reason: metav1.StatusReasonInternalError, Message: "etcd timeout"})
	clk.Step(10 * time.Second)
	s.Refused("Template", "django", "update", "update/1/7", Refusal{Code: 503, Reason: metav1.StatusReasonServiceUnavailable, Message: "down"})
	for i := 0; i < 3; i++ { // whatever order the records come in
		if records, _, next := s.Reported(); len(records) != 0 || next != TransientPatience-10*time.Second {
			t.Fatalf("reported %v, next report in %s; want none, the 500's in %s", records, next, TransientPatience-10*time.Second)
		}
	}
}
