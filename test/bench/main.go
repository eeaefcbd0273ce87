// Command bench measures the operator against a local control plane: time to converge, its API
// requests (from the kube-apiserver's audit log), steady-state requests, revert latencies,
// Managed -> Removed -> Managed, and peak RSS, at the embedded inventory's size and at ten times
// that, and at the embedded inventory's size again on a cluster of 5,000 Nodes (--nodes), for
// what the operator's Nodes informer costs. It prints a table and writes JSON; with --check it
// also enforces the budgets of issues 7, 16 and 50 and exits 1 when one is missed.
//
//	make bench         run, print, write _output/bench/results.json
//	make bench-check   check the budgets on results.json when it was measured with the current
//	                   binary (same SHA-256) and Go runtime settings, else run the bench first
//
// Every run starts its own etcd and kube-apiserver on 127.0.0.1; the operator runs as a separate
// process, as its own service account, with its registry probe pointed at a loopback TLS
// listener and its metrics server on 127.0.0.1. Nothing dials outside 127.0.0.0/8.
package main

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/samples-operator-dev/cluster-samples-operator/test/controlplane"
)

func main() {
	var opts options
	var check, rerun bool
	var scales, resync, runtimeEnv string
	flag.StringVar(&opts.binDir, "bin-dir", "_output/bin", "directory with etcd, kube-apiserver and cluster-samples-operator")
	flag.StringVar(&opts.outDir, "out-dir", "_output/bench", "where results.json, the operator logs and the control planes' data go")
	flag.StringVar(&opts.releaseVersion, "release-version", "0.0.1-bench", "RELEASE_VERSION given to the operator")
	flag.DurationVar(&opts.steady, "steady", 60*time.Second, "length of the steady-state window")
	flag.IntVar(&opts.reverts, "reverts", 10, "how many drifts of each kind to revert")
	flag.IntVar(&opts.nodes, "nodes", 5000, "after the 1x run, run 1x again with this many Node objects created first, to measure what the operator's Nodes informer costs (0: no such run)")
	flag.DurationVar(&opts.storm, "storm", time.Minute, "in the nodes run, after the steady-state window, write every Node's status once a minute for this long and measure the operator meanwhile (0: no storm)")
	flag.IntVar(&opts.outages, "outages", 3, "after the other runs, on a fresh control plane with the real openshift-apiserver ($OPENSHIFT_BIN_DIR), stop it this many times, a sample deleted from etcd meanwhile, and time the sample's return (0: none)")
	flag.IntVar(&opts.heals, "heals", 3, "after the other runs, on a fresh control plane with the stand-ins, make imports fail this many times and time their heal once the cause goes (0: none)")
	flag.BoolVar(&opts.recoveryOnly, "recovery-only", false, "run only the recovery runs (--outages, --heals)")
	flag.StringVar(&runtimeEnv, "runtime-env", "", "GOGC and GOMEMLIMIT to run the operator with instead of the Deployment's, comma-separated NAME=value, to compare settings (results.json records what ran)")
	flag.StringVar(&scales, "scales", "1,10", "inventory multiples to run, each on a fresh control plane")
	flag.StringVar(&resync, "resync", "20s", "informer resync passed to the operator as --resync when its binary has that flag")
	flag.BoolVar(&check, "check", false, "enforce the budgets; exit 1 when one is missed")
	flag.BoolVar(&rerun, "rerun", false, "with --check: run the bench even when results.json matches the binary")
	flag.Parse()
	if runtimeEnv != "" {
		for _, kv := range strings.Split(runtimeEnv, ",") {
			name, _, _ := strings.Cut(kv, "=")
			if !slices.Contains(runtimeEnvNames, name) {
				fmt.Fprintf(os.Stderr, "bench: --runtime-env: %q is not one of %v\n", kv, runtimeEnvNames)
				os.Exit(2)
			}
			opts.runtimeEnvOverride = append(opts.runtimeEnvOverride, kv)
		}
	}
	if err := run(opts, scales, resync, check, rerun); err != nil {
		fmt.Fprintln(os.Stderr, "bench:", err)
		os.Exit(1)
	}
}

var errBudget = errors.New("budgets missed")

