package integration

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"

	appsv1 "github.com/openshift/api/apps/v1"
	buildv1 "github.com/openshift/api/build/v1"
	templatev1 "github.com/openshift/api/template/v1"
	appsclient "github.com/openshift/client-go/apps/clientset/versioned"
	buildclient "github.com/openshift/client-go/build/clientset/versioned"
	templateclient "github.com/openshift/client-go/template/clientset/versioned"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/rest"

	"github.com/samples-operator-dev/cluster-samples-operator/test/controlplane"
)

// warnings keeps the warnings the API server sent with its responses.
type warnings struct {
	mu   sync.Mutex
	seen []string
}

func (w *warnings) HandleWarningHeader(_ int, _ string, text string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.seen = append(w.seen, text)
}

func (w *warnings) all() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return strings.Join(w.seen, "; ")
}

// pageThrough lists the objects of a kind one at a time, as a client paging with Limit 1 does,
// and returns them: with want (two names) created, the first page must hold one of them and a
// continue token, the second, read with it, the other and no token.
func pageThrough[T any, PT interface {
	*T
	metav1.Object
}](t *testing.T, kind string, want []string, list func(metav1.ListOptions) ([]T, string, error)) []T {
	t.Helper()
	var all []T
	var names []string
	opts := metav1.ListOptions{Limit: 1}
	for page := 1; page <= 2; page++ {
		items, next, err := list(opts)
		if err != nil {
			t.Fatalf("listing %ss, page %d: %v", kind, page, err)
		}
		if len(items) != 1 || (next == "") != (page == 2) {
			t.Fatalf("page %d of %ss holds %d objects, continue %q; want one object and a token on the first page only", page, kind, len(items), next)
		}
		all = append(all, items...)
		names = append(names, PT(&items[0]).GetName())
		opts.Continue = next
	}
	if fmt.Sprint(names) != fmt.Sprint(want) {
		t.Errorf("%ss listed page by page: %v, want %v", kind, names, want)
	}
	return all
}

