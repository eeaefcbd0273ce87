// Command test-report reads `go test -json` on stdin and prints what a CI log needs: each
// package's result, the whole output of every failed test (parallel tests interleave theirs in
// plain -v output), and the slowest tests, by the time they ran once they had their turn (the
// integration tests wait for turns of their own after t.Parallel, and log how long: see
// turnWait), and every skipped test with its reason. The plain output goes to --log. It exits
// 1 when anything failed, including a package that failed outside any test (a build error, a
// panic, a timeout), and, when OPENSHIFT_BIN_DIR is set (the run is against the real OpenShift
// servers), when a test skipped itself for want of a real server (needsReal).
package main

import (
	"bufio"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"regexp"
	"sort"
	"strings"
	"time"
)

// event is one line of `go test -json` (cmd/test2json).
type event struct {
	Action  string
	Package string
	Test    string
	Elapsed float64
	Output  string
}

type testKey struct{ pkg, name string }

type testResult struct {
	action  string
	elapsed time.Duration
	// waited is how long the test waited for its turn before it ran (turnWait).
	waited time.Duration
	output []string
}

type packageResult struct {
	action  string
	elapsed time.Duration
	output  []string // lines outside any test
}

// report is what was read: results in the order they started.
type report struct {
	tests    map[testKey]*testResult
	order    []testKey
	packages map[string]*packageResult
	pkgOrder []string
}

func newReport() *report {
	return &report{tests: map[testKey]*testResult{}, packages: map[string]*packageResult{}}
}

func (r *report) add(ev event) {
	if ev.Package == "" {
		return
	}
	pkg, ok := r.packages[ev.Package]
	if !ok {
		pkg = &packageResult{}
		r.packages[ev.Package] = pkg
		r.pkgOrder = append(r.pkgOrder, ev.Package)
	}
	if ev.Test == "" {
		switch ev.Action {
		case "output":
			pkg.output = append(pkg.output, ev.Output)
		case "pass", "fail", "skip":
			pkg.action, pkg.elapsed = ev.Action, seconds(ev.Elapsed)
		}
		return
	}
	key := testKey{ev.Package, ev.Test}
	res, ok := r.tests[key]
	if !ok {
		res = &testResult{}
		r.tests[key] = res
		r.order = append(r.order, key)
	}
	switch ev.Action {
	case "output":
		res.output = append(res.output, ev.Output)
		if m := turnWait.FindStringSubmatch(ev.Output); m != nil {
			if d, err := time.ParseDuration(m[1]); err == nil {
				res.waited = d
			}
		}
	case "pass", "fail", "skip":
		res.action, res.elapsed = ev.Action, seconds(ev.Elapsed)
	}
}

// turnWait is the line an integration test logs when it gets its turn
// (test/integration/schedule_test.go): go test counts the wait in the test's time.
var turnWait = regexp.MustCompile(`^\s+[\w.-]+_test\.go:\d+: waited (\S+) for a turn\n?$`)

// needsReal is the message a test skips with when a real OpenShift server it needs is not at
// hand (requireReal in test/integration/requirereal_test.go): in a run with OPENSHIFT_BIN_DIR,
// that test tested nothing, and the run must not pass.
var needsReal = regexp.MustCompile(`^\s+[\w.-]+_test\.go:\d+: needs the real `)

func seconds(s float64) time.Duration { return time.Duration(s * float64(time.Second)) }

// failed lists the failed tests that have no failed subtest: their output holds the reason.
// A test still running when its package ended (a timeout or a panic) counts as failed.
func (r *report) failed() []testKey {
	var out []testKey
	for _, k := range r.order {
		res := r.tests[k]
		pkgFailed := r.packages[k.pkg].action == "fail"
		if res.action != "fail" && (res.action != "" || !pkgFailed) {
			continue
		}
		leaf := true
		for _, other := range r.order {
			if other.pkg == k.pkg && strings.HasPrefix(other.name, k.name+"/") && r.tests[other].action == "fail" {
				leaf = false
				break
			}
		}
		if leaf {
			out = append(out, k)
		}
	}
	return out
}

