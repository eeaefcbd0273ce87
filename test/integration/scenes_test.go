package integration

import (
	"context"
	"fmt"
	"maps"
	"net/http"
	"os"
	"os/exec"
	"regexp"
	"strings"
	"testing"
	"time"

	imagev1 "github.com/openshift/api/image/v1"
	samplesv1 "github.com/openshift/api/samples/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/util/retry"

	"github.com/samples-operator-dev/cluster-samples-operator/pkg/inventory"
	"github.com/samples-operator-dev/cluster-samples-operator/pkg/operator"
	"github.com/samples-operator-dev/cluster-samples-operator/pkg/samplewriter"
	"github.com/samples-operator-dev/cluster-samples-operator/test/controlplane"
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

// runScenes installs the x86_64 samples and plays the scenes on that cluster, each as a subtest
// with a verdict of its own. Each scene has an operator that has seen no other scene (the one
// that installed, then one started for it: sceneOperator): nothing the operator keeps in memory
// (revert budgets, the server's last answers, writes it holds back) carries from one scene to
// the next, so that no scene's verdict depends on those before it (the start costs about 1.5 s a
// scene under the race detector on two busy cores). A scene begins once its operator is ready
// and has been quiet for a moment, on a new second, and sees only its own Events (Events carry
// whole seconds; see operatorEvents); the audit helpers it uses compare before and after, or
// count from a time of its own. After each scene, passed or skipped, the cluster must be back
// where it began: the same Config spec, the pull secret, no other Config, every sample in place
// at v1. After a scene that failed, a subtest of its own puts the cluster back (restoreHome) and
// the next scene goes on; should that fail too, the scenes left are reported skipped, "not
// run", with the reason.
func runScenes(t *testing.T, scenes ...scene) {
	t.Helper()
	playScenes(t, false, scenes)
}

// runScenesOnTheWholeInventory is runScenes on a cluster with every sample of the x86_64
// inventory installed, for scenes whose subject is the whole inventory or that need more
// samples than the test inventory has (fullInventoryOptions).
func runScenesOnTheWholeInventory(t *testing.T, scenes ...scene) {
	t.Helper()
	playScenes(t, true, scenes)
}

func playScenes(t *testing.T, wholeInventory bool, scenes []scene) {
	t.Helper()
	e := newEnv(t)
	e.wholeInventory = wholeInventory
	inv := e.inventory(t)
	installer := e.startOperator(e.options())
	e.waitManaged(t, inv, "v1")
	home := e.homeOf(t)
	group := e.t
	notRun := ""
	for i, s := range scenes {
		ok := t.Run(s.name, func(t *testing.T) {
			if notRun != "" {
				t.Skipf("not run: %s", notRun)
			}
			e.t = t
			defer func() { e.t, e.since = group, time.Time{} }()
			if i == 0 { // the operator that installed has seen no scene yet
				defer installer.stop(t)
			} else {
				e.sceneOperator(t, fmt.Sprintf("scene-%d", i))
			}
			e.beginScene(t)
			defer func() { // deferred, so that a scene that skips is checked too
				if !t.Failed() {
					e.assertBackHome(t, inv, home.spec)
				}
			}()
			s.run(t, e, inv)
		})
		if ok || notRun != "" {
			continue
		}
		if !t.Run("RestoreAfter"+s.name, func(t *testing.T) {
			e.t = t
			defer func() { e.t = group }()
			e.restoreHome(t, home)
			e.sceneOperator(t, fmt.Sprintf("restore-%d", i))
			e.assertBackHome(t, inv, home.spec)
		}) {
			notRun = fmt.Sprintf("scene %s failed and the cluster could not be put back where the scenes begin", s.name)
		}
	}
}

// sceneOperator starts an operator of the scene's own, which stops when the scene ends, and
// waits until it is ready: it has listed the Config and the samples (its /readyz says so only
// once their caches are synced). identity names its requests in the audit log.
func (e *env) sceneOperator(t *testing.T, identity string) {
	t.Helper()
	opts := e.options()
	opts.LeaderElection.Identity = identity
	start := time.Now()
	_, readyz := e.startOperatorWithReadiness(t, opts)
	eventually(t, 30*time.Second, func() (bool, string) {
		code := readyz()
		return code == http.StatusOK, fmt.Sprintf("operator %s: /readyz = %d", identity, code)
	})
	t.Logf("operator %s ready after %s", identity, time.Since(start).Round(10*time.Millisecond))
}

// home is where the scenes begin: the Config's spec and the pull secret.
type home struct {
	spec       samplesv1.ConfigSpec
	pullSecret *corev1.Secret
}

func (e *env) homeOf(t *testing.T) home {
	t.Helper()
	secret, err := e.kube.CoreV1().Secrets("openshift-config").Get(context.Background(), "pull-secret", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return home{spec: *e.getConfig().Spec.DeepCopy(), pullSecret: secret}
}

// restoreHome puts back what a scene that failed may have left elsewhere: the Config's spec (the
// Config, if it is gone), the pull secret, no other Config. The operator started next puts the
// samples back.
func (e *env) restoreHome(t *testing.T, h home) {
	t.Helper()
	ctx := context.Background()
	configs := e.samples.SamplesV1().Configs()
	list, err := configs.List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range list.Items {
		if c.Name != "cluster" {
			if err := configs.Delete(ctx, c.Name, metav1.DeleteOptions{}); err != nil && !apierrors.IsNotFound(err) {
				t.Fatal(err)
			}
		}
	}
	err = retry.RetryOnConflict(retry.DefaultRetry, func() error {
		cfg, err := configs.Get(ctx, "cluster", metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			_, err = configs.Create(ctx, &samplesv1.Config{ObjectMeta: metav1.ObjectMeta{Name: "cluster"}, Spec: h.spec}, metav1.CreateOptions{})
			return err
		}
		if err != nil || equality.Semantic.DeepEqual(cfg.Spec, h.spec) {
			return err
		}
		cfg.Spec = h.spec
		_, err = configs.Update(ctx, cfg, metav1.UpdateOptions{})
		return err
	})
	if err != nil {
		t.Fatalf("putting the Config back: %v", err)
	}
	secrets := e.kube.CoreV1().Secrets("openshift-config")
	err = retry.RetryOnConflict(retry.DefaultRetry, func() error {
		secret, err := secrets.Get(ctx, "pull-secret", metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			_, err = secrets.Create(ctx, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "pull-secret", Namespace: "openshift-config"}, Type: h.pullSecret.Type, Data: h.pullSecret.Data}, metav1.CreateOptions{})
			return err
		}
		if err != nil || equality.Semantic.DeepEqual(secret.Data, h.pullSecret.Data) {
			return err
		}
		secret.Data = h.pullSecret.Data
		_, err = secrets.Update(ctx, secret, metav1.UpdateOptions{})
		return err
	})
	if err != nil {
		t.Fatalf("putting the pull secret back: %v", err)
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

// sceneVerdictsEnv, set, makes TestScenesHaveVerdictsOfTheirOwn play its made-up scenes: it is
// set in the test binary that test starts.
const sceneVerdictsEnv = "CSO_TEST_SCENE_VERDICTS"

// TestScenesHaveVerdictsOfTheirOwn plays, in a test binary of its own (on the stand-ins: the
// scenes, not the server, are under test), scenes made to fail, to skip and to spend the revert
// budget of the operator that plays them, and reads each scene's verdict: a scene that fails is
// followed by the cluster's restoration and the next scene; one that skips is still held to
// leaving the cluster as it found it; the revert budget a scene spent is not the next one's.
func TestScenesHaveVerdictsOfTheirOwn(t *testing.T) {
	if os.Getenv(sceneVerdictsEnv) != "" {
		playMadeUpScenes(t)
		return
	}
	parallel(t, aboutHalfAMinute)
	cmd := exec.Command(os.Args[0], "-test.run=^"+t.Name()+"$", "-test.v", "-test.count=1", "-test.parallel=1")
	cmd.Env = append(os.Environ(), sceneVerdictsEnv+"=1", controlplane.OpenShiftBinDirEnv+"=")
	start := time.Now()
	out, _ := cmd.CombinedOutput()
	t.Logf("the made-up scenes took %s in a test binary of their own", time.Since(start).Round(100*time.Millisecond))
	got := map[string]string{}
	for _, m := range regexp.MustCompile(`--- (PASS|FAIL|SKIP): `+t.Name()+`/(\S+)`).FindAllStringSubmatch(string(out), -1) {
		got[m[2]] = m[1]
	}
	want := map[string]string{
		"FailsLeavingTheConfigElsewhere":             "FAIL",
		"RestoreAfterFailsLeavingTheConfigElsewhere": "PASS",
		"RunsAfterAFailure":                          "PASS",
		"SkipsLeavingTheConfigElsewhere":             "FAIL",
		"RestoreAfterSkipsLeavingTheConfigElsewhere": "PASS",
		"SpendsPythonsRevertBudget":                  "PASS",
		"HasARevertBudgetOfItsOwn":                   "PASS",
	}
	if !maps.Equal(got, want) {
		lines := strings.Split(string(out), "\n")
		t.Errorf("the scenes' verdicts are %v, want %v; the last lines of their run:\n%s", got, want, strings.Join(lines[max(0, len(lines)-80):], "\n"))
	}
}

func playMadeUpScenes(t *testing.T) {
	elsewhere := func(c *samplesv1.Config) { c.Spec.SkippedImagestreams = []string{"python"} }
	editPython := func(t *testing.T, e *env, i int) {
		edit := fmt.Sprintf("edited by a scene (%d)", i)
		e.editImageStream("python", func(is *imagev1.ImageStream) { is.Annotations["openshift.io/display-name"] = edit })
		eventually(t, 10*time.Second, func() (bool, string) {
			return e.imageStream("python").Annotations["openshift.io/display-name"] != edit, "python's edit " + edit + " was not reverted"
		})
	}
	runScenes(t,
		scene{"FailsLeavingTheConfigElsewhere", func(t *testing.T, e *env, _ *inventory.Inventory) {
			e.updateConfig(elsewhere)
			t.Error("fails on purpose")
		}},
		scene{"RunsAfterAFailure", func(*testing.T, *env, *inventory.Inventory) {}},
		scene{"SkipsLeavingTheConfigElsewhere", func(t *testing.T, e *env, _ *inventory.Inventory) {
			e.updateConfig(elsewhere)
			t.Skip("skips on purpose")
		}},
		scene{"SpendsPythonsRevertBudget", func(t *testing.T, e *env, _ *inventory.Inventory) {
			for i := range samplewriter.RevertBudget {
				editPython(t, e, i)
			}
		}},
		scene{"HasARevertBudgetOfItsOwn", func(t *testing.T, e *env, _ *inventory.Inventory) { editPython(t, e, 0) }},
	)
}

// options is defaultOptions, or fullInventoryOptions for an env of runScenesOnTheWholeInventory.
func (e *env) options() operator.Options {
	if e.wholeInventory {
		return fullInventoryOptions()
	}
	return defaultOptions()
}

// inventory is the inventory e.options installs.
func (e *env) inventory(t *testing.T) *inventory.Inventory {
	t.Helper()
	if e.wholeInventory {
		return fullX86Inventory(t)
	}
	return x86Inventory(t)
}
