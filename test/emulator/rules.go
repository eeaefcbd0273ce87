package emulator

import "maps"

// DefaultFailureReason is the condition reason used for a failed import when a
// rule does not name one. The real importer reports a missing image this way.
const DefaultFailureReason = "NotFound"

// outcome is what a rule decides about one reference.
type outcome struct {
	fail    bool
	reason  string
	message string
}

// Matcher decides whether an import of ref fails, and with which message.
type Matcher func(ref string) (message string, fail bool)

// rules is an immutable snapshot of the failure rules that apply to an import.
// Exact entries win over matchers; matchers are consulted in the order they
// were added and the first that fails the reference decides.
type rules struct {
	exact    map[string]outcome
	matchers []Matcher
	// pullSources lists where an import of a reference looks for it, in order, when the
	// emulator resolves through mirror sets (judge); nil otherwise.
	pullSources func(ref string) []string
}

// evaluate tells whether importing ref fails under r.
func (r rules) evaluate(ref string) outcome {
	if o, ok := r.exact[ref]; ok {
		return o
	}
	for _, m := range r.matchers {
		if m == nil {
			continue
		}
		if msg, fail := m(ref); fail {
			return outcome{fail: true, reason: DefaultFailureReason, message: msg}
		}
	}
	return outcome{}
}

// clone returns a copy that later changes to r do not affect.
func (r rules) clone() rules {
	return rules{
		exact:       maps.Clone(r.exact),
		matchers:    append([]Matcher(nil), r.matchers...),
		pullSources: r.pullSources,
	}
}
