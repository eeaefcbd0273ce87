package metrics

import (
	"errors"
	"fmt"
	"reflect"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"

	operatorv1 "github.com/openshift/api/operator/v1"
	samplesv1 "github.com/openshift/api/samples/v1"
	samplesv1listers "github.com/openshift/client-go/samples/listers/samples/v1"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil/promlint"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	corev1listers "k8s.io/client-go/listers/core/v1"
	"k8s.io/client-go/tools/cache"

	"github.com/samples-operator-dev/cluster-samples-operator/pkg/bootstrapstate"
	"github.com/samples-operator-dev/cluster-samples-operator/pkg/configspec"
	"github.com/samples-operator-dev/cluster-samples-operator/pkg/configstatus"
	"github.com/samples-operator-dev/cluster-samples-operator/pkg/imports"
	"github.com/samples-operator-dev/cluster-samples-operator/pkg/names"
	"github.com/samples-operator-dev/cluster-samples-operator/pkg/usability"
)

// fixture is the cache content one scrape sees.
type fixture struct {
	config     *samplesv1.Config
	configMaps []*corev1.ConfigMap
	secret     *corev1.Secret
	degraded   bool
	blocked    map[string]string
	refused    []RefusedSample
}

func (f fixture) collector(t *testing.T) *Collector {
	t.Helper()
	configs := cache.NewIndexer(cache.MetaNamespaceKeyFunc, cache.Indexers{})
	if f.config != nil {
		add(t, configs, f.config)
	}
	byNamespace := cache.Indexers{cache.NamespaceIndex: cache.MetaNamespaceIndexFunc}
	configMaps := cache.NewIndexer(cache.MetaNamespaceKeyFunc, byNamespace)
	for _, cm := range f.configMaps {
		add(t, configMaps, cm)
	}
	secrets := cache.NewIndexer(cache.MetaNamespaceKeyFunc, byNamespace)
	if f.secret != nil {
		add(t, secrets, f.secret)
	}
	degraded := f.degraded
	return NewCollector(Inputs{
		Configs:    samplesv1listers.NewConfigLister(configs),
		ConfigMaps: corev1listers.NewConfigMapLister(configMaps),
		Secrets:    corev1listers.NewSecretLister(secrets),
		ImageStreams: func(arch string) ([]string, error) {
			if arch != "x86_64" {
				return nil, errors.New("no inventory for " + arch)
			}
			return []string{"httpd", "python", "ruby"}, nil
		},
		Degraded: func() bool { return degraded },
		Blocked:  func() map[string]string { return f.blocked },
		Refused:  func() []RefusedSample { return f.refused },
	})
}

func add(t *testing.T, indexer cache.Indexer, obj any) {
	t.Helper()
	if err := indexer.Add(obj); err != nil {
		t.Fatal(err)
	}
}

func config(state operatorv1.ManagementState, conditions map[samplesv1.ConfigConditionType]corev1.ConditionStatus) *samplesv1.Config {
	cfg := &samplesv1.Config{
		ObjectMeta: metav1.ObjectMeta{Name: names.ConfigName},
		Spec:       samplesv1.ConfigSpec{ManagementState: state, Architectures: []string{"x86_64"}},
	}
	for t, s := range conditions {
		cfg.Status.Conditions = append(cfg.Status.Conditions, samplesv1.ConfigCondition{Type: t, Status: s})
	}
	return cfg
}

func healthy(state operatorv1.ManagementState) *samplesv1.Config {
	return config(state, map[samplesv1.ConfigConditionType]corev1.ConditionStatus{
		samplesv1.ConfigurationValid:     corev1.ConditionTrue,
		samplesv1.ImportCredentialsExist: corev1.ConditionTrue,
	})
}

func errorConfigMap(name string) *corev1.ConfigMap {
	return &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{
		Name: name, Namespace: "openshift-cluster-samples-operator", Labels: map[string]string{imports.ErrorLabel: "true"},
	}, Data: map[string]string{"latest": "unauthorized"}}
}

func pullSecret(auths string) *corev1.Secret {
	return &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Name: imports.PullSecretName, Namespace: imports.PullSecretNamespace},
		Type:       corev1.SecretTypeDockerConfigJson,
		Data:       map[string][]byte{corev1.DockerConfigJsonKey: []byte(`{"auths":{` + auths + `}}`)},
	}
}

