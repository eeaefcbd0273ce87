package integration

import (
	"context"
	"crypto/rand"
	"crypto/tls"
	"encoding/hex"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/util/retry"

	"github.com/samples-operator-dev/cluster-samples-operator/pkg/metrics"
	"github.com/samples-operator-dev/cluster-samples-operator/pkg/operator"
	"github.com/samples-operator-dev/cluster-samples-operator/pkg/payload"
	"github.com/samples-operator-dev/cluster-samples-operator/test/connflood"
	"github.com/samples-operator-dev/cluster-samples-operator/test/controlplane"
)

// memoryBudget1xMiB is the peak RSS make bench allows the operator at 1x inventory
// (test/bench/results.go). floodHeldMiB is what a flood may keep alive in the operator: the
// few connections the caps let it hold and the reviews in flight (about 1 MiB measured with
// GOGC=50). The collector lets the heap run (1 + GOGC/100) times what is alive before it
// collects, so the flood may raise the peak RSS by that much (floodMemoryMiB).
const (
	memoryBudget1xMiB = 40
	floodHeldMiB      = 1.75
)

// requestLeftBehindKiB is what the token flood's bound allows each request on top of
// floodHeldMiB, because what that flood adds to the peak is not set by the operator's caps:
// measured, 2.7 MiB on a quiet machine and on a loaded one (allowed before: 2.6), and 2.7 and
// 3.5 MiB with neither cap, as this test's own client (50 workers) and kube-apiserver's pace
// bound it. The caps are shown there by the reviews at once and the 429s, what a request leaves
// running by the goroutines after the flood, and the RSS bound shows that no more than that
// piles up per request.
const requestLeftBehindKiB = 1

// goroutinesComingAndGoing is how many more goroutines than before a flood the operator may run
// after it for reasons of its own (a watch dialled again, a sync under way).
const goroutinesComingAndGoing = 20

// floodMemoryMiB is what a flood may add to the peak RSS of an operator run with env.
func floodMemoryMiB(t *testing.T, env []string) float64 {
	t.Helper()
	return floodHeldMiB * gcHeadroom(t, env)
}

// gcHeadroom is how far the collector lets the heap run past what is alive in an operator run
// with env (GOGC=N, as deploymentRuntimeEnv gives it; 100 when unset, as the Go runtime has it).
func gcHeadroom(t *testing.T, env []string) float64 {
	t.Helper()
	gogc := 100
	for _, kv := range env {
		if v, ok := strings.CutPrefix(kv, "GOGC="); ok {
			n, err := strconv.Atoi(v)
			if err != nil {
				t.Fatalf("GOGC %q: %v", v, err)
			}
			gogc = n
		}
	}
	return 1 + float64(gogc)/100
}

// peakRSSAfterAHeapCycleKiB is the operator's peak RSS once its heap has grown to the
// collector's goal and been collected, twice, since it settled: the peak the flood is compared
// with must hold what the operator's own garbage takes at its live size, or the flood is
// charged with the collector's headroom that any minute of scrapes would have used. Scrapes
// (each one garbage) drive the cycles, and their go_gc_duration_seconds_count counts them.
func peakRSSAfterAHeapCycleKiB(t *testing.T, pid int, metricsURL, token string, client *http.Client) int {
	t.Helper()
	first := scrapeValue(t, metricsURL, token, client, "go_gc_duration_seconds_count")
	eventually(t, 30*time.Second, func() (bool, string) {
		n := scrapeValue(t, metricsURL, token, client, "go_gc_duration_seconds_count")
		return n >= first+2, fmt.Sprintf("%.0f garbage collections since the operator settled, want 2", n-first)
	})
	return peakRSSKiB(t, pid)
}

// scrapeValue is the value of an unlabelled series the operator exports.
func scrapeValue(t *testing.T, metricsURL, token string, client *http.Client, name string) float64 {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, metricsURL, nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+token)
	resp, err := client.Do(req)
	if err != nil {
		t.Fatalf("scraping %s: %v", name, err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("scraping %s: %s, %v", name, resp.Status, err)
	}
	for _, line := range strings.Split(string(body), "\n") {
		if v, ok := strings.CutPrefix(line, name+" "); ok {
			n, err := strconv.ParseFloat(v, 64)
			if err != nil {
				t.Fatalf("%s %q: %v", name, v, err)
			}
			return n
		}
	}
	t.Fatalf("the operator exports no %s", name)
	return 0
}

