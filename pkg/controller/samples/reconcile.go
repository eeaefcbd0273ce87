package samples

import (
	"context"
	"fmt"
	"strings"
	"time"

	samplesv1 "github.com/openshift/api/samples/v1"
	"github.com/openshift/library-go/pkg/controller/factory"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/klog/v2"

	"github.com/samples-operator-dev/cluster-samples-operator/pkg/configspec"
	"github.com/samples-operator-dev/cluster-samples-operator/pkg/controller/ownwrites"
	"github.com/samples-operator-dev/cluster-samples-operator/pkg/desired"
	"github.com/samples-operator-dev/cluster-samples-operator/pkg/refusal"
	"github.com/samples-operator-dev/cluster-samples-operator/pkg/samplewriter"
)

// reconcile brings one sample to what the Config asks, one named step after another.
func reconcile[P desired.Object[P]](ctx context.Context, s sampleSync, k kind[P], w *samplewriter.Writer[P]) error {
	r := &run[P]{sampleSync: s, kind: k, writer: w}
	live, err := r.observe()
	if err != nil {
		return err
	}
	want, skipped := r.want()
	action := r.decide(want, skipped, live)
	if r.nothingToWrite(action, live, want) {
		return nil
	}
	// A refused write waits out its backoff before anything is read for it: the server's copy
	// has the cached object's resourceVersion, and so the same decision.
	decision := r.decision(action, live)
	if r.heldByRefusal(decision) {
		return nil
	}
	if r.needsServerCopy(action, live) {
		var gone bool // deleted meanwhile: its delete event brings the sample back
		if live, gone, err = r.readFromServer(ctx); err != nil || gone {
			return err
		}
		if action = r.decide(want, skipped, live); r.nothingToWrite(action, live, want) {
			return nil
		}
		if decision = r.decision(action, live); r.heldByRefusal(decision) {
			return nil
		}
	}
	cause := r.causeOf(action, live)
	if cause.revert && r.overRevertBudget(action) {
		return nil
	}
	out, err := w.Write(ctx, r.name, action, live, r.intent(), decision)
	if err != nil {
		return err
	}
	if out.Accepted && action.Verb != desired.Delete {
		r.kind.wrote(out.Got)
	}
	r.tell(out, action, cause, want)
	return nil
}

// sampleSync is what one sync knows before it looks at the sample.
type sampleSync struct {
	c       *Controller
	syncCtx factory.SyncContext
	cfg     *samplesv1.Config
	eval    configspec.Evaluation
	name    string
}

func (c *Controller) newSync(syncCtx factory.SyncContext, cfg *samplesv1.Config, eval configspec.Evaluation, name string) sampleSync {
	return sampleSync{c: c, syncCtx: syncCtx, cfg: cfg, eval: eval, name: name}
}

// run is one sync of one sample of a kind.
type run[P desired.Object[P]] struct {
	sampleSync
	kind   kind[P]
	writer *samplewriter.Writer[P]
	// managedFields are the live object's, when it was read from the server.
	managedFields []metav1.ManagedFieldsEntry
	fromServer    bool
	// marked holds the marks read at the run's first look at the verdicts, which may change
	// while it runs (a server read takes a while): the write and its record must say the same.
	marked *desired.Marks
}

// observe reads the sample from the cache, which shows the writer's last create or update of it
// before the informer does (pkg/controller/ownwrites): deciding on the object that write replaced
// would send the write again and meet a conflict (or AlreadyExists).
func (r *run[P]) observe() (live P, err error) {
	var absent P
	live, unseen, err := r.kind.cached(r.name)
	if apierrors.IsNotFound(err) {
		return absent, nil
	} else if err != nil {
		return absent, err
	}
	if unseen {
		// The operator's create, not shown by the informer yet: its add event brings the sample
		// back, and should it have been deleted meanwhile, so does this.
		r.syncCtx.Queue().AddAfter(r.syncCtx.QueueKey(), ownwrites.Recheck)
	}
	return live, nil
}

// want is the sample the Config asks for; absent when its architecture has no inventory.
func (r *run[P]) want() (want P, skipped bool) {
	if r.eval.Inventory == nil {
		return want, false
	}
	return r.kind.want(&r.cfg.Spec, r.intent(), r.eval.Inventory, r.name)
}

