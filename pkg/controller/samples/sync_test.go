package samples

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"
	"testing/fstest"
	"time"

	imagev1 "github.com/openshift/api/image/v1"
	operatorv1 "github.com/openshift/api/operator/v1"
	samplesv1 "github.com/openshift/api/samples/v1"
	templatev1 "github.com/openshift/api/template/v1"
	"github.com/openshift/library-go/pkg/controller/factory"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	clienttesting "k8s.io/client-go/testing"

	"github.com/samples-operator-dev/cluster-samples-operator/pkg/access"
	"github.com/samples-operator-dev/cluster-samples-operator/pkg/configspec/configspectest"
	"github.com/samples-operator-dev/cluster-samples-operator/pkg/controller/configreader"
	"github.com/samples-operator-dev/cluster-samples-operator/pkg/desired"
	"github.com/samples-operator-dev/cluster-samples-operator/pkg/inventory"
	"github.com/samples-operator-dev/cluster-samples-operator/pkg/names"
	"github.com/samples-operator-dev/cluster-samples-operator/pkg/refusal"
	"github.com/samples-operator-dev/cluster-samples-operator/pkg/samplewriter"
)

// TestASyncWritesOnlyWithAConfigTheVerdictsAndTheGrant: no sample is written without a Config,
// before the first verdicts, or while the samples grant is found missing; a key of neither kind
// (the factory's resync key) writes nothing; each kind's key creates its own kind of sample.
func TestASyncWritesOnlyWithAConfigTheVerdictsAndTheGrant(t *testing.T) {
	inv, err := configspectest.X86Only{}.For("x86_64")
	if err != nil {
		t.Fatal(err)
	}
	stream, template := inv.ImageStreamNames()[0], inv.TemplateNames()[0]
	for _, tc := range []struct {
		name  string
		cfg   *samplesv1.Config
		ready bool
		grant access.State
		key   string
		want  []string
	}{
		{"no Config", nil, true, access.Granted, streamKey(stream), nil},
		{"verdicts not made", managedConfig(), false, access.Granted, streamKey(stream), nil},
		{"grant missing", managedConfig(), true, access.Missing, streamKey(stream), nil},
		{"grant not judged yet", managedConfig(), true, access.Pending, streamKey(stream), []string{"create imagestreams/" + stream}},
		{"the resync key", managedConfig(), true, access.Granted, factory.DefaultQueueKey, nil},
		{"an imagestream", managedConfig(), true, access.Granted, streamKey(stream), []string{"create imagestreams/" + stream}},
		{"a template", managedConfig(), true, access.Granted, templateKey(template), []string{"create templates/" + template}},
	} {
		f := newFixture(t, tc.cfg)
		f.verdicts.ready = tc.ready
		f.grant.state.Store(tc.grant)
		f.sync(t, tc.key)
		if got := f.writes(); !same(got, tc.want) {
			t.Errorf("%s: wrote %s, want %s", tc.name, describe(got), describe(tc.want))
		}
	}
}

// TestASyncIsBusyWhileItWrites: the finalizer waits for a sync under way, so the controller
// must say so while it writes, and not after.
func TestASyncIsBusyWhileItWrites(t *testing.T) {
	f := newFixture(t, managedConfig())
	var busyWhileWriting bool
	f.images.PrependReactor("create", "imagestreams", func(clienttesting.Action) (bool, runtime.Object, error) {
		busyWhileWriting = f.deps.Activity.Busy()
		return false, nil, nil
	})
	if f.deps.Activity.Busy() {
		t.Fatal("busy before any sync")
	}
	f.sync(t, streamKey(f.inv.ImageStreamNames()[0]))
	if !busyWhileWriting {
		t.Error("not busy while a sync wrote a sample")
	}
	if f.deps.Activity.Busy() {
		t.Error("still busy after the sync ended")
	}
}

// TestAConfigThatCannotBeReadIsAnError: an error reading the Config is returned, for the queue's
// backoff, and nothing is written.
func TestAConfigThatCannotBeReadIsAnError(t *testing.T) {
	f := newFixture(t, managedConfig())
	c := *f.c
	c.config = configreader.New(failingConfigs{}, f.deps.Informers.ImageConfig.Lister(), f.deps.Inventories)
	err := c.sync(context.Background(), syncContext{factoryContext(f), streamKey(f.inv.ImageStreamNames()[0]), &recordingQueue{}})
	if err == nil {
		t.Error("a Config read that failed: no error")
	}
	if got := f.writes(); len(got) != 0 {
		t.Errorf("wrote %s after the Config read failed", describe(got))
	}
}

