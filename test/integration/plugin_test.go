package integration

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	appsv1 "github.com/openshift/api/apps/v1"
	buildv1 "github.com/openshift/api/build/v1"
	imagev1 "github.com/openshift/api/image/v1"
	operatorv1 "github.com/openshift/api/operator/v1"
	samplesv1 "github.com/openshift/api/samples/v1"
	templatev1 "github.com/openshift/api/template/v1"
	appsclient "github.com/openshift/client-go/apps/clientset/versioned"
	buildclient "github.com/openshift/client-go/build/clientset/versioned"
	kappsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/samples-operator-dev/cluster-samples-operator/pkg/configspec"
	"github.com/samples-operator-dev/cluster-samples-operator/pkg/desired"
	"github.com/samples-operator-dev/cluster-samples-operator/pkg/plugin"
	"github.com/samples-operator-dev/cluster-samples-operator/pkg/plugin/plugintest"
	"github.com/samples-operator-dev/cluster-samples-operator/pkg/samplereport"
	"github.com/samples-operator-dev/cluster-samples-operator/pkg/sampleusage"
	"github.com/samples-operator-dev/cluster-samples-operator/test/controlplane"
)

// pluginRun is one run of `kubectl samples`.
type pluginRun struct {
	code        int
	out, errOut string
}

// kubectlSamples runs the plugin in-process with the admin's kubeconfig (and the extra flags,
// such as --as=USER to play another user).
func (e *env) kubectlSamples(t *testing.T, args ...string) pluginRun {
	t.Helper()
	var out, errOut bytes.Buffer
	code := plugin.Main(append(args, "--kubeconfig", e.cp.AdminKubeconfig), &out, &errOut)
	t.Logf("kubectl samples %s: exit %d\n%s%s", strings.Join(args, " "), code, out.String(), errOut.String())
	return pluginRun{code: code, out: out.String(), errOut: errOut.String()}
}

func (r pluginRun) expect(t *testing.T, code int, contains ...string) {
	t.Helper()
	plugintest.Run{Code: r.code, Out: r.out, ErrOut: r.errOut}.Expect(t, code, contains...)
}

