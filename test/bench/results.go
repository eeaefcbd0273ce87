package main

import (
	"fmt"
	"io"
	"math"
	"slices"
	"sort"
	"strings"
	"text/tabwriter"
	"time"
)

// Results is what one `make bench` measured; it is written to _output/bench/results.json.
type Results struct {
	Started        time.Time `json:"started"`
	Seconds        float64   `json:"seconds"`
	Binary         string    `json:"binary"`
	BinarySHA256   string    `json:"binarySHA256"`
	ReleaseVersion string    `json:"releaseVersion"`
	NumCPU         int       `json:"numCPU"`
	// ResyncFlag is the --resync value the operator ran with, empty when the binary has no such
	// flag (then the steady-state window sees no informer resync).
	ResyncFlag string `json:"resyncFlag,omitempty"`
	// RuntimeEnv is what the operator ran with of the Deployment's Go runtime settings (GOGC,
	// GOMEMLIMIT), as in manifests/06-operator.yaml.
	RuntimeEnv []string      `json:"runtimeEnv,omitempty"`
	Scales     []ScaleResult `json:"scales"`
	// Recovery is what the recovery runs measured (recovery.go), nil when none ran.
	Recovery *RecoveryResult `json:"recovery,omitempty"`
}

// ScaleResult is one run of the operator, on a fresh control plane, with scale times the
// embedded inventory, and Nodes Node objects created before the operator started.
type ScaleResult struct {
	Scale int `json:"scale"`
	// Nodes is how many Node objects the run created first (benchNode); 0 in the runs of
	// --scales, 5,000 in the nodes run.
	Nodes int `json:"nodes,omitempty"`
	// NodesCreateSeconds is how long creating them took.
	NodesCreateSeconds float64 `json:"nodesCreateSeconds,omitempty"`

	ImageStreams int `json:"imageStreams"`
	Templates    int `json:"templates"`
	Objects      int `json:"objects"`

	// ConvergeSeconds runs from the operator process's start to all samples present at the
	// release version, SamplesExist=True and ClusterOperator Available=True.
	ConvergeSeconds float64 `json:"convergeSeconds"`
	// InitialSync holds the requests from process start to convergence; Settle those after
	// convergence until the operator has written nothing for a second.
	InitialSync   RequestStats `json:"initialSync"`
	Timeline      Timeline     `json:"timeline"`
	Settle        RequestStats `json:"settle"`
	SettleSeconds float64      `json:"settleSeconds"`

	// Steady is a window with nothing changing.
	Steady        RequestStats `json:"steady"`
	SteadySeconds float64      `json:"steadySeconds"`

	// NoopTouch holds the requests in the seconds after an admin touched an annotation of the
	// Config (no spec change).
	NoopTouch        RequestStats `json:"noopTouch"`
	NoopTouchSeconds float64      `json:"noopTouchSeconds"`

	// Reverts maps "spec edit", "annotation edit" and "template delete" to their latencies.
	Reverts map[string]Latencies `json:"reverts"`

	// RemovedSeconds runs from the admin's write of Removed to status.managementState Removed;
	// RemovedEmptySeconds to the last managed sample gone; ManagedSeconds from the write of
	// Managed back to converged.
	RemovedSeconds      float64      `json:"removedSeconds"`
	RemovedEmptySeconds float64      `json:"removedEmptySeconds"`
	RemovedRequests     RequestStats `json:"removedRequests"`
	ManagedSeconds      float64      `json:"managedSeconds"`
	ManagedRequests     RequestStats `json:"managedRequests"`

	// Storm is the operator's requests while every Node's status was written once a minute
	// (the nodes run only), StormNodeWrites those writes, StormNodeWritesFailed the ones the
	// API server refused or did not answer in time.
	Storm                 RequestStats `json:"storm,omitempty"`
	StormSeconds          float64      `json:"stormSeconds,omitempty"`
	StormNodeWrites       int64        `json:"stormNodeWrites,omitempty"`
	StormNodeWritesFailed int64        `json:"stormNodeWritesFailed,omitempty"`

	// CPUInit is the operator's CPU from its start to convergence, CPUSteady over the
	// steady-state window, CPUStorm over the storm, CPUTotal over the whole run (cpu.go).
	CPUInit   CPUWindow `json:"cpuInit"`
	CPUSteady CPUWindow `json:"cpuSteady"`
	CPUStorm  CPUWindow `json:"cpuStorm,omitempty"`
	CPUTotal  CPUWindow `json:"cpuTotal"`

	// PeakRSSKiB is VmHWM of the operator process at the end of the run; RSSKiB its VmRSS.
	PeakRSSKiB int64 `json:"peakRSSKiB"`
	RSSKiB     int64 `json:"rssKiB"`
	// RSSAnonKiB and RSSFileKiB split VmRSS at the end: anonymous memory (Go heap, stacks) and
	// pages of the mapped binary.
	RSSAnonKiB int64 `json:"rssAnonKiB"`
	RSSFileKiB int64 `json:"rssFileKiB"`
	// PeakRSSAfterSyncKiB is VmHWM once the initial sync had settled.
	PeakRSSAfterSyncKiB int64 `json:"peakRSSAfterSyncKiB"`
	// PeakSample is the reading of the highest VmRSS the bench saw (every 20 ms): what the peak
	// was made of, anonymous memory or pages of the binary.
	PeakSample MemorySample `json:"peakSample"`
	// Mappings is the resident size of the process's mappings at the end, by kind (KiB).
	Mappings map[string]int64 `json:"mappingsKiB,omitempty"`
	// GoMemory is what the operator's own /metrics said at the end (Go runtime gauges, bytes).
	GoMemory map[string]float64 `json:"goMemory,omitempty"`
}