// failingConfigs is a Config lister whose reads fail.
type failingConfigs struct{}

func (failingConfigs) List(labels.Selector) ([]*samplesv1.Config, error) {
	return nil, errors.New("read failed")
}
func (failingConfigs) Get(string) (*samplesv1.Config, error) { return nil, errors.New("read failed") }

// TestAllKeysAlternatesTheKindsAndAddsOwnedAndRefusedSamples: every sample the Config may
// concern, each once: the inventory's, alternating the kinds; live samples labelled as the
// operator's (not others); samples whose write was refused. Without a Config, none.
func TestAllKeysAlternatesTheKindsAndAddsOwnedAndRefusedSamples(t *testing.T) {
	owned := func(o metav1.Object, name string, managed string) {
		o.SetName(name)
		o.SetNamespace(names.SamplesNamespace)
		o.SetLabels(map[string]string{desired.ManagedLabel: managed})
	}
	retiredStream, foreignStream, retiredTemplate := &imagev1.ImageStream{}, &imagev1.ImageStream{}, &templatev1.Template{}
	owned(retiredStream, "retired-stream", "true")
	owned(foreignStream, "foreign-stream", "false")
	owned(retiredTemplate, "retired-template", "true")
	f := newFixture(t, managedConfig(), retiredStream, foreignStream, retiredTemplate)
	f.deps.Refusals.Refused(samplewriter.TemplateKind, "refused-template", "create", "d", refusal.Refusal{Code: 403, Message: "quota"})
	f.deps.Refusals.Refused(samplewriter.ImageStreamKind, "retired-stream", "create", "d", refusal.Refusal{Code: 403, Message: "quota"})

	streams, templates := f.inv.ImageStreamNames(), f.inv.TemplateNames()
	var want []string
	for i := 0; i < len(streams) || i < len(templates); i++ {
		if i < len(streams) {
			want = append(want, streamKey(streams[i]))
		}
		if i < len(templates) {
			want = append(want, templateKey(templates[i]))
		}
	}
	want = append(want, streamKey("retired-stream"), templateKey("retired-template"), templateKey("refused-template"))
	if got := f.c.allKeys(nil); !same(got, want) {
		t.Errorf("all keys:\n%s\nwant\n%s", strings.Join(got, " "), strings.Join(want, " "))
	}

	// More templates than streams: the templates go on alone after the last stream.
	short, err := inventory.Load(fstest.MapFS{
		"x/s/imagestreams/s.json": &fstest.MapFile{Data: []byte(`{"kind":"ImageStream","apiVersion":"image.openshift.io/v1","metadata":{"name":"s"},"spec":{"tags":[{"name":"1","from":{"kind":"DockerImage","name":"registry.redhat.io/ubi9/s:1"}}]}}`)},
		"x/s/templates/t1.json":   &fstest.MapFile{Data: []byte(`{"kind":"Template","apiVersion":"template.openshift.io/v1","metadata":{"name":"t1"},"objects":[{"apiVersion":"v1","kind":"Service","metadata":{"name":"t1"}}]}`)},
		"x/s/templates/t2.json":   &fstest.MapFile{Data: []byte(`{"kind":"Template","apiVersion":"template.openshift.io/v1","metadata":{"name":"t2"},"objects":[{"apiVersion":"v1","kind":"Service","metadata":{"name":"t2"}}]}`)},
	}, "x")
	if err != nil {
		t.Fatal(err)
	}
	fewer := newFixtureOver(t, configspectest.X86Only{Inventory: short}, managedConfig())
	if got, want := fewer.c.allKeys(nil), []string{streamKey("s"), templateKey("t1"), templateKey("t2")}; !same(got, want) {
		t.Errorf("one stream, two templates: %s, want %s", describe(got), describe(want))
	}

	none := newFixture(t, nil, retiredStream)
	if got := none.c.allKeys(nil); len(got) != 0 {
		t.Errorf("without a Config: %s, want none", describe(got))
	}
}