// TestTokenFloodOnTheMetricsPort: 2,000 requests with made-up bearer tokens in 10 s, each worth
// a TokenReview, while an admin edits a sample. The revert lands as usual, the lease (renewed
// every second here) is never lost, reviews in flight stay under the cap, and the flood adds
// little to the operator's peak RSS.
func TestTokenFloodOnTheMetricsPort(t *testing.T) {
	e := newEnv(t)
	inv := x86Inventory(t)
	addr := freeLoopbackAddr(t)
	certFile, keyFile, pool := servingCert(t)
	// With the Go runtime settings the Deployment ships, as make bench runs it.
	runtimeEnv := deploymentRuntimeEnv(t)
	p := e.startProcessWithEnv(t, "v1", runtimeEnv,
		"--metrics-bind-address", addr, "--tls-cert-file", certFile, "--tls-private-key-file", keyFile,
		"--leader-elect-lease-duration=4s", "--leader-elect-renew-deadline=3s", "--leader-elect-retry-period=1s")
	e.waitManaged(t, inv, "v1")
	e.waitQuiet(t, 300*time.Millisecond)
	ctx := context.Background()
	scraper := &http.Client{Timeout: 3 * time.Second, Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool}}}
	scrapeToken := serviceAccountToken(ctx, t, e.kube, "openshift-monitoring", "prometheus-k8s")
	peakBeforeKiB := peakRSSAfterAHeapCycleKiB(t, p.cmd.Process.Pid, "https://"+addr+"/metrics", scrapeToken, scraper)
	goroutinesBefore := scrapeValue(t, "https://"+addr+"/metrics", scrapeToken, scraper, "go_goroutines")
	leases := e.kube.CoordinationV1().Leases(controlplane.OperatorNamespace)
	before, err := leases.Get(ctx, operator.LeaseName, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}

	floodStart := time.Now()
	client := &http.Client{Timeout: 15 * time.Second, Transport: &http.Transport{
		TLSClientConfig: &tls.Config{RootCAs: pool}, MaxIdleConnsPerHost: 64, MaxConnsPerHost: 64,
	}}
	var mu sync.Mutex
	codes := map[string]int{}
	var sent atomic.Int32
	var wg sync.WaitGroup
	const requests, window = 2000, 10 * time.Second
	for w := 0; w < 50; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				n := sent.Add(1)
				if n > requests {
					return
				}
				// Spread the requests evenly over the window.
				if wait := time.Until(floodStart.Add(time.Duration(n) * window / requests)); wait > 0 {
					time.Sleep(wait)
				}
				token := make([]byte, 16)
				_, _ = rand.Read(token)
				req, _ := http.NewRequest(http.MethodGet, "https://"+addr+"/metrics", nil)
				req.Header.Set("Authorization", "Bearer "+hex.EncodeToString(token))
				code := "error"
				if resp, err := client.Do(req); err == nil {
					code = strconv.Itoa(resp.StatusCode)
					resp.Body.Close()
				}
				mu.Lock()
				codes[code]++
				mu.Unlock()
			}
		}()
	}

	// Three seconds in, an admin edits python's display name.
	time.Sleep(3 * time.Second)
	var edited time.Time
	err = retry.RetryOnConflict(retry.DefaultRetry, func() error {
		is, err := e.images.ImageV1().ImageStreams("openshift").Get(ctx, "python", metav1.GetOptions{})
		if err != nil {
			return err
		}
		is.Annotations["openshift.io/display-name"] = "edited during the flood"
		_, err = e.images.ImageV1().ImageStreams("openshift").Update(ctx, is, metav1.UpdateOptions{})
		edited = time.Now()
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	want, _ := inv.ImageStream("python")
	var reverted time.Duration
	eventually(t, 20*time.Second, func() (bool, string) {
		got := e.imageStream("python").Annotations["openshift.io/display-name"]
		reverted = time.Since(edited)
		return got == want.Annotations["openshift.io/display-name"], "python's display name is " + got
	})
	wg.Wait()
	floodTook := time.Since(floodStart)
	client.CloseIdleConnections()

	peakKiB := peakRSSKiB(t, p.cmd.Process.Pid)
	after, err := leases.Get(ctx, operator.LeaseName, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}

	// Reviews as the API server saw them: how many, and at most how many at once.
	completed := func(ev controlplane.AuditEvent) bool { return ev.Stage == "ResponseComplete" }
	reviews := e.operatorRequests(t, on("tokenreviews"), completed, not(receivedBefore(floodStart)))
	maxAtOnce := maxOverlap(reviews)
	t.Logf("flood: %d requests in %s, answers %v; %d TokenReviews, at most %d at once; revert after %s; peak RSS %.1f MiB (%.1f MiB before the flood); lease renewed %s -> %s",
		requests, floodTook.Round(time.Millisecond), codes, len(reviews), maxAtOnce, reverted.Round(time.Millisecond), float64(peakKiB)/1024, float64(peakBeforeKiB)/1024,
		before.Spec.RenewTime.Format("15:04:05.000"), after.Spec.RenewTime.Format("15:04:05.000"))

	if reverted > 2*time.Second {
		t.Errorf("the revert took %s under the flood, want within 2s", reverted)
	}
	if *after.Spec.HolderIdentity != *before.Spec.HolderIdentity || !after.Spec.RenewTime.After(before.Spec.RenewTime.Time.Add(window/2)) {
		t.Errorf("the lease was lost or not renewed during the flood: holder %s -> %s, renewed %s -> %s",
			*before.Spec.HolderIdentity, *after.Spec.HolderIdentity, before.Spec.RenewTime, after.Spec.RenewTime)
	}
	select {
	case <-p.done:
		t.Errorf("the operator exited during the flood")
	default:
	}
	if maxAtOnce > metrics.DefaultMaxReviewsInFlight {
		t.Errorf("%d TokenReviews in flight at once, want at most %d", maxAtOnce, metrics.DefaultMaxReviewsInFlight)
	}
	if codes["429"] == 0 || codes["401"] == 0 {
		t.Errorf("answers %v: want both reviewed tokens (401) and refusals above the cap (429)", codes)
	}
	if codes["200"] > 0 {
		t.Errorf("%d made-up tokens were let through", codes["200"])
	}
	// Nothing of a request stays running once its connection is closed: a goroutine left for
	// each would be 2,000 more, yet add no more to the peak RSS than a flood does without the
	// caps (4.7 MiB measured, at about 2.3 KiB each).
	var goroutinesAfter float64
	eventually(t, 10*time.Second, func() (bool, string) {
		goroutinesAfter = scrapeValue(t, "https://"+addr+"/metrics", scrapeToken, scraper, "go_goroutines")
		return goroutinesAfter <= goroutinesBefore+goroutinesComingAndGoing,
			fmt.Sprintf("the operator runs %.0f goroutines after the flood, %.0f before it", goroutinesAfter, goroutinesBefore)
	})
	// What the flood may add: what the caps let it hold, and less than anything a request
	// could leave behind for each of them (requestLeftBehindKiB).
	allowed := (floodHeldMiB + float64(requests*requestLeftBehindKiB)/1024) * gcHeadroom(t, runtimeEnv)
	if grew := float64(peakKiB-peakBeforeKiB) / 1024; grew > allowed {
		t.Errorf("the flood raised the peak RSS by %.1f MiB (to %.1f MiB; the 1x budget is %d MiB), want at most %.1f MiB (%s)",
			grew, float64(peakKiB)/1024, memoryBudget1xMiB, allowed, strings.Join(runtimeEnv, " "))
	}
	p.signal(syscall.SIGTERM)
}

// maxOverlap is the largest number of requests the API server was serving at one time.
func maxOverlap(events []controlplane.AuditEvent) int {
	type edge struct {
		at    time.Time
		delta int
	}
	var edges []edge
	for _, ev := range events {
		edges = append(edges, edge{ev.Received, 1}, edge{ev.Time, -1})
	}
	sort.Slice(edges, func(i, j int) bool {
		if edges[i].at.Equal(edges[j].at) {
			return edges[i].delta < edges[j].delta
		}
		return edges[i].at.Before(edges[j].at)
	})
	most, now := 0, 0
	for _, e := range edges {
		now += e.delta
		most = max(most, now)
	}
	return most
}

// peakRSSKiB is the process's peak resident set (VmHWM).
func peakRSSKiB(t *testing.T, pid int) int {
	t.Helper()
	status, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		t.Fatalf("the operator process is gone: %v", err)
	}
	for _, line := range strings.Split(string(status), "\n") {
		if v, ok := strings.CutPrefix(line, "VmHWM:"); ok {
			kib, err := strconv.Atoi(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")))
			if err != nil {
				t.Fatalf("VmHWM %q: %v", v, err)
			}
			return kib
		}
	}
	t.Fatalf("no VmHWM in /proc/%d/status", pid)
	return 0
}

// openFiles counts the file descriptors process pid has open.
func openFiles(t *testing.T, pid int) int {
	t.Helper()
	fds, err := os.ReadDir(fmt.Sprintf("/proc/%d/fd", pid))
	if err != nil {
		t.Fatalf("the operator process is gone: %v", err)
	}
	return len(fds)
}

// watchOpenFiles samples how many files process pid has open, every 5 ms, until the function
// it returns is called; that returns the most seen.
func watchOpenFiles(t *testing.T, pid int) (peak func() int) {
	t.Helper()
	stop, most := make(chan struct{}), make(chan int, 1)
	go func() {
		seen := 0
		tick := time.NewTicker(5 * time.Millisecond)
		defer tick.Stop()
		for {
			select {
			case <-stop:
				most <- seen
				return
			case <-tick.C:
				if fds, err := os.ReadDir(fmt.Sprintf("/proc/%d/fd", pid)); err == nil {
					seen = max(seen, len(fds))
				}
			}
		}
	}()
	return func() int {
		close(stop)
		return <-most
	}
}

// deploymentRuntimeEnv is the GOGC and GOMEMLIMIT of the operator container in manifests/.
func deploymentRuntimeEnv(t *testing.T) []string {
	t.Helper()
	objs, err := payload.Read(os.DirFS(filepath.Join(controlplane.RepoRoot(), "manifests")))
	if err != nil {
		t.Fatal(err)
	}
	for _, o := range objs {
		if o.Kind != "Deployment" || !o.InProfile(payload.SelfManagedHA) {
			continue
		}
		var d appsv1.Deployment
		if err := o.Decode(&d); err != nil {
			t.Fatal(err)
		}
		var env []string
		for _, e := range d.Spec.Template.Spec.Containers[0].Env {
			if e.Name == "GOGC" || e.Name == "GOMEMLIMIT" {
				env = append(env, e.Name+"="+e.Value)
			}
		}
		return env
	}
	t.Fatal("no operator Deployment in manifests/")
	return nil
}

// healthMaxConnections is the health listener's cap on open connections (pkg/metrics' of the
// same name): the places a flood of the health port fills.
const healthMaxConnections = 4

// TestConnectionFloodLeavesProbesAndScrapesAnswered: a client without any token, from an address
// of its own (127.0.0.2, as another pod), holds 64 connections to the metrics port (40 idle
// after the TLS handshake, 8 stuck halfway through a request's headers, 16 silent), eight times
// the server's cap, and 24 to the health port, six times its cap, opening each again as soon as
// it is closed. For longer than the server's header and idle timeouts, the kubelet's
// liveness and readiness probes (on the health port, as manifests/ has them) each answer
// within a second, a scraper with Prometheus's token gets its metrics each time, and the flood
// adds little to the operator's peak RSS.
func TestConnectionFloodLeavesProbesAndScrapesAnswered(t *testing.T) {
	e := newEnv(t)
	inv := x86Inventory(t)
	metricsAddr, healthAddr := freeLoopbackAddr(t), freeLoopbackAddr(t)
	certFile, keyFile, pool := servingCert(t)
	runtimeEnv := deploymentRuntimeEnv(t)
	p := e.startProcessWithEnv(t, "v1", runtimeEnv,
		"--metrics-bind-address", metricsAddr, "--health-probe-bind-address", healthAddr,
		"--tls-cert-file", certFile, "--tls-private-key-file", keyFile)
	e.waitManaged(t, inv, "v1")
	token := serviceAccountToken(context.Background(), t, e.kube, "openshift-monitoring", "prometheus-k8s")

	// As the kubelet probes (timeoutSeconds 1, a new connection each time) and as Prometheus
	// scrapes (its token, the serving CA), well within Prometheus's 10 s scrape timeout, if
	// sixty times as often.
	probe := &http.Client{Timeout: time.Second, Transport: &http.Transport{DisableKeepAlives: true}}
	scraper := &http.Client{Timeout: 3 * time.Second, Transport: &http.Transport{
		TLSClientConfig: &tls.Config{RootCAs: pool}, DisableKeepAlives: true,
	}}
	probes := []connflood.Probe{
		{Name: "liveness", URL: "http://" + healthAddr + "/healthz", Client: probe, Period: 200 * time.Millisecond},
		{Name: "readiness", URL: "http://" + healthAddr + "/readyz", Client: probe, Period: 200 * time.Millisecond},
		{Name: "scrape", URL: "https://" + metricsAddr + "/metrics", Client: scraper, Period: time.Second,
			Header: http.Header{"Authorization": {"Bearer " + token}}},
	}
	// The peak to compare with is that of an operator already probed and scraped: the first TLS
	// handshake and scrape cost what they cost, flood or not.
	for _, pr := range probes {
		if r := pr.Once(); r.Err != nil || r.Status != http.StatusOK {
			t.Fatalf("%s before the flood: %s", pr.Name, r)
		}
	}
	e.waitQuiet(t, 300*time.Millisecond)
	peakBeforeKiB := peakRSSAfterAHeapCycleKiB(t, p.cmd.Process.Pid, "https://"+metricsAddr+"/metrics", token, scraper)
	filesBefore := openFiles(t, p.cmd.Process.Pid)
	filesPeak := watchOpenFiles(t, p.cmd.Process.Pid)

	const attacker = "127.0.0.2"
	flood := connflood.Start(connflood.Hold{Addr: metricsAddr, From: attacker, TLS: &tls.Config{RootCAs: pool},
		Idle: 40, Partial: 8, Silent: 16})
	defer flood.Stop()
	healthFlood := connflood.Start(connflood.Hold{Addr: healthAddr, From: attacker, Partial: 8, Silent: 16})
	defer healthFlood.Stop()
	// The probes begin once every idle or partial connection has shaken hands: how soon the
	// server's timeouts make room for the last of them depends on the machine's load, not on
	// the server (without the race detector the window below closed at 42 of 48 in CI).
	eventually(t, 20*time.Second, func() (bool, string) {
		return flood.Opened() >= 64 && healthFlood.Opened() >= 24 && flood.Handshakes() >= 48,
			fmt.Sprintf("the flood has opened %d and %d connections, %d TLS handshakes done", flood.Opened(), healthFlood.Opened(), flood.Handshakes())
	})
	ctx, cancel := context.WithTimeout(context.Background(), 8*time.Second)
	defer cancel()
	// The flood's connections open while the probes run, every 50 ms: the probes prove something
	// only if they met a full table. The fair listener accepts at once and closes what it makes
	// room with, so what the flood has open is what the server's table holds of it.
	// Likewise the health port's, where the liveness and readiness probes go.
	openDuringProbes := make(chan [2][]int, 1)
	go func() {
		var open, healthOpen []int
		for tick := time.NewTicker(50 * time.Millisecond); ; {
			select {
			case <-ctx.Done():
				tick.Stop()
				openDuringProbes <- [2][]int{open, healthOpen}
				return
			case <-tick.C:
				open = append(open, flood.Open())
				healthOpen = append(healthOpen, healthFlood.Open())
			}
		}
	}()
	results := connflood.Repeat(ctx, probes...)
	sampled := <-openDuringProbes
	// The caps, seen from the operator's side: the flood's 88 connections may take no more file
	// descriptors than the two tables' places, plus one newcomer per listener between its
	// accept and the close of the connection it replaces (or its own refusal), plus a few of
	// the operator's own that come and go whatever the flood does (a client connection opened
	// for a scrape's TokenReview, a watch dialled again). Without the caps the flood holds 90.
	const ownFilesComingAndGoing = 6
	held, allowed := filesPeak()-filesBefore, metrics.DefaultMaxConnections+healthMaxConnections+2+ownFilesComingAndGoing
	t.Logf("the operator had at most %d files open during the flood, %d before it", filesBefore+held, filesBefore)
	if held > allowed {
		t.Errorf("during the flood the operator had %d more files open than before it, want at most %d (the metrics and health ports' places, one newcomer each and %d of its own)", held, allowed, ownFilesComingAndGoing)
	}
	open, healthOpen := sampled[0], sampled[1]
	peakKiB := peakRSSKiB(t, p.cmd.Process.Pid)
	t.Logf("the flood opened %d connections to the metrics port (%d TLS handshakes done, at most %d held at once after one) and %d to the health port; peak RSS %.1f MiB (%.1f MiB before)",
		flood.Opened(), flood.Handshakes(), flood.PeakHeld(), healthFlood.Opened(), float64(peakKiB)/1024, float64(peakBeforeKiB)/1024)
	// A flood is one only if the server takes it in: each idle or partial connection shook
	// hands at least once, and the flood held connections at once, up to the metrics server's
	// cap. On a loaded machine the server's timeouts close some held connections before the last
	// of the cap is opened (7 of 8 seen in CI): half the cap held at once still is a flood that
	// got in, where a flood whose handshakes fail holds none.
	if flood.Handshakes() < 48 || flood.PeakHeld() < metrics.DefaultMaxConnections/2 {
		t.Errorf("the flood completed %d TLS handshakes (want 48) and held at most %d at once (want at least half the cap of %d): it did not hold the port",
			flood.Handshakes(), flood.PeakHeld(), metrics.DefaultMaxConnections)
	}
	// The table was full while the probes ran: in at least nine samples of ten the flood had
	// every place but the one a probe or scrape takes for a moment (the fair listener makes room
	// for it by closing one of the flood's, which the flood opens again 50 ms later).
	if len(open) == 0 {
		t.Fatal("no sample of the flood was taken during the probes")
	}
	// On the health port the liveness and readiness probes come five times a second each, and
	// may come at once: two places taken for a moment, one below what is checked, in some
	// samples (2 to 7 in a hundred seen), so four in five suffice there.
	for _, port := range []struct {
		name         string
		open         []int
		places       int
		tenthsNeeded int
	}{{"metrics", open, metrics.DefaultMaxConnections, 9}, {"health", healthOpen, healthMaxConnections, 8}} {
		full := 0
		for _, n := range port.open {
			if n >= port.places-1 {
				full++
			}
		}
		slices.Sort(port.open)
		t.Logf("during the probes the flood had open on the %s port, of %d samples: least %d, median %d; %d samples at %d or more",
			port.name, len(port.open), port.open[0], port.open[len(port.open)/2], full, port.places-1)
		if full*10 < len(port.open)*port.tenthsNeeded {
			t.Errorf("the flood held %d or more of the %s port's %d places in %d of %d samples during the probes, want at least %d in ten: the probes did not meet a full table",
				port.places-1, port.name, port.places, full, len(port.open), port.tenthsNeeded)
		}
	}
	connflood.Expect(t, "liveness", results["liveness"], probe.Timeout)
	connflood.Expect(t, "readiness", results["readiness"], probe.Timeout)
	connflood.Expect(t, "scrape", results["scrape"], scraper.Timeout)
	select {
	case <-p.done:
		t.Errorf("the operator exited during the flood")
	default:
	}
	if grew, allowed := float64(peakKiB-peakBeforeKiB)/1024, floodMemoryMiB(t, runtimeEnv); grew > allowed {
		t.Errorf("the flood raised the peak RSS by %.1f MiB (to %.1f MiB; the 1x budget is %d MiB), want at most %.1f MiB (%s)",
			grew, float64(peakKiB)/1024, memoryBudget1xMiB, allowed, strings.Join(runtimeEnv, " "))
	}
	p.signal(syscall.SIGTERM)
}