// marks are what the operator says on the sample about whether it can work on this cluster, as
// the verdicts were when the run first asked: the object written and the intent recorded for it
// are built from the same marks, or the next sync would take the operator's own write for an
// edit and revert it.
func (r *run[P]) marks() desired.Marks {
	if r.marked == nil {
		marks := r.c.usability.Marks(r.writer.Kind(), r.name)
		r.marked = &marks
	}
	return *r.marked
}

// stream is the sample's name when it is an imagestream (configspec.Evaluation.ChoiceOf).
func (r *run[P]) stream() string {
	if r.writer.Kind() != samplewriter.ImageStreamKind {
		return ""
	}
	return r.name
}

// decide is the one write that brings live to what the Config asks (pkg/desired).
func (r *run[P]) decide(want P, skipped bool, live P) desired.Action[P] {
	mode := r.eval.Mode
	if r.kind.frozen(r.eval, r.name, live) {
		mode = desired.Frozen
	}
	var absent P
	if mode == desired.Managed && want == absent && !skipped && r.eval.Inventory != nil {
		// Managed, not skipped, and the inventory has no such sample: if the operator installed
		// it, an upgrade retired it. Its content stays as it is; only its marks follow the
		// verdicts.
		return r.kind.markUnshipped(r.kind.retire(live, r.c.version), want, live, r.marks())
	}
	action := r.kind.decide(mode, want, skipped, live)
	if mode != desired.Managed || skipped || want == absent {
		return action
	}
	if action.Verb == desired.Update && r.kind.settled(live, want, r.writer.Records().Answer(r.name)) {
		action = desired.Action[P]{} // the server's version of want: only marks may be left to write
	}
	// The tags the inventory does not ship (an admin's, a retired one) are marked apart: want
	// has none of them.
	return r.kind.markUnshipped(action, want, live, r.marks())
}

// nothingToWrite: live is what the Config asks, or what the server made of the operator's last
// write of it (writing it again would only be normalized again). Whatever was refused is moot.
func (r *run[P]) nothingToWrite(action desired.Action[P], live, want P) bool {
	if action.Verb != desired.None && (action.Verb != desired.Update || action.MarksOnly || !r.kind.settled(live, want, r.writer.Records().Answer(r.name))) {
		return false
	}
	r.writer.NothingToWrite(r.name)
	return true
}

// needsServerCopy: the cache cannot support the write. A cached template keeps only digests of
// what the operator owns, and its update is built from the whole object; an update of a sample
// this process never wrote needs its managedFields to tell the operator's earlier write from
// someone else's edit (causeOf). Both are rare: drift, an upgrade, a restart mid-change.
func (r *run[P]) needsServerCopy(action desired.Action[P], live P) bool {
	if r.fromServer || action.Verb != desired.Update && action.Verb != desired.MarkUnmanaged {
		return false
	}
	if r.kind.summary(live) {
		return true
	}
	_, recorded := r.writer.Records().LastWrite(r.name)
	return action.Verb == desired.Update && !action.MarksOnly && !recorded
}

// readFromServer reads the whole sample, managedFields apart; gone when it does not exist.
func (r *run[P]) readFromServer(ctx context.Context) (live P, gone bool, err error) {
	live, err = r.writer.ReadWhole(ctx, r.name)
	if apierrors.IsNotFound(err) {
		return live, true, nil
	} else if err != nil {
		return live, false, fmt.Errorf("get %s %s: %w", r.writer.Kind(), r.name, err)
	}
	r.kind.fromServer(live)
	// Written back as read they would replace the server's record of who owns what.
	r.managedFields, r.fromServer = live.GetManagedFields(), true
	live.SetManagedFields(nil)
	return live, false, nil
}

// decision identifies a write for the refusal backoff: the same write for the same choice
// (desired.Choice) on the same object.
func (r *run[P]) decision(action desired.Action[P], live P) string {
	return fmt.Sprintf("%s/%+v/%s", action.Verb, r.intent(), resourceVersion(live))
}

