package integration

import (
	"context"
	"crypto/tls"
	"fmt"
	"io"
	"maps"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	configv1 "github.com/openshift/api/config/v1"
	samplesv1 "github.com/openshift/api/samples/v1"
	"github.com/openshift/library-go/pkg/config/clusteroperator/v1helpers"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/samples-operator-dev/cluster-samples-operator/pkg/configspec"
	"github.com/samples-operator-dev/cluster-samples-operator/pkg/operator"
	"github.com/samples-operator-dev/cluster-samples-operator/test/controlplane"
)

// The alert tests run the operator in the situations its alerts are for, scrape its /metrics as
// Prometheus would, and have promtool evaluate manifests/010-prometheus-rules.yaml on what was
// scraped, held for longer than the alerts' `for`. So a renamed metric or label, a changed
// expression or annotation, or an operator that stops exporting what an alert needs, fails here.

const runbookBase = "https://github.com/samples-operator-dev/cluster-samples-operator/blob/main/docs/runbooks/"

// failingStreams are the imagestreams whose imports fail in the import scenarios. The alerts list
// them as Prometheus returns the series, sorted by label.
var failingStreams = []string{"python", "ruby"}

// alertsAsSeen is every alert as an admin sees it when it fires in the scenarios below: labels
// (the rule's, the alerting series' and the scrape target's, which Prometheus adds) and
// annotations with their templates expanded.
var alertsAsSeen = map[string]promtoolAlert{
	"SamplesRetriesMissingOnImagestreamImportFailing": {
		ExpLabels: map[string]string{"severity": "warning", "namespace": "openshift-cluster-samples-operator"},
		ExpAnnotations: map[string]string{
			"summary":     "Sample imagestreams fail to import and the samples operator is not retrying them.",
			"runbook_url": runbookBase + "SamplesRetriesMissingOnImagestreamImportFailing.md",
			"description": lines(
				"Imports of these sample imagestreams in the openshift namespace fail:",
				"python ruby ",
				"but in the last hour the samples operator retried fewer imports than there are failing",
				"imagestreams (imagestreams it has retried since it last started: none).",
				"Look at the openshift-samples ClusterOperator and at the samples operator's logs and events in",
				"openshift-cluster-samples-operator; the ConfigMaps there labelled",
				"samples.openshift.io/imagestream-error=true record each failing tag and its error. If the",
				"cluster does not need the samples, set managementState to Removed in config.samples cluster.",
			),
		},
	},
	"SamplesImagestreamImportFailing": {
		ExpLabels: map[string]string{"severity": "warning", "namespace": "openshift-cluster-samples-operator"},
		ExpAnnotations: map[string]string{
			"summary":     "Sample imagestreams keep failing to import although the samples operator retries them.",
			"runbook_url": runbookBase + "SamplesImagestreamImportFailing.md",
			"description": lines(
				"The samples operator has retried the imports of these sample imagestreams for two hours and",
				"they still fail: python ruby ",
				"(imagestreams it has retried since it last started: python ruby ).",
				"Look at the openshift-samples ClusterOperator, and at the ConfigMaps in",
				"openshift-cluster-samples-operator labelled samples.openshift.io/imagestream-error=true,",
				"which hold each failing tag's error. Typical causes are missing registry credentials, a",
				"registry the cluster cannot reach, or a mirror that lacks the images. Once the cause is fixed,",
				"`oc import-image <imagestream> -n openshift --all` imports at once. If the cluster does not",
				"need the samples, set managementState to Removed in config.samples cluster.",
			),
		},
	},
	"SamplesDegraded": {
		ExpLabels: targetLabelsAnd(map[string]string{"severity": "warning"}),
		ExpAnnotations: map[string]string{
			"summary":     "The samples operator is degraded.",
			"runbook_url": runbookBase + "SamplesDegraded.md",
			"description": lines(
				"The openshift-samples ClusterOperator has been Degraded for two hours; its conditions say why.",
				"Look also at the status conditions of config.samples cluster and at the samples operator's",
				"logs and events in openshift-cluster-samples-operator.",
			),
		},
	},
	"SamplesInvalidConfig": {
		ExpLabels: targetLabelsAnd(map[string]string{"severity": "warning"}),
		ExpAnnotations: map[string]string{
			"summary":     "The samples operator configuration is invalid.",
			"runbook_url": runbookBase + "SamplesInvalidConfig.md",
			"description": lines(
				"config.samples cluster has not been valid for two hours: its ConfigurationValid condition",
				"says what to fix (`oc get config.samples cluster -o yaml`). While it is invalid the samples",
				"are left as they are.",
			),
		},
	},
	"SamplesMissingSecret": {
		ExpLabels: targetLabelsAnd(map[string]string{"severity": "warning", "reason": "missing_secret"}),
		ExpAnnotations: map[string]string{
			"summary":     "The install pull secret openshift-config/pull-secret does not exist.",
			"runbook_url": runbookBase + "SamplesMissingSecret.md",
			"description": lines(
				"There is no install pull secret openshift-config/pull-secret, so there are no credentials for",
				"registry.redhat.io, and imports of the sample imagestreams will fail unless",
				"spec.samplesRegistry is changed to a registry (for example a mirror) that the cluster can pull",
				"from. Create the pull secret with credentials for registry.redhat.io, or mirror the samples",
				"and set spec.samplesRegistry.",
			),
		},
	},
	"SamplesMissingTBRCredential": {
		ExpLabels: targetLabelsAnd(map[string]string{"severity": "warning", "reason": "missing_tbr_credential"}),
		ExpAnnotations: map[string]string{
			"summary":     "The pull secret has no credentials for registry.redhat.io.",
			"runbook_url": runbookBase + "SamplesMissingTBRCredential.md",
			"description": lines(
				"The install pull secret openshift-config/pull-secret exists but is not a docker config or",
				"holds no auth for registry.redhat.io, and spec.samplesRegistry is not set. Imports of the",
				"sample imagestreams will fail unless spec.samplesRegistry is changed to a registry the cluster",
				"can pull from, or credentials for registry.redhat.io are added to the pull secret.",
			),
		},
	},
	"SamplesWritesRefused": {
		ExpLabels: map[string]string{"severity": "warning", "namespace": "openshift-cluster-samples-operator"},
		ExpAnnotations: map[string]string{
			"summary":     "The API server refuses to write some of the samples.",
			"runbook_url": runbookBase + "SamplesWritesRefused.md",
			"description": lines(
				"For at least ten minutes the API server has refused the samples operator's writes of these",
				"samples in the openshift namespace:",
				"ImageStream/python ",
				"The conditions of config.samples cluster quote the server's answer (a ResourceQuota or",
				"LimitRange of openshift, an admission webhook, an invalid object): SamplesExist while",
				"the samples are written, RemovePending while they are deleted. Remove the cause, or skip",
				"the samples in the Config; the operator retries each refused write at least once a",
				"minute, and at once when a ResourceQuota or LimitRange in openshift changes if it may",
				"watch them.",
			),
		},
	},
	"SamplesTBRInaccessibleOnBoot": {
		ExpLabels: targetLabelsAnd(map[string]string{"severity": "info"}),
		ExpAnnotations: map[string]string{
			"summary":     "The samples were not installed because registry.redhat.io was unreachable at install time.",
			"runbook_url": runbookBase + "SamplesTBRInaccessibleOnBoot.md",
			"description": lines(
				"When the samples operator first started it could not reach registry.redhat.io, so it set",
				"config.samples cluster to Removed and installed no samples. Usually the cluster was installed",
				"on a restricted network, or a firewall or DNS problem kept it from the registry then. To use",
				"the samples, mirror their images (the ConfigMap imagestreamtag-to-image in",
				"openshift-cluster-samples-operator lists every one), set spec.samplesRegistry to the mirror",
				"and spec.managementState to Managed. If the cluster does not need the samples, nothing needs",
				"to be done.",
			),
		},
	},
}

