package samplewriter

import (
	"sync"

	imagev1 "github.com/openshift/api/image/v1"
	templatev1 "github.com/openshift/api/template/v1"

	"github.com/samples-operator-dev/cluster-samples-operator/pkg/desired"
)

// Answers keeps, per sample name, what the API server made of the operator's last write of it
// when that differs from what was written (desired.Answer). The samples controller fills it; the
// samples and status controllers consult it, so that neither takes a server's normalization for
// drift.
type Answers[P any] struct {
	mu       sync.Mutex
	byName   map[string]*desired.Answer[P]
	reported map[string]bool // name + "\x00" + field, for fields already reported
	version  uint64
}

// NewAnswers returns an empty store.
func NewAnswers[P any]() *Answers[P] {
	return &Answers[P]{byName: map[string]*desired.Answer[P]{}, reported: map[string]bool{}}
}

// Get returns the answer kept for name, nil if none.
func (a *Answers[P]) Get(name string) *desired.Answer[P] {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.byName[name]
}

// Set keeps answer for name (nil forgets it) and returns the fields of answer not reported
// before for that name: each normalization is reported once, not at every write that meets it.
func (a *Answers[P]) Set(name string, answer *desired.Answer[P]) (newFields []string) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if answer == nil {
		if _, ok := a.byName[name]; ok {
			delete(a.byName, name)
			a.version++
		}
		return nil
	}
	a.byName[name] = answer
	a.version++
	for _, f := range answer.Fields {
		if key := name + "\x00" + f; !a.reported[key] {
			a.reported[key] = true
			newFields = append(newFields, f)
		}
	}
	return newFields
}

// Version changes whenever an answer is kept or forgotten, so that a verdict computed with the
// store as it was can be told apart.
func (a *Answers[P]) Version() uint64 {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.version
}

// ServerAnswers are the stores of both kinds of sample.
type ServerAnswers struct {
	ImageStreams *Answers[*imagev1.ImageStream]
	Templates    *Answers[*templatev1.Template]
}

// NewServerAnswers returns empty stores.
func NewServerAnswers() *ServerAnswers {
	return &ServerAnswers{ImageStreams: NewAnswers[*imagev1.ImageStream](), Templates: NewAnswers[*templatev1.Template]()}
}

// Version changes whenever either store changes.
func (s *ServerAnswers) Version() uint64 {
	return s.ImageStreams.Version() + s.Templates.Version()
}