// heldByRefusal: the same write on the same object waits out its backoff. A Config status write
// or a resync brings every key back, and would otherwise send each refused write again at once.
func (r *run[P]) heldByRefusal(decision string) bool {
	wait, held := r.writer.Held(r.name, decision)
	if held {
		klog.V(2).InfoS("Sample write held back: the server refused it and its backoff runs", "kind", r.writer.Kind(), "name", r.name, "wait", wait.Round(time.Millisecond))
		r.syncCtx.Queue().AddAfter(r.syncCtx.QueueKey(), wait)
	}
	return held
}

// cause is why an update is made: it reverts someone's change, or it follows the operator's own
// earlier write to what the Config (or the operator version) asks now.
type cause struct {
	revert bool
	// follows says which change an update that is no revert follows; by names who made the
	// change a revert puts back, when known.
	follows, by string
}

// causeOf tells a revert from the operator following its own earlier write, from the writer's
// record: the update follows when live still holds what the operator last wrote, for the
// intent it wrote it for. Without a record (this process never wrote the sample), the owners of
// the fields the update puts back decide: the operator's field manager owns what it wrote.
func (r *run[P]) causeOf(action desired.Action[P], live P) cause {
	if action.Verb != desired.Update {
		return cause{}
	}
	if action.Retires {
		return cause{follows: "the inventory of " + r.c.version + " no longer has it"}
	}
	if action.MarksOnly {
		return cause{follows: "whether it can work on this cluster changed (" + desired.UnusableAnnotation + ")"}
	}
	if intent, ok := r.writer.Records().LastWrite(r.name); ok {
		if r.stillOwnWrite(live, intent) || r.stillMarkedUnmanaged(live) {
			return cause{follows: r.intent().ChangeSince(intent)}
		}
		return cause{revert: true}
	}
	if !r.fromServer {
		return cause{revert: true}
	}
	var edited []string // an admin's values of the fields admins may set prove no edit
	for _, field := range action.Drift {
		if !desired.AdminSettable(field) {
			edited = append(edited, field)
		}
	}
	if owner := samplewriter.OtherOwner(r.managedFields, edited); owner != "" {
		return cause{revert: true, by: owner}
	}
	return cause{follows: "the operator's own earlier write, from before it started"}
}

// stillMarkedUnmanaged: the operator's last write marked live unmanaged (the Config skipped it)
// and live is still so: an update now follows the Config's unskip, it reverts nothing.
func (r *run[P]) stillMarkedUnmanaged(live P) bool {
	return r.writer.Records().LastVerb(r.name) == desired.MarkUnmanaged && live.GetLabels()[desired.ManagedLabel] == "false"
}

// stillOwnWrite: live is what the operator wrote for intent (or the server's answer to it).
func (r *run[P]) stillOwnWrite(live P, intent samplewriter.Intent) bool {
	var absent P
	inv := r.eval.Inventory
	if intent.Architecture != configspec.Architecture(&r.cfg.Spec) {
		var err error
		if inv, err = r.c.inventories.For(intent.Architecture); err != nil {
			return false
		}
	}
	if inv == nil {
		return false
	}
	wrote, _ := r.kind.want(&r.cfg.Spec, intent, inv, r.name)
	if wrote == absent {
		return false
	}
	return r.kind.decide(desired.Managed, wrote, false, live).Verb == desired.None ||
		r.kind.settled(live, wrote, r.writer.Records().Answer(r.name))
}

// intent is what a write made now is made for.
func (r *run[P]) intent() samplewriter.Intent {
	return r.eval.ChoiceOf(r.cfg, r.c.version, r.stream(), r.marks())
}

// overRevertBudget: the sample was reverted too often; the revert waits until the budget allows
// it, and the admin is told once.
func (r *run[P]) overRevertBudget(action desired.Action[P]) bool {
	kind := r.writer.Kind()
	wait, first, ok := r.writer.Records().RevertAllowed(r.name)
	if ok {
		return false
	}
	if first {
		klog.InfoS("Sample reverted too often: something keeps changing it; reverting again once the budget allows",
			"kind", kind, "name", r.name, "reverts", samplewriter.RevertBudget, "fields", action.Drift, "next", wait)
		r.syncCtx.Recorder().Warningf("SampleRevertBudgetExceeded", "%s openshift/%s was changed back %d times in %s and has changed again (%s): something rewrites it; the operator reverts it again in %s",
			kind, r.name, samplewriter.RevertBudget, samplewriter.RevertWindow, strings.Join(action.Drift, ", "), wait.Round(time.Second))
	}
	if r.c.overBudget != nil {
		r.c.overBudget(kind, r.name)
	}
	r.syncCtx.Queue().AddAfter(r.syncCtx.QueueKey(), wait)
	return true
}