// Latencies are the milliseconds from an admin's write returning to the watch event that showed
// the object restored.
type Latencies struct {
	Millis   []float64 `json:"millis"`
	MedianMs float64   `json:"medianMs"`
	P90Ms    float64   `json:"p90Ms"`
	Timeouts int       `json:"timeouts"`
}

// newLatencies summarizes ms; with no sample the median and p90 are 0 (JSON has no NaN) and the
// budget check treats the kind as not measured.
func newLatencies(ms []float64, timeouts int) Latencies {
	l := Latencies{Millis: ms, Timeouts: timeouts}
	if len(ms) > 0 {
		l.MedianMs, l.P90Ms = percentile(ms, 50), percentile(ms, 90)
	}
	return l
}

// percentile is the nearest-rank percentile p (0 < p <= 100) of xs; NaN when xs is empty.
func percentile(xs []float64, p float64) float64 {
	if len(xs) == 0 {
		return math.NaN()
	}
	s := slices.Clone(xs)
	sort.Float64s(s)
	rank := int(math.Ceil(p / 100 * float64(len(s))))
	rank = max(1, min(rank, len(s)))
	return s[rank-1]
}

// revertKinds are the drifts the bench reverts, in table order.
var revertKinds = []string{"spec edit", "annotation edit", "template delete"}

// perMinute scales a count over seconds to a rate per minute.
func perMinute(n int, seconds float64) float64 {
	if seconds <= 0 {
		return 0
	}
	return float64(n) * 60 / seconds
}

// Budget is one of the limits bench-check enforces.
type Budget struct {
	Name   string  `json:"name"`
	Limit  float64 `json:"limit"`
	Actual float64 `json:"actual"`
	Pass   bool    `json:"pass"`
	Detail string  `json:"detail,omitempty"`
}

func (b Budget) String() string {
	verdict := "ok  "
	if !b.Pass {
		verdict = "FAIL"
	}
	s := fmt.Sprintf("%s %s: %s (limit %s)", verdict, b.Name, fmtNum(b.Actual), fmtNum(b.Limit))
	if !b.Pass {
		s += fmt.Sprintf(", over by %s", fmtNum(b.Actual-b.Limit))
	}
	if b.Detail != "" {
		s += " — " + b.Detail
	}
	return s
}

func fmtNum(f float64) string {
	if math.IsNaN(f) {
		return "n/a"
	}
	if f == math.Trunc(f) && math.Abs(f) < 1e9 {
		return fmt.Sprintf("%d", int64(f))
	}
	return fmt.Sprintf("%.2f", f)
}

// atMost and lessThan build a budget; a NaN actual (not measured) fails.
func atMost(name string, actual, limit float64, detail string) Budget {
	return Budget{Name: name, Limit: limit, Actual: actual, Pass: !math.IsNaN(actual) && actual <= limit, Detail: detail}
}