// alertScenario is a situation of the cluster and the alerts that must fire, after their `for`,
// while it lasts; every other alert must stay silent.
type alertScenario struct {
	name string
	// prepare sets the cluster and the operator's options up before the operator starts; a
	// scenario that has it gets an operator of its own.
	prepare func(t *testing.T, e *env, opts *operator.Options)
	// reach brings the cluster into the situation, once the operator runs, and waits until the
	// operator's status shows it.
	reach func(t *testing.T, e *env)
	// restore undoes what reach did and waits until the operator reports a healthy cluster
	// again, for the next scenario on the same cluster.
	restore func(t *testing.T, e *env)
	fires   []string
}

// alertClusters are the clusters the scenarios run on, each scenario on the cluster the one
// before it left (or restored). An operator does not remember a situation once it is over: a
// scenario's alerts are judged with every other alert silent, so one that still fired after an
// earlier scenario on its cluster was restored would fail it.
var alertClusters = []struct {
	name string
	// expected is about how long the cluster's scenarios take together, for its turn
	// (schedule_test.go): CI (two cores, the real servers) took 147 s for admin-changes and 70 s
	// for failing-imports.
	expected  time.Duration
	scenarios []alertScenario
}{
	{"admin-changes", 2 * aboutAMinute, []alertScenario{
		{
			name:  "healthy",
			reach: waitHealthy,
		},
		// One cause, one alert: no pull secret at all, and a pull secret that holds
		// credentials for other registries only.
		pullSecretScenario("pull-secret-missing", nil, "SamplesMissingSecret"),
		pullSecretScenario("pull-secret-without-registry-credential", pullSecret(testPullSecretAuth, "quay.io"), "SamplesMissingTBRCredential"),
		{
			// An admin sets samplesRegistry with a scheme: the Config is invalid and the
			// ClusterOperator Degraded.
			name: "invalid-samples-registry",
			reach: func(t *testing.T, e *env) {
				e.waitManaged(t, x86Inventory(t), "v1")
				e.updateConfig(func(c *samplesv1.Config) { c.Spec.SamplesRegistry = "https://mirror.example.com:5000" })
				waitConfigCondition(t, e, samplesv1.ConfigurationValid, corev1.ConditionFalse)
				waitClusterOperatorDegraded(t, e, configv1.ConditionTrue, "InvalidConfiguration")
			},
			restore: func(t *testing.T, e *env) {
				e.updateConfig(func(c *samplesv1.Config) { c.Spec.SamplesRegistry = "" })
				waitHealthy(t, e)
			},
			fires: []string{"SamplesInvalidConfig", "SamplesDegraded"},
		},
		{
			// A ResourceQuota in openshift with no room left, and a sample deleted: the server
			// refuses its create (403 exceeded quota) until the quota goes.
			name: "quota-refuses-a-sample",
			reach: func(t *testing.T, e *env) {
				e.waitManaged(t, x86Inventory(t), "v1")
				e.probesForbidden = true // the quota's 403s; refusals_test.go checks none is RBAC's
				e.limitImageStreams(t, 0)
				if err := e.images.ImageV1().ImageStreams("openshift").Delete(context.Background(), "python", metav1.DeleteOptions{}); err != nil {
					t.Fatal(err)
				}
				eventually(t, 20*time.Second, func() (bool, string) {
					c := configCondition(e.getConfig(), samplesv1.SamplesExist)
					return c != nil && c.Reason == "SampleWritesRefused", fmt.Sprintf("SamplesExist %v", c)
				})
			},
			restore: func(t *testing.T, e *env) {
				if err := e.kube.CoreV1().ResourceQuotas("openshift").Delete(context.Background(), "samples", metav1.DeleteOptions{}); err != nil {
					t.Fatal(err)
				}
				waitHealthy(t, e)
			},
			fires: []string{"SamplesWritesRefused"},
		},
		{
			// An admin writes `uname -m`'s aarch64 for arm64: the Config is invalid, but the
			// ClusterOperator reports an unsupported architecture rather than Degraded.
			name: "unsupported-architecture",
			reach: func(t *testing.T, e *env) {
				e.waitManaged(t, x86Inventory(t), "v1")
				e.updateConfig(func(c *samplesv1.Config) { c.Spec.Architectures = []string{"aarch64"} })
				waitConfigCondition(t, e, samplesv1.ConfigurationValid, corev1.ConditionFalse)
				waitClusterOperatorDegraded(t, e, configv1.ConditionFalse, "UnsupportHWArchitecture")
			},
			fires: []string{"SamplesInvalidConfig"},
		},
	}},
	{"failing-imports", aboutAMinute, []alertScenario{
		{
			// Imports fail and no retry comes: the retry loop is stuck (here: a retry interval of
			// a day). First on its cluster, so that no retry at all has reached the importer.
			name: "imports-fail-and-are-not-retried",
			prepare: func(t *testing.T, e *env, opts *operator.Options) {
				failImports(t, e)
				opts.ImportRetryInterval = 24 * time.Hour
			},
			reach: waitImportsFailing(false),
			fires: []string{"SamplesRetriesMissingOnImagestreamImportFailing"},
		},
		{
			// The same failures, and an operator that retries them.
			name: "imports-fail-and-are-retried",
			prepare: func(t *testing.T, e *env, opts *operator.Options) {
				failImports(t, e)
				opts.ImportRetryInterval = 200 * time.Millisecond
			},
			reach: waitImportsFailing(true),
			fires: []string{"SamplesImagestreamImportFailing"},
		},
	}},
	{"bootstrap", aboutHalfAMinute, []alertScenario{
		{
			name: "registry-unreachable-at-bootstrap",
			prepare: func(t *testing.T, e *env, opts *operator.Options) {
				opts.RegistryProbe = func(context.Context) error { return fmt.Errorf("dial tcp: i/o timeout") }
			},
			reach: func(t *testing.T, e *env) {
				e.waitBootstrappedRemoved(t, 20*time.Second, configspec.ReasonRegistryUnreachable)
			},
			fires: []string{"SamplesTBRInaccessibleOnBoot"},
		},
	}},
}

