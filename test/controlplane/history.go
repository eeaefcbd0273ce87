package controlplane

import (
	"fmt"
	"sort"
	"strings"
	"sync"
	"time"
)

// A recycled control plane serves one test after another: what an earlier test left behind, or
// a process of it that outlived it, shows in a later test as a failure of that later test. So
// each control plane keeps its history (when it started, which tests had it, what each reset
// deleted, put back and created again, which servers were restarted), and a test that fails
// prints the history of its control plane: the failure then names the earlier tests it may
// come from.

type history struct {
	mu      sync.Mutex
	began   time.Time
	entries []string
	// holder is the last test handed the control plane.
	holder string
}

// handTo records that the test named takes the control plane.
func (cp *ControlPlane) handTo(test string) {
	cp.history.mu.Lock()
	cp.history.holder = test
	cp.history.mu.Unlock()
	cp.record("handed to %s", test)
}

// holder names the last test handed the control plane, or says none was.
func (cp *ControlPlane) holder() string {
	cp.history.mu.Lock()
	defer cp.history.mu.Unlock()
	if cp.history.holder == "" {
		return "its test"
	}
	return cp.history.holder
}

// record adds one line to the control plane's history, stamped with the time since its start.
func (cp *ControlPlane) record(format string, args ...any) {
	h := &cp.history
	h.mu.Lock()
	defer h.mu.Unlock()
	now := time.Now()
	if h.began.IsZero() {
		h.began = now
	}
	h.entries = append(h.entries, fmt.Sprintf("%s (+%s) %s", now.Format("15:04:05.000"),
		now.Sub(h.began).Round(time.Millisecond), fmt.Sprintf(format, args...)))
}

// History is what became of the control plane since its start, one event a line.
func (cp *ControlPlane) History() string {
	h := &cp.history
	h.mu.Lock()
	defer h.mu.Unlock()
	return strings.Join(h.entries, "\n")
}

// objectSummary names the objects by kind and namespace, at most perGroup names in each: enough
// to recognise the test that made them, short enough for a test log.
func objectSummary(keys []storedObject, perGroup int) string {
	type group struct{ kind, namespace string }
	byGroup := map[group][]string{}
	for _, k := range keys {
		kind := k.resource.Resource
		if k.resource.Group != "" {
			kind += "." + k.resource.Group
		}
		g := group{kind, k.namespace}
		byGroup[g] = append(byGroup[g], k.name)
	}
	groups := make([]group, 0, len(byGroup))
	for g := range byGroup {
		groups = append(groups, g)
	}
	sort.Slice(groups, func(i, j int) bool {
		if groups[i].kind != groups[j].kind {
			return groups[i].kind < groups[j].kind
		}
		return groups[i].namespace < groups[j].namespace
	})
	var out []string
	for _, g := range groups {
		names := byGroup[g]
		sort.Strings(names)
		shown := names
		if len(shown) > perGroup {
			shown = shown[:perGroup]
		}
		line := fmt.Sprintf("%d %s", len(names), g.kind)
		if g.namespace != "" {
			line += " in " + g.namespace
		}
		line += " (" + strings.Join(shown, ", ")
		if more := len(names) - len(shown); more > 0 {
			line += fmt.Sprintf(", %d more", more)
		}
		out = append(out, line+")")
	}
	return strings.Join(out, "; ")
}
