package operator

import (
	"context"
	"fmt"

	"github.com/openshift/library-go/pkg/operator/events"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/kubernetes/scheme"
	corev1client "k8s.io/client-go/kubernetes/typed/core/v1"
	"k8s.io/client-go/tools/record"
)

// eventRecorder is the operator's events.Recorder: every controller's events go through one
// client-go broadcaster, so they are still correlated (repeats counted, floods throttled) as
// library-go's kube recorder does. That recorder starts a broadcaster of its own, with three
// goroutines, a 1000-event queue and an event correlator, for the root recorder and again for
// each controller's component suffix: eight of them in this operator, for one stream of events.
type eventRecorder struct {
	broadcaster record.EventBroadcaster
	recorder    record.EventRecorder
	component   string
	involved    *corev1.ObjectReference
	root        bool
}

var _ events.Recorder = (*eventRecorder)(nil)

// newEventRecorder starts the broadcaster; Shutdown on the returned recorder flushes and stops
// it. Events are logged as they are sent, as library-go's recorder logs them.
func newEventRecorder(client corev1client.EventInterface, component string, involved *corev1.ObjectReference) *eventRecorder {
	// The default spam filter lets 25 events through per source and involved object, then one
	// per five minutes: every event of this operator has one involved object, so a burst (a
	// takeover, an admin script editing many samples) silenced reverts and import retries for
	// minutes. library-go's options for cluster singletons allow 60, then one a second.
	broadcaster := record.NewBroadcasterWithCorrelatorOptions(events.RecommendedClusterSingletonCorrelatorOptions())
	broadcaster.StartStructuredLogging(0)
	broadcaster.StartRecordingToSink(&corev1client.EventSinkImpl{Interface: client})
	r := (&eventRecorder{broadcaster: broadcaster, involved: involved}).forComponent(component)
	r.root = true
	return r
}

func (r *eventRecorder) forComponent(component string) *eventRecorder {
	return &eventRecorder{
		broadcaster: r.broadcaster,
		recorder:    r.broadcaster.NewRecorder(scheme.Scheme, corev1.EventSource{Component: component}),
		component:   component,
		involved:    r.involved,
	}
}

func (r *eventRecorder) ForComponent(component string) events.Recorder {
	return r.forComponent(component)
}

func (r *eventRecorder) WithComponentSuffix(suffix string) events.Recorder {
	return r.forComponent(r.component + "-" + suffix)
}

// WithContext returns the recorder unchanged: the broadcaster sends events with a context of
// its own, which Shutdown ends.
func (r *eventRecorder) WithContext(context.Context) events.Recorder { return r }

func (r *eventRecorder) ComponentName() string { return r.component }

func (r *eventRecorder) Event(reason, message string) {
	r.recorder.Event(r.involved, corev1.EventTypeNormal, reason, message)
}

func (r *eventRecorder) Eventf(reason, format string, args ...interface{}) {
	r.Event(reason, fmt.Sprintf(format, args...))
}

func (r *eventRecorder) Warning(reason, message string) {
	r.recorder.Event(r.involved, corev1.EventTypeWarning, reason, message)
}

func (r *eventRecorder) Warningf(reason, format string, args ...interface{}) {
	r.Warning(reason, fmt.Sprintf(format, args...))
}

// Shutdown sends what is queued and stops the broadcaster; only the recorder that started it
// does, since every component's recorder shares it.
func (r *eventRecorder) Shutdown() {
	if r.root {
		r.broadcaster.Shutdown()
	}
}