// TestThePluginTellsWhatEachSampleDoesAndWhoUsesIt: a BuildConfig, a DeploymentConfig, a
// triggered Deployment, a TemplateInstance and a pod use the samples in two namespaces; `usage`
// finds each, a user who may see one namespace gets the users there and "not seen" for the
// other (exit 1), `skip` refuses while users exist and succeeds with --force, `status` says
// what each sample does, and bad input gets a one-line error with exit status 2.
func TestThePluginTellsWhatEachSampleDoesAndWhoUsesIt(t *testing.T) {
	parallel(t, aboutHalfAMinute)
	e := newEnvWithWorkloads(t)
	inv := fullX86Inventory(t) // the plugin reports on the whole inventory it ships with
	python, _ := inv.ImageStream("python")
	nodejs, _ := inv.ImageStream("nodejs")
	ruby, _ := inv.ImageStream("ruby")
	pyTag, nodeTag := python.Spec.Tags[0].Name, nodejs.Spec.Tags[0].Name
	// One tag of ruby fails to import from the start.
	var rubyTag, rubyRef string
	for _, tag := range ruby.Spec.Tags {
		if tag.From != nil && tag.From.Kind == "DockerImage" {
			rubyTag, rubyRef = tag.Name, tag.From.Name
			break
		}
	}
	const rubyFailure = "manifest unknown: the test registry has no such image"
	e.importer.FailReference(rubyRef, rubyFailure)
	op := e.startOperator(fullInventoryOptions())
	e.waitManaged(t, inv, "v1")
	ctx := context.Background()
	template := inv.TemplateNames()[0]
	const teamA, teamB = "team-a", "team-b"
	for _, ns := range []string{teamA, teamB} {
		if _, err := e.kube.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	builds := buildclient.NewForConfigOrDie(e.cp.AdminConfig)
	apps := appsclient.NewForConfigOrDie(e.cp.AdminConfig)
	ist := func(name string) corev1.ObjectReference {
		return corev1.ObjectReference{Kind: "ImageStreamTag", Namespace: "openshift", Name: name}
	}
	for _, ns := range []string{teamA, teamB} {
		bc := &buildv1.BuildConfig{ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: ns}, Spec: buildv1.BuildConfigSpec{
			CommonSpec: buildv1.CommonSpec{
				Source:   buildv1.BuildSource{Git: &buildv1.GitBuildSource{URI: "https://git.example/web.git"}},
				Strategy: buildv1.BuildStrategy{SourceStrategy: &buildv1.SourceBuildStrategy{From: ist("python:" + pyTag)}},
				Output:   buildv1.BuildOutput{To: &corev1.ObjectReference{Kind: "ImageStreamTag", Name: "web:latest"}},
			},
			Triggers: []buildv1.BuildTriggerPolicy{{Type: buildv1.ImageChangeBuildTriggerType, ImageChange: &buildv1.ImageChangeTrigger{}}},
		}}
		if _, err := builds.BuildV1().BuildConfigs(ns).Create(ctx, bc, metav1.CreateOptions{}); err != nil {
			t.Fatalf("creating a BuildConfig: %v", err)
		}
	}
	labels := map[string]string{"app": "api"}
	podSpec := corev1.PodSpec{Containers: []corev1.Container{{Name: "api", Image: "quay.io/example/api:1"}}}
	dc := &appsv1.DeploymentConfig{ObjectMeta: metav1.ObjectMeta{Name: "api", Namespace: teamA}, Spec: appsv1.DeploymentConfigSpec{
		Replicas: 1, Selector: labels,
		Template: &corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: labels}, Spec: podSpec},
		Triggers: []appsv1.DeploymentTriggerPolicy{{Type: appsv1.DeploymentTriggerOnImageChange, ImageChangeParams: &appsv1.DeploymentTriggerImageChangeParams{
			Automatic: true, ContainerNames: []string{"api"}, From: ist("nodejs:" + nodeTag),
		}}},
	}}
	if _, err := apps.AppsV1().DeploymentConfigs(teamA).Create(ctx, dc, metav1.CreateOptions{}); err != nil {
		t.Fatalf("creating a DeploymentConfig: %v", err)
	}
	d := &kappsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Name: "worker", Namespace: teamA, Annotations: map[string]string{
			"image.openshift.io/triggers": fmt.Sprintf(`[{"from":{"kind":"ImageStreamTag","name":"ruby:%s","namespace":"openshift"},"fieldPath":"spec.template.spec.containers[?(@.name==\"api\")].image"}]`, rubyTag),
		}},
		Spec: kappsv1.DeploymentSpec{Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: labels}, Spec: podSpec}},
	}
	if _, err := e.kube.AppsV1().Deployments(teamA).Create(ctx, d, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	sampleTemplate, err := e.tmpl.TemplateV1().Templates("openshift").Get(ctx, template, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	ti := &templatev1.TemplateInstance{ObjectMeta: metav1.ObjectMeta{Name: "shop", Namespace: teamA}, Spec: templatev1.TemplateInstanceSpec{
		Template:  templatev1.Template{ObjectMeta: metav1.ObjectMeta{Name: sampleTemplate.Name}, Objects: sampleTemplate.Objects, Parameters: sampleTemplate.Parameters},
		Requester: &templatev1.TemplateInstanceRequester{Username: "admin"},
	}}
	if _, err := e.tmpl.TemplateV1().TemplateInstances(teamA).Create(ctx, ti, metav1.CreateOptions{}); err != nil {
		t.Fatalf("creating a TemplateInstance: %v", err)
	}
	// The pod runs python's image as the internal registry serves it, or, where the stand-ins
	// leave the stream without a repository, by the digest its tag imported.
	var podImage string
	eventually(t, 30*time.Second, func() (bool, string) {
		livePython, err := e.images.ImageV1().ImageStreams("openshift").Get(ctx, "python", metav1.GetOptions{})
		if err != nil {
			return false, err.Error()
		}
		podImage = pythonPodImage(livePython, pyTag)
		return podImage != "", fmt.Sprintf("python:%s has neither a repository nor an import: %+v", pyTag, livePython.Status)
	})
	// No controller manager runs here to create the namespace's default service account.
	if _, err := e.kube.CoreV1().ServiceAccounts(teamA).Create(ctx, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: "default"}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "web-1", Namespace: teamA}, Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "web", Image: podImage}}}}
	if _, err := e.kube.CoreV1().Pods(teamA).Create(ctx, pod, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}

	// Every user, as the admin sees them.
	pyUse := "python:" + pyTag
	all := e.kubectlSamples(t, "usage", "-o", "json")
	all.expect(t, 0)
	var report struct {
		Users   []sampleusage.Use `json:"users"`
		NotSeen []string          `json:"notSeen"`
	}
	if err := json.Unmarshal([]byte(all.out), &report); err != nil {
		t.Fatalf("usage -o json: %v", err)
	}
	found := map[string]bool{}
	for _, u := range report.Users {
		found[fmt.Sprintf("%s %s/%s/%s %s", u.Sample, u.Kind, u.Namespace, u.Name, u.Via)] = true
	}
	for _, want := range []string{
		pyUse + " BuildConfig/team-a/web " + sampleusage.ViaStrategy,
		pyUse + " BuildConfig/team-a/web " + sampleusage.ViaImageChange,
		pyUse + " BuildConfig/team-b/web " + sampleusage.ViaStrategy,
		"nodejs:" + nodeTag + " DeploymentConfig/team-a/api " + sampleusage.ViaImageChange,
		"ruby:" + rubyTag + " Deployment/team-a/worker " + sampleusage.ViaTriggerAnnot,
		template + " TemplateInstance/team-a/shop " + sampleusage.ViaTemplate,
		pyUse + " Pod/team-a/web-1 " + sampleusage.ViaRunningImage,
	} {
		if !found[want] {
			t.Errorf("usage does not list %q; it found %v", want, found)
		}
	}
	if len(report.NotSeen) > 0 {
		t.Errorf("the admin sees everything, yet: %v", report.NotSeen)
	}
	e.kubectlSamples(t, "usage", "python").expect(t, 0, "team-a", "team-b", "BuildConfig", "Pod", "3 objects use python (1 sample in 2 namespaces)")

	// A user who may read the samples and list namespaces, and read workloads in team-a only.
	const alice = "alice"
	e.grantPluginReader(t, alice, teamA)
	partial := e.kubectlSamples(t, "usage", "python", "--as", alice)
	partial.expect(t, 1, "team-a", "not seen: buildconfigs in ", ": forbidden", "not everything could be seen")
	named := e.kubectlSamples(t, "usage", "python", "--as", alice, "-n", teamA+","+teamB)
	named.expect(t, 1, "team-a", "not seen: buildconfigs in namespace team-b: forbidden", "2 objects use python (1 sample in 1 namespace)")
	for _, r := range []pluginRun{partial, named} {
		if regexp.MustCompile(`(?m)^\S+\s+team-b\s`).MatchString(r.out) {
			t.Error("alice sees a user in team-b")
		}
	}
	// One who may read the samples but no workload at all: nothing is called unused.
	const bob = "bob"
	e.grantPluginReader(t, bob, "")
	e.kubectlSamples(t, "usage", "python", "--as", bob).expect(t, 1, "buildconfigs: you may not list them in all namespaces", "not everything could be seen")

	// skip refuses while python has users, prints them, and changes nothing.
	refused := e.kubectlSamples(t, "skip", "python")
	refused.expect(t, 1, "not skipping python: 3 objects use it; --force skips it anyway", "team-b")
	if slices.Contains(e.getConfig().Spec.SkippedImagestreams, "python") {
		t.Fatal("a refused skip changed the Config")
	}
	e.kubectlSamples(t, "skip", "python", "--force", "--dry-run").expect(t, 0, "would change the Config: spec.skippedImagestreams [] -> [python]")
	if slices.Contains(e.getConfig().Spec.SkippedImagestreams, "python") {
		t.Fatal("a dry run changed the Config")
	}
	e.kubectlSamples(t, "skip", "python", "--force").expect(t, 0, "changed the Config: spec.skippedImagestreams [] -> [python]")
	if !slices.Contains(e.getConfig().Spec.SkippedImagestreams, "python") {
		t.Fatal("skip --force did not skip python")
	}
	// A tag nobody uses is skipped without --force; the operator removes it from the stream.
	unusedTag := nodejs.Spec.Tags[len(nodejs.Spec.Tags)-1].Name
	e.kubectlSamples(t, "skip", "nodejs:"+unusedTag).expect(t, 0, configspec.SkippedImageStreamTagsAnnotation)
	eventually(t, 30*time.Second, func() (bool, string) {
		r := e.kubectlSamplesQuiet("status", "-o", "json")
		var st samplereport.Report
		if err := json.Unmarshal([]byte(r.out), &st); err != nil {
			return false, err.Error()
		}
		var pyState samplereport.State
		var nodeTagState samplereport.TagState
		for _, s := range st.Samples {
			if s.Kind == samplereport.KindImageStream && s.Name == "python" {
				pyState = s.State
			}
			if s.Name == "nodejs" {
				for _, tag := range s.Tags {
					if tag.Name == unusedTag {
						nodeTagState = tag.State
					}
				}
			}
		}
		return pyState == samplereport.Skipped && nodeTagState == samplereport.TagSkipped,
			fmt.Sprintf("python %s, nodejs:%s %s", pyState, unusedTag, nodeTagState)
	})
	// status derives "skipped" from the Config; the live stream shows the operator acted on it.
	eventually(t, 30*time.Second, func() (bool, string) {
		live := e.imageStream("nodejs")
		if slices.ContainsFunc(live.Spec.Tags, func(tag imagev1.TagReference) bool { return tag.Name == unusedTag }) {
			return false, fmt.Sprintf("the live stream nodejs still has tag %s", unusedTag)
		}
		return true, ""
	})
	status := e.kubectlSamples(t, "status")
	if !regexp.MustCompile(`(?m)^imagestream\s+python\s+skipped`).MatchString(status.out) || !regexp.MustCompile(`(?m)^template\s+`+regexp.QuoteMeta(template)+`\s+managed\s+v1`).MatchString(status.out) {
		t.Errorf("status does not say python is skipped and %s managed at v1", template)
	}
	if !regexp.MustCompile(`(?m)^\d+ imagestreams: .*1 skipped.*; \d+ templates$`).MatchString(status.out) {
		t.Error("status does not end with its summary line")
	}
	wide := e.kubectlSamples(t, "status", "-o", "wide")
	if !regexp.MustCompile(`(?m)^imagestream\s+nodejs\s+` + regexp.QuoteMeta(unusedTag) + `\s+skipped\s`).MatchString(wide.out) {
		t.Error("status -o wide does not give nodejs's skipped tag a row")
	}
	e.kubectlSamples(t, "unskip", "python").expect(t, 0, "spec.skippedImagestreams [python] -> []")
	e.kubectlSamples(t, "unskip", "python").expect(t, 0, "python is already not skipped")
	// The operator takes python back as the Config now asks: no revert of anyone's change.
	eventually(t, 30*time.Second, func() (bool, string) {
		is, err := e.images.ImageV1().ImageStreams("openshift").Get(ctx, "python", metav1.GetOptions{})
		if err != nil {
			return false, err.Error()
		}
		return is.Labels[desired.ManagedLabel] == "true", fmt.Sprintf("python labelled %v", is.Labels)
	})
	if reverted := e.eventsWithReason(t, "SampleReverted"); len(reverted) > 0 {
		t.Errorf("unskipping python was reported as a revert: %q", reverted)
	}

	// Bad input.
	e.kubectlSamples(t, "usage", "pyhton").expect(t, 2, `no sample imagestream or template is named "pyhton" (did you mean "python"?)`)
	e.kubectlSamples(t, "skip", "python:no-such-tag").expect(t, 2, `imagestream python has no tag "no-such-tag"`)
	e.kubectlSamples(t, "status", "-o", "xml").expect(t, 2, `-o "xml"`)
	e.kubectlSamples(t, "status", "--as", "nobody").expect(t, 2, "you may not read the samples Config")

	// status names ruby's failing tag with the importer's words, and exits 1.
	eventually(t, 30*time.Second, func() (bool, string) {
		r := e.kubectlSamplesQuiet("status")
		return r.code == 1 && regexp.MustCompile(`(?m)^imagestream\s+ruby\s+managed\s+v1\s+\d+/\d+\s+1\s+`+regexp.QuoteMeta(rubyTag)+`: `).MatchString(r.out),
			fmt.Sprintf("exit %d: %s", r.code, r.out)
	})
	// retry-imports asks the server to import the failing tag now and prints its answer: the real
	// server imports it itself and fails (nothing here reaches the registry); the stand-ins leave
	// the import to the emulator, which answers later.
	retried := e.kubectlSamples(t, "retry-imports", "ruby")
	if e.cp.RealOpenShiftAPIServer() {
		retried.expect(t, 1, "0 of 1 failing tag imported")
		if !regexp.MustCompile(`(?m)^ruby\s+` + regexp.QuoteMeta(rubyTag) + `\s+failed\s+-\s+\S`).MatchString(retried.out) {
			t.Errorf("retry-imports does not give ruby:%s's failure with the server's message", rubyTag)
		}
	} else {
		retried.expect(t, 0, "requested")
	}
	e.kubectlSamples(t, "retry-imports", "python").expect(t, 0, "no tag of it is failing: nothing to retry")
	e.kubectlSamples(t, "retry-imports", template).expect(t, 2, "is a template: only imagestreams import")

	// A cluster without the samples Config (the operator stopped, the Config deleted).
	op.stop(t)
	if err := e.samples.SamplesV1().Configs().Delete(ctx, "cluster", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	eventually(t, 30*time.Second, func() (bool, string) {
		cfg, err := e.samples.SamplesV1().Configs().Get(ctx, "cluster", metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			return true, ""
		}
		if err == nil && len(cfg.Finalizers) > 0 { // nobody runs the cleanup now
			cfg.Finalizers = nil
			_, err = e.samples.SamplesV1().Configs().Update(ctx, cfg, metav1.UpdateOptions{})
		}
		return false, fmt.Sprintf("the Config is still there (%v)", err)
	})
	e.kubectlSamples(t, "status").expect(t, 2, "this cluster has no samples Config (configs.samples.operator.openshift.io/cluster)")
}

