package samplewriter

import (
	"context"
	"errors"
	"reflect"
	"slices"
	"strings"
	"testing"

	imagev1 "github.com/openshift/api/image/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	clocktesting "k8s.io/utils/clock/testing"

	"github.com/samples-operator-dev/cluster-samples-operator/pkg/desired"
	"github.com/samples-operator-dev/cluster-samples-operator/pkg/refusal"
)

var imagestreams = schema.GroupResource{Group: "image.openshift.io", Resource: "imagestreams"}

// fakeClient answers every call with err, or else with the object written at a new
// resourceVersion; it keeps the calls and the options of the last one, which is all a test of the
// writer needs to see of the server.
type fakeClient struct {
	err   error
	calls []string
	opts  any
}

func (c *fakeClient) answer(call string, obj *imagev1.ImageStream, opts any) (*imagev1.ImageStream, error) {
	c.calls = append(c.calls, call+" "+obj.Name)
	c.opts = opts
	if c.err != nil {
		return nil, c.err
	}
	got := obj.DeepCopy()
	got.ResourceVersion = "42"
	return got, nil
}

func (c *fakeClient) Get(_ context.Context, name string, opts metav1.GetOptions) (*imagev1.ImageStream, error) {
	return c.answer("get", &imagev1.ImageStream{ObjectMeta: metav1.ObjectMeta{Name: name}}, opts)
}

func (c *fakeClient) Create(_ context.Context, obj *imagev1.ImageStream, opts metav1.CreateOptions) (*imagev1.ImageStream, error) {
	return c.answer("create", obj, opts)
}

func (c *fakeClient) Update(_ context.Context, obj *imagev1.ImageStream, opts metav1.UpdateOptions) (*imagev1.ImageStream, error) {
	return c.answer("update", obj, opts)
}

func (c *fakeClient) Delete(_ context.Context, name string, opts metav1.DeleteOptions) error {
	_, err := c.answer("delete", &imagev1.ImageStream{ObjectMeta: metav1.ObjectMeta{Name: name}}, opts)
	return err
}

func newWriter(err error) (*Writer[*imagev1.ImageStream], *fakeClient, *refusal.Store) {
	clk := clocktesting.NewFakePassiveClock(start)
	client := &fakeClient{err: err}
	store := refusal.NewStore(clk)
	return New[*imagev1.ImageStream](ImageStreamKind, client, NewRecords[*imagev1.ImageStream](clk, RevertWindow), store), client, store
}

// liveStream is python as the informer showed it when the write was decided.
func liveStream() *imagev1.ImageStream {
	return &imagev1.ImageStream{ObjectMeta: metav1.ObjectMeta{Name: "python", Namespace: "openshift", UID: "uid-1", ResourceVersion: "41"}}
}

var (
	quota      = apierrors.NewForbidden(imagestreams, "python", errors.New("exceeded quota: samples, requested: count/imagestreams.image.openshift.io=1"))
	quotaNo    = refusal.Refusal{Code: 403, Reason: metav1.StatusReasonForbidden, Message: quota.ErrStatus.Message}
	mirrorWant = Intent{Generation: 2, SamplesRegistry: "mirror.example:5000", Version: "4.21.0"}
)