// pullSecretScenario replaces the pull secret with secret (deletes it, if nil), which leaves the
// operator without credentials for registry.redhat.io, and restores a working one afterwards.
func pullSecretScenario(name string, secret *corev1.Secret, fires ...string) alertScenario {
	return alertScenario{
		name: name,
		reach: func(t *testing.T, e *env) {
			e.waitManaged(t, x86Inventory(t), "v1")
			setPullSecret(t, e, secret)
			waitConfigCondition(t, e, samplesv1.ImportCredentialsExist, corev1.ConditionFalse)
		},
		restore: func(t *testing.T, e *env) {
			setPullSecret(t, e, pullSecret(testPullSecretAuth))
			waitHealthy(t, e)
		},
		fires: fires,
	}
}

// setPullSecret makes openshift-config/pull-secret secret, or deletes it if secret is nil.
func setPullSecret(t *testing.T, e *env, secret *corev1.Secret) {
	t.Helper()
	ctx, secrets := context.Background(), e.kube.CoreV1().Secrets("openshift-config")
	var err error
	if secret == nil {
		err = secrets.Delete(ctx, "pull-secret", metav1.DeleteOptions{})
	} else if _, err = secrets.Update(ctx, secret, metav1.UpdateOptions{}); apierrors.IsNotFound(err) {
		_, err = secrets.Create(ctx, secret, metav1.CreateOptions{})
	}
	if err != nil {
		t.Fatal(err)
	}
}