// kubectlSamplesQuiet runs the plugin without logging its output (for polls).
func (e *env) kubectlSamplesQuiet(args ...string) pluginRun {
	var out, errOut bytes.Buffer
	code := plugin.Main(append(args, "--kubeconfig", e.cp.AdminKubeconfig), &out, &errOut)
	return pluginRun{code: code, out: out.String(), errOut: errOut.String()}
}

// pythonPodImage is how a pod names python's tag: through the internal registry when the stream
// has a repository there, else by the image its tag imported ("" when it has neither yet).
func pythonPodImage(is *imagev1.ImageStream, tag string) string {
	if is.Status.DockerImageRepository != "" {
		return is.Status.DockerImageRepository + ":" + tag
	}
	for _, st := range is.Status.Tags {
		if st.Tag == tag && len(st.Items) > 0 {
			return "registry.example/whatever/python@" + st.Items[0].Image
		}
	}
	return ""
}

// grantPluginReader lets user read the samples (the Config, the streams and templates of
// openshift) and list namespaces; with namespace set, also read every kind `usage` reads there.
func (e *env) grantPluginReader(t *testing.T, user, namespace string) {
	t.Helper()
	ctx := context.Background()
	rbac := e.kube.RbacV1()
	name := "samples-reader-" + user
	readers := []rbacv1.PolicyRule{
		{APIGroups: []string{"samples.operator.openshift.io"}, Resources: []string{"configs"}, Verbs: []string{"get"}},
		{APIGroups: []string{""}, Resources: []string{"namespaces"}, Verbs: []string{"list"}},
		{APIGroups: []string{"image.openshift.io"}, Resources: []string{"imagestreams"}, Verbs: []string{"list"}},
		{APIGroups: []string{"template.openshift.io"}, Resources: []string{"templates"}, Verbs: []string{"list"}},
	}
	if user == "bob" {
		readers = slices.Delete(readers, 1, 2) // bob may not list namespaces either
	}
	if _, err := rbac.ClusterRoles().Create(ctx, &rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: name}, Rules: readers}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	subject := []rbacv1.Subject{{Kind: "User", APIGroup: "rbac.authorization.k8s.io", Name: user}}
	if _, err := rbac.ClusterRoleBindings().Create(ctx, &rbacv1.ClusterRoleBinding{ObjectMeta: metav1.ObjectMeta{Name: name}, Subjects: subject,
		RoleRef: rbacv1.RoleRef{APIGroup: "rbac.authorization.k8s.io", Kind: "ClusterRole", Name: name}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if namespace == "" {
		return
	}
	workloads := "samples-workload-reader"
	rule := rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: workloads}, Rules: []rbacv1.PolicyRule{
		{APIGroups: []string{"build.openshift.io"}, Resources: []string{"buildconfigs"}, Verbs: []string{"list"}},
		{APIGroups: []string{"apps.openshift.io"}, Resources: []string{"deploymentconfigs"}, Verbs: []string{"list"}},
		{APIGroups: []string{"apps"}, Resources: []string{"deployments", "statefulsets", "daemonsets"}, Verbs: []string{"list"}},
		{APIGroups: []string{"batch"}, Resources: []string{"cronjobs"}, Verbs: []string{"list"}},
		{APIGroups: []string{""}, Resources: []string{"pods"}, Verbs: []string{"list"}},
		{APIGroups: []string{"template.openshift.io"}, Resources: []string{"templateinstances"}, Verbs: []string{"list"}},
	}}
	if _, err := rbac.ClusterRoles().Create(ctx, &rule, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := rbac.RoleBindings(namespace).Create(ctx, &rbacv1.RoleBinding{ObjectMeta: metav1.ObjectMeta{Name: workloads + "-" + user}, Subjects: subject,
		RoleRef: rbacv1.RoleRef{APIGroup: "rbac.authorization.k8s.io", Kind: "ClusterRole", Name: workloads}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
}

// TestAProjectDeveloperAsksWhoUsesTheSamples: on the RBAC-enabled control plane, dana has the
// built-in view role in openshift and in team-a, nothing cluster-scoped. `usage` answers her
// (users in team-a, the Config and what lies beyond named as not seen, exit 1) where it used to
// stop at the Config with exit 2. ruby:latest follows ruby:3.3-ubi9, so skipping 3.3-ubi9 is
// refused while a BuildConfig uses latest; `-n ""` is an error, and `skip -n` refuses until
// the namespaces named are all the cluster's.
func TestAProjectDeveloperAsksWhoUsesTheSamples(t *testing.T) {
	parallel(t, aboutTwentySecond)
	e := newEnvWithWorkloads(t)
	ctx := context.Background()
	// The samples as the operator leaves them (none runs here: nothing else is needed).
	e.plantSamplesConfig(t)
	ruby, _ := fullX86Inventory(t).ImageStream("ruby")
	ruby = ruby.DeepCopy()
	if i := slices.IndexFunc(ruby.Spec.Tags, func(tag imagev1.TagReference) bool { return tag.Name == "latest" }); i < 0 || ruby.Spec.Tags[i].From.Name != "3.3-ubi9" {
		t.Fatalf("the inventory's ruby:latest no longer follows 3.3-ubi9: %+v", ruby.Spec.Tags)
	}
	e.plantSample(t, ruby)
	const teamA, teamB = "team-a", "team-b"
	builds := buildclient.NewForConfigOrDie(e.cp.AdminConfig)
	for _, ns := range []string{teamA, teamB} {
		if _, err := e.kube.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		bc := &buildv1.BuildConfig{ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: ns}, Spec: buildv1.BuildConfigSpec{CommonSpec: buildv1.CommonSpec{
			Source:   buildv1.BuildSource{Git: &buildv1.GitBuildSource{URI: "https://git.example/web.git"}},
			Strategy: buildv1.BuildStrategy{SourceStrategy: &buildv1.SourceBuildStrategy{From: corev1.ObjectReference{Kind: "ImageStreamTag", Namespace: "openshift", Name: "ruby:latest"}}},
		}}}
		if _, err := builds.BuildV1().BuildConfigs(ns).Create(ctx, bc, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	giveViewAggregatedRules(t, e.kube)
	const dana = "dana"
	for _, ns := range []string{"openshift", teamA} {
		if _, err := e.kube.RbacV1().RoleBindings(ns).Create(ctx, &rbacv1.RoleBinding{ObjectMeta: metav1.ObjectMeta{Name: "view-" + dana},
			Subjects: []rbacv1.Subject{{Kind: "User", APIGroup: rbacv1.GroupName, Name: dana}},
			RoleRef:  rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: "view"}}, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}

	// dana asks about her namespace: the user there, through the tag it follows.
	mine := e.kubectlSamples(t, "usage", "ruby:3.3-ubi9", "--as", dana, "-n", teamA)
	mine.expect(t, 1, "ruby:latest -> 3.3-ubi9", "not seen: the samples Config: you may not read it",
		"1 object uses ruby:3.3-ubi9 (1 sample in 1 namespace); looked in namespace team-a only (-n); not everything could be seen")
	if !regexp.MustCompile(`(?m)^ruby:latest -> 3\.3-ubi9\s+team-a\s+BuildConfig\s+web\s`).MatchString(mine.out) {
		t.Error("usage does not list team-a's BuildConfig for dana")
	}
	// Everywhere she may look: team-b is named as not seen, never as unused.
	e.kubectlSamples(t, "usage", "ruby", "--as", dana, "-n", teamA+","+teamB).expect(t, 1,
		"not seen: buildconfigs in namespace team-b: forbidden", "1 object uses ruby")
	// Without -n she may list neither workloads in all namespaces nor namespaces: each kind says so.
	everywhere := e.kubectlSamples(t, "usage", "ruby", "--as", dana)
	everywhere.expect(t, 1, "not seen: the samples Config", "not seen: buildconfigs: you may not list them in all namespaces")
	for _, r := range []pluginRun{mine, everywhere} {
		if strings.Contains(r.out, teamB+" ") {
			t.Error("dana sees a user in team-b")
		}
	}
	e.kubectlSamples(t, "usage", "ruby", "--as", dana, "-n", "").expect(t, 2, "-n names no namespace")

	// The admin: a skip of the tag latest follows is refused while latest has users.
	e.kubectlSamples(t, "skip", "ruby:3.3-ubi9").expect(t, 1, "not skipping ruby:3.3-ubi9: 2 objects use it")
	e.kubectlSamples(t, "skip", "ruby:3.3-ubi9", "-n", "").expect(t, 2, "-n names no namespace")
	e.kubectlSamples(t, "usage", "-n", "").expect(t, 2, "-n names no namespace")
	// Looking in team-a alone is not looking everywhere.
	for _, ns := range []string{teamA, teamB} {
		if err := builds.BuildV1().BuildConfigs(ns).Delete(ctx, "web", metav1.DeleteOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	onlyA := e.kubectlSamples(t, "skip", "ruby:3.3-ubi9", "-n", teamA)
	onlyA.expect(t, 1, "not every user could be seen")
	if !regexp.MustCompile(`(?m)^not seen: \d+ namespaces \(default, .*\): not looked in \(not named with -n\)$`).MatchString(onlyA.out) {
		t.Error("skip -n team-a does not name the namespaces it did not look in")
	}
	if skipped := e.getConfig().Annotations[configspec.SkippedImageStreamTagsAnnotation]; skipped != "" {
		t.Fatalf("a refused skip changed the Config: %q", skipped)
	}
	namespaces, err := e.kube.CoreV1().Namespaces().List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var all []string
	for _, ns := range namespaces.Items {
		all = append(all, ns.Name)
	}
	e.kubectlSamples(t, "skip", "ruby:3.3-ubi9", "-n", strings.Join(all, ",")).expect(t, 0, "changed the Config: annotation "+configspec.SkippedImageStreamTagsAnnotation)
}

// giveViewAggregatedRules gives the built-in view role the reads aggregation gives it on an
// OpenShift cluster (the kinds `usage` lists, and the samples): the local control plane runs no
// aggregation controller.
func giveViewAggregatedRules(t *testing.T, kube kubernetes.Interface) {
	t.Helper()
	ctx := context.Background()
	read := []string{"get", "list", "watch"}
	view, err := kube.RbacV1().ClusterRoles().Get(ctx, "view", metav1.GetOptions{})
	if err != nil {
		t.Fatalf("the bootstrap view role: %v", err)
	}
	view.Rules = []rbacv1.PolicyRule{
		{APIGroups: []string{""}, Resources: []string{"pods"}, Verbs: read},
		{APIGroups: []string{"apps"}, Resources: []string{"deployments", "statefulsets", "daemonsets"}, Verbs: read},
		{APIGroups: []string{"batch"}, Resources: []string{"cronjobs"}, Verbs: read},
		{APIGroups: []string{"image.openshift.io"}, Resources: []string{"imagestreams"}, Verbs: read},
		{APIGroups: []string{"template.openshift.io"}, Resources: []string{"templates", "templateinstances"}, Verbs: read},
		{APIGroups: []string{"build.openshift.io"}, Resources: []string{"buildconfigs"}, Verbs: read},
		{APIGroups: []string{"apps.openshift.io"}, Resources: []string{"deploymentconfigs"}, Verbs: read},
	}
	if _, err := kube.RbacV1().ClusterRoles().Update(ctx, view, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
}

// TestUsageOnAClusterWithoutBuildsAndDeploymentConfigs: issue 56 item 11. With the Build and
// DeploymentConfig capabilities off, buildconfigs and deploymentconfigs have no object to
// count: usage answers with exit 0 and skip needs no --force, for the admin and for carol, who
// may list every kind the cluster serves (an unserved path answers her 403, as authorization
// comes first: discovery tells it is not served).
func TestUsageOnAClusterWithoutBuildsAndDeploymentConfigs(t *testing.T) {
	parallel(t, aboutTwentySecond)
	e := newEnvInstalledOn(t, controlplane.Options{WorkloadAPIsOff: true}, applyManifests)
	ctx := context.Background()
	// The samples as the operator leaves them (none runs here: nothing else is needed).
	e.plantSamplesConfig(t)
	nodejs, _ := fullX86Inventory(t).ImageStream("nodejs")
	e.plantSample(t, nodejs.DeepCopy())
	const carol = "carol"
	e.grantPluginReader(t, carol, "")
	workloads := &rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: "samples-served-workload-reader"}, Rules: []rbacv1.PolicyRule{
		{APIGroups: []string{"apps"}, Resources: []string{"deployments", "statefulsets", "daemonsets"}, Verbs: []string{"list"}},
		{APIGroups: []string{"batch"}, Resources: []string{"cronjobs"}, Verbs: []string{"list"}},
		{APIGroups: []string{""}, Resources: []string{"pods"}, Verbs: []string{"list"}},
		{APIGroups: []string{"template.openshift.io"}, Resources: []string{"templateinstances"}, Verbs: []string{"list"}},
	}}
	if _, err := e.kube.RbacV1().ClusterRoles().Create(ctx, workloads, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := e.kube.RbacV1().ClusterRoleBindings().Create(ctx, &rbacv1.ClusterRoleBinding{ObjectMeta: metav1.ObjectMeta{Name: workloads.Name + "-" + carol},
		Subjects: []rbacv1.Subject{{Kind: "User", APIGroup: rbacv1.GroupName, Name: carol}},
		RoleRef:  rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: workloads.Name}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	const notServed = "not served by this cluster (its capability may be off): buildconfigs, deploymentconfigs, no user to count"
	for _, as := range [][]string{nil, {"--as", carol}} {
		r := e.kubectlSamples(t, append([]string{"usage", "nodejs"}, as...)...)
		r.expect(t, 0, notServed, "no user of nodejs found")
		if strings.Contains(r.out, "not seen") {
			t.Errorf("usage %v takes a kind the cluster does not serve as not seen", as)
		}
	}
	e.kubectlSamples(t, "skip", "nodejs", "--dry-run").expect(t, 0, "would change the Config: spec.skippedImagestreams [] -> [nodejs]")
}

// plantSamplesConfig creates the samples Config as the operator does, Managed.
func (e *env) plantSamplesConfig(t *testing.T) {
	t.Helper()
	if _, err := e.samples.SamplesV1().Configs().Create(context.Background(), &samplesv1.Config{ObjectMeta: metav1.ObjectMeta{Name: "cluster"},
		Spec: samplesv1.ConfigSpec{ManagementState: operatorv1.Managed}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
}

// plantSample creates is in openshift as a sample the operator manages.
func (e *env) plantSample(t *testing.T, is *imagev1.ImageStream) {
	t.Helper()
	is.Namespace, is.Labels = "openshift", map[string]string{desired.ManagedLabel: "true"}
	if _, err := e.images.ImageV1().ImageStreams("openshift").Create(context.Background(), is, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
}