// TestAnAcceptedWriteIsRecordedAndEndsTheSamplesRefusals: a create or update goes out under the
// operator's field manager, its answer comes back, the record says what it was made for, and the
// refusals of earlier writes of the sample end with it.
func TestAnAcceptedWriteIsRecordedAndEndsTheSamplesRefusals(t *testing.T) {
	for _, tc := range []struct {
		verb desired.Verb
		live *imagev1.ImageStream
		call string
		opts any
	}{
		{desired.Create, nil, "create python", metav1.CreateOptions{FieldManager: FieldManager}},
		{desired.Update, liveStream(), "update python", metav1.UpdateOptions{FieldManager: FieldManager}},
		{desired.MarkUnmanaged, liveStream(), "update python", metav1.UpdateOptions{FieldManager: FieldManager}},
	} {
		w, client, store := newWriter(nil)
		store.Refused(ImageStreamKind, "python", "create", "earlier", quotaNo)
		w.Records().Refused("python", quotaNo)
		want := liveStream()
		out, err := w.Write(context.Background(), "python", desired.ImageStreamAction{Verb: tc.verb, Object: want}, tc.live, mirrorWant, "now")
		if err != nil || !out.Accepted || out.Moot != "" || out.Refused != nil {
			t.Fatalf("%s: %+v, %v; want accepted", tc.verb, out, err)
		}
		if out.Got == nil || out.Got.ResourceVersion != "42" {
			t.Errorf("%s: the server's answer is not returned: %+v", tc.verb, out.Got)
		}
		if !slices.Equal(client.calls, []string{tc.call}) || !reflect.DeepEqual(client.opts, tc.opts) {
			t.Errorf("%s: the server was asked %v with %+v, want %s with %+v", tc.verb, client.calls, client.opts, tc.call, tc.opts)
		}
		if out.Resolved != refusal.Cause("python", quotaNo) || len(store.Samples()) != 0 {
			t.Errorf("%s: resolved %q, refusals left %v; want the quota's refusal ended", tc.verb, out.Resolved, store.Samples())
		}
		intent, ok := w.Records().LastWrite("python")
		rec, _ := w.Records().Get("python")
		if !ok || intent != mirrorWant || rec.Verb != tc.verb || !rec.At.Equal(start) || rec.LastRefusal != nil {
			t.Errorf("%s: record %+v (last write %+v, %v); want the write, its intent and no refusal", tc.verb, rec, intent, ok)
		}
	}
}

// TestADeleteRemovesOnlyTheObjectItWasDecidedOn: the delete is made on the uid and the
// resourceVersion the decision saw, and leaves no write of the operator's to recognise.
func TestADeleteRemovesOnlyTheObjectItWasDecidedOn(t *testing.T) {
	w, client, _ := newWriter(nil)
	out, err := w.Write(context.Background(), "python", desired.ImageStreamAction{Verb: desired.Delete}, liveStream(), mirrorWant, "now")
	if err != nil || !out.Accepted {
		t.Fatalf("delete: %+v, %v; want accepted", out, err)
	}
	opts, _ := client.opts.(metav1.DeleteOptions)
	if p := opts.Preconditions; p == nil || p.UID == nil || *p.UID != "uid-1" || p.ResourceVersion == nil || *p.ResourceVersion != "41" {
		t.Errorf("delete preconditions %+v, want uid-1 at resourceVersion 41", p)
	}
	if _, ok := w.Records().LastWrite("python"); ok || w.Records().LastVerb("python") != desired.Delete {
		t.Errorf("after a delete: last verb %q, a write still to recognise %v", w.Records().LastVerb("python"), ok)
	}
}

// TestAWriteOnAnObjectThatChangedIsMoot: the server's conflict, AlreadyExists or NotFound says the
// cache was behind; nothing is recorded, reported or returned as an error, and a refusal of the
// sample stays until a write goes through.
func TestAWriteOnAnObjectThatChangedIsMoot(t *testing.T) {
	conflict := apierrors.NewConflict(imagestreams, "python", errors.New("the object has been modified"))
	for _, tc := range []struct {
		verb desired.Verb
		err  error
		moot string
	}{
		{desired.Create, apierrors.NewAlreadyExists(imagestreams, "python"), "it exists already"},
		{desired.Update, conflict, "it changed since the decision"},
		{desired.MarkUnmanaged, conflict, "it changed since the decision"},
		{desired.Delete, apierrors.NewNotFound(imagestreams, "python"), "it is gone already"},
		{desired.Delete, conflict, "it changed since the decision"},
	} {
		w, _, store := newWriter(tc.err)
		store.Refused(ImageStreamKind, "python", "create", "earlier", quotaNo)
		out, err := w.Write(context.Background(), "python", desired.ImageStreamAction{Verb: tc.verb, Object: liveStream()}, liveStream(), mirrorWant, "now")
		if err != nil || out.Accepted || out.Moot != tc.moot || out.Refused != nil {
			t.Errorf("%s answered %v: %+v, %v; want moot because %s", tc.verb, tc.err, out, err, tc.moot)
		}
		if w.Records().LastVerb("python") != desired.None || len(store.Samples()) != 1 {
			t.Errorf("%s answered %v: recorded %q, refusals %v", tc.verb, tc.err, w.Records().LastVerb("python"), store.Samples())
		}
	}
}