// TestAnEditIsRevertedToldAndCountedAgainstTheBudget: an admin's edits of a field the operator
// manages are put back, each told by an Event; past the budget, the next revert waits, is told
// once, is counted, and comes back when the budget allows.
func TestAnEditIsRevertedToldAndCountedAgainstTheBudget(t *testing.T) {
	f := newFixture(t, managedConfig())
	name := f.inv.ImageStreamNames()[0]
	key := streamKey(name)
	if got := f.settle(t, key); !same(got, []string{"create imagestreams/" + name}) {
		t.Fatalf("first sync wrote %s", describe(got))
	}
	f.events()
	if got := f.sync(t, key); len(got) != 0 || len(f.writes()) != 0 {
		t.Fatalf("a sample as wanted: queued %v, wrote something", got)
	}
	wanted := f.stream(t, name).Spec.Tags[0].From.Name
	edit := func(is *imagev1.ImageStream) { is.Spec.Tags[0].From.Name = "example.com/someone/else:1" }
	for i := 1; i <= samplewriter.RevertBudget; i++ {
		f.editStream(t, name, edit)
		if got := f.settle(t, key); !same(got, []string{"update imagestreams/" + name}) {
			t.Fatalf("revert %d: wrote %s", i, describe(got))
		}
		if got := f.stream(t, name).Spec.Tags[0].From.Name; got != wanted {
			t.Fatalf("revert %d left from %q, want %q", i, got, wanted)
		}
		if got := f.events(); !same(got, []string{"SampleReverted"}) {
			t.Errorf("revert %d told %s, want SampleReverted", i, describe(got))
		}
	}
	for i := range 2 {
		f.editStream(t, name, edit)
		queued := f.sync(t, key)
		if got := f.writes(); len(got) != 0 {
			t.Fatalf("over the budget (%d): wrote %s", i, describe(got))
		}
		if len(queued) != 1 || queued[0].key != key || queued[0].after <= 0 || queued[0].after > time.Hour {
			t.Errorf("over the budget (%d): queued %v, want the key again once the budget allows", i, queued)
		}
		want := []string{"SampleRevertBudgetExceeded"}
		if i > 0 {
			want = nil
		}
		if got := f.events(); !same(got, want) {
			t.Errorf("over the budget (%d): told %s, want %s", i, describe(got), describe(want))
		}
	}
	if !same(f.overBudget, []string{"ImageStream/" + name, "ImageStream/" + name}) {
		t.Errorf("counted over budget: %v, want the stream twice", f.overBudget)
	}
}

// TestAnUpdateThatFollowsTheConfigIsNoRevert: the operator's own writes follow the Config (a
// skip labels the sample unmanaged, an unskip takes it back); neither is told as a revert.
func TestAnUpdateThatFollowsTheConfigIsNoRevert(t *testing.T) {
	f := newFixture(t, managedConfig())
	name := f.inv.ImageStreamNames()[0]
	key := streamKey(name)
	f.settle(t, key)
	f.events()

	f.setConfig(t, func(c *samplesv1.Config) { c.Spec.SkippedImagestreams = []string{name} })
	if got := f.settle(t, key); !same(got, []string{"update imagestreams/" + name}) {
		t.Fatalf("skipped: wrote %s", describe(got))
	}
	if got := f.stream(t, name).Labels[desired.ManagedLabel]; got != "false" {
		t.Errorf("skipped: labelled %s=%q, want false", desired.ManagedLabel, got)
	}
	if got := f.events(); !same(got, []string{"SampleSkipped"}) {
		t.Errorf("skipped: told %s, want SampleSkipped", describe(got))
	}

	f.setConfig(t, func(c *samplesv1.Config) { c.Spec.SkippedImagestreams = nil })
	if got := f.settle(t, key); !same(got, []string{"update imagestreams/" + name}) {
		t.Fatalf("unskipped: wrote %s", describe(got))
	}
	if got := f.stream(t, name).Labels[desired.ManagedLabel]; got != "true" {
		t.Errorf("unskipped: labelled %s=%q, want true", desired.ManagedLabel, got)
	}
	if got := f.events(); len(got) != 0 {
		t.Errorf("unskipped: told %s, want nothing (no revert)", describe(got))
	}

	f.setConfig(t, func(c *samplesv1.Config) { c.Spec.SamplesRegistry = "mirror.example.com" })
	if got := f.settle(t, key); !same(got, []string{"update imagestreams/" + name}) {
		t.Fatalf("new registry: wrote %s", describe(got))
	}
	var pulled []string
	for _, tag := range f.stream(t, name).Spec.Tags {
		if tag.From != nil && tag.From.Kind == "DockerImage" {
			pulled = append(pulled, tag.From.Name)
		}
	}
	if len(pulled) == 0 || !strings.HasPrefix(pulled[0], "mirror.example.com/") {
		t.Errorf("new registry: pulled from %v", pulled)
	}
	if got := f.events(); len(got) != 0 {
		t.Errorf("new registry: told %s, want nothing (no revert)", describe(got))
	}
}