// slowest lists the tests that ran longest, longest first: the top-level tests, except those
// whose subtests took turns of their own, which are listed instead.
func (r *report) slowest(n int) []testKey {
	parentOfTurns := map[testKey]bool{}
	for _, k := range r.order {
		if i := strings.Index(k.name, "/"); i > 0 && r.tests[k].waited > 0 {
			parentOfTurns[testKey{k.pkg, k.name[:i]}] = true
		}
	}
	var top []testKey
	for _, k := range r.order {
		res := r.tests[k]
		if res.action == "" || parentOfTurns[k] || strings.Contains(k.name, "/") && res.waited == 0 {
			continue
		}
		top = append(top, k)
	}
	ran := func(k testKey) time.Duration { return r.tests[k].elapsed - r.tests[k].waited }
	sort.SliceStable(top, func(i, j int) bool { return ran(top[i]) > ran(top[j]) })
	if len(top) > n {
		top = top[:n]
	}
	return top
}

// skipped lists the skipped tests, in the order they started, each with its reason (the last
// message it printed: t.Skip's), and whether it skipped for want of a real OpenShift server.
func (r *report) skipped() (out []skip) {
	for _, k := range r.order {
		res := r.tests[k]
		if res.action != "skip" {
			continue
		}
		s := skip{key: k}
		if own := testMessages(res.output); len(own) > 0 {
			last := own[len(own)-1]
			s.reason = strings.TrimSpace(last)
			s.needsReal = needsReal.MatchString(last)
		}
		out = append(out, s)
	}
	return out
}

type skip struct {
	key       testKey
	reason    string
	needsReal bool
}

// lastLines keeps the end of a long output, where a failure's reason and the logs that a test
// prints when it fails are.
func lastLines(lines []string, n int) []string {
	if len(lines) <= n {
		return lines
	}
	return append([]string{fmt.Sprintf("... (%d earlier lines in the log)\n", len(lines)-n)}, lines[len(lines)-n:]...)
}

// write prints the report and says whether the run passed. real is whether it ran against the
// real OpenShift servers (OPENSHIFT_BIN_DIR), where a test that skipped for want of one fails it.
func (r *report) write(w io.Writer, slowest, linesPerFailure int, real bool) (ok bool) {
	ok = true
	for _, name := range r.pkgOrder {
		p := r.packages[name]
		switch p.action {
		case "fail", "":
			ok = false
			fmt.Fprintf(w, "FAIL\t%s\t%.1fs\n", name, p.elapsed.Seconds())
		case "skip":
			fmt.Fprintf(w, "?   \t%s\t[no test files]\n", name)
		default:
			fmt.Fprintf(w, "ok  \t%s\t%.1fs\n", name, p.elapsed.Seconds())
		}
	}
	failures := r.failed()
	failedPkgs := map[string]bool{}
	for _, k := range failures {
		ok = false
		failedPkgs[k.pkg] = true
		res := r.tests[k]
		state := "FAIL"
		if res.action == "" {
			state = "DID NOT FINISH"
		}
		fmt.Fprintf(w, "\n=== %s %s (%s, %.1fs)\n", state, k.name, k.pkg, res.elapsed.Seconds())
		for _, l := range lastLines(res.output, linesPerFailure) {
			fmt.Fprint(w, truncate(l, 400))
		}
		// The test's own messages last, where a reader of the report's end (or of an excerpt of
		// it) finds them: a failing test prints pages of server logs after them.
		if own := testMessages(res.output); len(own) > 0 {
			fmt.Fprintf(w, "--- %s: its own messages:\n", k.name)
			for _, l := range lastLines(own, linesPerFailure) {
				fmt.Fprint(w, truncate(l, 400))
			}
		}
	}
	for _, name := range r.pkgOrder {
		if p := r.packages[name]; p.action != "pass" && p.action != "skip" && !failedPkgs[name] {
			fmt.Fprintf(w, "\n=== %s failed outside its tests:\n", name)
			for _, l := range lastLines(p.output, linesPerFailure) {
				fmt.Fprint(w, truncate(l, 400))
			}
		}
	}
	if skips := r.skipped(); len(skips) > 0 {
		fmt.Fprintf(w, "\nskipped tests:\n")
		for _, s := range skips {
			mark, note := "", ""
			if real && s.needsReal {
				ok = false
				mark, note = "FAIL ", " (OPENSHIFT_BIN_DIR is set: the run against the real servers must not skip it)"
			}
			fmt.Fprintf(w, "  %s%s (%s): %s%s\n", mark, s.key.name, s.key.pkg[strings.LastIndex(s.key.pkg, "/")+1:], strings.TrimSuffix(truncate(orNoReason(s.reason), 300), "\n"), note)
		}
	}
	if top := r.slowest(slowest); len(top) > 0 {
		fmt.Fprintf(w, "\nslowest tests:\n")
		for _, k := range top {
			res := r.tests[k]
			waited := ""
			if res.waited > 0 {
				waited = fmt.Sprintf(", after %.1fs waiting for a turn", res.waited.Seconds())
			}
			fmt.Fprintf(w, "  %7.1fs  %s (%s%s)\n", (res.elapsed - res.waited).Seconds(), k.name, k.pkg[strings.LastIndex(k.pkg, "/")+1:], waited)
		}
	}
	return ok
}