func lessThan(name string, actual, limit float64, detail string) Budget {
	return Budget{Name: name, Limit: limit, Actual: actual, Pass: !math.IsNaN(actual) && actual < limit, Detail: detail}
}

// CheckBudgets applies the budgets of issue 7 to r:
//   - initial-sync writes (start to quiet after convergence; Events excluded and reported apart,
//     Lease writes included) <= objects + 10;
//   - steady-state writes per minute = 0 (Lease renewals excluded: leader election renews every
//     26 s by design; they are reported apart), and no sample write after a no-op Config touch;
//   - no GET of a kind an informer caches, during the initial sync or at steady state;
//   - median revert < 100 ms for each kind of drift;
//   - 10x convergence <= 12 times the 1x convergence;
//   - peak RSS (VmHWM) within memoryBudgetMiB (issue 16).
func CheckBudgets(r *Results) []Budget {
	var out []Budget
	byScale := map[int]*ScaleResult{}
	for i := range r.Scales {
		s := &r.Scales[i]
		if s.Nodes == 0 {
			byScale[s.Scale] = s
		}
		tag := runName(s.Scale, s.Nodes)
		writes := s.InitialSync.Writes + s.Settle.Writes
		out = append(out, atMost(tag+" initial-sync writes <= objects+10", float64(writes), float64(s.Objects+10),
			fmt.Sprintf("%d objects; events apart: %d", s.Objects, s.InitialSync.EventWrites+s.Settle.EventWrites)))
		steady := s.Steady.Writes - s.Steady.LeaseWrites + s.Steady.EventWrites
		out = append(out, atMost(tag+" steady-state writes/min (lease renewals apart)", perMinute(steady, s.SteadySeconds), 0,
			fmt.Sprintf("%s; lease renewals %d", topKeys(s.Steady, writeKey, 4), s.Steady.LeaseWrites)))
		if s.StormSeconds > 0 {
			stormWrites := s.Storm.Writes - s.Storm.LeaseWrites + s.Storm.EventWrites
			out = append(out, atMost(tag+" writes/min during the Node update storm (lease renewals apart)", perMinute(stormWrites, s.StormSeconds), 0,
				fmt.Sprintf("%s; %d Node status writes", topKeys(s.Storm, writeKey, 4), s.StormNodeWrites)))
		}
		out = append(out, atMost(tag+" sample writes after a no-op Config touch", float64(s.NoopTouch.SampleWrites), 0,
			fmt.Sprintf("all writes %d: %s", s.NoopTouch.Writes, topKeys(s.NoopTouch, writeKey, 4))))
		gets := slices.Concat(s.InitialSync.CachedGets, s.Settle.CachedGets, s.Steady.CachedGets)
		out = append(out, atMost(tag+" GETs of informer-cached kinds", float64(len(gets)), 0, summarize(gets, 4)))
		for _, kind := range revertKinds {
			l, ok := s.Reverts[kind]
			med := math.NaN()
			if ok && len(l.Millis) > 0 {
				med = l.MedianMs
			}
			detail := ""
			if l.Timeouts > 0 {
				detail = fmt.Sprintf("%d of %d never reverted", l.Timeouts, l.Timeouts+len(l.Millis))
			}
			out = append(out, lessThan(tag+" median revert ms, "+kind, med, 100, detail))
		}
		if s.Nodes > 0 {
			if without := byScale[s.Scale]; without != nil {
				out = append(out, nodesMemoryBudget(tag, s, without))
			}
		} else if limit, ok := memoryBudgetMiB(s, byScale[1]); ok {
			p, peak := s.PeakSample, math.NaN() // not measured: fails
			if s.PeakRSSKiB > 0 {
				peak = mib(s.PeakRSSKiB)
			}
			out = append(out, atMost(tag+" peak RSS (VmHWM) MiB", peak, limit,
				fmt.Sprintf("at the highest sample %.1f MiB: anonymous %.1f, file-backed %.1f; Go heap in use at the end %.1f MiB",
					mib(p.RSS), mib(p.Anon), mib(p.File), s.GoMemory["go_memstats_heap_inuse_bytes"]/(1<<20))))
		}
	}
	if one, ten := byScale[1], byScale[10]; one != nil && ten != nil {
		ratio := ten.ConvergeSeconds / one.ConvergeSeconds
		out = append(out, atMost("10x convergence / 1x convergence", ratio, 12,
			fmt.Sprintf("%.2f s vs %.2f s", ten.ConvergeSeconds, one.ConvergeSeconds)))
	}
	return append(out, recoveryBudgets(r.Recovery)...)
}