func run(opts options, scaleList, resync string, check, rerun bool) error {
	opts.binDir, _ = filepath.Abs(opts.binDir)
	binary := filepath.Join(opts.binDir, "cluster-samples-operator")
	sum, err := fileSHA256(binary)
	if err != nil {
		return fmt.Errorf("the operator binary: %w (run `make build`)", err)
	}
	resultsPath := filepath.Join(opts.outDir, "results.json")
	if opts.runtimeEnv, err = deploymentRuntimeEnv(filepath.Join(controlplane.RepoRoot(), "manifests", "06-operator.yaml")); err != nil {
		return fmt.Errorf("the operator's Go runtime settings: %w", err)
	}
	opts.runtimeEnv = overrideEnv(opts.runtimeEnv, opts.runtimeEnvOverride)

	var res *Results
	if check && !rerun {
		if prev, err := readResults(resultsPath); err == nil && prev.BinarySHA256 == sum && prev.ReleaseVersion == opts.releaseVersion &&
			slices.Equal(prev.RuntimeEnv, opts.runtimeEnv) {
			fmt.Printf("Checking %s, measured %s with this binary (make bench, or --rerun, measures again).\n\n", resultsPath, prev.Started.Format(time.RFC3339))
			res = prev
		}
	}
	if res == nil {
		var scales []int
		for _, f := range strings.Split(scaleList, ",") {
			n, err := strconv.Atoi(strings.TrimSpace(f))
			if err != nil || n < 1 {
				return fmt.Errorf("--scales: %q is not a positive integer", f)
			}
			scales = append(scales, n)
		}
		if res, err = measure(opts, binary, sum, resync, scales); err != nil {
			return err
		}
		if err := writeResults(resultsPath, res); err != nil {
			return err
		}
		fmt.Println()
	}
	if len(res.Scales) > 0 {
		printTable(os.Stdout, res)
	}
	printRecovery(os.Stdout, res.Recovery)
	if res.ResyncFlag == "" {
		fmt.Println("\nThe operator has no --resync flag: the steady-state window saw no informer resync (default 10 min).")
	} else {
		fmt.Printf("\nThe operator ran with %s: the steady-state window covered informer resyncs.\n", res.ResyncFlag)
	}
	if len(res.RuntimeEnv) > 0 {
		fmt.Printf("Go runtime settings of the Deployment: %s.\n", strings.Join(res.RuntimeEnv, " "))
	}
	fmt.Printf("Results: %s\n\nBudgets:\n", resultsPath)
	failed := 0
	for _, b := range CheckBudgets(res) {
		fmt.Println("  " + b.String())
		if !b.Pass {
			failed++
		}
	}
	if check && failed > 0 {
		return fmt.Errorf("%w: %d", errBudget, failed)
	}
	return nil
}

func measure(opts options, binary, sum, resync string, scales []int) (*Results, error) {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	res := &Results{Started: time.Now(), Binary: binary, BinarySHA256: sum, ReleaseVersion: opts.releaseVersion, NumCPU: runtime.NumCPU()}
	if hasFlag(binary, "resync") {
		opts.resyncFlag = "--resync=" + resync
		res.ResyncFlag = opts.resyncFlag
	}
	res.RuntimeEnv = opts.runtimeEnv
	type run struct{ scale, nodes int }
	var runs []run
	for _, scale := range scales {
		runs = append(runs, run{scale, 0})
	}
	if opts.nodes > 0 && slices.Contains(scales, 1) {
		runs = append(runs, run{1, opts.nodes})
	}
	if opts.recoveryOnly {
		runs = nil
	}
	for _, rn := range runs {
		s, err := runScale(ctx, opts, rn.scale, rn.nodes)
		if err != nil {
			name := runName(rn.scale, rn.nodes)
			return nil, fmt.Errorf("%s: %w (logs in %s)", name, err, filepath.Join(opts.outDir, name))
		}
		res.Scales = append(res.Scales, *s)
	}
	if opts.outages > 0 || opts.heals > 0 {
		rec, err := runRecovery(ctx, opts)
		if err != nil {
			return nil, err
		}
		res.Recovery = rec
	}
	res.Seconds = time.Since(res.Started).Seconds()
	return res, nil
}

// hasFlag reports whether `binary operator --help` lists --name.
func hasFlag(binary, name string) bool {
	out, _ := exec.Command(binary, "operator", "--help").CombinedOutput()
	return regexp.MustCompile(`(?m)^\s+(-\w, )?--` + regexp.QuoteMeta(name) + `[ =]`).Match(out)
}

func fileSHA256(path string) (string, error) {
	f, err := os.Open(path)
	if err != nil {
		return "", err
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return "", err
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

func readResults(path string) (*Results, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var r Results
	return &r, json.Unmarshal(data, &r)
}

func writeResults(path string, r *Results) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	data, err := json.MarshalIndent(r, "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(path, append(data, '\n'), 0o644)
}

// overrideEnv is env (NAME=value) with the names override sets replaced or added.
func overrideEnv(env, override []string) []string {
	out := slices.Clone(env)
	for _, kv := range override {
		name, _, _ := strings.Cut(kv, "=")
		out = slices.DeleteFunc(out, func(e string) bool { return strings.HasPrefix(e, name+"=") })
		out = append(out, kv)
	}
	return out
}
