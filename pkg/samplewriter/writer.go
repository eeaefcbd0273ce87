// Package samplewriter is the only code that writes samples. Between the decision (pkg/desired)
// and the API server, it makes each write and remembers, per sample, what it last wrote and for
// which Config, what the server made of it, the sample's revert budget and the server's last
// refusal. "Is this my own write?" is answered from that record, never from the object's shape or
// annotations; after a restart, with no record, from the samples' managedFields (OtherOwner).
//
// library-go's resourceapply keeps a like record (a hash of what it was asked to write and the
// resourceVersion the server answered) to skip writes it has already made. It does not fit here:
// its key is the whole object it applies, while a sample's live object legitimately differs from
// what was written (admin-settable fields, the server's defaults, image imports that move the
// resourceVersion), and the question asked is not "did I write exactly this" but "is what the
// owned fields hold still what I wrote, and for which Config".
package samplewriter

import (
	"context"
	"fmt"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/samples-operator-dev/cluster-samples-operator/pkg/desired"
	"github.com/samples-operator-dev/cluster-samples-operator/pkg/refusal"
)

// Client is the part of a typed client the writer uses.
type Client[P any] interface {
	Get(ctx context.Context, name string, opts metav1.GetOptions) (P, error)
	Create(ctx context.Context, obj P, opts metav1.CreateOptions) (P, error)
	Update(ctx context.Context, obj P, opts metav1.UpdateOptions) (P, error)
	Delete(ctx context.Context, name string, opts metav1.DeleteOptions) error
}

// Writer writes the samples of one kind.
type Writer[P desired.Object[P]] struct {
	kind     string
	client   Client[P]
	records  *Records[P]
	refusals *refusal.Store
}

// New returns the writer of kind through client, keeping its records in records and the
// server's refusals, shared with the status controller, in refusals.
func New[P desired.Object[P]](kind string, client Client[P], records *Records[P], refusals *refusal.Store) *Writer[P] {
	return &Writer[P]{kind: kind, client: client, records: records, refusals: refusals}
}

// Kind is the kind of sample written.
func (w *Writer[P]) Kind() string { return w.kind }

// Records are the writer's records.
func (w *Writer[P]) Records() *Records[P] { return w.records }

// Outcome is what came of a write.
type Outcome[P any] struct {
	// Accepted is true when the server made the write; Got is its answer to a create or update.
	Accepted bool
	Got      P
	// Moot says why nothing was written when the object changed under the decision (a
	// conflict, AlreadyExists, NotFound): the informer's event for that change brings the
	// sample back to be decided again.
	Moot string
	// Refused is the server's refusal, Retry how long the sample waits before it is tried
	// again, NewCause whether the server refuses for a reason not reported yet.
	Refused  *refusal.Refusal
	Retry    time.Duration
	NewCause bool
	// Resolved is the cause of earlier refusals this accepted write ends ("" if none).
	Resolved string
}

// Held reports whether the same write on the same object (decision) waits out the backoff of
// an earlier refusal, and for how long.
func (w *Writer[P]) Held(name, decision string) (time.Duration, bool) {
	return w.refusals.Held(w.kind, name, decision)
}

// NothingToWrite tells the writer that name needs no write: whatever was refused is moot. It
// returns the cause of the refusals this resolves ("" if none).
func (w *Writer[P]) NothingToWrite(name string) string {
	return w.refusals.Accepted(w.kind, name)
}

// ReadWhole reads name from the server, managedFields included, for a decision the cache cannot
// support: a trimmed template, or an update with no record of the operator's own writes.
func (w *Writer[P]) ReadWhole(ctx context.Context, name string) (P, error) {
	return w.client.Get(ctx, name, metav1.GetOptions{})
}

// Write makes action on name, live being the object it was decided on (nil for a create), for
// intent; decision identifies the decision for the refusal backoff.
func (w *Writer[P]) Write(ctx context.Context, name string, action desired.Action[P], live P, intent Intent, decision string) (Outcome[P], error) {
	var out Outcome[P]
	var absent P
	replaced := ""
	if live != absent {
		replaced = live.GetResourceVersion()
	}
	var err error
	switch action.Verb {
	case desired.None:
		return out, nil
	case desired.Create:
		out.Got, err = w.client.Create(ctx, action.Object, metav1.CreateOptions{FieldManager: FieldManager})
		if apierrors.IsAlreadyExists(err) {
			out.Moot = "it exists already"
			return out, nil
		}
	case desired.Update, desired.MarkUnmanaged:
		out.Got, err = w.client.Update(ctx, action.Object, metav1.UpdateOptions{FieldManager: FieldManager})
		if apierrors.IsConflict(err) {
			out.Moot = "it changed since the decision"
			return out, nil
		}
	case desired.Delete:
		uid := live.GetUID()
		// Delete the object the decision was made on, as it was then: not one recreated since,
		// nor one an admin relabelled managed=false meanwhile to keep it.
		err = w.client.Delete(ctx, name, metav1.DeleteOptions{Preconditions: &metav1.Preconditions{UID: &uid, ResourceVersion: &replaced}})
		if apierrors.IsNotFound(err) {
			out.Moot = "it is gone already"
			return out, nil
		}
		if apierrors.IsConflict(err) {
			out.Moot = "it changed since the decision"
			return out, nil
		}
	default:
		return out, fmt.Errorf("unknown write %q", action.Verb)
	}
	if r, refused := refusal.Classify(err); refused {
		out.Refused = &r
		out.Retry, out.NewCause = w.refusals.Refused(w.kind, name, string(action.Verb), decision, r)
		w.records.Refused(name, r)
		return out, nil
	}
	if err != nil {
		return out, fmt.Errorf("%s %s %s: %w", action.Verb, w.kind, name, err)
	}
	out.Accepted = true
	out.Resolved = w.refusals.Accepted(w.kind, name)
	w.records.Wrote(name, action.Verb, intent)
	return out, nil
}