// The operator's peak RSS (VmHWM) is bounded because it runs on every cluster's control plane
// (issue 16): at 1x, on the real inventory, by memoryBudget1xMiB; above it by memoryBaseMiB and,
// per object, memoryPerObjectKiB for each sample more than the 1x run had. The per-object figure
// is the one the first budgets implied (55 MiB at 10x of a 44-sample inventory, 40 at 1x: 38.8 KiB
// for each of the 396 more samples), so a larger inventory raises the 10x budget only by what each
// sample was already allowed. The 1x budget rose from 40 to 42 MiB when the memory tricks that
// saved less than 1 MiB each were removed (issue 42, docs/memory.md).
const (
	memoryBudget1xMiB  = 42
	memoryBaseMiB      = 40
	memoryPerObjectKiB = 38
)

// memoryBudgetMiB is the VmHWM budget of s; one is the 1x run of the same bench, whose object
// count the per-object allowance starts from. Without a 1x run only the 1x budget exists.
func memoryBudgetMiB(s, one *ScaleResult) (float64, bool) {
	switch {
	case s.Scale == 1:
		return memoryBudget1xMiB, true
	case one == nil || s.Objects <= one.Objects:
		return 0, false
	}
	return memoryBaseMiB + float64((s.Objects-one.Objects)*memoryPerObjectKiB)/1024, true
}

// nodesMemoryBudgetMiB is what the Nodes of a large cluster (the nodes run's) may add to the
// operator's peak RSS (issue 50): its Nodes informer keeps only each node's name and
// architecture.
const nodesMemoryBudgetMiB = 5

// nodesMemoryBudget compares the peak RSS (VmHWM) of a run with Nodes with that of the run of the
// same scale without.
func nodesMemoryBudget(tag string, with, without *ScaleResult) Budget {
	added := math.NaN() // either not measured: fails
	if with.PeakRSSKiB > 0 && without.PeakRSSKiB > 0 {
		added = mib(with.PeakRSSKiB - without.PeakRSSKiB)
	}
	return atMost(tag+" peak RSS (VmHWM) added by the Nodes, MiB", added, nodesMemoryBudgetMiB,
		fmt.Sprintf("%.1f vs %.1f MiB; after the initial sync %.1f vs %.1f; RSS at the end %.1f vs %.1f (anonymous %.1f vs %.1f); Go heap in use at the end %.1f vs %.1f MiB",
			mib(with.PeakRSSKiB), mib(without.PeakRSSKiB), mib(with.PeakRSSAfterSyncKiB), mib(without.PeakRSSAfterSyncKiB),
			mib(with.RSSKiB), mib(without.RSSKiB), mib(with.RSSAnonKiB), mib(without.RSSAnonKiB),
			with.GoMemory["go_memstats_heap_inuse_bytes"]/(1<<20), without.GoMemory["go_memstats_heap_inuse_bytes"]/(1<<20)))
}

// runName names a run: "1x", or "1x+5000nodes" for one with Nodes.
func runName(scale, nodes int) string {
	if nodes > 0 {
		return fmt.Sprintf("%dx+%dnodes", scale, nodes)
	}
	return fmt.Sprintf("%dx", scale)
}

func mib(kib int64) float64 { return float64(kib) / 1024 }

func writeKey(k string) bool {
	verb, _, _ := strings.Cut(k, " ")
	return verb == "create" || verb == "update" || verb == "patch" || verb == "delete" || verb == "deletecollection"
}

