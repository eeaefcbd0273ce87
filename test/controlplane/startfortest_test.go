package controlplane

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// recordingTB keeps what startForTest logs and fails with, instead of failing the test running it.
type recordingTB struct {
	testing.TB
	logs, fatals []string
}

func (r *recordingTB) Helper() {}
func (r *recordingTB) Logf(format string, args ...any) {
	r.logs = append(r.logs, fmt.Sprintf(format, args...))
}
func (r *recordingTB) Fatalf(format string, args ...any) {
	r.fatals = append(r.fatals, fmt.Sprintf(format, args...))
}

// startsFailing returns a start that fails its first `failures` calls, each with its number, and
// then hands out a control plane.
func startsFailing(failures int) (func(context.Context, Options) (*ControlPlane, error), *int) {
	calls := 0
	return func(context.Context, Options) (*ControlPlane, error) {
		calls++
		if calls <= failures {
			return nil, fmt.Errorf("start %d missed its deadline", calls)
		}
		return &ControlPlane{Dir: fmt.Sprint("plane ", calls)}, nil
	}, &calls
}

func TestAControlPlaneThatFailsToStartIsStartedOnceMore(t *testing.T) {
	off := &prewarmer{} // not enabled: every control plane is started for its test
	for _, c := range []struct {
		failures  int
		wantCalls int
		wantPlane string
		wantLogs  int
		wantFatal string
	}{
		{failures: 0, wantCalls: 1, wantPlane: "plane 1"},
		{failures: 1, wantCalls: 2, wantPlane: "plane 2", wantLogs: 1},
		{failures: 2, wantCalls: 2, wantLogs: 1, wantFatal: "start 2 missed its deadline"},
	} {
		start, calls := startsFailing(c.failures)
		tb := &recordingTB{TB: t}
		cp, prewarmed := startForTest(tb, Options{}, off, start)
		if *calls != c.wantCalls {
			t.Errorf("%d failures: %d starts, want %d", c.failures, *calls, c.wantCalls)
		}
		if prewarmed {
			t.Errorf("%d failures: handed out as prewarmed", c.failures)
		}
		if got := ""; cp != nil {
			got = cp.Dir
			if got != c.wantPlane {
				t.Errorf("%d failures: got %q, want %q", c.failures, got, c.wantPlane)
			}
		} else if c.wantPlane != "" {
			t.Errorf("%d failures: no control plane, want %q", c.failures, c.wantPlane)
		}
		if len(tb.logs) != c.wantLogs || (c.wantLogs > 0 && !strings.Contains(tb.logs[0], "start 1 missed its deadline")) {
			t.Errorf("%d failures: logged %q, want %d line(s) naming the first failure", c.failures, tb.logs, c.wantLogs)
		}
		switch {
		case c.wantFatal == "" && len(tb.fatals) > 0:
			t.Errorf("%d failures: failed the test with %q", c.failures, tb.fatals)
		case c.wantFatal != "" && (len(tb.fatals) != 1 || !strings.Contains(tb.fatals[0], c.wantFatal)):
			t.Errorf("%d failures: failed with %q, want one failure naming %q", c.failures, tb.fatals, c.wantFatal)
		}
	}
}

// A prewarmed start that failed is handed to one taker, which then takes or starts another.
func TestAFailedPrewarmedStartIsFollowedByAnother(t *testing.T) {
	p := &prewarmer{enabled: true, arrived: make(chan struct{}),
		// ahead 0: no refill, so the second take starts its own with this starter.
		ready:   []startResult{{err: errors.New("the prewarmed start missed its deadline")}},
		starter: func() startResult { return startResult{cp: &ControlPlane{Dir: "the taker's own"}} },
	}
	neverCalled := func(context.Context, Options) (*ControlPlane, error) {
		t.Error("a default control plane was started outside the prewarmer")
		return nil, errors.New("not to be called")
	}
	tb := &recordingTB{TB: t}
	cp, prewarmed := startForTest(tb, Options{}, p, neverCalled)
	if cp == nil || cp.Dir != "the taker's own" || !prewarmed {
		t.Errorf("got %+v (prewarmed %v), want the taker's own start through the prewarmer", cp, prewarmed)
	}
	if len(tb.logs) != 1 || !strings.Contains(tb.logs[0], "the prewarmed start missed its deadline") {
		t.Errorf("logged %q, want the prewarmed start's failure", tb.logs)
	}
	if len(tb.fatals) != 0 {
		t.Errorf("failed the test with %q", tb.fatals)
	}
}

// A start that fails says why with what its servers logged, read before its directory goes.
// Its etcd is a stand-in that logs a line and never answers, so that every start misses its
// deadline, once etcd has logged, whatever the machine's speed.
func TestAFailedStartCarriesItsHistoryAndLogs(t *testing.T) {
	bin := t.TempDir()
	const said = "stand-in server: started, and never answers"
	for _, name := range []string{"etcd", "kube-apiserver"} {
		script := "#!/bin/sh\necho '" + said + "'\nexec sleep 600\n"
		if err := os.WriteFile(filepath.Join(bin, name), []byte(script), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	cp, err := Start(ctx, Options{StandIns: true, BinDir: bin})
	if err == nil {
		cp.Stop()
		t.Fatal("a control plane whose etcd never answers started")
	}
	for _, want := range []string{"--- history of the control plane in ", "starting", "--- last lines of etcd.log:\n" + said} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("the failed start's error does not say %q:\n%v", want, err)
		}
	}
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("the error no longer wraps the deadline: %v", err)
	}
}