// scrapeGap separates the two scrapes of a scenario: long enough for several retries at the
// import scenarios' retry interval, and for a gauge that is still moving to show it.
const scrapeGap = 1500 * time.Millisecond

func TestAlertsFireOnWhatTheOperatorExports(t *testing.T) {
	parallelParent(t)
	promtool := promtoolPath(t)
	rules, alerts := prometheusRuleFile(t)
	var names []string
	var longestFor time.Duration
	for _, a := range alerts {
		names = append(names, a.name)
		longestFor = max(longestFor, a.forDuration)
	}
	fired := map[string]bool{}
	for _, c := range alertClusters {
		for _, sc := range c.scenarios {
			for _, a := range sc.fires {
				fired[a] = true
			}
		}
	}
	for _, a := range names {
		if _, ok := alertsAsSeen[a]; !ok || !fired[a] {
			t.Errorf("alert %s: no scenario here fires it, or alertsAsSeen does not say how it looks", a)
		}
	}
	for a := range alertsAsSeen {
		if !slices.Contains(names, a) {
			t.Errorf("alertsAsSeen describes %s, which manifests/010-prometheus-rules.yaml does not define", a)
		}
	}

	for _, c := range alertClusters {
		t.Run(c.name, func(t *testing.T) {
			parallel(t, c.expected)
			e := newEnv(t)
			var op *runningOperator
			var scrape func(*testing.T) map[string]scrapedSample
			for i, sc := range c.scenarios {
				if i == 0 || sc.prepare != nil {
					if op != nil {
						op.stop(t)
					}
					opts := defaultOptions()
					if sc.prepare != nil {
						sc.prepare(t, e, &opts)
					}
					op, scrape = e.startOperatorWithScrape(t, opts)
				}
				ok := t.Run(sc.name, func(t *testing.T) {
					sc.reach(t, e)
					checkAlerts(t, sc, scrape, promtool, rules, alerts, longestFor)
					if sc.restore != nil {
						sc.restore(t, e)
					}
				})
				if !ok {
					// The scenarios after it start from the cluster it was to leave.
					break
				}
			}
		})
	}
}

