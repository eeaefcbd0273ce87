package integration

// Turning scrapes of the operator into `promtool test rules` files. The alert tests
// (alerts_test.go) decide what the cluster looks like and which alerts an admin must see; this
// file only translates: scraped samples to input series, the PrometheusRule to a plain rule file,
// and the expectations to promtool's alert_rule_test entries.

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
	"sigs.k8s.io/yaml"

	"github.com/samples-operator-dev/cluster-samples-operator/test/controlplane"
)

const (
	// ruleTestStep is both the spacing of the input samples and the rule evaluation interval: the
	// ServiceMonitor scrapes every minute, and Prometheus evaluates rules every minute.
	ruleTestStep = time.Minute
	// slowestRetry is how often, in rule-test time, a counter that grew between two scrapes keeps
	// growing: the operator retries a failing imagestream at most 15 minutes apart (its jitter
	// never takes a delay past the interval), so the alerts must hold when every retry comes as
	// late as that. The scenarios run the operator with a retry interval of a fraction of a
	// second; what carries over is that it retries, not how often.
	slowestRetry = 15 * time.Minute
	// scrapedFamilyPrefix picks the operator's own metrics out of a scrape; the Go and process
	// collectors' series play no part in the alerts.
	scrapedFamilyPrefix = "openshift_samples_"
)

// scrapeTargetLabels are the labels Prometheus adds to every series it scrapes through the
// ServiceMonitor of manifests/06-servicemonitor.yaml; an alert that keeps its series' labels
// carries them. The pod name and address are examples.
var scrapeTargetLabels = map[string]string{
	"namespace": "openshift-cluster-samples-operator",
	"service":   "metrics",
	"job":       "metrics",
	"endpoint":  "60000",
	"container": "cluster-samples-operator",
	"pod":       "cluster-samples-operator-6b9c7d5f4-8xk2p",
	"instance":  "10.128.0.42:60000",
}

// scrapedSample is one series of a scrape, by its selector (name and sorted labels).
type scrapedSample struct {
	value   float64
	counter bool
	// exported is the series as the operator exports it, without the target's labels.
	exported string
}

// parseScrape reads a /metrics body in the text exposition format and keeps the operator's own
// series, with the scrape target's labels added as Prometheus would.
func parseScrape(body string) (map[string]scrapedSample, error) {
	parser := expfmt.NewTextParser(model.UTF8Validation)
	families, err := parser.TextToMetricFamilies(strings.NewReader(body))
	if err != nil {
		return nil, fmt.Errorf("parsing the scrape: %w", err)
	}
	out := map[string]scrapedSample{}
	for name, family := range families {
		if !strings.HasPrefix(name, scrapedFamilyPrefix) {
			continue
		}
		for _, m := range family.GetMetric() {
			labels := maps.Clone(scrapeTargetLabels)
			own := map[string]string{}
			for _, l := range m.GetLabel() {
				own[l.GetName()] = l.GetValue()
				if _, clash := labels[l.GetName()]; clash {
					// Prometheus would rename it exported_<name>; no metric of ours should make it.
					return nil, fmt.Errorf("%s has a label %q that the scrape target's label would override", name, l.GetName())
				}
				labels[l.GetName()] = l.GetValue()
			}
			var s scrapedSample
			switch family.GetType() {
			case dto.MetricType_GAUGE:
				s = scrapedSample{value: m.GetGauge().GetValue()}
			case dto.MetricType_COUNTER:
				s = scrapedSample{value: m.GetCounter().GetValue(), counter: true}
			default:
				return nil, fmt.Errorf("%s is a %s; the rule tests know gauges and counters only", name, family.GetType())
			}
			s.exported = seriesSelector(name, own)
			out[seriesSelector(name, labels)] = s
		}
	}
	return out, nil
}

func seriesSelector(name string, labels map[string]string) string {
	var pairs []string
	for _, k := range slices.Sorted(maps.Keys(labels)) {
		pairs = append(pairs, k+"="+strconv.Quote(labels[k]))
	}
	return name + "{" + strings.Join(pairs, ",") + "}"
}