// TestRemovedDeletesTheOperatorsSamplesAsDecided: Removed deletes each sample the operator
// labelled as its own, on the decision's object (UID and resourceVersion as preconditions).
func TestRemovedDeletesTheOperatorsSamplesAsDecided(t *testing.T) {
	f := newFixture(t, managedConfig())
	name := f.inv.ImageStreamNames()[0]
	key := streamKey(name)
	f.settle(t, key)
	live := f.stream(t, name)
	f.setConfig(t, func(c *samplesv1.Config) { c.Spec.ManagementState = operatorv1.Removed })
	f.sync(t, key)
	var deletes []clienttesting.DeleteActionImpl
	for _, a := range f.images.Actions() {
		if d, ok := a.(clienttesting.DeleteActionImpl); ok {
			deletes = append(deletes, d)
		}
	}
	if len(deletes) != 1 || deletes[0].Name != name {
		t.Fatalf("Removed: deletes %v, want %s", deletes, name)
	}
	pre := deletes[0].DeleteOptions.Preconditions
	if pre == nil || pre.ResourceVersion == nil || *pre.ResourceVersion != live.ResourceVersion {
		t.Errorf("the delete's preconditions %+v, want resourceVersion %s", pre, live.ResourceVersion)
	}
}

// TestARefusedWriteWaitsItsTurnAndIsToldOnce: the server refuses a create (a quota): the refusal
// is told once, the key comes back after the backoff, a sync before then sends nothing, and the
// write accepted after a retry-now is told as accepted again.
func TestARefusedWriteWaitsItsTurnAndIsToldOnce(t *testing.T) {
	f := newFixture(t, managedConfig())
	name := f.inv.ImageStreamNames()[0]
	key := streamKey(name)
	refusing := true
	f.images.PrependReactor("create", "imagestreams", func(clienttesting.Action) (bool, runtime.Object, error) {
		if refusing {
			return true, nil, apierrors.NewForbidden(schema.GroupResource{Group: "image.openshift.io", Resource: "imagestreams"}, name, errors.New("exceeded quota: openshift-quota"))
		}
		return false, nil, nil
	})
	queued := f.sync(t, key)
	if got := f.writes(); !same(got, []string{"create imagestreams/" + name}) {
		t.Fatalf("first sync wrote %s", describe(got))
	}
	if len(queued) != 1 || queued[0].key != key || queued[0].after <= 0 {
		t.Errorf("refused: queued %v, want the key after its backoff", queued)
	}
	if got := f.events(); !same(got, []string{"SampleWritesRefused"}) {
		t.Errorf("refused: told %s", describe(got))
	}
	queued = f.sync(t, key)
	if got := f.writes(); len(got) != 0 {
		t.Errorf("within the backoff: wrote %s", describe(got))
	}
	if len(queued) != 1 || queued[0].key != key || queued[0].after <= 0 {
		t.Errorf("within the backoff: queued %v, want the key when the backoff ends", queued)
	}
	if got := f.events(); len(got) != 0 {
		t.Errorf("within the backoff: told %s", describe(got))
	}
	refusing = false
	f.deps.Refusals.RetryNow()
	f.sync(t, key)
	if got := f.writes(); !same(got, []string{"create imagestreams/" + name}) {
		t.Fatalf("after retry-now: wrote %s", describe(got))
	}
	if got := f.events(); !same(got, []string{"SampleWritesAccepted"}) {
		t.Errorf("accepted again: told %s", describe(got))
	}
}