// checkAlerts scrapes the operator twice and has promtool evaluate the rules on what it scraped:
// the scenario's alerts fire after their `for`, and no other alert ever does.
func checkAlerts(t *testing.T, sc alertScenario, scrape func(*testing.T) map[string]scrapedSample, promtool string, rules []byte, alerts []alertingRule, longestFor time.Duration) {
	t.Helper()
	first := scrape(t)
	time.Sleep(scrapeGap)
	second := scrape(t)
	series, err := inputSeries(readByRules(first, alerts), readByRules(second, alerts), longestFor+10*ruleTestStep)
	if err != nil {
		t.Fatalf("turning the scrapes into input series: %v", err)
	}
	tests := promtoolTestFile{
		EvaluationInterval: promDuration(ruleTestStep),
		Tests: []promtoolTestGroup{{
			Name:          sc.name,
			Interval:      promDuration(ruleTestStep),
			InputSeries:   series,
			AlertRuleTest: alertRuleTests(alerts, sc.fires),
		}},
	}
	dir := t.TempDir()
	out, err := runPromtool(t, promtool, dir, rules, tests)
	if err == nil {
		t.Logf("promtool test rules passed: on the series scraped, %s", firing(sc.fires))
		return
	}
	kept := filepath.Join(controlplane.RepoRoot(), "_output", "alert-tests", sc.name)
	_ = os.RemoveAll(kept)
	if cpErr := os.CopyFS(kept, os.DirFS(dir)); cpErr != nil {
		kept = fmt.Sprintf("(not kept: %v)", cpErr)
	}
	t.Errorf("scenario %s: the alerts do not behave as expected (%v).\n"+
		"Expected: %s; no alert before its `for`; no other alert at the times checked.\n"+
		"The operator exported (non-zero series):\n%s\n"+
		"promtool test rules (rule and test files kept in %s):\n%s",
		sc.name, err, firing(sc.fires), nonZero(second), kept, out)
}

