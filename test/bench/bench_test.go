package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	imagev1 "github.com/openshift/api/image/v1"
	corev1 "k8s.io/api/core/v1"

	"github.com/samples-operator-dev/cluster-samples-operator/pkg/inventory"
)

// The 10x inventory loads with pkg/inventory's own validation, has ten times every kind, keeps
// the originals, and every copied imagestream's ImageStreamTag references stay in its stream.
func TestMultiplyInventoryLoads(t *testing.T) {
	inv, err := inventory.Embedded(inventory.ArchDirOCPX86_64)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	nIS, nT, err := multiplyInventory(inv, 10, dir, inventory.ArchDirOCPX86_64)
	if err != nil {
		t.Fatal(err)
	}
	big, err := inventory.LoadDir(dir, inventory.ArchDirOCPX86_64)
	if err != nil {
		t.Fatalf("the generated inventory does not load: %v", err)
	}
	if got, want := len(big.ImageStreamNames()), 10*len(inv.ImageStreamNames()); got != want || nIS != want {
		t.Errorf("imagestreams: loaded %d, written %d, want %d", got, nIS, want)
	}
	if got, want := len(big.TemplateNames()), 10*len(inv.TemplateNames()); got != want || nT != want {
		t.Errorf("templates: loaded %d, written %d, want %d", got, nT, want)
	}
	crossRefs := 0
	for _, name := range inv.ImageStreamNames() {
		orig, _ := inv.ImageStream(name)
		cp, ok := big.ImageStream(name + "-b9")
		if !ok {
			t.Fatalf("imagestream %s-b9 missing", name)
		}
		if len(cp.Spec.Tags) != len(orig.Spec.Tags) {
			t.Errorf("%s-b9 has %d tags, the original %d", name, len(cp.Spec.Tags), len(orig.Spec.Tags))
		}
		for _, tag := range cp.Spec.Tags {
			if tag.From != nil && tag.From.Kind == "ImageStreamTag" && strings.Contains(tag.From.Name, ":") {
				crossRefs++
				if !strings.HasPrefix(tag.From.Name, name+"-b9:") {
					t.Errorf("%s-b9 tag %s points at %s, outside its stream", name, tag.Name, tag.From.Name)
				}
			}
		}
		if _, ok := big.ImageStream(name); !ok {
			t.Errorf("original imagestream %s missing", name)
		}
	}
	if file, _ := big.TemplateFile(inv.TemplateNames()[0] + "-b1"); !strings.Contains(file, "/templates/") {
		t.Errorf("template copy written to %q, want a templates/ directory", file)
	}
	t.Logf("%d imagestreams, %d templates, %d stream:tag references rewritten in copy 9", nIS, nT, crossRefs)
}

func TestMultiplyInventoryRejectsZero(t *testing.T) {
	inv, err := inventory.Embedded(inventory.ArchDirOCPX86_64)
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := multiplyInventory(inv, 0, t.TempDir(), inventory.ArchDirOCPX86_64); err == nil {
		t.Error("factor 0 accepted")
	}
}

func TestPercentile(t *testing.T) {
	xs := []float64{10, 1, 9, 2, 8, 3, 7, 4, 6, 5}
	if got := percentile(xs, 50); got != 5 {
		t.Errorf("median = %v, want 5", got)
	}
	if got := percentile(xs, 90); got != 9 {
		t.Errorf("p90 = %v, want 9", got)
	}
	if got := percentile([]float64{42}, 90); got != 42 {
		t.Errorf("p90 of one = %v", got)
	}
	if xs[0] != 10 {
		t.Error("percentile sorted its input")
	}
	if l := newLatencies(nil, 3); l.MedianMs != 0 || l.Timeouts != 3 {
		t.Errorf("empty latencies = %+v", l)
	}
}