// TestBuildAndAppsKindsAreServed: BuildConfigs, DeploymentConfigs and TemplateInstances are served
// by whichever backend runs (the real openshift-apiserver with OPENSHIFT_BIN_DIR, else the CRDs of
// test/crds/aggregated): each is created, listed page by page with Limit 1 and a continue token,
// and what a client listing them reads (triggers, strategies, annotations, the template) comes
// back as sent. DeploymentConfigs carry openshift-apiserver's deprecation warning on both. What
// only the real server fills in on create is logged, not required (see the report in
// test/controlplane's comments).
func TestBuildAndAppsKindsAreServed(t *testing.T) {
	parallel(t, 0)
	e := newEnvWithWorkloads(t)
	ctx := context.Background()
	const ns = "workloads"
	if _, err := e.kube.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	seen := &warnings{}
	cfg := rest.CopyConfig(e.cp.AdminConfig)
	cfg.WarningHandler = seen
	builds := buildclient.NewForConfigOrDie(cfg).BuildV1().BuildConfigs(ns)
	deployments := appsclient.NewForConfigOrDie(cfg).AppsV1().DeploymentConfigs(ns)
	instances := templateclient.NewForConfigOrDie(cfg).TemplateV1().TemplateInstances(ns)
	ist := func(name string) corev1.ObjectReference {
		return corev1.ObjectReference{Kind: "ImageStreamTag", Namespace: "openshift", Name: name}
	}
	annotations := map[string]string{"example.com/owner": "team-a"}
	names := []string{"one", "two"}

	for _, name := range names {
		bc := &buildv1.BuildConfig{ObjectMeta: metav1.ObjectMeta{Name: name, Annotations: annotations}, Spec: buildv1.BuildConfigSpec{
			CommonSpec: buildv1.CommonSpec{
				Source: buildv1.BuildSource{Git: &buildv1.GitBuildSource{URI: "https://git.example/" + name + ".git"}},
				Strategy: buildv1.BuildStrategy{Type: buildv1.SourceBuildStrategyType,
					SourceStrategy: &buildv1.SourceBuildStrategy{From: ist("python:3.12-ubi9")}},
				Output: buildv1.BuildOutput{To: &corev1.ObjectReference{Kind: "ImageStreamTag", Name: name + ":latest"}},
			},
			Triggers: []buildv1.BuildTriggerPolicy{{Type: buildv1.ImageChangeBuildTriggerType, ImageChange: &buildv1.ImageChangeTrigger{}}},
		}}
		created, err := builds.Create(ctx, bc, metav1.CreateOptions{})
		if err != nil {
			t.Fatalf("creating BuildConfig %s: %v", name, err)
		}
		t.Logf("BuildConfig as stored: runPolicy %q, source type %q, history limits %v/%v", created.Spec.RunPolicy,
			created.Spec.Source.Type, ptrString(created.Spec.SuccessfulBuildsHistoryLimit), ptrString(created.Spec.FailedBuildsHistoryLimit))

		labels := map[string]string{"app": name}
		dc := &appsv1.DeploymentConfig{ObjectMeta: metav1.ObjectMeta{Name: name, Annotations: annotations}, Spec: appsv1.DeploymentConfigSpec{
			Replicas: 1, Selector: labels,
			Template: &corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: labels},
				Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "app", Image: " "}}}},
			Triggers: []appsv1.DeploymentTriggerPolicy{{Type: appsv1.DeploymentTriggerOnImageChange,
				ImageChangeParams: &appsv1.DeploymentTriggerImageChangeParams{Automatic: true, ContainerNames: []string{"app"}, From: ist("nodejs:22-ubi9")}}},
		}}
		createdDC, err := deployments.Create(ctx, dc, metav1.CreateOptions{})
		if err != nil {
			t.Fatalf("creating DeploymentConfig %s: %v", name, err)
		}
		t.Logf("DeploymentConfig as stored: strategy %q, revisionHistoryLimit %v", createdDC.Spec.Strategy.Type, ptrString(createdDC.Spec.RevisionHistoryLimit))

		ti := &templatev1.TemplateInstance{ObjectMeta: metav1.ObjectMeta{Name: name, Annotations: annotations}, Spec: templatev1.TemplateInstanceSpec{
			Template: templatev1.Template{
				ObjectMeta: metav1.ObjectMeta{Name: "small"},
				Parameters: []templatev1.Parameter{{Name: "NAME", Value: name}},
				Objects:    []runtime.RawExtension{{Raw: []byte(`{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"${NAME}"},"data":{"a":"b"}}`)}},
			},
		}}
		createdTI, err := instances.Create(ctx, ti, metav1.CreateOptions{})
		if err != nil {
			t.Fatalf("creating TemplateInstance %s: %v", name, err)
		}
		requester := "none"
		if r := createdTI.Spec.Requester; r != nil {
			requester = r.Username
		}
		t.Logf("TemplateInstance as stored: requester %s, %d conditions", requester, len(createdTI.Status.Conditions))
		if e.cp.RealOpenShiftAPIServer() && requester != controlplane.AdminUser {
			t.Errorf("openshift-apiserver set the requester to %s, want the creating user %s", requester, controlplane.AdminUser)
		}
	}

	bcs := pageThrough(t, "BuildConfig", names, func(opts metav1.ListOptions) ([]buildv1.BuildConfig, string, error) {
		l, err := builds.List(ctx, opts)
		if err != nil {
			return nil, "", err
		}
		return l.Items, l.Continue, nil
	})
	dcs := pageThrough(t, "DeploymentConfig", names, func(opts metav1.ListOptions) ([]appsv1.DeploymentConfig, string, error) {
		l, err := deployments.List(ctx, opts)
		if err != nil {
			return nil, "", err
		}
		return l.Items, l.Continue, nil
	})
	tis := pageThrough(t, "TemplateInstance", names, func(opts metav1.ListOptions) ([]templatev1.TemplateInstance, string, error) {
		l, err := instances.List(ctx, opts)
		if err != nil {
			return nil, "", err
		}
		return l.Items, l.Continue, nil
	})

	// What a reader of the listed objects looks at comes back as sent, on either backend.
	for _, bc := range bcs {
		if len(bc.Spec.Triggers) != 1 || bc.Spec.Triggers[0].Type != buildv1.ImageChangeBuildTriggerType || bc.Spec.Triggers[0].ImageChange == nil {
			t.Errorf("BuildConfig %s triggers: %+v, want one ImageChange trigger", bc.Name, bc.Spec.Triggers)
		}
		if s := bc.Spec.Strategy; s.Type != buildv1.SourceBuildStrategyType || s.SourceStrategy == nil || s.SourceStrategy.From != ist("python:3.12-ubi9") {
			t.Errorf("BuildConfig %s strategy: %+v, want Source from ImageStreamTag openshift/python:3.12-ubi9", bc.Name, s)
		}
		if bc.Annotations["example.com/owner"] != "team-a" {
			t.Errorf("BuildConfig %s annotations: %v", bc.Name, bc.Annotations)
		}
	}
	for _, dc := range dcs {
		if len(dc.Spec.Triggers) != 1 || dc.Spec.Triggers[0].ImageChangeParams == nil || dc.Spec.Triggers[0].ImageChangeParams.From != ist("nodejs:22-ubi9") ||
			fmt.Sprint(dc.Spec.Triggers[0].ImageChangeParams.ContainerNames) != "[app]" {
			t.Errorf("DeploymentConfig %s triggers: %+v, want one imageChangeParams trigger from openshift/nodejs:22-ubi9 for app", dc.Name, dc.Spec.Triggers)
		}
		if dc.Annotations["example.com/owner"] != "team-a" {
			t.Errorf("DeploymentConfig %s annotations: %v", dc.Name, dc.Annotations)
		}
	}
	for _, ti := range tis {
		tp := ti.Spec.Template
		if tp.Name != "small" || len(tp.Objects) != 1 || len(tp.Parameters) != 1 || tp.Parameters[0].Value != ti.Name ||
			!strings.Contains(string(tp.Objects[0].Raw), `"${NAME}"`) {
			t.Errorf("TemplateInstance %s template: %+v, want the small template as sent", ti.Name, tp)
		}
		if ti.Annotations["example.com/owner"] != "team-a" {
			t.Errorf("TemplateInstance %s annotations: %v", ti.Name, ti.Annotations)
		}
	}
	if w := seen.all(); !strings.Contains(w, "DeploymentConfig is deprecated") {
		t.Errorf("no deprecation warning for DeploymentConfigs; warnings: %q", w)
	}
}

// ptrString is *p for a log line, "unset" for nil.
func ptrString[T any](p *T) string {
	if p == nil {
		return "unset"
	}
	return fmt.Sprint(*p)
}