// alertRuleTests checks every alert one step before its `for` (pending, so silent) and one step
// after it (firing if the scenario expects it, else silent), and all of them once the longest
// `for` has passed.
func alertRuleTests(alerts []alertingRule, fires []string) []promtoolAlertTest {
	type check struct {
		at    time.Duration
		alert string
	}
	var longestFor time.Duration
	for _, a := range alerts {
		longestFor = max(longestFor, a.forDuration)
	}
	seen := map[check]bool{}
	var out []promtoolAlertTest
	add := func(at time.Duration, alert string, firing bool) {
		if seen[check{at, alert}] {
			return
		}
		seen[check{at, alert}] = true
		test := promtoolAlertTest{EvalTime: promDuration(at), Alertname: alert, ExpAlerts: []promtoolAlert{}}
		if firing {
			want := alertsAsSeen[alert]
			labels := maps.Clone(want.ExpLabels)
			labels["alertname"] = alert
			test.ExpAlerts = append(test.ExpAlerts, promtoolAlert{ExpLabels: labels, ExpAnnotations: want.ExpAnnotations})
		}
		out = append(out, test)
	}
	for _, a := range alerts {
		add(a.forDuration-ruleTestStep, a.name, false)
		add(a.forDuration+ruleTestStep, a.name, slices.Contains(fires, a.name))
	}
	for _, a := range alerts {
		add(longestFor+ruleTestStep, a.name, slices.Contains(fires, a.name))
	}
	return out
}

// startOperatorServingMetrics starts the operator with its metrics server on a free loopback
// port, and returns a scrape of it with the admin's token as the bearer.
func (e *env) startOperatorServingMetrics(t *testing.T, opts operator.Options) func(*testing.T) map[string]scrapedSample {
	t.Helper()
	_, scrape := e.startOperatorWithScrape(t, opts)
	return scrape
}

// startOperatorWithScrape is startOperatorServingMetrics for a test that also stops the operator.
func (e *env) startOperatorWithScrape(t *testing.T, opts operator.Options) (*runningOperator, func(*testing.T) map[string]scrapedSample) {
	t.Helper()
	op, addr, pool := e.startOperatorServing(t, opts)
	client := &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool}}}
	return op, func(t *testing.T) map[string]scrapedSample {
		t.Helper()
		var status int
		var body string
		var err error
		// Until the API server has picked up the operator's auth-delegator binding the server
		// answers 500 (and, before it listens, nothing at all).
		eventually(t, 30*time.Second, func() (bool, string) {
			status, body, err = scrapeOnce(client, "https://"+addr+"/metrics", e.cp.AdminConfig.BearerToken)
			return err == nil && status == http.StatusOK, fmt.Sprintf("GET /metrics: %d %v %.200s", status, err, body)
		})
		samples, err := parseScrape(body)
		if err != nil {
			t.Fatal(err)
		}
		return samples
	}
}

