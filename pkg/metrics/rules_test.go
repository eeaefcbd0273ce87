package metrics

import (
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/yaml"
)

// The alerts are checked without a PromQL parser (github.com/prometheus/prometheus is far too
// heavy a dependency for this): each expression is tokenised, every identifier must be a metric
// the collector exports, one of its label names, or one of the few PromQL words the rules use,
// brackets must balance, and label matchers must name label values the collector emits. The
// queries in the annotations' templates get the same check.

type prometheusRule struct {
	Kind     string `json:"kind"`
	Metadata struct {
		Name      string            `json:"name"`
		Namespace string            `json:"namespace"`
		Labels    map[string]string `json:"labels"`
	} `json:"metadata"`
	Spec struct {
		Groups []struct {
			Name  string `json:"name"`
			Rules []struct {
				Alert       string            `json:"alert"`
				Expr        string            `json:"expr"`
				For         string            `json:"for"`
				Labels      map[string]string `json:"labels"`
				Annotations map[string]string `json:"annotations"`
			} `json:"rules"`
		} `json:"groups"`
	} `json:"spec"`
}

// exported gathers a collector in a state where every family has series, and returns, per metric
// name, its label names and the values each takes.
func exported(t *testing.T) map[string]map[string][]string {
	t.Helper()
	c := fixture{config: invalid(), configMaps: []*corev1.ConfigMap{errorConfigMap("ruby")}, refused: []RefusedSample{{Kind: "ImageStream", Name: "ruby"}}}.collector(t)
	c.RetryCounter()("ruby")
	reg := prometheus.NewPedanticRegistry()
	reg.MustRegister(c)
	families, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]map[string][]string{}
	for _, f := range families {
		labels := map[string][]string{}
		for _, m := range f.GetMetric() {
			for _, l := range m.GetLabel() {
				if !slices.Contains(labels[l.GetName()], l.GetValue()) {
					labels[l.GetName()] = append(labels[l.GetName()], l.GetValue())
				}
			}
		}
		out[f.GetName()] = labels
	}
	if len(out) != 7 {
		t.Fatalf("the fixture exports %d families, want all 7", len(out))
	}
	return out
}

var (
	token         = regexp.MustCompile(`\s*(?:([a-zA-Z_:][a-zA-Z0-9_:]*)|(\d+[smhdwy])|(\d+(?:\.\d+)?)|("(?:[^"\\]|\\.)*")|(==|!=|>=|<=|=~|!~|[-+*/%^<>=,(){}\[\]]))`)
	promqlWords   = []string{"sum", "or", "vector", "offset"}
	templateQuery = regexp.MustCompile(`query "((?:[^"\\]|\\.)*)"(?:\s*\|\s*sortByLabel "[a-z_]+")?\s*\}\}(?:\{\{\s*range \.\s*\}\})?\{\{\s*\.Labels\.([a-z_]+)`)
)

// checkExpr tokenises a PromQL expression and reports what does not fit the exported metrics.
func checkExpr(metrics map[string]map[string][]string, expr string) []string {
	var problems, stack []string
	var metricsUsed []string
	var current string // the metric whose selector we are in
	closing := map[string]string{")": "(", "}": "{", "]": "["}
	rest := strings.TrimSpace(expr)
	for rest != "" {
		m := token.FindStringSubmatchIndex(rest)
		if m == nil || m[0] != 0 {
			problems = append(problems, "cannot tokenise "+rest)
			break
		}
		ident, str, punct := sub(rest, m, 1), sub(rest, m, 4), sub(rest, m, 5)
		switch {
		case ident != "":
			inSelector := len(stack) > 0 && stack[len(stack)-1] == "{"
			switch {
			case inSelector:
				if _, ok := metrics[current][ident]; !ok {
					problems = append(problems, "label "+ident+" is not one of "+current+"'s")
				}
			case strings.HasPrefix(ident, "openshift_samples_"):
				if _, ok := metrics[ident]; !ok {
					problems = append(problems, "metric "+ident+" is not exported")
				}
				current = ident
				metricsUsed = append(metricsUsed, ident)
			case !slices.Contains(promqlWords, ident):
				problems = append(problems, "unexpected identifier "+ident)
			}
		case str != "":
			// A label matcher's value: the label name is two tokens back.
			if len(stack) > 0 && stack[len(stack)-1] == "{" {
				if label := lastLabel(expr[:len(expr)-len(rest)]); label != "" &&
					!slices.Contains(metrics[current][label], strings.Trim(str, `"`)) {
					problems = append(problems, "no "+current+" series has "+label+"="+str)
				}
			}
		case punct == "(" || punct == "{" || punct == "[":
			stack = append(stack, punct)
		case closing[punct] != "":
			if len(stack) == 0 || stack[len(stack)-1] != closing[punct] {
				problems = append(problems, "unbalanced "+punct)
			} else {
				stack = stack[:len(stack)-1]
			}
		}
		rest = strings.TrimSpace(rest[m[1]:])
	}
	if len(stack) > 0 {
		problems = append(problems, "unclosed "+strings.Join(stack, ""))
	}
	if len(metricsUsed) == 0 {
		problems = append(problems, "uses no samples metric")
	}
	return problems
}

func sub(s string, m []int, i int) string {
	if m[2*i] < 0 {
		return ""
	}
	return s[m[2*i]:m[2*i+1]]
}

