package main

import (
	"bufio"
	"fmt"
	"math"
	"os"
	"regexp"
	"strconv"
	"strings"
)

// The operator's CPU is read from the kernel, not from the operator: /proc/PID/stat's utime and
// stime count every thread, the runtime's own included, in clock ticks. The GC's part comes from
// the runtime's trace of each collection (GODEBUG=gctrace=1, on the operator's stderr): the
// "ms cpu" times of its mark phase and two pauses, the sums runtime/metrics reports as
// /cpu/classes/gc/total:cpu-seconds. The operator's /metrics has only go_gc_duration_seconds,
// the pauses' wall time, which leaves out the concurrent mark, most of a collection's cost. The
// runtime counts those times as its Ps' time (a pause as its wall time times GOMAXPROCS), not as
// the kernel's CPU: on a machine with more runnable threads than cores a thread that holds a P
// also waits for a core, and the GC's share comes out above what it spent, even above 100%.
// Compare collections and CPU seconds across settings; read the share on a quiet machine.

// clockTicks is USER_HZ, the unit of /proc/PID/stat's times: 100 on every Linux architecture Go
// supports (the kernel's ABI, whatever CONFIG_HZ is).
const clockTicks = 100

// cpuSeconds is the user plus system CPU time of a process so far, NaN-free: 0 when unreadable.
func cpuSeconds(pid int) float64 {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0
	}
	return parseStatCPU(string(data))
}

// parseStatCPU reads utime and stime (fields 14 and 15) of a /proc/PID/stat line. The command
// name, field 2, is in parentheses and may hold spaces: fields are counted after its last ')'.
func parseStatCPU(stat string) float64 {
	i := strings.LastIndexByte(stat, ')')
	if i < 0 {
		return 0
	}
	fields := strings.Fields(stat[i+1:])
	// fields[0] is field 3 (state): utime is fields[11], stime fields[12].
	if len(fields) < 13 {
		return 0
	}
	utime, err1 := strconv.ParseInt(fields[11], 10, 64)
	stime, err2 := strconv.ParseInt(fields[12], 10, 64)
	if err1 != nil || err2 != nil {
		return 0
	}
	return float64(utime+stime) / clockTicks
}

// gcCycle is one collection as gctrace reports it: when it started, in seconds from the process
// start, and the CPU its mark and pauses took.
type gcCycle struct {
	At         float64
	CPUSeconds float64
}

// gctraceLine matches the runtime's line for one collection, e.g.
//
//	gc 3 @0.112s 4%: 0.021+1.2+0.004 ms clock, 0.043+0.31/0.92/0.20+0.008 ms cpu, 4->4->2 MB, 4 MB goal, 0 MB stacks, 0 MB globals, 2 P
var gctraceLine = regexp.MustCompile(`^gc \d+ @([0-9.]+)s \d+%: [^,]* ms clock, ([0-9.+/]+) ms cpu,`)

// parseGCTrace returns the collections a log holds, in order.
func parseGCTrace(path string) ([]gcCycle, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var out []gcCycle
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		m := gctraceLine.FindStringSubmatch(sc.Text())
		if m == nil {
			continue
		}
		at, err := strconv.ParseFloat(m[1], 64)
		if err != nil {
			continue
		}
		var cpu float64
		for _, part := range strings.FieldsFunc(m[2], func(r rune) bool { return r == '+' || r == '/' }) {
			ms, err := strconv.ParseFloat(part, 64)
			if err == nil {
				cpu += ms / 1000
			}
		}
		out = append(out, gcCycle{At: at, CPUSeconds: cpu})
	}
	return out, sc.Err()
}

// CPUWindow is what the operator spent in one window of a run: its CPU seconds, the collections
// that started in it and their CPU.
type CPUWindow struct {
	Seconds    float64 `json:"seconds"` // wall time
	CPUSeconds float64 `json:"cpuSeconds"`
	GCs        int     `json:"gcs"`
	GCSeconds  float64 `json:"gcCPUSeconds"`
}

// GCShare is the part of the window's CPU the GC took; NaN without CPU.
func (w CPUWindow) GCShare() float64 {
	if w.CPUSeconds <= 0 {
		return math.NaN()
	}
	return w.GCSeconds / w.CPUSeconds
}

// PerMinute is the window's CPU seconds per minute of wall time.
func (w CPUWindow) PerMinute() float64 {
	if w.Seconds <= 0 {
		return math.NaN()
	}
	return w.CPUSeconds * 60 / w.Seconds
}

// cpuMark is a reading of the operator's CPU at a moment of the run, in seconds from its start.
type cpuMark struct {
	at, cpu float64
}

// window fills a CPUWindow from two readings and the collections that started between them.
func window(from, to cpuMark, gcs []gcCycle) CPUWindow {
	w := CPUWindow{Seconds: to.at - from.at, CPUSeconds: to.cpu - from.cpu}
	for _, c := range gcs {
		if c.At >= from.at && c.At < to.at {
			w.GCs++
			w.GCSeconds += c.CPUSeconds
		}
	}
	return w
}
