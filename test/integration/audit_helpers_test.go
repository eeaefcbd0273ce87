package integration

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/samples-operator-dev/cluster-samples-operator/test/controlplane"
)

// The one way the tests see what the operator asked of the API server: its requests as the audit
// log records them (kube-apiserver's, and openshift-apiserver's when that serves the samples),
// picked out by filters that compose. The helpers below only name common selections.

// requestFilter keeps the audited requests for which it returns true.
type requestFilter func(controlplane.AuditEvent) bool

// operatorRequests is the operator's audited requests that pass every filter, in log order.
func (e *env) operatorRequests(t *testing.T, filters ...requestFilter) []controlplane.AuditEvent {
	t.Helper()
	return operatorRequestsOn(t, e.cp, filters...)
}

// operatorRequestsOn is operatorRequests on a control plane that has no env.
func operatorRequestsOn(t *testing.T, cp *controlplane.ControlPlane, filters ...requestFilter) []controlplane.AuditEvent {
	t.Helper()
	return requestsOn(t, cp, controlplane.OperatorUser, filters...)
}

// everyonesRequests is operatorRequests for every user: the import controllers' and the
// admin's requests too.
func (e *env) everyonesRequests(t *testing.T, filters ...requestFilter) []controlplane.AuditEvent {
	t.Helper()
	return requestsOn(t, e.cp, "", filters...)
}

// requestsOn is the audited requests of user (every user for "") that pass every filter.
func requestsOn(t *testing.T, cp *controlplane.ControlPlane, user string, filters ...requestFilter) []controlplane.AuditEvent {
	t.Helper()
	all, err := cp.AuditEvents(user)
	if err != nil {
		t.Fatalf("reading the audit log: %v", err)
	}
	var out []controlplane.AuditEvent
next:
	for _, ev := range all {
		for _, keep := range filters {
			if !keep(ev) {
				continue next
			}
		}
		out = append(out, ev)
	}
	return out
}

// writes keeps requests that could change stored state (reviews sent as creates do not).
func writes(ev controlplane.AuditEvent) bool { return ev.IsWrite() }

// stateWrites keeps writes other than Events: those are the admin's view, not state.
func stateWrites(ev controlplane.AuditEvent) bool { return ev.IsWrite() && ev.Resource != "events" }

// onSamples keeps requests for imagestreams and templates themselves (no subresource).
func onSamples(ev controlplane.AuditEvent) bool {
	return (ev.Resource == "imagestreams" || ev.Resource == "templates") && ev.Subresource == ""
}

// carriedOut keeps requests the server did what was asked for: a 409 conflict, say, changed
// nothing.
func carriedOut(ev controlplane.AuditEvent) bool { return ev.Code < 300 }

// noSubresource keeps requests for objects themselves, not for their status or other subresources.
func noSubresource(ev controlplane.AuditEvent) bool { return ev.Subresource == "" }

func verb(verbs ...string) requestFilter {
	return func(ev controlplane.AuditEvent) bool { return slices.Contains(verbs, ev.Verb) }
}

// on keeps requests for any of the resources, whatever the subresource.
func on(resources ...string) requestFilter {
	return func(ev controlplane.AuditEvent) bool { return slices.Contains(resources, ev.Resource) }
}

func named(name string) requestFilter {
	return func(ev controlplane.AuditEvent) bool { return ev.Name == name }
}

func answered(code int) requestFilter {
	return func(ev controlplane.AuditEvent) bool { return ev.Code == code }
}

// receivedAfter keeps requests the API server received after t0: a request sent before
// something happened was not caused by it.
func receivedAfter(t0 time.Time) requestFilter {
	return func(ev controlplane.AuditEvent) bool { return ev.Received.After(t0) }
}

func receivedBefore(t0 time.Time) requestFilter {
	return func(ev controlplane.AuditEvent) bool { return ev.Received.Before(t0) }
}

// byReplica keeps the requests of one replica, whose user agent carries its identity.
func byReplica(identity string) requestFilter {
	return func(ev controlplane.AuditEvent) bool { return strings.Contains(ev.UserAgent, "("+identity+")") }
}

func not(f requestFilter) requestFilter {
	return func(ev controlplane.AuditEvent) bool { return !f(ev) }
}

// countBy counts requests by key.
func countBy(evs []controlplane.AuditEvent, key func(controlplane.AuditEvent) string) map[string]int {
	out := map[string]int{}
	for _, ev := range evs {
		out[key(ev)]++
	}
	return out
}