func passingScale(scale, objects int) ScaleResult {
	reverts := map[string]Latencies{}
	for _, k := range revertKinds {
		reverts[k] = newLatencies([]float64{5, 6, 7}, 0)
	}
	return ScaleResult{
		Scale: scale, Objects: objects, ConvergeSeconds: float64(scale) * 0.5,
		InitialSync:   RequestStats{Writes: objects + 5, EventWrites: 20, ByVerbResource: map[string]int{}},
		Steady:        RequestStats{Writes: 2, LeaseWrites: 2, ByVerbResource: map[string]int{"update leases": 2}},
		SteadySeconds: 60,
		NoopTouch:     RequestStats{Writes: 1, ByVerbResource: map[string]int{"update configs/status": 1}},
		Reverts:       reverts,
		PeakRSSKiB:    30 << 10,
	}
}

func failed(budgets []Budget) []string {
	var out []string
	for _, b := range budgets {
		if !b.Pass {
			out = append(out, b.Name)
		}
	}
	return out
}

func TestCheckBudgets(t *testing.T) {
	ok := &Results{Scales: []ScaleResult{passingScale(1, 44), passingScale(10, 440)}}
	if f := failed(CheckBudgets(ok)); len(f) != 0 {
		t.Fatalf("a run within every budget failed %v", f)
	}

	bad := &Results{Scales: []ScaleResult{passingScale(1, 44), passingScale(10, 440)}}
	one, ten := &bad.Scales[0], &bad.Scales[1]
	one.InitialSync.Writes = 55                                                  // 44+10 = 54
	one.Steady.Writes, one.Steady.ByVerbResource["update configs/status"] = 3, 1 // one non-lease write
	one.NoopTouch.SampleWrites = 1
	ten.Steady.CachedGets = []string{"get imagestreams openshift/python"}
	ten.Reverts["template delete"] = newLatencies([]float64{150, 150, 20}, 0)
	ten.Reverts["spec edit"] = newLatencies(nil, 10)
	ten.ConvergeSeconds = 13 * one.ConvergeSeconds
	ten.PeakRSSKiB = 56 << 10
	got := failed(CheckBudgets(bad))
	want := []string{
		"1x initial-sync writes <= objects+10",
		"1x steady-state writes/min (lease renewals apart)",
		"1x sample writes after a no-op Config touch",
		"10x GETs of informer-cached kinds",
		"10x median revert ms, spec edit",
		"10x median revert ms, template delete",
		"10x peak RSS (VmHWM) MiB",
		"10x convergence / 1x convergence",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("failed budgets:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	for _, b := range CheckBudgets(bad) {
		if b.Name == "1x initial-sync writes <= objects+10" && !strings.Contains(b.String(), "over by 1") {
			t.Errorf("budget line does not say by how much: %s", b)
		}
	}
}

func TestCountRequests(t *testing.T) {
	reqs := []request{
		{Verb: "watch", Group: "image.openshift.io", Resource: "imagestreams"},
		{Verb: "create", Group: "image.openshift.io", Resource: "imagestreams", Code: 201},
		{Verb: "update", Group: "config.openshift.io", Resource: "clusteroperators", Subresource: "status", Code: 409},
		{Verb: "create", Resource: "events", Code: 201},
		{Verb: "update", Group: "coordination.k8s.io", Resource: "leases", Code: 200},
		{Verb: "get", Group: "coordination.k8s.io", Resource: "leases", Code: 404},
		{Verb: "get", Resource: "configmaps", Namespace: "ns", Name: "cm", Code: 200},
		{Verb: "create", Group: "authorization.k8s.io", Resource: "selfsubjectaccessreviews", Code: 201}, // a question
	}
	s := countRequests(reqs)
	if s.Total != 8 || s.Writes != 3 || s.EventWrites != 1 || s.LeaseWrites != 1 || s.SampleWrites != 1 {
		t.Errorf("counts = %+v", s)
	}
	if len(s.CachedGets) != 1 || s.CachedGets[0] != "get configmaps ns/cm" {
		t.Errorf("cached GETs = %v (a lease GET is not one)", s.CachedGets)
	}
	if s.Errors["update clusteroperators/status 409"] != 1 || s.errorCount() != 2 {
		t.Errorf("errors = %v", s.Errors)
	}
	if s.ByVerb["get"] != 2 || s.ByVerbResource["update clusteroperators/status"] != 1 {
		t.Errorf("breakdown = %v / %v", s.ByVerb, s.ByVerbResource)
	}
}

// The audit log reader counts a watch once (at its start), takes the final code from the last
// stage, skips other users, and leaves a partly written line for the next refresh.
func TestAuditLogIncremental(t *testing.T) {
	path := filepath.Join(t.TempDir(), "audit.log")
	const user = "system:serviceaccount:ns:op"
	line := func(id, stage, verb, resource, who, at string, code int) string {
		return `{"auditID":"` + id + `","stage":"` + stage + `","verb":"` + verb + `","user":{"username":"` + who +
			`"},"objectRef":{"resource":"` + resource + `"},"responseStatus":{"code":` + itoa(code) +
			`},"requestReceivedTimestamp":"` + at + `"}` + "\n"
	}
	first := line("a", "ResponseStarted", "watch", "configs", user, "2026-01-01T00:00:00.100000Z", 200) +
		line("b", "ResponseComplete", "create", "configs", user, "2026-01-01T00:00:00.200000Z", 201) +
		line("c", "ResponseComplete", "create", "configs", "admin", "2026-01-01T00:00:00.300000Z", 201)
	partial := line("d", "ResponseComplete", "update", "configs", user, "2026-01-01T00:00:00.400000Z", 409)
	if err := os.WriteFile(path, []byte(first+partial[:20]), 0o644); err != nil {
		t.Fatal(err)
	}
	a := newAuditLog(path, user)
	reqs, err := a.refresh()
	if err != nil || len(reqs) != 2 {
		t.Fatalf("first refresh: %d requests, %v", len(reqs), err)
	}
	f, _ := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0)
	_, _ = f.WriteString(partial[20:] + line("a", "ResponseComplete", "watch", "configs", user, "2026-01-01T00:00:00.100000Z", 500))
	f.Close()
	reqs, err = a.refresh()
	if err != nil || len(reqs) != 3 {
		t.Fatalf("second refresh: %d requests, %v", len(reqs), err)
	}
	if reqs[0].Verb != "watch" || reqs[0].Code != 500 || reqs[2].Code != 409 {
		t.Errorf("requests = %+v", reqs)
	}
	from := time.Date(2026, 1, 1, 0, 0, 0, 150_000_000, time.UTC)
	if got := between(reqs, from, from.Add(time.Second)); len(got) != 2 {
		t.Errorf("between: %d requests, want 2 (the watch started before the window)", len(got))
	}
}

