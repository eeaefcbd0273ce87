package controlplane

import (
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

func auditLine(id, stage, user, name string) string {
	return fmt.Sprintf(`{"auditID":%q,"stage":%q,"verb":"get","user":{"username":%q},"objectRef":{"resource":"imagestreams","name":%q},"responseStatus":{"code":200}}`+"\n", id, stage, user, name)
}

// TestAuditEventsReadsOnlyWhatWasAppended: each call parses the whole lines written since the
// last one (a partial last line waits for its end) and still returns every completed request.
func TestAuditEventsReadsOnlyWhatWasAppended(t *testing.T) {
	cp := &ControlPlane{AuditLogPath: filepath.Join(t.TempDir(), "audit.log")}
	names := func(user string) []string {
		t.Helper()
		events, err := cp.AuditEvents(user)
		if err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, e := range events {
			out = append(out, e.Name)
		}
		return out
	}
	if got := names(""); len(got) != 0 {
		t.Fatalf("a missing log gave %v", got)
	}
	appendLog := func(s string) {
		t.Helper()
		f, err := os.OpenFile(cp.AuditLogPath, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o600)
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		if _, err := f.WriteString(s); err != nil {
			t.Fatal(err)
		}
	}
	appendLog(auditLine("1", "ResponseComplete", "op", "a") + auditLine("2", "ResponseStarted", "op", "watch") + auditLine("3", "ResponseComplete", "admin", "b"))
	whole := auditLine("4", "ResponseComplete", "op", "c")
	appendLog(whole[:20])
	if got := fmt.Sprint(names("op")); got != "[a]" {
		t.Fatalf("first read: %s, want [a]", got)
	}
	appendLog(whole[20:] + auditLine("5", "ResponseComplete", "op", "d"))
	if got := fmt.Sprint(names("op")); got != "[a c d]" {
		t.Fatalf("after the partial line was finished: %s, want [a c d]", got)
	}
	if got := fmt.Sprint(names("")); got != "[a b c d]" {
		t.Fatalf("every user: %s, want [a b c d]", got)
	}
	// A log that starts over is read from its beginning.
	if err := os.WriteFile(cp.AuditLogPath, []byte(auditLine("6", "ResponseComplete", "op", "e")), 0o600); err != nil {
		t.Fatal(err)
	}
	if got := fmt.Sprint(names("op")); got != "[e]" {
		t.Fatalf("after the log started over: %s, want [e]", got)
	}
}

// TestWritesInFlightAreThoseReceivedAndNotAnswered: a write whose RequestReceived stage is
// logged is in flight until its ResponseComplete (or Panic) line, which also makes it a completed
// request; the in-flight writes of other users are not listed.
func TestWritesInFlightAreThoseReceivedAndNotAnswered(t *testing.T) {
	cp := &ControlPlane{AuditLogPath: filepath.Join(t.TempDir(), "audit.log")}
	write := func(id, stage, user, name string) string {
		return strings.Replace(auditLine(id, stage, user, name), `"verb":"get"`, `"verb":"update"`, 1)
	}
	if err := os.WriteFile(cp.AuditLogPath, []byte(
		write("1", "RequestReceived", "op", "a")+write("2", "RequestReceived", "op", "b")+
			write("3", "RequestReceived", "admin", "c")+write("1", "ResponseComplete", "op", "a")+
			write("4", "RequestReceived", "op", "d")+write("4", "Panic", "op", "d")), 0o600); err != nil {
		t.Fatal(err)
	}
	names := func(events []AuditEvent, err error) string {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, e := range events {
			out = append(out, e.Name)
		}
		return fmt.Sprint(out)
	}
	if got := names(cp.WritesInFlight("op")); got != "[b]" {
		t.Errorf("in flight: %s, want [b]", got)
	}
	if got := names(cp.WritesInFlight("")); got != "[b c]" {
		t.Errorf("in flight for every user: %s, want [b c]", got)
	}
	if got := names(cp.AuditEvents("op")); got != "[a d]" {
		t.Errorf("completed: %s, want [a d] (a received write is not a completed one)", got)
	}
}

// The tests poll the audit logs many times a second: a read that finds nothing new costs an
// open and a stat, not a buffer of its own (each was 1 MiB, cleared and collected).
func TestAnAuditReadThatFindsNothingNewAllocatesNoBuffer(t *testing.T) {
	cp := &ControlPlane{AuditLogPath: filepath.Join(t.TempDir(), "audit.log")}
	if err := os.WriteFile(cp.AuditLogPath, []byte(auditLine("1", "ResponseComplete", "op", "a")), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := cp.AuditEvents("op"); err != nil {
		t.Fatal(err)
	}
	const reads = 100
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	for range reads {
		if _, err := cp.AuditEvents("op"); err != nil {
			t.Fatal(err)
		}
	}
	runtime.ReadMemStats(&after)
	if perRead := (after.TotalAlloc - before.TotalAlloc) / reads; perRead > 16<<10 {
		t.Errorf("a read that found nothing new allocated %d bytes, want no buffer's worth (16 KiB at most)", perRead)
	}
}