// byVerbAndResource is "update imagestreams", or "update configs/status" for a subresource.
func byVerbAndResource(ev controlplane.AuditEvent) string {
	key := ev.Verb + " " + ev.Resource
	if ev.Subresource != "" {
		key += "/" + ev.Subresource
	}
	return key
}

// byObject is "imagestreams/python".
func byObject(ev controlplane.AuditEvent) string { return ev.Resource + "/" + ev.Name }

// describe is one line per request, for a failure message.
func describe(evs []controlplane.AuditEvent) []string {
	out := make([]string, 0, len(evs))
	for _, ev := range evs {
		out = append(out, fmt.Sprintf("%s %s %s/%s %s/%s (%d)", ev.Received.Format("15:04:05.000"), ev.Verb, ev.Resource, ev.Subresource, ev.Namespace, ev.Name, ev.Code))
	}
	return out
}

// historyOf is every audited write of resource/name, by anyone, one line each with the user
// agent (which carries an operator's identity) and the audit ID: when a create met AlreadyExists,
// it shows who created the object first and whether anyone deleted it between.
func (e *env) historyOf(t *testing.T, resource, name string) string {
	t.Helper()
	var lines []string
	for _, ev := range e.everyonesRequests(t, writes, on(resource), named(name)) {
		lines = append(lines, fmt.Sprintf("  %s..%s %s %s (%d) by %s [%s] audit %s", ev.Received.Format("15:04:05.000"),
			ev.Time.Format("05.000"), ev.Verb, byObject(ev), ev.Code, ev.User, ev.UserAgent, ev.ID))
	}
	return strings.Join(lines, "\n")
}

// extraCreates describes each of the operator's creates of an imagestream or template that was
// not the first of its object, or answered other than 201, with the history of its object.
func (e *env) extraCreates(t *testing.T) []string {
	t.Helper()
	var out []string
	seen := map[string]bool{}
	for _, ev := range e.operatorRequests(t, verb("create"), onSamples) {
		if !seen[byObject(ev)] && ev.Code == 201 {
			seen[byObject(ev)] = true
			continue
		}
		out = append(out, fmt.Sprintf("%s (%d, %s):\n%s", byObject(ev), ev.Code, ev.UserAgent, e.historyOf(t, ev.Resource, ev.Name)))
	}
	return out
}

// operatorWrites counts the operator's writes of state by verb and resource. Lease renewals
// are left out: leader election renews every retry period (26 s) whatever the samples' state,
// so a window that a loaded machine stretches past one would count a heartbeat as a write.
func (e *env) operatorWrites(t *testing.T) map[string]int {
	t.Helper()
	return countBy(e.operatorRequests(t, stateWrites, not(on("leases"))), byVerbAndResource)
}

// sampleWritesByObject counts the writes to each imagestream and template that the API server
// carried out (a 409 conflict, answered by a retry on the fresher object, changed nothing). A
// test counts once a read showed what it waited for, which a write can store before its
// answer is logged: the count waits for the operator's writes in flight to be answered.
func (e *env) sampleWritesByObject(t *testing.T) map[string]int {
	t.Helper()
	eventually(t, 10*time.Second, func() (bool, string) {
		inFlight := e.operatorWritesInFlight(t)
		return len(inFlight) == 0, fmt.Sprintf("writes in flight: %v", describe(inFlight))
	})
	return countBy(e.operatorRequests(t, writes, onSamples, carriedOut), byObject)
}

// operatorWritesInFlight is the operator's writes that kube-apiserver has received and not
// answered yet.
func (e *env) operatorWritesInFlight(t *testing.T) []controlplane.AuditEvent {
	t.Helper()
	inFlight, err := e.cp.WritesInFlight(controlplane.OperatorUser)
	if err != nil {
		t.Fatalf("reading the audit log: %v", err)
	}
	return inFlight
}

// sampleWritesSince lists the writes to imagestreams and templates received after t0, as
// "update imagestreams/python".
func (e *env) sampleWritesSince(t *testing.T, t0 time.Time) []string {
	t.Helper()
	var out []string
	for _, ev := range e.operatorRequests(t, writes, onSamples, receivedAfter(t0)) {
		out = append(out, ev.Verb+" "+byObject(ev))
	}
	return out
}