func itoa(n int) string { return strconv.Itoa(n) }

func TestTimeline(t *testing.T) {
	start := time.Unix(1000, 0)
	at := func(ms int) time.Time { return start.Add(time.Duration(ms) * time.Millisecond) }
	tl := timeline([]request{
		{Verb: "watch", Resource: "configs", Code: 200, Received: at(10)},
		{Verb: "watch", Resource: "images", Code: 429, Received: at(12)},
		{Verb: "create", Resource: "configs", Code: 201, Received: at(50)},
		{Verb: "create", Resource: "imagestreams", Code: 201, Received: at(60)},
		{Verb: "create", Resource: "templates", Code: 201, Received: at(90)},
		{Verb: "update", Resource: "configs", Subresource: "status", Code: 200, Received: at(400)},
	}, start)
	want := Timeline{FirstRequest: 0.01, LastWatchStarted: 0.01, ConfigCreated: 0.05, FirstSampleWrite: 0.06, LastSampleWrite: 0.09, LastStatusWrite: 0.4}
	if tl != want {
		t.Errorf("timeline = %+v, want %+v", tl, want)
	}
}

// A "<stream>:<tag>" reference follows the copy's new name; a bare tag needs nothing.
func TestRenameImageStream(t *testing.T) {
	is := &imagev1.ImageStream{Spec: imagev1.ImageStreamSpec{Tags: []imagev1.TagReference{
		{Name: "3.11", From: &corev1.ObjectReference{Kind: "DockerImage", Name: "registry.example/python:3.11"}},
		{Name: "latest", From: &corev1.ObjectReference{Kind: "ImageStreamTag", Name: "python:3.11"}},
		{Name: "stable", From: &corev1.ObjectReference{Kind: "ImageStreamTag", Name: "3.11"}},
	}}}
	is.Name = "python"
	renameImageStream(is, copyName("python", 3))
	if is.Name != "python-b3" || is.Spec.Tags[1].From.Name != "python-b3:3.11" || is.Spec.Tags[2].From.Name != "3.11" ||
		is.Spec.Tags[0].From.Name != "registry.example/python:3.11" {
		t.Errorf("renamed = %s %+v", is.Name, is.Spec.Tags)
	}
	if copyName("python", 0) != "python" {
		t.Error("copy 0 must keep the original name")
	}
}