// inputSeries turns two scrapes of a steady situation into promtool input series spanning length:
// a gauge is held at its value (it must be the same in both scrapes), a counter that did not grow
// is held too, and one that grew (or appeared) between them grows by one every slowestRetry.
func inputSeries(first, second map[string]scrapedSample, length time.Duration) ([]promtoolSeries, error) {
	var problems []string
	for sel := range first {
		if _, ok := second[sel]; !ok {
			problems = append(problems, sel+" went away between the two scrapes")
		}
	}
	samples := int(length / ruleTestStep)
	var series []promtoolSeries
	for _, sel := range slices.Sorted(maps.Keys(second)) {
		now := second[sel]
		before, seen := first[sel]
		switch {
		case !now.counter && seen && before.value != now.value:
			problems = append(problems, fmt.Sprintf("gauge %s changed between the two scrapes (%g, then %g): the situation is not steady yet", sel, before.value, now.value))
		case !now.counter && !seen:
			problems = append(problems, "gauge "+sel+" appeared between the two scrapes: the situation is not steady yet")
		case now.counter && (!seen || now.value > before.value):
			start := now.value
			if seen {
				start = before.value
			}
			series = append(series, promtoolSeries{Series: sel, Values: steps(start, int(slowestRetry/ruleTestStep), samples)})
		default:
			series = append(series, promtoolSeries{Series: sel, Values: fmt.Sprintf("%sx%d", formatValue(now.value), samples)})
		}
	}
	if len(problems) > 0 {
		return nil, fmt.Errorf("%s", strings.Join(problems, "\n"))
	}
	return series, nil
}

// steps writes, in promtool's expanding notation, a counter that starts at start and grows by one
// after every `every` samples, samples+1 values in all ("5x16" is seventeen 5s).
func steps(start float64, every, samples int) string {
	var terms []string
	for left, v := samples+1, start; left > 0; left, v = left-every, v+1 {
		terms = append(terms, fmt.Sprintf("%sx%d", formatValue(v), min(every, left)-1))
	}
	return strings.Join(terms, " ")
}

func formatValue(v float64) string {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return strconv.FormatFloat(v, 'g', -1, 64) // promtool reads NaN, +Inf and -Inf as written
	}
	return strconv.FormatFloat(v, 'f', -1, 64)
}

// The file format of `promtool test rules`.
type promtoolTestFile struct {
	RuleFiles          []string            `json:"rule_files"`
	EvaluationInterval string              `json:"evaluation_interval"`
	Tests              []promtoolTestGroup `json:"tests"`
}

type promtoolTestGroup struct {
	Name          string              `json:"name"`
	Interval      string              `json:"interval"`
	InputSeries   []promtoolSeries    `json:"input_series"`
	AlertRuleTest []promtoolAlertTest `json:"alert_rule_test"`
}

type promtoolSeries struct {
	Series string `json:"series"`
	Values string `json:"values"`
}

type promtoolAlertTest struct {
	EvalTime  string          `json:"eval_time"`
	Alertname string          `json:"alertname"`
	ExpAlerts []promtoolAlert `json:"exp_alerts"`
}

type promtoolAlert struct {
	ExpLabels      map[string]string `json:"exp_labels"`
	ExpAnnotations map[string]string `json:"exp_annotations"`
}

// alertingRule is what the tests need to know of each alert in the PrometheusRule.
type alertingRule struct {
	name        string
	forDuration time.Duration
	// reads are the operator's metrics its expression names.
	reads []string
}

// metricNameRE is a PromQL identifier: a metric's name where it stands outside a string.
var metricNameRE = regexp.MustCompile(`[a-zA-Z_:][a-zA-Z0-9_:]*`)

