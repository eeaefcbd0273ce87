package main

import (
	"math"
	"os"
	"path/filepath"
	"slices"
	"testing"
)

func TestParseStatCPU(t *testing.T) {
	// A command name with a space and a parenthesis: fields count from the last ')'.
	stat := "4242 (cluster (samples) 1) S 1 4242 4242 0 -1 4194560 9000 0 0 0 1234 567 0 0 20 0 9 0 100 0 0\n"
	if got := parseStatCPU(stat); math.Abs(got-18.01) > 1e-9 {
		t.Errorf("parseStatCPU = %v, want 18.01 (1234+567 ticks)", got)
	}
	if got := parseStatCPU("4242 (short) S 1"); got != 0 {
		t.Errorf("a truncated line: %v, want 0", got)
	}
}

func TestParseGCTraceAndWindows(t *testing.T) {
	log := `I1129 04:40:00.000000       1 operator.go:1] starting
gc 1 @0.050s 3%: 0.020+1.5+0.010 ms clock, 0.040+0.30/0.90/0.10+0.020 ms cpu, 4->4->2 MB, 4 MB goal, 0 MB stacks, 0 MB globals, 2 P
gc 2 @1.200s 5%: 0.010+2.0+0.005 ms clock, 0.020+1.0/2.0/0+0.010 ms cpu, 5->5->3 MB, 5 MB goal, 0 MB stacks, 0 MB globals, 2 P
gc 3 @30.000s 2%: 0.010+1.0+0.005 ms clock, 0.5+1/1/1+0.5 ms cpu, 5->5->3 MB, 5 MB goal, 0 MB stacks, 0 MB globals, 2 P (forced)
`
	path := filepath.Join(t.TempDir(), "operator.log")
	if err := os.WriteFile(path, []byte(log), 0o644); err != nil {
		t.Fatal(err)
	}
	gcs, err := parseGCTrace(path)
	if err != nil {
		t.Fatal(err)
	}
	want := []gcCycle{{0.05, 0.00136}, {1.2, 0.00303}, {30, 0.004}}
	if !slices.EqualFunc(gcs, want, func(a, b gcCycle) bool { return a.At == b.At && math.Abs(a.CPUSeconds-b.CPUSeconds) < 1e-9 }) {
		t.Fatalf("parseGCTrace = %v, want %v", gcs, want)
	}
	init := window(cpuMark{}, cpuMark{at: 1.5, cpu: 0.5}, gcs)
	if init.GCs != 2 || math.Abs(init.GCShare()-0.00439/0.5) > 1e-9 {
		t.Errorf("initial window %+v: want 2 GCs, share %v", init, 0.00439/0.5)
	}
	steady := window(cpuMark{at: 20, cpu: 1}, cpuMark{at: 50, cpu: 1.2}, gcs)
	if steady.GCs != 1 || math.Abs(steady.PerMinute()-0.4) > 1e-9 {
		t.Errorf("steady window %+v: want 1 GC, 0.4 CPU s/min", steady)
	}
	if idle := window(cpuMark{at: 2}, cpuMark{at: 3}, gcs); !math.IsNaN(idle.GCShare()) {
		t.Errorf("a window without CPU has GC share %v, want NaN", idle.GCShare())
	}
}

func TestOverrideEnv(t *testing.T) {
	got := overrideEnv([]string{"GOGC=15", "GOMEMLIMIT=40MiB"}, []string{"GOGC=100"})
	if want := []string{"GOMEMLIMIT=40MiB", "GOGC=100"}; !slices.Equal(got, want) {
		t.Errorf("overrideEnv = %v, want %v", got, want)
	}
}
