package integration

import (
	"context"
	"fmt"
	"testing"
	"time"

	samplesv1 "github.com/openshift/api/samples/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/samples-operator-dev/cluster-samples-operator/pkg/inventory"
)

// A scene is a test that starts from a Managed cluster the operator has installed at v1, every
// sample in place, does something to it as an admin would, and leaves it as it found it. Scenes
// run one after another on one cluster (runScenes): the install, the costliest part of such a
// test (a control plane, then every sample created, imported and recorded: about 10 s of CPU
// under the race detector), is paid once per group instead of once per test.
type scene struct {
	name string
	run  func(t *testing.T, e *env, inv *inventory.Inventory)
}

// runScenes installs the x86_64 samples with one operator and plays the scenes on that cluster,
// each as a subtest. A scene begins once the operator has been quiet for a moment, on a new
// second, and sees only its own Events (Events carry whole seconds; see operatorEvents); the
// audit helpers it uses compare before and after, or count from a time of its own. After each
// scene the cluster must be back where it began: the same Config spec, the pull secret, no
// other Config, every sample in place at v1. A scene that fails, or leaves the cluster
// otherwise, ends the group: the scenes after it would start from somewhere else.
func runScenes(t *testing.T, scenes ...scene) {
	t.Helper()
	e := newEnv(t)
	inv := x86Inventory(t)
	e.startOperator(defaultOptions())
	e.waitManaged(t, inv, "v1")
	home := e.getConfig().Spec
	group := e.t
	for _, s := range scenes {
		ok := t.Run(s.name, func(t *testing.T) {
			e.t = t
			defer func() { e.t, e.since = group, time.Time{} }()
			e.beginScene(t)
			s.run(t, e, inv)
			if !t.Failed() {
				e.assertBackHome(t, inv, home)
			}
		})
		if !ok {
			return
		}
	}
}

// beginScene waits until the operator has written nothing for a moment (what the scene before
// set off has settled), then for the next whole second, from which on the scene's Events count.
func (e *env) beginScene(t *testing.T) {
	t.Helper()
	e.waitQuiet(t, 300*time.Millisecond)
	since := time.Now().Truncate(time.Second).Add(time.Second)
	time.Sleep(time.Until(since))
	e.since = since
}

// assertBackHome fails the scene when it left the cluster elsewhere than it found it.
func (e *env) assertBackHome(t *testing.T, inv *inventory.Inventory, home samplesv1.ConfigSpec) {
	t.Helper()
	spec := e.getConfig().Spec
	if !equality.Semantic.DeepEqual(spec, home) { // an empty list is a cleared one
		t.Fatalf("the scene left the Config spec at %+v, not where it began (%+v)", spec, home)
	}
	configs, err := e.samples.SamplesV1().Configs().List(context.Background(), metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(configs.Items) != 1 {
		var names []string
		for _, c := range configs.Items {
			names = append(names, c.Name)
		}
		t.Fatalf("the scene left Configs %v, want only cluster", names)
	}
	if _, err := e.kube.CoreV1().Secrets("openshift-config").Get(context.Background(), "pull-secret", metav1.GetOptions{}); err != nil {
		t.Fatalf("the scene left no pull secret: %v", err)
	}
	e.waitManaged(t, inv, "v1")
	if c := configCondition(e.getConfig(), samplesv1.ConfigurationValid); c == nil || string(c.Status) != "True" {
		t.Fatalf("the scene left the Config invalid: %s", fmt.Sprint(c))
	}
}
