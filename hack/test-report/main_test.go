package main

import (
	"bytes"
	"fmt"
	"strings"
	"testing"
)

func TestReportPrintsOnlyWhatFailedAndTheSlowest(t *testing.T) {
	r := newReport()
	for _, ev := range []event{
		{Action: "start", Package: "p/unit"},
		{Action: "run", Package: "p/unit", Test: "TestFast"},
		{Action: "output", Package: "p/unit", Test: "TestFast", Output: "fast log line\n"},
		{Action: "pass", Package: "p/unit", Test: "TestFast", Elapsed: 0.1},
		{Action: "pass", Package: "p/unit", Elapsed: 0.5},

		{Action: "run", Package: "p/integration", Test: "TestParent"},
		{Action: "run", Package: "p/integration", Test: "TestParent/child"},
		{Action: "run", Package: "p/integration", Test: "TestSlow"},
		{Action: "output", Package: "p/integration", Test: "TestParent/child", Output: "    x_test.go:10: the reason\n"},
		{Action: "output", Package: "p/integration", Test: "TestParent/child", Output: "server log line\n"},
		{Action: "output", Package: "p/integration", Test: "TestSlow", Output: "slow but fine\n"},
		{Action: "fail", Package: "p/integration", Test: "TestParent/child", Elapsed: 2},
		{Action: "fail", Package: "p/integration", Test: "TestParent", Elapsed: 3},
		{Action: "pass", Package: "p/integration", Test: "TestSlow", Elapsed: 40},
		{Action: "run", Package: "p/integration", Test: "TestHung"},
		{Action: "output", Package: "p/integration", Test: "TestHung", Output: "waiting\n"},
		{Action: "output", Package: "p/integration", Output: "panic: test timed out after 40m0s\n"},
		{Action: "fail", Package: "p/integration", Elapsed: 2400},

		// Tests that waited for a turn: the wait is not the test's time. A parent whose subtests
		// took turns is listed by its subtests.
		{Action: "run", Package: "p/integration", Test: "TestWaited"},
		{Action: "output", Package: "p/integration", Test: "TestWaited", Output: "    schedule_test.go:99: waited 35s for a turn\n"},
		{Action: "pass", Package: "p/integration", Test: "TestWaited", Elapsed: 60},
		{Action: "run", Package: "p/integration", Test: "TestGroup"},
		{Action: "run", Package: "p/integration", Test: "TestGroup/a"},
		{Action: "output", Package: "p/integration", Test: "TestGroup/a", Output: "    schedule_test.go:99: waited 1m0s for a turn\n"},
		{Action: "pass", Package: "p/integration", Test: "TestGroup/a", Elapsed: 90},
		{Action: "pass", Package: "p/integration", Test: "TestGroup", Elapsed: 91},

		{Action: "output", Package: "p/broken", Output: "x.go:1: syntax error\n"},
		{Action: "fail", Package: "p/broken"},
	} {
		r.add(ev)
	}
	var out bytes.Buffer
	if r.write(&out, 4, 10, false) {
		t.Errorf("write reported success with failures")
	}
	got := out.String()
	for _, want := range []string{
		"ok  \tp/unit\t0.5s",
		"FAIL\tp/integration\t2400.0s",
		"=== FAIL TestParent/child (p/integration, 2.0s)\n    x_test.go:10: the reason\nserver log line\n--- TestParent/child: its own messages:\n    x_test.go:10: the reason\n",
		"=== DID NOT FINISH TestHung (p/integration, 0.0s)\nwaiting\n",
		"=== p/broken failed outside its tests:\nx.go:1: syntax error\n",
		"slowest tests:\n     40.0s  TestSlow (integration)\n     30.0s  TestGroup/a (integration, after 60.0s waiting for a turn)\n" +
			"     25.0s  TestWaited (integration, after 35.0s waiting for a turn)\n      3.0s  TestParent (integration)\n",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("the report lacks %q:\n%s", want, got)
		}
	}
	for _, unwanted := range []string{"=== FAIL TestParent (", "fast log line", "slow but fine"} {
		if strings.Contains(got, unwanted) {
			t.Errorf("the report holds %q, which did not fail:\n%s", unwanted, got)
		}
	}
}