func TestParseGauges(t *testing.T) {
	text := "# HELP go_goroutines x\n# TYPE go_goroutines gauge\ngo_goroutines 57\ngo_memstats_heap_inuse_bytes 1.2e+07\ngo_gc_duration_seconds{quantile=\"0\"} 1e-05\n"
	got := parseGauges(text, goGauges)
	if got["go_goroutines"] != 57 || got["go_memstats_heap_inuse_bytes"] != 1.2e7 || len(got) != 2 {
		t.Errorf("gauges = %v", got)
	}
}

// Every scale the bench runs by default has a memory budget, and the peak must be measured.
func TestMemoryBudgets(t *testing.T) {
	one, ten := passingScale(1, 103), passingScale(10, 1030)
	if b, ok := memoryBudgetMiB(&one, &one); !ok || b != 42 {
		t.Errorf("1x budget %v %v, want 42 MiB", b, ok)
	}
	// 927 objects more than 1x at 38 KiB each: 34.4 MiB above the 1x budget.
	if b, ok := memoryBudgetMiB(&ten, &one); !ok || b < 74.39 || b > 74.41 {
		t.Errorf("10x budget %v %v, want 74.4 MiB", b, ok)
	}
	// The first budgets: 44 samples at 1x, 440 at 10x, gave 55 MiB (38 KiB a sample rounds down).
	old1, old10 := passingScale(1, 44), passingScale(10, 440)
	if b, _ := memoryBudgetMiB(&old10, &old1); b < 54.6 || b > 55 {
		t.Errorf("10x budget of the first inventory %v, want 54.7 MiB", b)
	}
	if _, ok := memoryBudgetMiB(&ten, nil); ok {
		t.Errorf("a 10x run without a 1x run has no per-object base")
	}
	ten.PeakRSSKiB = 75 << 10
	if f := failed(CheckBudgets(&Results{Scales: []ScaleResult{one, ten}})); strings.Join(f, ",") != "10x peak RSS (VmHWM) MiB" {
		t.Errorf("75 MiB at 10x of 1030 objects: failed %v", f)
	}
	s := passingScale(1, 44)
	s.PeakRSSKiB = 0
	if f := failed(CheckBudgets(&Results{Scales: []ScaleResult{s}})); strings.Join(f, ",") != "1x peak RSS (VmHWM) MiB" {
		t.Errorf("an unmeasured peak: failed %v", f)
	}
	s.PeakRSSKiB = 43 << 10
	if f := failed(CheckBudgets(&Results{Scales: []ScaleResult{s}})); strings.Join(f, ",") != "1x peak RSS (VmHWM) MiB" {
		t.Errorf("43 MiB at 1x: failed %v", f)
	}
}

func TestMappingKind(t *testing.T) {
	const bin = "/x/cluster-samples-operator"
	for header, want := range map[string]string{
		"00400000-01cf4000 r-xp 00000000 fe:00 1 " + bin:   mapBinaryCode,
		"01cf4000-03b26000 r--p 018f4000 fe:00 1 " + bin:   mapBinaryRO,
		"03b26000-03bb2000 rw-p 03726000 fe:00 1 " + bin:   mapBinaryData,
		"c000000000-c004000000 rw-p 00000000 00:00 0":      mapAnon,
		"7ffd1000-7ffd2000 rw-p 00000000 00:00 0 [stack]":  mapAnon,
		"7f00000-7f01000 r--p 00000000 fe:00 2 /etc/hosts": mapOther,
	} {
		if got := mappingKind(strings.Fields(header), bin); got != want {
			t.Errorf("%s: %q, want %q", header, got, want)
		}
	}
}