// readByRules keeps the scraped series of the metrics some alert reads. Only those decide what
// promtool finds, and only those must be steady between the two scrapes: a restarted operator
// makes its first verdicts on the samples a moment after it serves /metrics, and the series
// that name them (openshift_samples_unusable_info, which no alert reads) may appear between the
// scrapes while every series an alert reads holds still.
func readByRules(samples map[string]scrapedSample, alerts []alertingRule) map[string]scrapedSample {
	read := map[string]bool{}
	for _, a := range alerts {
		for _, name := range a.reads {
			read[name] = true
		}
	}
	out := map[string]scrapedSample{}
	for sel, s := range samples {
		if name, _, _ := strings.Cut(sel, "{"); read[name] {
			out[sel] = s
		}
	}
	return out
}

// prometheusRuleFile returns the spec of manifests/010-prometheus-rules.yaml as a plain rule file
// (promtool does not read PrometheusRule objects) and the alerts it defines, in order.
func prometheusRuleFile(t *testing.T) ([]byte, []alertingRule) {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(controlplane.RepoRoot(), "manifests", "010-prometheus-rules.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var obj struct {
		Kind string          `json:"kind"`
		Spec json.RawMessage `json:"spec"`
	}
	if err := yaml.Unmarshal(data, &obj); err != nil || obj.Kind != "PrometheusRule" {
		t.Fatalf("manifests/010-prometheus-rules.yaml is not a PrometheusRule (%s): %v", obj.Kind, err)
	}
	var spec struct {
		Groups []struct {
			Rules []struct {
				Alert string `json:"alert"`
				For   string `json:"for"`
				Expr  string `json:"expr"`
			} `json:"rules"`
		} `json:"groups"`
	}
	if err := yaml.Unmarshal(obj.Spec, &spec); err != nil {
		t.Fatal(err)
	}
	var alerts []alertingRule
	for _, g := range spec.Groups {
		for _, r := range g.Rules {
			d, err := model.ParseDuration(r.For)
			if r.Alert == "" || err != nil {
				t.Fatalf("rule %q: for %q: %v; every rule here is an alert with a duration", r.Alert, r.For, err)
			}
			a := alertingRule{name: r.Alert, forDuration: time.Duration(d)}
			for _, name := range metricNameRE.FindAllString(r.Expr, -1) {
				if strings.HasPrefix(name, scrapedFamilyPrefix) && !slices.Contains(a.reads, name) {
					a.reads = append(a.reads, name)
				}
			}
			if len(a.reads) == 0 {
				t.Fatalf("rule %s reads none of the operator's metrics (%s...)", r.Alert, scrapedFamilyPrefix)
			}
			alerts = append(alerts, a)
		}
	}
	rules, err := yaml.JSONToYAML(obj.Spec)
	if err != nil {
		t.Fatal(err)
	}
	return rules, alerts
}

// promtoolPath is _output/bin/promtool (or $PROMTOOL), which `make test` builds first.
func promtoolPath(t *testing.T) string {
	t.Helper()
	path := os.Getenv("PROMTOOL")
	if path == "" {
		path = filepath.Join(controlplane.RepoRoot(), "_output", "bin", "promtool")
	}
	if _, err := os.Stat(path); err != nil {
		t.Fatalf("promtool is not built at %s: run `make _output/bin/promtool` first", path)
	}
	return path
}

// runPromtool runs `promtool test rules` on a test file next to the rule file, and returns its
// output when the rules do not pass.
func runPromtool(t *testing.T, promtool, dir string, rules []byte, tests promtoolTestFile) (string, error) {
	t.Helper()
	tests.RuleFiles = []string{"rules.yaml"}
	data, err := yaml.Marshal(tests)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "rules.yaml"), rules, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "tests.yaml"), data, 0o644); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, promtool, "test", "rules", "tests.yaml")
	cmd.Dir = dir
	out, err := cmd.CombinedOutput()
	return string(out), err
}

// promDuration writes a duration as promtool reads it (2d1m rather than Go's 48h1m0s).
func promDuration(d time.Duration) string {
	return model.Duration(d).String()
}