func scrapeOnce(client *http.Client, url, token string) (int, string, error) {
	req, err := http.NewRequest(http.MethodGet, url, nil)
	if err != nil {
		return 0, "", err
	}
	req.Header.Set("Authorization", "Bearer "+token)
	resp, err := client.Do(req)
	if err != nil {
		return 0, "", err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	return resp.StatusCode, string(body), err
}

func failImports(t *testing.T, e *env) {
	t.Helper()
	inv := x86Inventory(t)
	for _, name := range failingStreams {
		is, ok := inv.ImageStream(name)
		if !ok {
			t.Fatalf("the inventory has no imagestream %s", name)
		}
		e.importer.FailReference(is.Spec.Tags[0].From.Name, "manifest unknown: "+is.Spec.Tags[0].From.Name)
	}
}

// waitImportsFailing waits until the failing imagestreams are recorded and reported, and, when
// retried is set, until the operator has counted at least two retries of each (three have reached
// the importer). The rule test starts with the counter's scraped value and no history, so an hour
// back it reads 0 and its whole value counts as retries of the last hour: from two on, that agrees
// with what an hour of history would show, retries outnumbering the failing imagestreams.
func waitImportsFailing(retried bool) func(t *testing.T, e *env) {
	return func(t *testing.T, e *env) {
		t.Helper()
		e.waitManaged(t, x86Inventory(t), "v1")
		// Generous: under -race with other tests running, the importer's backlog of first imports
		// can delay the first retries by half a minute.
		eventually(t, 60*time.Second, func() (bool, string) {
			for _, name := range failingStreams {
				if _, err := e.configMap(name); err != nil {
					return false, fmt.Sprintf("no import error ConfigMap for %s: %v", name, err)
				}
				if n := e.importRequests(t)(name); retried && n < 3 {
					return false, fmt.Sprintf("%d retries of %s so far", n, name)
				}
			}
			c := configCondition(e.getConfig(), samplesv1.ImportImageErrorsExist)
			return c != nil && c.Status == corev1.ConditionTrue && strings.Contains(c.Message, strings.Join(failingStreams, ", ")),
				fmt.Sprintf("ImportImageErrorsExist %+v", c)
		})
		if !retried {
			for _, name := range failingStreams {
				if n := e.importRequests(t)(name); n != 0 {
					t.Fatalf("%s was retried %d times; this scenario is about retries that do not come", name, n)
				}
			}
		}
	}
}

func waitHealthy(t *testing.T, e *env) {
	t.Helper()
	e.waitManaged(t, x86Inventory(t), "v1")
	waitConfigCondition(t, e, samplesv1.ImportCredentialsExist, corev1.ConditionTrue)
	waitConfigCondition(t, e, samplesv1.ImportImageErrorsExist, corev1.ConditionFalse)
	waitConfigCondition(t, e, samplesv1.ConfigurationValid, corev1.ConditionTrue)
	waitClusterOperatorDegraded(t, e, configv1.ConditionFalse, "AsExpected")
}

func waitConfigCondition(t *testing.T, e *env, typ samplesv1.ConfigConditionType, status corev1.ConditionStatus) {
	t.Helper()
	eventually(t, 20*time.Second, func() (bool, string) {
		c := configCondition(e.getConfig(), typ)
		return c != nil && c.Status == status, fmt.Sprintf("%s: %+v", typ, c)
	})
}

func waitClusterOperatorDegraded(t *testing.T, e *env, status configv1.ConditionStatus, reason string) {
	t.Helper()
	eventually(t, 20*time.Second, func() (bool, string) {
		co, err := e.clusterOperator()
		if err != nil {
			return false, err.Error()
		}
		d := v1helpers.FindStatusCondition(co.Status.Conditions, configv1.OperatorDegraded)
		return d != nil && d.Status == status && d.Reason == reason, fmt.Sprintf("Degraded: %+v", d)
	})
}

func targetLabelsAnd(labels map[string]string) map[string]string {
	out := maps.Clone(scrapeTargetLabels)
	maps.Copy(out, labels)
	return out
}

// lines joins an annotation's lines as a YAML block scalar (`|`) holds them.
func lines(l ...string) string {
	return strings.Join(l, "\n") + "\n"
}

func firing(fires []string) string {
	switch len(fires) {
	case 0:
		return "no alert fires"
	case 1:
		return fires[0] + " fires after its `for`"
	}
	return strings.Join(fires, " and ") + " fire after their `for`"
}

// nonZero lists the scraped series that are not 0 (the failed-import gauge has one series per
// imagestream, nearly all 0).
func nonZero(samples map[string]scrapedSample) string {
	var out []string
	for _, sel := range slices.Sorted(maps.Keys(samples)) {
		if s := samples[sel]; s.value != 0 {
			out = append(out, fmt.Sprintf("  %s %g", s.exported, s.value))
		}
	}
	if len(out) == 0 {
		return "  (none)"
	}
	return strings.Join(out, "\n")
}