const goodAuths = `"registry.redhat.io":{"auth":"dTpw"}`

// gather scrapes c through a registry of its own and returns the series of the named families as
// sorted `name{label="value",...} value` lines. (prometheus/testutil would do, but it needs a
// module this go.mod does not list.)
func gather(t *testing.T, c prometheus.Collector, names ...string) []string {
	t.Helper()
	reg := prometheus.NewPedanticRegistry()
	reg.MustRegister(c)
	families, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	var lines []string
	for _, f := range families {
		if !slices.Contains(names, f.GetName()) {
			continue
		}
		for _, m := range f.GetMetric() {
			var pairs []string
			for _, l := range m.GetLabel() {
				pairs = append(pairs, fmt.Sprintf("%s=%q", l.GetName(), l.GetValue()))
			}
			series := f.GetName()
			if len(pairs) > 0 {
				series += "{" + strings.Join(pairs, ",") + "}"
			}
			v := m.GetGauge().GetValue()
			if m.GetCounter() != nil {
				v = m.GetCounter().GetValue()
			}
			lines = append(lines, series+" "+strconv.FormatFloat(v, 'g', -1, 64))
		}
	}
	sort.Strings(lines)
	return lines
}

// lines splits an expected block into sorted, trimmed lines.
func lines(block string) []string {
	var out []string
	for _, l := range strings.Split(strings.TrimSpace(block), "\n") {
		if l = strings.TrimSpace(l); l != "" {
			out = append(out, l)
		}
	}
	sort.Strings(out)
	return out
}

var gauges = []string{DegradedName, FailedImportName, InvalidConfigName, InvalidSecretName, TBRInaccessibleName}