// TestInputSeriesFromScrapes needs no control plane: it pins down how scrapes become series.
func TestInputSeriesFromScrapes(t *testing.T) {
	if got := steps(3, 17, 40); got != "3x16 4x16 5x6" {
		t.Errorf("steps(3, 17, 40) = %q, want 41 values: 3x16 4x16 5x6", got)
	}
	body := `# TYPE openshift_samples_degraded_info gauge
openshift_samples_degraded_info 1
# TYPE openshift_samples_retry_imagestream_import_total counter
openshift_samples_retry_imagestream_import_total{imagestreamname="python"} 2
openshift_samples_retry_imagestream_import_total{imagestreamname="ruby"} 4
# TYPE go_goroutines gauge
go_goroutines 42
`
	first, err := parseScrape(body)
	if err != nil {
		t.Fatal(err)
	}
	second, err := parseScrape(strings.Replace(body, `"python"} 2`, `"python"} 5`, 1))
	if err != nil {
		t.Fatal(err)
	}
	series, err := inputSeries(first, second, 40*time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, s := range series {
		got = append(got, s.Series+" "+s.Values)
	}
	target := `container="cluster-samples-operator",endpoint="60000",`
	want := []string{
		`openshift_samples_degraded_info{` + target + `instance="10.128.0.42:60000",job="metrics",namespace="openshift-cluster-samples-operator",pod="cluster-samples-operator-6b9c7d5f4-8xk2p",service="metrics"} 1x40`,
		`openshift_samples_retry_imagestream_import_total{` + target + `imagestreamname="python",instance="10.128.0.42:60000",job="metrics",namespace="openshift-cluster-samples-operator",pod="cluster-samples-operator-6b9c7d5f4-8xk2p",service="metrics"} 2x14 3x14 4x10`,
		`openshift_samples_retry_imagestream_import_total{` + target + `imagestreamname="ruby",instance="10.128.0.42:60000",job="metrics",namespace="openshift-cluster-samples-operator",pod="cluster-samples-operator-6b9c7d5f4-8xk2p",service="metrics"} 4x40`,
	}
	if !slices.Equal(got, want) {
		t.Errorf("series:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}

	moved, err := parseScrape(strings.Replace(body, "degraded_info 1", "degraded_info 0", 1))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := inputSeries(first, moved, time.Hour); err == nil || !strings.Contains(err.Error(), "not steady") {
		t.Errorf("a gauge that changed between the scrapes: %v, want an error saying the situation is not steady", err)
	}
}

// The steady-state check and promtool see the series the alerts read, and only those: a series
// no alert reads (a sample's verdict) appearing between the scrapes changes no alert.
func TestOnlyTheSeriesTheAlertsReadAreCompared(t *testing.T) {
	_, alerts := prometheusRuleFile(t)
	byName := map[string]alertingRule{}
	for _, a := range alerts {
		byName[a.name] = a
	}
	if got := byName["SamplesDegraded"].reads; !slices.Equal(got, []string{"openshift_samples_degraded_info"}) {
		t.Errorf("SamplesDegraded reads %v, want openshift_samples_degraded_info", got)
	}
	first, err := parseScrape("# TYPE openshift_samples_degraded_info gauge\nopenshift_samples_degraded_info 0\n")
	if err != nil {
		t.Fatal(err)
	}
	second, err := parseScrape("# TYPE openshift_samples_degraded_info gauge\nopenshift_samples_degraded_info 0\n" +
		"# TYPE openshift_samples_unusable_info gauge\n" + `openshift_samples_unusable_info{kind="template",name="nginx-example",reason="ImageStreamTagMissing"} 1` + "\n")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := inputSeries(first, second, time.Hour); err == nil {
		t.Fatal("a verdict's series appearing between the scrapes went unnoticed: this test shows nothing")
	}
	series, err := inputSeries(readByRules(first, alerts), readByRules(second, alerts), time.Hour)
	if err != nil || len(series) != 1 || !strings.HasPrefix(series[0].Series, "openshift_samples_degraded_info{") {
		t.Errorf("of the series the alerts read: %v, %v; want openshift_samples_degraded_info alone", series, err)
	}
}