// topKeys lists the n most frequent "verb resource" keys of s that keep accepts.
func topKeys(s RequestStats, keep func(string) bool, n int) string {
	type kv struct {
		k string
		v int
	}
	var kvs []kv
	for k, v := range s.ByVerbResource {
		if keep(k) {
			kvs = append(kvs, kv{k, v})
		}
	}
	sort.Slice(kvs, func(i, j int) bool {
		if kvs[i].v != kvs[j].v {
			return kvs[i].v > kvs[j].v
		}
		return kvs[i].k < kvs[j].k
	})
	if len(kvs) == 0 {
		return "none"
	}
	var parts []string
	for i, e := range kvs {
		if i == n {
			parts = append(parts, "...")
			break
		}
		parts = append(parts, fmt.Sprintf("%s %d", e.k, e.v))
	}
	return strings.Join(parts, ", ")
}

func summarize(items []string, n int) string {
	if len(items) == 0 {
		return ""
	}
	counts := map[string]int{}
	var order []string
	for _, it := range items {
		if counts[it] == 0 {
			order = append(order, it)
		}
		counts[it]++
	}
	var parts []string
	for i, it := range order {
		if i == n {
			parts = append(parts, "...")
			break
		}
		parts = append(parts, fmt.Sprintf("%s x%d", it, counts[it]))
	}
	return strings.Join(parts, ", ")
}

// verbs are the columns of the request breakdown.
var verbs = []string{"list", "watch", "get", "create", "update", "patch", "delete"}