// TestAnErrorThatIsNoRefusalGoesToTheQueue: an error the refusals do not cover (a server that
// does not answer) is returned to the queue's rate limiter.
func TestAnErrorThatIsNoRefusalGoesToTheQueue(t *testing.T) {
	f := newFixture(t, managedConfig())
	f.images.PrependReactor("create", "imagestreams", func(clienttesting.Action) (bool, runtime.Object, error) {
		return true, nil, errors.New("connection refused")
	})
	err := f.c.sync(context.Background(), syncContext{factoryContext(f), streamKey(f.inv.ImageStreamNames()[0]), &recordingQueue{}})
	if err == nil || !strings.Contains(err.Error(), "connection refused") {
		t.Errorf("sync: %v, want the write's error", err)
	}
}

// TestTheServersVersionOfAFieldIsLearnedAndToldOnce: the server changes a field the operator
// sets as it creates the sample; the operator tells it once, counts it, and takes the server's
// version as in sync.
func TestTheServersVersionOfAFieldIsLearnedAndToldOnce(t *testing.T) {
	f := newFixture(t, managedConfig())
	name := f.inv.ImageStreamNames()[0]
	key := streamKey(name)
	f.images.PrependReactor("create", "imagestreams", normalizeLookupPolicy)
	f.settle(t, key)
	if got := f.events(); !same(got, []string{"SampleNormalizedByServer"}) {
		t.Errorf("normalized: told %s", describe(got))
	}
	if !same(f.normalized, []string{"ImageStream/" + name + " spec.lookupPolicy"}) {
		t.Errorf("counted %v", f.normalized)
	}
	f.sync(t, key)
	if got := f.writes(); len(got) != 0 {
		t.Errorf("the server's version: wrote %s again", describe(got))
	}
	if got := f.events(); len(got) != 0 {
		t.Errorf("the server's version: told %s again", describe(got))
	}
}

// TestATemplateIsUpdatedFromTheServersWholeCopy: the cache keeps digests of a template, so a
// revert reads the template whole from the server and writes it without the cache's digests.
func TestATemplateIsUpdatedFromTheServersWholeCopy(t *testing.T) {
	f := newFixture(t, managedConfig())
	name := f.inv.TemplateNames()[0]
	key := templateKey(name)
	f.settle(t, key)
	f.editTemplate(t, name, func(tpl *templatev1.Template) { tpl.Message = "someone's message" })
	if got := f.settle(t, key); !same(got, []string{"get templates/" + name, "update templates/" + name}) {
		t.Fatalf("revert: %s, want a get and an update", describe(got))
	}
	live := f.template(t, name)
	if live.Message == "someone's message" {
		t.Error("the message was not put back")
	}
	if _, ok := live.Annotations[desired.ContentDigestAnnotation]; ok || len(live.Objects) == 0 {
		t.Errorf("the update was built from the cache's summary: annotations %v, %d objects", live.Annotations, len(live.Objects))
	}
}

// TestASampleGoneWhileReadIsLeftToItsDeleteEvent: the server copy is gone when read: nothing
// is written and no error returned (the delete's event brings the sample back).
func TestASampleGoneWhileReadIsLeftToItsDeleteEvent(t *testing.T) {
	f := newFixture(t, managedConfig())
	name := f.inv.TemplateNames()[0]
	key := templateKey(name)
	f.settle(t, key)
	f.editTemplate(t, name, func(tpl *templatev1.Template) { tpl.Message = "someone's message" })
	f.templates.PrependReactor("get", "templates", func(clienttesting.Action) (bool, runtime.Object, error) {
		return true, nil, apierrors.NewNotFound(templatev1.Resource("templates"), name)
	})
	if got := f.settle(t, key); !same(got, []string{"get templates/" + name}) {
		t.Errorf("gone: %s, want the get alone", describe(got))
	}
	f.templates.PrependReactor("get", "templates", func(clienttesting.Action) (bool, runtime.Object, error) {
		return true, nil, errors.New("connection refused")
	})
	err := f.c.sync(context.Background(), syncContext{factoryContext(f), key, &recordingQueue{}})
	if err == nil || !strings.Contains(err.Error(), "connection refused") {
		t.Errorf("a failed read: %v, want its error", err)
	}
}