// TestARefusedWriteIsRecordedAndWaitsOutItsBackoff: the refusal goes to the store and the
// sample's record; the same decision waits, doubling with each refusal, and the cause is new only
// the first time.
func TestARefusedWriteIsRecordedAndWaitsOutItsBackoff(t *testing.T) {
	w, _, store := newWriter(quota)
	for i, want := range []struct {
		retry    string
		newCause bool
	}{{"1s", true}, {"2s", false}} {
		out, err := w.Write(context.Background(), "python", desired.ImageStreamAction{Verb: desired.Create, Object: liveStream()}, nil, mirrorWant, "now")
		if err != nil || out.Accepted || out.Refused == nil || *out.Refused != quotaNo {
			t.Fatalf("refusal %d: %+v, %v; want refused with %+v", i+1, out, err, quotaNo)
		}
		if out.Retry.String() != want.retry || out.NewCause != want.newCause {
			t.Errorf("refusal %d: retry in %s, new cause %v; want %s, %v", i+1, out.Retry, out.NewCause, want.retry, want.newCause)
		}
	}
	if rec, _ := w.Records().Get("python"); rec.LastRefusal == nil || *rec.LastRefusal != quotaNo || rec.Verb != desired.None {
		t.Errorf("record %+v, want the refusal and no accepted write", rec)
	}
	if records := store.Samples(); len(records) != 1 || records[0].Key() != "ImageStream/python" {
		t.Errorf("store holds %v, want ImageStream/python", records)
	}
	if wait, held := w.Held("python", "now"); !held || wait.String() != "2s" {
		t.Errorf("the refused decision is held %v for %s, want 2s", held, wait)
	}
	if _, held := w.Held("python", "another"); held {
		t.Error("another decision on the sample waits out the refused one's backoff")
	}
	if cause := w.NothingToWrite("python"); cause != refusal.Cause("python", quotaNo) || len(store.Samples()) != 0 {
		t.Errorf("nothing to write ended %q, left %v; want the quota's refusal ended", cause, store.Samples())
	}
}

// TestAFailureThatIsNoRefusalIsAnErrorNamingTheWrite: the controller's ordinary retry takes it;
// the writer records nothing.
func TestAFailureThatIsNoRefusalIsAnErrorNamingTheWrite(t *testing.T) {
	busy := apierrors.NewTooManyRequests("slow down", 1)
	w, _, store := newWriter(busy)
	out, err := w.Write(context.Background(), "python", desired.ImageStreamAction{Verb: desired.Update, Object: liveStream()}, liveStream(), mirrorWant, "now")
	if err == nil || !errors.Is(err, busy) || !strings.HasPrefix(err.Error(), "update ImageStream python: ") {
		t.Errorf("error %v, want the server's answer after the write it answers", err)
	}
	if out.Accepted || out.Refused != nil || w.Records().LastVerb("python") != desired.None || len(store.Samples()) != 0 {
		t.Errorf("outcome %+v, record %q, refusals %v; want nothing kept", out, w.Records().LastVerb("python"), store.Samples())
	}
}

// TestNoWriteIsMadeForNothingOrAnUnknownVerb.
func TestNoWriteIsMadeForNothingOrAnUnknownVerb(t *testing.T) {
	w, client, _ := newWriter(nil)
	if out, err := w.Write(context.Background(), "python", desired.ImageStreamAction{}, liveStream(), mirrorWant, "now"); err != nil || out.Accepted {
		t.Errorf("no action: %+v, %v", out, err)
	}
	if _, err := w.Write(context.Background(), "python", desired.ImageStreamAction{Verb: "patch", Object: liveStream()}, liveStream(), mirrorWant, "now"); err == nil {
		t.Error("an unknown verb is no error")
	}
	if len(client.calls) != 0 || w.Records().LastVerb("python") != desired.None {
		t.Errorf("the server was asked %v, recorded %q", client.calls, w.Records().LastVerb("python"))
	}
}
