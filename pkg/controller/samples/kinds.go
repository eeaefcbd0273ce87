package samples

import (
	imagev1 "github.com/openshift/api/image/v1"
	samplesv1 "github.com/openshift/api/samples/v1"
	templatev1 "github.com/openshift/api/template/v1"

	"github.com/samples-operator-dev/cluster-samples-operator/pkg/configspec"
	"github.com/samples-operator-dev/cluster-samples-operator/pkg/controller/ownwrites"
	"github.com/samples-operator-dev/cluster-samples-operator/pkg/desired"
	"github.com/samples-operator-dev/cluster-samples-operator/pkg/inventory"
)

// kind is what reconcile needs to know of a kind of sample.
type kind[P desired.Object[P]] interface {
	// cached reads the sample from the informer cache, or the writer's last create or update of
	// it when the informer does not show that yet; unseen: a create the informer does not show.
	cached(name string) (obj P, unseen bool, err error)
	// wrote shows the server's answer to a create or update to cached until the informer does.
	wrote(got P)
	// want is the sample the Config asks for, made for choice, and whether the Config skips it.
	want(spec *samplesv1.ConfigSpec, choice desired.Choice, inv *inventory.Inventory, name string) (want P, skipped bool)
	// retire is the write that retires a managed sample the inventory of version no longer has.
	retire(live P, version string) desired.Action[P]
	// markUnshipped adds to action the marks of what of live want does not ship (want absent:
	// a retired sample), which want cannot carry (desired.MarkUnshipped).
	markUnshipped(action desired.Action[P], want, live P, marks desired.Marks) desired.Action[P]
	decide(mode desired.Mode, want P, skipped bool, live P) desired.Action[P]
	// settled: live is what the server made of the operator's last write of want (answer).
	settled(live, want P, answer *desired.Answer[P]) bool
	answerFor(want, got P) *desired.Answer[P]
	// frozen: the write would be refused whatever the operator does (the import allow-list), so
	// the sample is left as it is; the status controller names it.
	frozen(eval configspec.Evaluation, name string, live P) bool
	// summary: the cached object keeps only digests of what the operator owns, and an update
	// must be built from the whole object, read from the server.
	summary(live P) bool
	// fromServer prepares an object read from the server to be decided on and written.
	fromServer(obj P)
}

type imageStreams struct {
	cache *ownwrites.Cache[*imagev1.ImageStream]
}

func (k imageStreams) cached(name string) (*imagev1.ImageStream, bool, error) {
	return k.cache.Get(name)
}

// wrote keeps a copy: the answer is also the server's, learned from (run.learn).
func (k imageStreams) wrote(got *imagev1.ImageStream) { k.cache.Wrote(got.DeepCopy()) }

func (imageStreams) want(spec *samplesv1.ConfigSpec, choice desired.Choice, inv *inventory.Inventory, name string) (*imagev1.ImageStream, bool) {
	want, skipped, _ := desired.ImageStream(spec, choice, inv, name)
	return want, skipped
}

func (imageStreams) retire(live *imagev1.ImageStream, version string) desired.ImageStreamAction {
	return desired.RetireImageStream(live, version)
}

func (imageStreams) markUnshipped(action desired.ImageStreamAction, want, live *imagev1.ImageStream, marks desired.Marks) desired.ImageStreamAction {
	return desired.MarkUnshipped(action, want, live, marks)
}

func (imageStreams) decide(mode desired.Mode, want *imagev1.ImageStream, skipped bool, live *imagev1.ImageStream) desired.ImageStreamAction {
	return desired.ForImageStream(mode, want, skipped, live)
}

func (imageStreams) settled(live, want *imagev1.ImageStream, answer *desired.ImageStreamAnswer) bool {
	return desired.ImageStreamSettled(live, want, answer)
}

func (imageStreams) answerFor(want, got *imagev1.ImageStream) *desired.ImageStreamAnswer {
	return desired.AnswerForImageStream(want, got)
}

func (imageStreams) frozen(eval configspec.Evaluation, name string, live *imagev1.ImageStream) bool {
	if _, refused := eval.RefusedOnCreate[name]; !refused || eval.Mode != desired.Managed {
		return false
	}
	_, blocked := eval.Blocks(name, live)
	return blocked
}

func (imageStreams) summary(*imagev1.ImageStream) bool { return false }

type templates struct {
	cache *ownwrites.Cache[*templatev1.Template]
}

func (k templates) cached(name string) (*templatev1.Template, bool, error) { return k.cache.Get(name) }

// wrote keeps a trimmed copy, as the informer keeps templates (desired.TrimTemplate).
func (k templates) wrote(got *templatev1.Template) {
	trimmed := got.DeepCopy()
	desired.TrimTemplate(trimmed)
	k.cache.Wrote(trimmed)
}

func (templates) retire(live *templatev1.Template, version string) desired.TemplateAction {
	return desired.RetireTemplate(live, version)
}

// markUnshipped: an inventory template's mark is want's; a retired one's is its own.
func (templates) markUnshipped(action desired.TemplateAction, _, live *templatev1.Template, marks desired.Marks) desired.TemplateAction {
	return desired.MarkRetiredTemplate(action, live, marks)
}

func (templates) want(spec *samplesv1.ConfigSpec, choice desired.Choice, inv *inventory.Inventory, name string) (*templatev1.Template, bool) {
	want, skipped, _ := desired.Template(spec, choice, inv, name)
	return want, skipped
}

func (templates) decide(mode desired.Mode, want *templatev1.Template, skipped bool, live *templatev1.Template) desired.TemplateAction {
	return desired.ForTemplate(mode, want, skipped, live)
}

func (templates) settled(live, want *templatev1.Template, answer *desired.TemplateAnswer) bool {
	return desired.TemplateSettled(live, want, answer)
}

func (templates) answerFor(want, got *templatev1.Template) *desired.TemplateAnswer {
	return desired.AnswerForTemplate(want, got)
}

func (templates) frozen(configspec.Evaluation, string, *templatev1.Template) bool { return false }

func (templates) summary(live *templatev1.Template) bool { return desired.IsTrimmed(live) }

func (imageStreams) fromServer(*imagev1.ImageStream) {}

// fromServer: a template read from the server is whole whatever it carries (the cache's digest
// key is the operator's, and an update built from it is written without the key).
func (templates) fromServer(t *templatev1.Template) { desired.DropContentDigest(t) }