// TestWithoutARecordTheOwnersOfTheFieldsTellARevert: a sample this process never wrote (after a
// restart) differs from what the Config asks. Another manager owning a changed field proves an
// edit: a revert. The operator's own ownership is an earlier write of its own being followed,
// and so is a difference only in fields admins may set.
func TestWithoutARecordTheOwnersOfTheFieldsTellARevert(t *testing.T) {
	first := newFixture(t, managedConfig())
	name := first.inv.ImageStreamNames()[0]
	first.settle(t, streamKey(name))
	written := first.stream(t, name)
	tag := written.Spec.Tags[0].Name
	ownership := func(manager string) []metav1.ManagedFieldsEntry {
		return []metav1.ManagedFieldsEntry{{Manager: manager, Operation: metav1.ManagedFieldsOperationUpdate,
			FieldsV1: &metav1.FieldsV1{Raw: []byte(`{"f:spec":{"f:tags":{"k:{\"name\":\"` + tag + `\"}":{"f:from":{}}}}}`)}}}
	}
	for _, tc := range []struct {
		name    string
		manager string
		revert  bool
	}{
		{"someone's edit", "kubectl-edit", true},
		{"the operator's own earlier write", samplewriter.FieldManager, false},
	} {
		live := written.DeepCopy()
		live.Spec.Tags[0].From.Name = "example.com/earlier:1"
		live.ManagedFields = ownership(tc.manager)
		f := newFixture(t, managedConfig(), live)
		if got := f.settle(t, streamKey(name)); !same(got, []string{"get imagestreams/" + name, "update imagestreams/" + name}) {
			t.Fatalf("%s: %s, want a get and an update", tc.name, describe(got))
		}
		if f.stream(t, name).ManagedFields != nil {
			t.Errorf("%s: the update sent the managedFields it read", tc.name)
		}
		var want []string
		if tc.revert {
			want = []string{"SampleReverted"}
		}
		if got := f.events(); !same(got, want) {
			t.Errorf("%s: told %s, want %s", tc.name, describe(got), describe(want))
		}
	}
}

// TestAManagedSampleTheInventoryNoLongerHasIsRetired: a live sample labelled as the operator's
// that the inventory lacks is marked retired, as following the new inventory, not reverted.
func TestAManagedSampleTheInventoryNoLongerHasIsRetired(t *testing.T) {
	retired := &imagev1.ImageStream{ObjectMeta: metav1.ObjectMeta{Name: "retired-stream", Namespace: names.SamplesNamespace, ResourceVersion: "5",
		Labels: map[string]string{desired.ManagedLabel: "true"}}}
	f := newFixture(t, managedConfig(), retired)
	// Never written by this process: read whole, for its managedFields.
	if got := f.settle(t, streamKey("retired-stream")); !same(got, []string{"get imagestreams/retired-stream", "update imagestreams/retired-stream"}) {
		t.Fatalf("retired: wrote %s", describe(got))
	}
	if _, ok := f.stream(t, "retired-stream").Annotations[desired.RetiredAnnotation]; !ok {
		t.Errorf("not marked retired: %v", f.stream(t, "retired-stream").Annotations)
	}
	if got := f.events(); len(got) != 0 {
		t.Errorf("retired: told %s, want nothing", describe(got))
	}
	f.sync(t, streamKey("retired-stream"))
	if got := f.writes(); len(got) != 0 {
		t.Errorf("retired once: wrote %s again", describe(got))
	}
}

// TestAVerdictIsWrittenOnTheSample: a changed verdict is written by an update of the marks
// alone, which is no revert.
func TestAVerdictIsWrittenOnTheSample(t *testing.T) {
	f := newFixture(t, managedConfig())
	name := f.inv.TemplateNames()[0]
	key := templateKey(name)
	f.settle(t, key)
	f.events()
	f.verdicts.set(samplewriter.TemplateKind, name, desired.Marks{"": {Reason: "creates build.openshift.io/v1 BuildConfig, which this cluster does not serve", Hide: true}})
	if got := f.settle(t, key); !slices.Contains(got, "update templates/"+name) {
		t.Fatalf("a new verdict: wrote %s", describe(got))
	}
	if got := f.template(t, name).Annotations[desired.UnusableAnnotation]; !strings.Contains(got, "BuildConfig") {
		t.Errorf("the mark written: %q", got)
	}
	if got := f.events(); len(got) != 0 {
		t.Errorf("a mark: told %s, want nothing", describe(got))
	}
}

// normalizeLookupPolicy plays a server that turns the lookup policy the operator writes.
func normalizeLookupPolicy(a clienttesting.Action) (bool, runtime.Object, error) {
	is := a.(clienttesting.CreateAction).GetObject().(*imagev1.ImageStream)
	is.Spec.LookupPolicy.Local = !is.Spec.LookupPolicy.Local
	return false, nil, nil
}
