package usabilitycontrol

import (
	"strings"
	"sync"

	"github.com/samples-operator-dev/cluster-samples-operator/pkg/desired"
	"github.com/samples-operator-dev/cluster-samples-operator/pkg/samplewriter"
	"github.com/samples-operator-dev/cluster-samples-operator/pkg/usability"
)

// Verdicts hold the last verdicts the controller made, for the controllers that act on them:
// the samples controller writes the marks, the status controller and the metrics name them.
// Safe for concurrent use.
type Verdicts struct {
	mu        sync.RWMutex
	ready     bool
	all       []usability.Verdict
	offered   map[string]bool // "Template/NAME", "ImageStreamTag/STREAM:TAG" the Config keeps offered
	listeners []func(kind, name string)
	// released are the samples the first set told of, told again to a listener that comes later.
	released [][2]string
}

// NewVerdicts holds no verdict until the controller's first sync.
func NewVerdicts() *Verdicts { return &Verdicts{} }

// Ready reports whether the first verdicts are made.
func (v *Verdicts) Ready() bool {
	v.mu.RLock()
	defer v.mu.RUnlock()
	return v.ready
}

// All returns the verdicts on the samples that cannot work here, or only partly, sorted by kind
// and name. The slice is shared: callers must not modify it.
func (v *Verdicts) All() []usability.Verdict {
	v.mu.RLock()
	defer v.mu.RUnlock()
	return v.all
}

// Offered reports whether the Config keeps the sample (kind, name as in a Verdict) offered
// whatever the verdict.
func (v *Verdicts) Offered(kind, name string) bool {
	v.mu.RLock()
	defer v.mu.RUnlock()
	return v.offered[kind+"/"+name]
}

// Marks are what the operator writes on the sample (samplewriter's kind, and the sample's name):
// for a template its own mark, for an imagestream one per tag that cannot work here.
func (v *Verdicts) Marks(kind, name string) desired.Marks {
	v.mu.RLock()
	defer v.mu.RUnlock()
	var marks desired.Marks
	for _, verdict := range v.all {
		key, ok := markKey(kind, name, verdict)
		if !ok || verdict.Usable() {
			continue
		}
		if marks == nil {
			marks = desired.Marks{}
		}
		marks[key] = desired.Mark{Reason: usability.Annotation(verdict), Hide: !v.offered[verdict.Kind+"/"+verdict.Name]}
	}
	return marks
}

// markKey is where verdict goes in the marks of the sample (kind, name), if it is that sample's.
func markKey(kind, name string, verdict usability.Verdict) (string, bool) {
	switch {
	case kind == samplewriter.TemplateKind && verdict.Kind == usability.KindTemplate:
		return "", verdict.Name == name
	case kind == samplewriter.ImageStreamKind && verdict.Kind == usability.KindImageStreamTag:
		stream, tag, _ := strings.Cut(verdict.Name, ":")
		return tag, stream == name
	}
	return "", false
}

// OnChange calls f, which must not block, with each sample whose marks a later set changes, and
// with every sample named by the first set, at once if that was made before f came: a
// controller that held its samples until then must not miss it.
func (v *Verdicts) OnChange(f func(kind, name string)) {
	v.mu.Lock()
	v.listeners = append(v.listeners, f)
	released := v.released
	v.mu.Unlock()
	for _, sample := range released {
		f(sample[0], sample[1])
	}
}

// set keeps new verdicts and tells the listeners which samples' marks changed; changed reports
// whether anything did. allSamples are every sample the Config installs (samplewriter kind and
// name), told on the first set so that the samples held until then are written.
func (v *Verdicts) set(all []usability.Verdict, offered map[string]bool, allSamples [][2]string) (changed [][2]string) {
	v.mu.Lock()
	first := !v.ready
	before := marksBySample(v.all, v.offered)
	v.all, v.offered, v.ready = all, offered, true
	if first {
		v.released = allSamples
	}
	after := marksBySample(all, offered)
	listeners := v.listeners
	v.mu.Unlock()

	if first {
		changed = allSamples
	} else {
		for sample, marks := range after {
			if before[sample] != marks {
				changed = append(changed, sample)
			}
		}
		for sample := range before {
			if _, still := after[sample]; !still {
				changed = append(changed, sample)
			}
		}
	}
	for _, sample := range changed {
		for _, f := range listeners {
			f(sample[0], sample[1])
		}
	}
	return changed
}

// marksBySample is each marked sample's (samplewriter kind, name) marks as one line.
func marksBySample(all []usability.Verdict, offered map[string]bool) map[[2]string]string {
	out := map[[2]string]string{}
	for _, verdict := range all {
		if verdict.Usable() {
			continue
		}
		sample := [2]string{samplewriter.TemplateKind, verdict.Name}
		key := ""
		if verdict.Kind == usability.KindImageStreamTag {
			stream, tag, _ := strings.Cut(verdict.Name, ":")
			sample, key = [2]string{samplewriter.ImageStreamKind, stream}, tag
		}
		hide := "hidden"
		if offered[verdict.Kind+"/"+verdict.Name] {
			hide = "offered"
		}
		out[sample] += key + "=" + hide + ":" + usability.Annotation(verdict) + "\n"
	}
	return out
}