// lastLabel returns the label name of the matcher that the text before a matcher's value ends with.
func lastLabel(before string) string {
	before = strings.TrimRight(strings.TrimRight(strings.TrimRight(before, " \t\n"), "=~!"), " \t\n")
	i := len(before)
	for i > 0 && (before[i-1] == '_' || before[i-1] >= 'a' && before[i-1] <= 'z' || before[i-1] >= 'A' && before[i-1] <= 'Z' || before[i-1] >= '0' && before[i-1] <= '9') {
		i--
	}
	return before[i:]
}

func TestAlertsUseOnlyExportedMetrics(t *testing.T) {
	data, err := os.ReadFile(filepath.Join("..", "..", "manifests", "010-prometheus-rules.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var rule prometheusRule
	if err := yaml.Unmarshal(data, &rule); err != nil {
		t.Fatal(err)
	}
	if rule.Kind != "PrometheusRule" || rule.Metadata.Name != "samples-operator-alerts" ||
		rule.Metadata.Namespace != "openshift-cluster-samples-operator" || rule.Metadata.Labels["name"] != "samples-operator-alerts" {
		t.Fatalf("unexpected object: %s %s/%s labels %v", rule.Kind, rule.Metadata.Namespace, rule.Metadata.Name, rule.Metadata.Labels)
	}
	if len(rule.Spec.Groups) != 1 || rule.Spec.Groups[0].Name != "SamplesOperator" {
		t.Fatalf("want the one group SamplesOperator")
	}

	// Spec 13.4: the alerts, their duration, severity and extra labels.
	want := map[string]struct{ forDuration, severity, namespace string }{
		"SamplesRetriesMissingOnImagestreamImportFailing": {"2h", "warning", "openshift-cluster-samples-operator"},
		"SamplesImagestreamImportFailing":                 {"2h", "warning", "openshift-cluster-samples-operator"},
		"SamplesDegraded":                                 {"2h", "warning", ""},
		"SamplesInvalidConfig":                            {"2h", "warning", ""},
		"SamplesMissingSecret":                            {"2h", "warning", ""},
		"SamplesMissingTBRCredential":                     {"2h", "warning", ""},
		"SamplesTBRInaccessibleOnBoot":                    {"2d", "info", ""},
		// Not upstream's: refusals are this operator's (issue 32).
		"SamplesWritesRefused": {"10m", "warning", "openshift-cluster-samples-operator"},
	}
	metrics := exported(t)
	seen := map[string]bool{}
	for _, r := range rule.Spec.Groups[0].Rules {
		w, ok := want[r.Alert]
		if !ok {
			t.Errorf("unexpected alert %q", r.Alert)
			continue
		}
		seen[r.Alert] = true
		if r.For != w.forDuration || r.Labels["severity"] != w.severity || r.Labels["namespace"] != w.namespace {
			t.Errorf("%s: for %s, labels %v; want for %s, severity %s, namespace %q", r.Alert, r.For, r.Labels, w.forDuration, w.severity, w.namespace)
		}
		if r.Annotations["summary"] == "" || r.Annotations["description"] == "" {
			t.Errorf("%s: needs summary and description annotations", r.Alert)
		}
		for _, p := range checkExpr(metrics, r.Expr) {
			t.Errorf("%s: expr: %s", r.Alert, p)
		}
		queries := templateQuery.FindAllStringSubmatch(r.Annotations["description"], -1)
		if strings.Contains(r.Alert, "Import") && len(queries) != 2 {
			t.Errorf("%s: the description lists %d kinds of imagestreams, want the failing and the retried ones", r.Alert, len(queries))
		}
		for _, q := range queries {
			query, label := strings.ReplaceAll(q[1], `\"`, `"`), q[2]
			for _, p := range checkExpr(metrics, query) {
				t.Errorf("%s: template query %q: %s", r.Alert, query, p)
			}
			metric := token.FindStringSubmatch(query)[1]
			if _, ok := metrics[metric][label]; !ok {
				t.Errorf("%s: template prints .Labels.%s, which %s does not have", r.Alert, label, metric)
			}
		}
	}
	for name := range want {
		if !seen[name] {
			t.Errorf("alert %s is missing", name)
		}
	}
}

func TestCheckExprCatchesMistakes(t *testing.T) {
	metrics := exported(t)
	for expr, want := range map[string]string{
		`openshift_samples_degraded_info == 1`:                                "",
		`openshift_samples_invalidsecret_info{reason="missing_secret"} == 1`:  "",
		`openshift_samples_degraded == 1`:                                     "not exported",
		`openshift_samples_invalidsecret_info{reason="missing_secrets"} == 1`: "has reason=",
		`openshift_samples_invalidsecret_info{name="missing_secret"} == 1`:    "label name",
		`sum(openshift_samples_failed_imagestream_import_info > 0`:            "unclosed",
		`rate(openshift_samples_retry_imagestream_import_total[5m])) > 0`:     "unexpected identifier rate",
		`vector(1)`: "uses no samples metric",
		`sum(openshift_samples_retry_imagestream_import_total offset 30m) > 0`: "",
	} {
		problems := strings.Join(checkExpr(metrics, expr), "; ")
		if (want == "") != (problems == "") || !strings.Contains(problems, want) {
			t.Errorf("%s: problems %q, want one containing %q", expr, problems, want)
		}
	}
}
