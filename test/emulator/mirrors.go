package emulator

import (
	"fmt"
	"slices"
	"strings"

	configclient "github.com/openshift/client-go/config/clientset/versioned"
	configinformers "github.com/openshift/client-go/config/informers/externalversions"
	operatorclient "github.com/openshift/client-go/operator/clientset/versioned"
	operatorinformers "github.com/openshift/client-go/operator/informers/externalversions"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/cache"

	"github.com/samples-operator-dev/cluster-samples-operator/pkg/mirrorsets"
)

// internalErrorReason and internalErrorPrefix are how openshift-apiserver reports an import
// error that is no API status (a registry that cannot be reached, several failures at once).
const (
	internalErrorReason = "InternalError"
	internalErrorPrefix = "Internal error occurred: "
)

// mirrorSets are the informers of the cluster's mirror sets, read at every import as the real
// server reads its listers.
type mirrorSets struct {
	config   configinformers.SharedInformerFactory
	operator operatorinformers.SharedInformerFactory
	synced   []cache.InformerSynced
	list     func() mirrorsets.Sets
}

// ResolveMirrorSets makes every import go through the cluster's ImageTagMirrorSets,
// ImageDigestMirrorSets and ImageContentSourcePolicies, as openshift-apiserver resolves an
// ImageStreamImport (pkg/mirrorsets.Resolver): the mirrors of the reference are tried in order,
// then the reference itself, each judged by the failure rules; the first that does not fail
// imports. When all fail, one failure is reported as its rule says and several as the server
// aggregates them: reason InternalError, "Internal error occurred: [first, second]". It must be
// called before Run; cfg may read the three kinds.
func (e *Emulator) ResolveMirrorSets(cfg *rest.Config) error {
	configs, err := configclient.NewForConfig(cfg)
	if err != nil {
		return err
	}
	operators, err := operatorclient.NewForConfig(cfg)
	if err != nil {
		return err
	}
	m := &mirrorSets{
		config:   configinformers.NewSharedInformerFactory(configs, 0),
		operator: operatorinformers.NewSharedInformerFactory(operators, 0),
	}
	itms := m.config.Config().V1().ImageTagMirrorSets()
	idms := m.config.Config().V1().ImageDigestMirrorSets()
	icsp := m.operator.Operator().V1alpha1().ImageContentSourcePolicies()
	m.synced = []cache.InformerSynced{itms.Informer().HasSynced, idms.Informer().HasSynced, icsp.Informer().HasSynced}
	m.list = func() mirrorsets.Sets {
		var s mirrorsets.Sets
		s.Tag, _ = itms.Lister().List(labels.Everything())
		s.Digest, _ = idms.Lister().List(labels.Everything())
		s.ContentPolicy, _ = icsp.Lister().List(labels.Everything())
		return s
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.running {
		return fmt.Errorf("import emulator: ResolveMirrorSets after Run")
	}
	e.mirrors = m
	return nil
}

func (m *mirrorSets) start(stop <-chan struct{}) {
	m.config.Start(stop)
	m.operator.Start(stop)
}

func (m *mirrorSets) shutdown() {
	m.config.Shutdown()
	m.operator.Shutdown()
}

func (m *mirrorSets) hasSynced() bool {
	for _, s := range m.synced {
		if !s() {
			return false
		}
	}
	return true
}

// pullSources lists where an import of a reference looks for it through r: its mirrors in order,
// then the reference itself.
func pullSources(r *mirrorsets.Resolver) func(ref string) []string {
	return func(ref string) []string { return append(r.Resolve(ref).Mirrors, ref) }
}

// judge tells whether importing ref fails under r: at ref alone, or, with mirror sets, at its
// pull sources in order (the mirrors, then ref).
func (r rules) judge(ref string) outcome {
	if r.pullSources == nil {
		return r.evaluate(ref)
	}
	sources := r.pullSources(ref)
	if len(sources) <= 1 {
		return r.evaluate(ref)
	}
	var causes []string
	for i, source := range sources {
		if i == len(sources)-1 {
			source = ref // the reference itself, as written
		}
		o := r.evaluate(source)
		if !o.fail {
			return o
		}
		if cause := o.cause(); !slices.Contains(causes, cause) {
			causes = append(causes, cause)
		}
	}
	// utilerrors.NewAggregate's message: one distinct error alone, several in brackets.
	msg := causes[0]
	if len(causes) > 1 {
		msg = "[" + strings.Join(causes, ", ") + "]"
	}
	return outcome{fail: true, reason: internalErrorReason, message: internalErrorPrefix + msg}
}

// cause is the error behind a failed outcome, as the server aggregates it: a status message as
// it is, an internal error without the prefix the server adds when it reports one alone.
func (o outcome) cause() string {
	if o.reason == internalErrorReason {
		return strings.TrimPrefix(o.message, internalErrorPrefix)
	}
	return o.message
}