// tell logs the write's outcome, reports it to the admin, counts a revert against the budget and
// learns the server's answer.
func (r *run[P]) tell(out samplewriter.Outcome[P], action desired.Action[P], why cause, want P) {
	kind, recorder := r.writer.Kind(), r.syncCtx.Recorder()
	switch {
	case out.Refused != nil:
		if out.NewCause {
			klog.InfoS("The API server refuses a sample write; the operator retries it on a backoff and reports it in the Config status",
				"kind", kind, "name", r.name, "action", action.Verb, "answer", out.Refused.String())
			recorder.Warningf("SampleWritesRefused", "the API server refuses to %s %s openshift/%s (and every other sample it refuses for the same reason): %s; the operator retries on a backoff of up to %s",
				action.Verb, kind, r.name, out.Refused, refusal.MaxRefusalRetry)
		} else {
			klog.V(2).InfoS("Sample write refused again", "kind", kind, "name", r.name, "action", action.Verb, "next", out.Retry)
		}
		r.syncCtx.Queue().AddAfter(r.syncCtx.QueueKey(), out.Retry)
		return
	case !out.Accepted:
		// The object changed under the decision: that change's event brings it back.
		klog.V(2).InfoS("Not writing a sample", "kind", kind, "name", r.name, "action", action.Verb, "because", out.Moot)
		return
	}
	if out.Resolved != "" {
		recorder.Eventf("SampleWritesAccepted", "the API server accepts again the sample writes it refused with: %s", out.Resolved)
	}
	klog.V(2).InfoS("Wrote sample", "kind", kind, "name", r.name, "action", action.Verb, "fields", action.Drift, "revert", why.revert, "changedBy", why.by, "follows", why.follows)
	switch {
	case action.Verb == desired.Update && why.revert:
		r.writer.Records().Reverted(r.name)
		recorder.Eventf("SampleReverted", "%s openshift/%s was changed (%s); the operator put back the fields it manages", kind, r.name, strings.Join(action.Drift, ", "))
	case action.Verb == desired.MarkUnmanaged:
		recorder.Eventf("SampleSkipped", "%s openshift/%s is skipped by the Config: labelled %s=false and left alone", kind, r.name, desired.ManagedLabel)
	}
	if (action.Verb == desired.Create || action.Verb == desired.Update) && !action.Retires && !action.MarksOnly {
		r.learn(want, out.Got)
	}
}

// learn keeps what the server answered to a write of want when it changed an owned field, and
// tells the admin once per field: the operator then takes that answer as in sync instead of
// writing the same object again and again. An update that follows a Config change, or moves a
// sample to a new version, is told once for all samples elsewhere (the status controller's
// SamplesRegistryChanged event, SamplesExist and the ClusterOperator): an event per sample would
// spend the event spam filter's budget that reverts need.
func (r *run[P]) learn(want, got P) {
	kind := r.writer.Kind()
	fields := r.writer.Records().Learn(r.name, r.kind.answerFor(want, got))
	if len(fields) == 0 {
		return
	}
	klog.InfoS("The API server changed fields the operator sets on a sample; its version of them counts as in sync from now on",
		"kind", kind, "name", r.name, "fields", fields)
	r.syncCtx.Recorder().Warningf("SampleNormalizedByServer", "the API server changed %s of %s openshift/%s as the operator wrote it; the operator keeps the server's version and stops rewriting it",
		strings.Join(fields, ", "), kind, r.name)
	if r.c.normalized != nil {
		for _, f := range fields {
			r.c.normalized(kind, r.name, f)
		}
	}
}

// resourceVersion is live's, "" when absent.
func resourceVersion[P desired.Object[P]](live P) string {
	var absent P
	if live == absent {
		return ""
	}
	return live.GetResourceVersion()
}