func TestReportOfPassingRunIsOK(t *testing.T) {
	r := newReport()
	r.add(event{Action: "run", Package: "p", Test: "TestA"})
	r.add(event{Action: "pass", Package: "p", Test: "TestA", Elapsed: 1})
	r.add(event{Action: "pass", Package: "p", Elapsed: 1})
	var out bytes.Buffer
	if !r.write(&out, 5, 10, false) {
		t.Errorf("a passing run reported failure:\n%s", out.String())
	}
}

// TestReportListsSkippedTestsAndFailsARealRunThatSkippedForWantOfAServer: every skipped test is
// listed with its reason; against the real servers (OPENSHIFT_BIN_DIR) a test that skipped for
// want of one (requireReal's "needs the real ...") fails the run, other skips do not.
func TestReportListsSkippedTestsAndFailsARealRunThatSkippedForWantOfAServer(t *testing.T) {
	r := newReport()
	for _, ev := range []event{
		{Action: "run", Package: "p/integration", Test: "TestCVOInstalls"},
		{Action: "output", Package: "p/integration", Test: "TestCVOInstalls", Output: "    schedule_test.go:99: waited 0s for a turn\n"},
		{Action: "output", Package: "p/integration", Test: "TestCVOInstalls", Output: "    cvo_harness_test.go:62: needs the real cluster-version-operator: /x holds none\n"},
		{Action: "skip", Package: "p/integration", Test: "TestCVOInstalls"},
		{Action: "run", Package: "p/integration", Test: "TestScenes"},
		{Action: "run", Package: "p/integration", Test: "TestScenes/B"},
		{Action: "output", Package: "p/integration", Test: "TestScenes/B", Output: "    scenes_test.go:40: not run: scene A left the cluster elsewhere\n"},
		{Action: "skip", Package: "p/integration", Test: "TestScenes/B"},
		{Action: "pass", Package: "p/integration", Test: "TestScenes"},
		{Action: "run", Package: "p/unit", Test: "TestNeedsXZ"},
		{Action: "skip", Package: "p/unit", Test: "TestNeedsXZ"},
		{Action: "pass", Package: "p/integration", Elapsed: 1},
		{Action: "pass", Package: "p/unit", Elapsed: 1},
	} {
		r.add(ev)
	}
	list := "skipped tests:\n" +
		"  %sTestCVOInstalls (integration): cvo_harness_test.go:62: needs the real cluster-version-operator: /x holds none%s\n" +
		"  TestScenes/B (integration): scenes_test.go:40: not run: scene A left the cluster elsewhere\n" +
		"  TestNeedsXZ (unit): (no reason given)\n"
	for _, tc := range []struct {
		real       bool
		ok         bool
		mark, note string
	}{
		{real: false, ok: true},
		{real: true, ok: false, mark: "FAIL ", note: " (OPENSHIFT_BIN_DIR is set: the run against the real servers must not skip it)"},
	} {
		var out bytes.Buffer
		if ok := r.write(&out, 5, 10, tc.real); ok != tc.ok {
			t.Errorf("real=%v: write reported ok=%v, want %v:\n%s", tc.real, ok, tc.ok, out.String())
		}
		if want := fmt.Sprintf(list, tc.mark, tc.note); !strings.Contains(out.String(), want) {
			t.Errorf("real=%v: the report lacks\n%s\nin:\n%s", tc.real, want, out.String())
		}
	}
}

func TestLastLinesKeepsTheEnd(t *testing.T) {
	got := lastLines([]string{"1\n", "2\n", "3\n"}, 2)
	if strings.Join(got, "") != "... (1 earlier lines in the log)\n2\n3\n" {
		t.Errorf("lastLines = %q", got)
	}
}
