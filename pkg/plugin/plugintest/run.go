// Package plugintest holds what the plugin's unit tests and its integration tests both check of
// one run of `kubectl samples`.
package plugintest

import (
	"strings"
	"testing"
)

// Run is one run of the plugin: its exit status and what it wrote.
type Run struct {
	Code        int
	Out, ErrOut string
}

// Expect checks the exit status, that the output holds each of contains, and that an error is
// one line (never a stack trace).
func (r Run) Expect(t testing.TB, code int, contains ...string) {
	t.Helper()
	if r.Code != code {
		t.Errorf("exit status %d, want %d", r.Code, code)
	}
	for _, c := range contains {
		if !strings.Contains(r.Out+r.ErrOut, c) {
			t.Errorf("the output lacks %q", c)
		}
	}
	if strings.Contains(r.ErrOut, "goroutine ") || strings.Count(strings.TrimSpace(r.ErrOut), "\n") > 0 {
		t.Errorf("more than a one-line error: %q", r.ErrOut)
	}
}