// The bench runs the operator with the Go runtime settings the Deployment ships.
func TestDeploymentRuntimeEnv(t *testing.T) {
	env, err := deploymentRuntimeEnv(filepath.Join("..", "..", "manifests", "06-operator.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	names := map[string]bool{}
	for _, e := range env {
		name, _, _ := strings.Cut(e, "=")
		names[name] = true
	}
	for _, name := range runtimeEnvNames {
		if !names[name] {
			t.Errorf("manifests/06-operator.yaml sets no %s for the operator (got %v)", name, env)
		}
	}
}

// The nodes run is judged by what its Nodes add to the peak of the run without them, not by the
// 1x budget; without a run to compare with it has no memory budget.
func TestNodesMemoryBudget(t *testing.T) {
	one := passingScale(1, 103)
	withNodes := passingScale(1, 103)
	withNodes.Nodes = 5000
	withNodes.PeakRSSKiB = one.PeakRSSKiB + 5<<10
	budgets := CheckBudgets(&Results{Scales: []ScaleResult{one, withNodes}})
	if f := failed(budgets); len(f) != 0 {
		t.Errorf("5 MiB added by the Nodes: failed %v", f)
	}
	var names []string
	for _, b := range budgets {
		if strings.HasPrefix(b.Name, "1x+5000nodes peak RSS") {
			names = append(names, b.Name)
		}
	}
	if strings.Join(names, ",") != "1x+5000nodes peak RSS (VmHWM) added by the Nodes, MiB" {
		t.Errorf("memory budgets of the nodes run: %q", names)
	}
	withNodes.PeakRSSKiB++
	if f := failed(CheckBudgets(&Results{Scales: []ScaleResult{one, withNodes}})); strings.Join(f, ",") != "1x+5000nodes peak RSS (VmHWM) added by the Nodes, MiB" {
		t.Errorf("5 MiB and 1 KiB added by the Nodes: failed %v", f)
	}
	withNodes.PeakRSSKiB = 0
	if f := failed(CheckBudgets(&Results{Scales: []ScaleResult{one, withNodes}})); strings.Join(f, ",") != "1x+5000nodes peak RSS (VmHWM) added by the Nodes, MiB" {
		t.Errorf("an unmeasured peak with Nodes: failed %v", f)
	}
	if f := failed(CheckBudgets(&Results{Scales: []ScaleResult{withNodes}})); len(f) != 0 {
		t.Errorf("a nodes run alone has no memory budget: failed %v", f)
	}
}

// A bench Node is the size of what a kubelet reports, a few KB, and names its architecture where
// the operator reads it; one in five is arm64.
func TestBenchNode(t *testing.T) {
	archs := map[string]int{}
	for i := range 10 {
		n := benchNode(i)
		data, err := json.Marshal(n)
		if err != nil {
			t.Fatal(err)
		}
		if len(data) < 3000 || len(data) > 10000 {
			t.Errorf("node %d is %d bytes of JSON, want a few KB", i, len(data))
		}
		if n.Labels[corev1.LabelArchStable] != n.Status.NodeInfo.Architecture {
			t.Errorf("node %d: label %q, nodeInfo %q", i, n.Labels[corev1.LabelArchStable], n.Status.NodeInfo.Architecture)
		}
		archs[n.Status.NodeInfo.Architecture]++
	}
	if archs["amd64"] != 8 || archs["arm64"] != 2 {
		t.Errorf("architectures of 10 nodes: %v", archs)
	}
	if a, b := benchNode(1).Name, benchNode(2).Name; a == b {
		t.Errorf("two nodes named %s", a)
	}
}