func TestCollectorValuesPerState(t *testing.T) {
	skipping := healthy(operatorv1.Managed)
	skipping.Spec.SkippedImagestreams = []string{"python"}
	mirrored := config(operatorv1.Managed, map[samplesv1.ConfigConditionType]corev1.ConditionStatus{
		samplesv1.ConfigurationValid: corev1.ConditionTrue, samplesv1.ImportCredentialsExist: corev1.ConditionTrue,
	})
	mirrored.Spec.SamplesRegistry = "mirror.example:5000"
	bootstrapRemoved := config(operatorv1.Removed, nil)
	bootstrapRemoved.Annotations = map[string]string{bootstrapstate.ReasonAnnotation: configspec.ReasonRegistryUnreachable}
	enabledAfterBootstrap := healthy(operatorv1.Managed)
	enabledAfterBootstrap.Annotations = bootstrapRemoved.Annotations
	ipv6Removed := config(operatorv1.Removed, nil)
	ipv6Removed.Annotations = map[string]string{bootstrapstate.ReasonAnnotation: configspec.ReasonIPv6Only}
	unknownArch := healthy(operatorv1.Managed)
	unknownArch.Spec.Architectures = []string{"mips"}
	invalid := config(operatorv1.Managed, map[samplesv1.ConfigConditionType]corev1.ConditionStatus{
		samplesv1.ConfigurationValid: corev1.ConditionFalse, samplesv1.ImportCredentialsExist: corev1.ConditionFalse,
	})
	otherNamespace := errorConfigMap("ruby")
	otherNamespace.Namespace = "openshift"
	unlabelled := errorConfigMap("httpd")
	unlabelled.Labels = nil

	for _, tc := range []struct {
		name string
		fixture
		want string
	}{{
		name:    "Managed, all imports fine, credentials present",
		fixture: fixture{config: healthy(operatorv1.Managed), secret: pullSecret(goodAuths)},
		want: `
			openshift_samples_degraded_info 0
			openshift_samples_failed_imagestream_import_info{name="httpd"} 0
			openshift_samples_failed_imagestream_import_info{name="python"} 0
			openshift_samples_failed_imagestream_import_info{name="ruby"} 0
			openshift_samples_invalidconfig_info 0
			openshift_samples_invalidsecret_info{reason="missing_secret"} 0
			openshift_samples_invalidsecret_info{reason="missing_tbr_credential"} 0
			openshift_samples_tbr_inaccessible_info 0`,
	}, {
		name: "Managed, failed imports; skipped, unlabelled, other-namespace and non-inventory ConfigMaps do not count",
		fixture: fixture{config: skipping, secret: pullSecret(goodAuths), configMaps: []*corev1.ConfigMap{
			errorConfigMap("python"), errorConfigMap("ruby"), errorConfigMap("not-in-inventory"), otherNamespace, unlabelled,
		}},
		want: `
			openshift_samples_degraded_info 0
			openshift_samples_failed_imagestream_import_info{name="httpd"} 0
			openshift_samples_failed_imagestream_import_info{name="python"} 0
			openshift_samples_failed_imagestream_import_info{name="ruby"} 1
			openshift_samples_invalidconfig_info 0
			openshift_samples_invalidsecret_info{reason="missing_secret"} 0
			openshift_samples_invalidsecret_info{reason="missing_tbr_credential"} 0
			openshift_samples_tbr_inaccessible_info 0`,
	}, {
		name:    "Managed, no pull secret, invalid config, degraded",
		fixture: fixture{config: invalid, degraded: true},
		want: `
			openshift_samples_degraded_info 1
			openshift_samples_failed_imagestream_import_info{name="httpd"} 0
			openshift_samples_failed_imagestream_import_info{name="python"} 0
			openshift_samples_failed_imagestream_import_info{name="ruby"} 0
			openshift_samples_invalidconfig_info 1
			openshift_samples_invalidsecret_info{reason="missing_secret"} 1
			openshift_samples_invalidsecret_info{reason="missing_tbr_credential"} 0
			openshift_samples_tbr_inaccessible_info 0`,
	}, {
		name:    "Managed, pull secret without registry.redhat.io",
		fixture: fixture{config: healthy(operatorv1.Managed), secret: pullSecret(`"quay.io":{"auth":"dTpw"}`)},
		want: `
			openshift_samples_invalidsecret_info{reason="missing_secret"} 0
			openshift_samples_invalidsecret_info{reason="missing_tbr_credential"} 1`,
	}, {
		name:    "Managed with samplesRegistry: the pull secret does not matter",
		fixture: fixture{config: mirrored},
		want: `
			openshift_samples_invalidsecret_info{reason="missing_secret"} 0
			openshift_samples_invalidsecret_info{reason="missing_tbr_credential"} 0`,
	}, {
		name:    "Managed, no conditions yet: invalid until ConfigurationValid is True",
		fixture: fixture{config: config(operatorv1.Managed, nil), secret: pullSecret(goodAuths)},
		want: `
			openshift_samples_invalidconfig_info 1
			openshift_samples_invalidsecret_info{reason="missing_secret"} 0
			openshift_samples_invalidsecret_info{reason="missing_tbr_credential"} 0`,
	}, {
		name:    "Managed, architecture without inventory: no per-stream series",
		fixture: fixture{config: unknownArch, secret: pullSecret(goodAuths), configMaps: []*corev1.ConfigMap{errorConfigMap("ruby")}},
		want: `
			openshift_samples_degraded_info 0
			openshift_samples_invalidconfig_info 0
			openshift_samples_invalidsecret_info{reason="missing_secret"} 0
			openshift_samples_invalidsecret_info{reason="missing_tbr_credential"} 0
			openshift_samples_tbr_inaccessible_info 0`,
	}, {
		name:    "Removed: no per-stream or secret series, even with error ConfigMaps and no secret",
		fixture: fixture{config: healthy(operatorv1.Removed), configMaps: []*corev1.ConfigMap{errorConfigMap("ruby")}},
		want: `
			openshift_samples_degraded_info 0
			openshift_samples_invalidconfig_info 0
			openshift_samples_tbr_inaccessible_info 0`,
	}, {
		name:    "Unmanaged: likewise",
		fixture: fixture{config: healthy(operatorv1.Unmanaged), degraded: true},
		want: `
			openshift_samples_degraded_info 1
			openshift_samples_invalidconfig_info 0
			openshift_samples_tbr_inaccessible_info 0`,
	}, {
		name:    "Removed at bootstrap because the registry was unreachable",
		fixture: fixture{config: bootstrapRemoved},
		want: `
			openshift_samples_degraded_info 0
			openshift_samples_invalidconfig_info 1
			openshift_samples_tbr_inaccessible_info 1`,
	}, {
		name:    "Removed at bootstrap for another reason",
		fixture: fixture{config: ipv6Removed},
		want: `
			openshift_samples_degraded_info 0
			openshift_samples_invalidconfig_info 1
			openshift_samples_tbr_inaccessible_info 0`,
	}, {
		name:    "Managed after a bootstrap removal: the annotation no longer counts",
		fixture: fixture{config: enabledAfterBootstrap, secret: pullSecret(goodAuths)},
		want: `
			openshift_samples_tbr_inaccessible_info 0`,
	}, {
		name:    "no Config",
		fixture: fixture{degraded: true, configMaps: []*corev1.ConfigMap{errorConfigMap("ruby")}},
		want: `
			openshift_samples_degraded_info 1
			openshift_samples_invalidconfig_info 0
			openshift_samples_tbr_inaccessible_info 0`,
	}} {
		t.Run(tc.name, func(t *testing.T) {
			c := tc.fixture.collector(t)
			// A case that lists the degraded gauge lists every series it expects; the others
			// look only at the families they name.
			names := gauges
			if !strings.Contains(tc.want, DegradedName) {
				names = familiesIn(tc.want)
			}
			if got, want := gather(t, c, names...), lines(tc.want); !slices.Equal(got, want) {
				t.Fatalf("series:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
			}
		})
	}
}

func familiesIn(block string) []string {
	var names []string
	for _, l := range lines(block) {
		name, _, _ := strings.Cut(l, "{")
		name, _, _ = strings.Cut(name, " ")
		if !slices.Contains(names, name) {
			names = append(names, name)
		}
	}
	return names
}

// Each missing-credentials cause sets one invalid-secret series, so one alert fires for one fix:
// missing_secret (SamplesMissingSecret) when there is no pull secret at all, and
// missing_tbr_credential (SamplesMissingTBRCredential) when the pull secret exists but cannot
// authenticate to registry.redhat.io. The Config carries ImportCredentialsExist as the status
// controller writes it for the same cache content: False for both causes, which is why the
// series must not follow it. When the operator may not read the pull secret it cannot tell
// either way: both series are absent, and SamplesDegraded (Degraded=True, MissingAccess) is the
// one alert.
func TestInvalidSecretOneSeriesPerCause(t *testing.T) {
	withCredentials := func(status corev1.ConditionStatus, reason string) *samplesv1.Config {
		cfg := healthy(operatorv1.Managed)
		for i := range cfg.Status.Conditions {
			if c := &cfg.Status.Conditions[i]; c.Type == samplesv1.ImportCredentialsExist {
				c.Status, c.Reason = status, reason
			}
		}
		return cfg
	}
	mirrored := func(status corev1.ConditionStatus, reason string) *samplesv1.Config {
		cfg := withCredentials(status, reason)
		cfg.Spec.SamplesRegistry = "mirror.example:5000"
		return cfg
	}
	noDockerConfig := pullSecret(goodAuths)
	noDockerConfig.Type = corev1.SecretTypeOpaque
	noDockerConfig.Data = map[string][]byte{"config.json": noDockerConfig.Data[corev1.DockerConfigJsonKey]}
	notADockerConfig := pullSecret(goodAuths)
	notADockerConfig.Data[corev1.DockerConfigJsonKey] = []byte(`{"registry.redhat.io":{"auth":"dTpw"}}`)
	present, missing := configstatus.ReasonCredentials, configstatus.ReasonNoCredentials

	for _, tc := range []struct {
		name string
		fixture
		// missingSecret and missingCredential are the two series' values; "" when absent.
		missingSecret, missingCredential string
	}{
		{"pull secret with registry.redhat.io", fixture{config: withCredentials(corev1.ConditionTrue, present), secret: pullSecret(goodAuths)}, "0", "0"},
		{"no pull secret at all", fixture{config: withCredentials(corev1.ConditionFalse, missing)}, "1", "0"},
		{"pull secret without registry.redhat.io", fixture{config: withCredentials(corev1.ConditionFalse, missing), secret: pullSecret(`"quay.io":{"auth":"dTpw"}`)}, "0", "1"},
		{"pull secret with empty auths", fixture{config: withCredentials(corev1.ConditionFalse, missing), secret: pullSecret("")}, "0", "1"},
		{"pull secret without .dockerconfigjson", fixture{config: withCredentials(corev1.ConditionFalse, missing), secret: noDockerConfig}, "0", "1"},
		{"pull secret whose .dockerconfigjson has no auths", fixture{config: withCredentials(corev1.ConditionFalse, missing), secret: notADockerConfig}, "0", "1"},
		{"samplesRegistry set, no pull secret", fixture{config: mirrored(corev1.ConditionTrue, present)}, "0", "0"},
		{"samplesRegistry set, pull secret without registry.redhat.io", fixture{config: mirrored(corev1.ConditionTrue, present), secret: pullSecret(`"quay.io":{"auth":"dTpw"}`)}, "0", "0"},
		{"status not written yet: the cache decides", fixture{config: config(operatorv1.Managed, nil)}, "1", "0"},
		{"status not written yet, pull secret fine", fixture{config: config(operatorv1.Managed, nil), secret: pullSecret(goodAuths)}, "0", "0"},
		// The cache of a secret the operator may not read stays empty.
		{"pull secret unreadable", fixture{config: withCredentials(corev1.ConditionFalse, configstatus.ReasonMissingAccess), degraded: true}, "", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var want []string
			for reason, v := range map[string]string{ReasonMissingSecret: tc.missingSecret, ReasonMissingTBRCredential: tc.missingCredential} {
				if v != "" {
					want = append(want, fmt.Sprintf("%s{reason=%q} %s", InvalidSecretName, reason, v))
				}
			}
			sort.Strings(want)
			if got := gather(t, tc.fixture.collector(t), InvalidSecretName); !slices.Equal(got, want) {
				t.Errorf("series:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
			}
		})
	}
}

func TestGaugesAreIdempotentAcrossScrapes(t *testing.T) {
	f := fixture{config: invalid(), configMaps: []*corev1.ConfigMap{errorConfigMap("ruby")}, degraded: true}
	c := f.collector(t)
	want := lines(`
		openshift_samples_degraded_info 1
		openshift_samples_failed_imagestream_import_info{name="httpd"} 0
		openshift_samples_failed_imagestream_import_info{name="python"} 0
		openshift_samples_failed_imagestream_import_info{name="ruby"} 1
		openshift_samples_invalidconfig_info 1
		openshift_samples_invalidsecret_info{reason="missing_secret"} 1
		openshift_samples_invalidsecret_info{reason="missing_tbr_credential"} 0
		openshift_samples_tbr_inaccessible_info 0`)
	for i := 0; i < 3; i++ {
		if got := gather(t, c, gauges...); !slices.Equal(got, want) {
			t.Fatalf("scrape %d:\n%s\nwant:\n%s", i+1, strings.Join(got, "\n"), strings.Join(want, "\n"))
		}
	}
}

func invalid() *samplesv1.Config {
	return config(operatorv1.Managed, map[samplesv1.ConfigConditionType]corev1.ConditionStatus{
		samplesv1.ConfigurationValid: corev1.ConditionFalse,
	})
}

// Each imagestream the import allow-list keeps out is a series naming it and its registry; none
// when it keeps out nothing.
func TestBlockedImageStreamsGauge(t *testing.T) {
	c := fixture{config: healthy(operatorv1.Managed)}.collector(t)
	if got := gather(t, c, BlockedName); len(got) != 0 {
		t.Errorf("series with nothing blocked: %v", got)
	}
	c = fixture{config: healthy(operatorv1.Managed), blocked: map[string]string{
		"java": "registry.access.redhat.com", "sso75-openshift-rhel8": "registry.access.redhat.com",
	}}.collector(t)
	want := lines(`
		openshift_samples_import_allowlist_blocked_imagestream_info{name="java",registry="registry.access.redhat.com"} 1
		openshift_samples_import_allowlist_blocked_imagestream_info{name="sso75-openshift-rhel8",registry="registry.access.redhat.com"} 1`)
	if got := gather(t, c, BlockedName); !slices.Equal(got, want) {
		t.Errorf("got\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

func TestRetryCounterCountsEachRetry(t *testing.T) {
	c := fixture{config: healthy(operatorv1.Managed)}.collector(t)
	if got := gather(t, c, RetryImportName); len(got) != 0 {
		t.Fatalf("retry series before any retry: %v", got)
	}
	retry := c.RetryCounter()
	for n := 1; n <= 3; n++ {
		retry("ruby")
		want := []string{fmt.Sprintf(`openshift_samples_retry_imagestream_import_total{imagestreamname="ruby"} %d`, n)}
		if got := gather(t, c, RetryImportName); !slices.Equal(got, want) {
			t.Fatalf("after %d retries: %v", n, got)
		}
	}
	retry("python")
	want := lines(`
		openshift_samples_retry_imagestream_import_total{imagestreamname="python"} 1
		openshift_samples_retry_imagestream_import_total{imagestreamname="ruby"} 3`)
	if got := gather(t, c, RetryImportName); !slices.Equal(got, want) {
		t.Fatalf("series %v, want %v", got, want)
	}
	// Each collector has its own counter: there is no package-level state.
	other := fixture{config: healthy(operatorv1.Managed)}.collector(t)
	if got := gather(t, other, RetryImportName); len(got) != 0 {
		t.Fatalf("a new collector has retry series %v", got)
	}
}

func TestRegistryGathersEverythingAndPassesLint(t *testing.T) {
	c := fixture{config: invalid(), configMaps: []*corev1.ConfigMap{errorConfigMap("ruby")}}.collector(t)
	c.RetryCounter()("ruby")
	families, err := NewRegistry(c).Gather()
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, f := range families {
		names = append(names, f.GetName())
	}
	for _, want := range append(slices.Clone(gauges), RetryImportName, "go_goroutines", "process_start_time_seconds") {
		if !slices.Contains(names, want) {
			t.Errorf("the registry does not gather %s", want)
		}
	}
	problems, err := promlint.NewWithMetricFamilies(families).Lint()
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range problems {
		if strings.HasPrefix(p.Metric, "openshift_samples_") {
			t.Errorf("lint: %s: %s", p.Metric, p.Text)
		}
	}
}

// TestRefusedWritesAreExportedInEveryState: a refused create in Managed and a refused delete in
// Removed are both an admin's to see; no refusal, no series.
func TestRefusedWritesAreExportedInEveryState(t *testing.T) {
	refused := []RefusedSample{{Kind: "ImageStream", Name: "python"}, {Kind: "Template", Name: "rails"}}
	for _, state := range []operatorv1.ManagementState{operatorv1.Managed, operatorv1.Removed} {
		got := gather(t, fixture{config: healthy(state), refused: refused}.collector(t), RefusedWriteName)
		want := lines(`
openshift_samples_refused_write_info{kind="ImageStream",name="python"} 1
openshift_samples_refused_write_info{kind="Template",name="rails"} 1`)
		if !slices.Equal(got, want) {
			t.Errorf("%s: got %v, want %v", state, got, want)
		}
		if got := gather(t, fixture{config: healthy(state)}.collector(t), RefusedWriteName); len(got) != 0 {
			t.Errorf("%s without refusals: %v", state, got)
		}
	}
}

// TestUnusableOneSeriesPerSampleAndReason: two kinds not served are one series; a partial tag
// (no reason) is none.
func TestUnusableOneSeriesPerSampleAndReason(t *testing.T) {
	c := fixture{config: healthy(operatorv1.Managed)}.collector(t)
	c.in.Unusable = func() []usability.Verdict {
		return []usability.Verdict{
			{Kind: usability.KindTemplate, Name: "rails", Reasons: []usability.Reason{
				{Code: usability.KindNotServed, Message: "creates apps.openshift.io/v1 DeploymentConfig, which this cluster does not serve"},
				{Code: usability.KindNotServed, Message: "creates build.openshift.io/v1 BuildConfig, which this cluster does not serve"},
				{Code: usability.ImageSkipped, Message: "image openshift/ruby:3.3-ubi9 is skipped by the Config"}}},
			{Kind: usability.KindImageStreamTag, Name: "ruby:3.3-ubi9", Reasons: []usability.Reason{{Code: usability.NoImageForNodes, Message: "no image for node architecture s390x"}}},
			{Kind: usability.KindImageStreamTag, Name: "python:3.12", MissingArchitectures: []string{"s390x"}},
		}
	}
	got := gather(t, c, UnusableName)
	want := []string{
		`openshift_samples_unusable_info{kind="imagestreamtag",name="ruby:3.3-ubi9",reason="NoImageForNodeArchitectures"} 1`,
		`openshift_samples_unusable_info{kind="template",name="rails",reason="ImageStreamTagSkipped"} 1`,
		`openshift_samples_unusable_info{kind="template",name="rails",reason="KindNotServed"} 1`,
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("series:\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}