// printTable writes the scales side by side.
func printTable(w io.Writer, r *Results) {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	row := func(label string, cell func(s *ScaleResult) string) {
		fmt.Fprint(tw, label+"\t")
		for i := range r.Scales {
			fmt.Fprint(tw, cell(&r.Scales[i])+"\t")
		}
		fmt.Fprintln(tw)
	}
	header := "metric\t"
	for _, s := range r.Scales {
		header += fmt.Sprintf("%s (%d IS + %d T)\t", runName(s.Scale, s.Nodes), s.ImageStreams, s.Templates)
	}
	fmt.Fprintln(tw, header)
	row("converge, process start to ready (s)", func(s *ScaleResult) string { return fmt.Sprintf("%.2f", s.ConvergeSeconds) })
	row("initial sync: requests", func(s *ScaleResult) string { return fmt.Sprint(s.InitialSync.Total) })
	for _, v := range verbs {
		row("  "+v, func(s *ScaleResult) string { return fmt.Sprint(s.InitialSync.ByVerb[v]) })
	}
	row("  writes (events apart) / budget", func(s *ScaleResult) string {
		return fmt.Sprintf("%d / %d", s.InitialSync.Writes, s.Objects+10)
	})
	row("  events written", func(s *ScaleResult) string { return fmt.Sprint(s.InitialSync.EventWrites) })
	row("  GETs of cached kinds", func(s *ScaleResult) string { return fmt.Sprint(len(s.InitialSync.CachedGets)) })
	row("  error responses", func(s *ScaleResult) string { return fmt.Sprint(s.InitialSync.errorCount()) })
	row("  timeline (s): last watch / Config / samples / status", func(s *ScaleResult) string {
		t := s.Timeline
		return fmt.Sprintf("%.2f / %.2f / %.2f-%.2f / %.2f", t.LastWatchStarted, t.ConfigCreated, t.FirstSampleWrite, t.LastSampleWrite, t.LastStatusWrite)
	})
	row("after convergence until quiet: writes (+events)", func(s *ScaleResult) string {
		return fmt.Sprintf("%d (+%d) in %.1fs", s.Settle.Writes, s.Settle.EventWrites, s.SettleSeconds)
	})
	row("steady state: requests/min", func(s *ScaleResult) string { return fmt.Sprintf("%.1f", perMinute(s.Steady.Total, s.SteadySeconds)) })
	row("  writes/min excl. lease (+lease)", func(s *ScaleResult) string {
		return fmt.Sprintf("%.1f (+%.1f)", perMinute(s.Steady.Writes-s.Steady.LeaseWrites+s.Steady.EventWrites, s.SteadySeconds), perMinute(s.Steady.LeaseWrites, s.SteadySeconds))
	})
	row("  GETs of cached kinds", func(s *ScaleResult) string { return fmt.Sprint(len(s.Steady.CachedGets)) })
	row("Node update storm: requests/min, writes/min excl. lease", func(s *ScaleResult) string {
		if s.StormSeconds == 0 {
			return "-"
		}
		return fmt.Sprintf("%.1f, %.1f (%d Node writes, %d failed)", perMinute(s.Storm.Total, s.StormSeconds),
			perMinute(s.Storm.Writes-s.Storm.LeaseWrites+s.Storm.EventWrites, s.StormSeconds), s.StormNodeWrites, s.StormNodeWritesFailed)
	})
	cpu := func(w CPUWindow) string {
		return fmt.Sprintf("%.2f s, GC %.0f%% (%d GCs)", w.CPUSeconds, 100*w.GCShare(), w.GCs)
	}
	perMin := func(w CPUWindow) string {
		return fmt.Sprintf("%.2f s/min, GC %.0f%% (%d GCs)", w.PerMinute(), 100*w.GCShare(), w.GCs)
	}
	row("CPU: initial sync", func(s *ScaleResult) string { return cpu(s.CPUInit) })
	row("  steady state", func(s *ScaleResult) string { return perMin(s.CPUSteady) })
	row("  Node update storm", func(s *ScaleResult) string {
		if s.CPUStorm.Seconds == 0 {
			return "-"
		}
		return perMin(s.CPUStorm)
	})
	row("  whole run", func(s *ScaleResult) string { return cpu(s.CPUTotal) })
	row("no-op Config touch: writes / sample writes", func(s *ScaleResult) string {
		return fmt.Sprintf("%d / %d", s.NoopTouch.Writes, s.NoopTouch.SampleWrites)
	})
	for _, kind := range revertKinds {
		row("revert "+kind+" ms, median / p90", func(s *ScaleResult) string {
			l := s.Reverts[kind]
			out := fmt.Sprintf("%.1f / %.1f", l.MedianMs, l.P90Ms)
			if l.Timeouts > 0 {
				out += fmt.Sprintf(" (%d lost)", l.Timeouts)
			}
			return out
		})
	}
	row("Managed -> Removed status (s)", func(s *ScaleResult) string { return fmt.Sprintf("%.2f", s.RemovedSeconds) })
	row("  ... samples all gone (s)", func(s *ScaleResult) string { return fmt.Sprintf("%.2f", s.RemovedEmptySeconds) })
	row("  requests / writes", func(s *ScaleResult) string {
		return fmt.Sprintf("%d / %d", s.RemovedRequests.Total, s.RemovedRequests.Writes)
	})
	row("Removed -> Managed converged (s)", func(s *ScaleResult) string { return fmt.Sprintf("%.2f", s.ManagedSeconds) })
	row("  requests / writes", func(s *ScaleResult) string {
		return fmt.Sprintf("%d / %d", s.ManagedRequests.Total, s.ManagedRequests.Writes)
	})
	row("peak RSS, VmHWM (MiB): after initial sync / end", func(s *ScaleResult) string {
		return fmt.Sprintf("%.1f / %.1f", float64(s.PeakRSSAfterSyncKiB)/1024, float64(s.PeakRSSKiB)/1024)
	})
	row("  at the highest sample: anonymous / file-backed (MiB)", func(s *ScaleResult) string {
		return fmt.Sprintf("%.1f / %.1f at %.1fs", mib(s.PeakSample.Anon), mib(s.PeakSample.File), s.PeakSample.Seconds)
	})
	row("  RSS at end: anonymous / file-backed (MiB)", func(s *ScaleResult) string {
		return fmt.Sprintf("%.1f / %.1f", float64(s.RSSAnonKiB)/1024, float64(s.RSSFileKiB)/1024)
	})
	row("  binary at end: .text / .rodata+.gopclntab / data (MiB)", func(s *ScaleResult) string {
		m := s.Mappings
		return fmt.Sprintf("%.1f / %.1f / %.1f", mib(m[mapBinaryCode]), mib(m[mapBinaryRO]), mib(m[mapBinaryData]))
	})
	row("  Go heap in use / runtime sys (MiB), goroutines", func(s *ScaleResult) string {
		m := s.GoMemory
		return fmt.Sprintf("%.1f / %.1f, %.0f", m["go_memstats_heap_inuse_bytes"]/(1<<20), m["go_memstats_sys_bytes"]/(1<<20), m["go_goroutines"])
	})
	_ = tw.Flush()
}