func orNoReason(reason string) string {
	if reason == "" {
		return "(no reason given)"
	}
	return reason
}

// testMessage is a line t.Log, t.Error or t.Fatal printed: "    file_test.go:123: text".
var testMessage = regexp.MustCompile(`^\s+[\w.-]+_test\.go:\d+: `)

func testMessages(lines []string) []string {
	var out []string
	for _, l := range lines {
		if testMessage.MatchString(l) {
			out = append(out, l)
		}
	}
	return out
}

func truncate(line string, n int) string {
	if len(line) <= n {
		return line
	}
	return line[:n] + " ...\n"
}

func main() {
	logPath := flag.String("log", "", "write the tests' plain output here")
	slowest := flag.Int("slowest", 15, "how many of the slowest tests to list")
	linesPerFailure := flag.Int("lines", 60, "how many of a failed test's last output lines to print")
	flag.Parse()

	plain := bufio.NewWriter(io.Discard)
	var logFile *os.File
	if *logPath != "" {
		f, err := os.Create(*logPath)
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(2)
		}
		logFile, plain = f, bufio.NewWriter(f)
	}
	r := newReport()
	scanner := bufio.NewScanner(os.Stdin)
	scanner.Buffer(make([]byte, 1<<20), 16<<20)
	for scanner.Scan() {
		var ev event
		if err := json.Unmarshal(scanner.Bytes(), &ev); err != nil {
			// go test prints build errors as plain text before any JSON.
			fmt.Fprintln(os.Stdout, scanner.Text())
			fmt.Fprintln(plain, scanner.Text())
			continue
		}
		if ev.Action == "output" {
			fmt.Fprint(plain, ev.Output)
		}
		r.add(ev)
	}
	if err := scanner.Err(); err != nil {
		fmt.Fprintln(os.Stderr, "reading go test -json:", err)
		os.Exit(2)
	}
	if err := plain.Flush(); err != nil {
		fmt.Fprintln(os.Stderr, "writing the log:", err)
		os.Exit(2)
	}
	if logFile != nil {
		if err := logFile.Close(); err != nil {
			fmt.Fprintln(os.Stderr, "writing the log:", err)
			os.Exit(2)
		}
	}
	if !r.write(os.Stdout, *slowest, *linesPerFailure, os.Getenv("OPENSHIFT_BIN_DIR") != "") {
		if *logPath != "" {
			fmt.Printf("\nthe whole output is in %s\n", *logPath)
		}
		os.Exit(1)
	}
}
