// Command pluginbench measures `kubectl samples usage` at scale: on a local control plane holding
// the samples Config and the inventory's imagestreams in openshift, it creates BuildConfigs and
// Deployments (each using a sample) spread over namespaces, then runs the plugin binary as an
// admin would and prints its wall time and peak RSS. `make bench-plugin` runs it with the
// figures of the plugin's issue: 5,000 BuildConfigs and 5,000 Deployments over 200 namespaces.
// A run that finds more or fewer users than it created fails: a fast answer must be the right one.
//
// The control plane is the tests' (test/controlplane): the real openshift-apiserver serves
// BuildConfigs where OPENSHIFT_BIN_DIR names it, the generated CRDs elsewhere.
package main

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"time"

	buildv1 "github.com/openshift/api/build/v1"
	imagev1 "github.com/openshift/api/image/v1"
	operatorv1 "github.com/openshift/api/operator/v1"
	samplesv1 "github.com/openshift/api/samples/v1"
	buildclient "github.com/openshift/client-go/build/clientset/versioned"
	imageclient "github.com/openshift/client-go/image/clientset/versioned"
	samplesclient "github.com/openshift/client-go/samples/clientset/versioned"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/samples-operator-dev/cluster-samples-operator/pkg/desired"
	"github.com/samples-operator-dev/cluster-samples-operator/pkg/imagerefs"
	"github.com/samples-operator-dev/cluster-samples-operator/pkg/inventory"
	"github.com/samples-operator-dev/cluster-samples-operator/pkg/names"
	"github.com/samples-operator-dev/cluster-samples-operator/test/controlplane"
)

// runnerArg makes this binary the small runner that measure starts the plugin from.
const runnerArg = "run-and-report-peak-rss"

func main() {
	if len(os.Args) > 2 && os.Args[1] == runnerArg {
		os.Exit(runAndReportPeakRSS(os.Args[2:]))
	}
	var binDir, outDir string
	var namespaces, buildConfigs, deployments, runs int
	flag.StringVar(&binDir, "bin-dir", "_output/bin", "directory with etcd, kube-apiserver and kubectl-samples")
	flag.StringVar(&outDir, "out-dir", "_output/pluginbench", "where the control plane's data goes")
	flag.IntVar(&namespaces, "namespaces", 200, "namespaces the workloads are spread over")
	flag.IntVar(&buildConfigs, "buildconfigs", 5000, "BuildConfigs to create")
	flag.IntVar(&deployments, "deployments", 5000, "Deployments to create")
	flag.IntVar(&runs, "runs", 3, "runs of each plugin command")
	flag.Parse()
	if err := run(binDir, outDir, namespaces, buildConfigs, deployments, runs); err != nil {
		fmt.Fprintln(os.Stderr, "pluginbench:", err)
		os.Exit(1)
	}
}

func run(binDir, outDir string, namespaces, buildConfigs, deployments, runs int) error {
	binDir, _ = filepath.Abs(binDir)
	outDir, _ = filepath.Abs(outDir) // openshift-apiserver resolves paths from its own directory
	plugin := filepath.Join(binDir, "kubectl-samples")
	if _, err := os.Stat(plugin); err != nil {
		return fmt.Errorf("the plugin: %w (run make build)", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Minute)
	defer cancel()
	_ = os.RemoveAll(outDir)
	if err := os.MkdirAll(filepath.Join(outDir, "control-plane"), 0o755); err != nil {
		return err
	}
	cp, err := controlplane.Start(ctx, controlplane.Options{BinDir: binDir, Dir: filepath.Join(outDir, "control-plane")})
	if err != nil {
		return err
	}
	defer cp.Stop()
	if _, err := controlplane.ApplyDir(ctx, cp.AdminConfig, filepath.Join(controlplane.RepoRoot(), "manifests")); err != nil {
		return err
	}
	backend := "stand-ins (CRDs)"
	if cp.RealOpenShiftAPIServer() {
		backend = "the real openshift-apiserver"
	}
	streams, inv, err := installSamples(ctx, cp)
	if err != nil {
		return err
	}
	started := time.Now()
	created, err := createWorkloads(ctx, cp, streams, namespaces, buildConfigs, deployments)
	if err != nil {
		return err
	}
	fmt.Printf("%d BuildConfigs and %d Deployments over %d namespaces, served by %s, created in %s\n\n",
		buildConfigs, deployments, namespaces, backend, time.Since(started).Round(time.Second))
	if err := grantDeveloper(ctx, cp, namespaces); err != nil {
		return err
	}
	floor, err := runnerFloor()
	if err != nil {
		return err
	}
	fmt.Printf("peak RSS is the plugin's own; the lowest figure the runner can report is %.1f MiB\n\n", float64(floor)/1024)
	fmt.Printf("%-52s %10s %12s %8s\n", "COMMAND", "WALL", "PEAK RSS", "USERS")
	for _, c := range []struct {
		args []string
		// want are the users the command must find; nil for a command that lists none.
		want []workload
	}{
		{[]string{"usage"}, created},
		{[]string{"usage", streams[0]}, usersOf(created, streams[0], inv)},
		{[]string{"status"}, nil},
		{[]string{"usage", "--as", developer}, developerSees(created)},
	} {
		for range runs {
			wall, rss, out, err := measure(plugin, cp.AdminKubeconfig, c.args)
			if err != nil {
				return err
			}
			command := "kubectl samples " + strings.Join(c.args, " ")
			if c.want == nil {
				fmt.Printf("%-52s %9.2fs %8.1f MiB %8s\n", command, wall.Seconds(), float64(rss)/1024, "-")
				continue
			}
			users, err := usersIn(out)
			if err != nil {
				return fmt.Errorf("%s -o json: %w", command, err)
			}
			fmt.Printf("%-52s %9.2fs %8.1f MiB %8d\n", command, wall.Seconds(), float64(rss)/1024, len(users))
			if err := sameUsers(users, c.want); err != nil {
				return fmt.Errorf("%s: %w", command, err)
			}
		}
	}
	return nil
}

// workload is one object the benchmark created, and the sample tag ("stream:tag") it uses.
type workload struct {
	kind, namespace, name string
	tag                   string
}

func (w workload) key() string { return w.kind + " " + w.namespace + "/" + w.name }

// usersOf are the workloads that use the tag, directly or through a tag that follows it.
func usersOf(created []workload, target string, inv map[string]*imagev1.ImageStream) []workload {
	stream, tag, _ := strings.Cut(target, ":")
	var out []workload
	for _, w := range created {
		s, t, _ := strings.Cut(w.tag, ":")
		if s == stream && (t == tag || inv[s] != nil && slices.Contains(imagerefs.FollowedTags(inv[s], t), tag)) {
			out = append(out, w)
		}
	}
	return out
}

// developerSees are the workloads in the namespaces the developer may list workloads in.
func developerSees(created []workload) []workload {
	var out []workload
	for _, w := range created {
		if developerReads(w.namespace) {
			out = append(out, w)
		}
	}
	return out
}

// sameUsers fails when the objects found are not exactly those wanted, naming a few of each side.
func sameUsers(found []string, want []workload) error {
	wanted := map[string]bool{}
	for _, w := range want {
		wanted[w.key()] = true
	}
	var missing, extra []string
	seen := map[string]bool{}
	for _, f := range found {
		seen[f] = true
		if !wanted[f] {
			extra = append(extra, f)
		}
	}
	for k := range wanted {
		if !seen[k] {
			missing = append(missing, k)
		}
	}
	if len(missing) == 0 && len(extra) == 0 {
		return nil
	}
	slices.Sort(missing)
	slices.Sort(extra)
	return fmt.Errorf("found %d users, created %d: %d missing %v, %d not created %v",
		len(found), len(wanted), len(missing), missing[:min(3, len(missing))], len(extra), extra[:min(3, len(extra))])
}

// installSamples creates the Config and the inventory's imagestreams as the operator would have,
// and returns the first tag of each ("stream:tag") and the streams by name.
func installSamples(ctx context.Context, cp *controlplane.ControlPlane) ([]string, map[string]*imagev1.ImageStream, error) {
	samples := samplesclient.NewForConfigOrDie(cp.AdminConfig)
	cfg := &samplesv1.Config{ObjectMeta: metav1.ObjectMeta{Name: "cluster"}, Spec: samplesv1.ConfigSpec{ManagementState: operatorv1.Managed}}
	if _, err := samples.SamplesV1().Configs().Create(ctx, cfg, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		return nil, nil, err
	}
	inv, err := inventory.Embedded(inventory.ArchDirOCPX86_64)
	if err != nil {
		return nil, nil, err
	}
	byName := map[string]*imagev1.ImageStream{}
	images := imageclient.NewForConfigOrDie(cp.AdminConfig)
	var tags []string
	for _, name := range inv.ImageStreamNames() {
		is, _ := inv.ImageStream(name)
		byName[name] = is
		is.Namespace = names.SamplesNamespace
		is.Labels = map[string]string{desired.ManagedLabel: "true"}
		if _, err := images.ImageV1().ImageStreams(names.SamplesNamespace).Create(ctx, is, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
			return nil, nil, fmt.Errorf("creating imagestream %s: %w", name, err)
		}
		if len(is.Spec.Tags) > 0 {
			tags = append(tags, name+":"+is.Spec.Tags[0].Name)
		}
	}
	return tags, byName, nil
}

// createWorkloads spreads the objects over the namespaces, each using one of the samples' tags,
// and returns them.
func createWorkloads(ctx context.Context, cp *controlplane.ControlPlane, tags []string, namespaces, buildConfigs, deployments int) ([]workload, error) {
	kube := kubernetes.NewForConfigOrDie(cp.AdminConfig)
	builds := buildclient.NewForConfigOrDie(cp.AdminConfig)
	nsName := func(i int) string { return fmt.Sprintf("app-%03d", i%namespaces) }
	for i := range namespaces {
		if _, err := kube.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: nsName(i)}}, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
			return nil, err
		}
	}
	jobs := make(chan func() error)
	var wg sync.WaitGroup
	var mu sync.Mutex
	var firstErr error
	for range 16 {
		wg.Go(func() {
			for job := range jobs {
				if err := job(); err != nil {
					mu.Lock()
					firstErr = cmpErr(firstErr, err)
					mu.Unlock()
				}
			}
		})
	}
	var created []workload
	for i := range buildConfigs {
		tag := tags[i%len(tags)]
		created = append(created, workload{kind: "BuildConfig", namespace: nsName(i), name: fmt.Sprintf("bc-%05d", i), tag: tag})
		jobs <- func() error {
			bc := &buildv1.BuildConfig{
				ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("bc-%05d", i), Namespace: nsName(i)},
				Spec: buildv1.BuildConfigSpec{
					CommonSpec: buildv1.CommonSpec{
						Source:   buildv1.BuildSource{Git: &buildv1.GitBuildSource{URI: "https://git.example/app.git"}},
						Strategy: buildv1.BuildStrategy{SourceStrategy: &buildv1.SourceBuildStrategy{From: corev1.ObjectReference{Kind: "ImageStreamTag", Namespace: "openshift", Name: tag}}},
						Output:   buildv1.BuildOutput{To: &corev1.ObjectReference{Kind: "ImageStreamTag", Name: "app:latest"}},
					},
					Triggers: []buildv1.BuildTriggerPolicy{{Type: buildv1.ImageChangeBuildTriggerType, ImageChange: &buildv1.ImageChangeTrigger{}}},
				},
			}
			_, err := builds.BuildV1().BuildConfigs(bc.Namespace).Create(ctx, bc, metav1.CreateOptions{})
			return err
		}
	}
	for i := range deployments {
		tag := tags[(i+1)%len(tags)]
		created = append(created, workload{kind: "Deployment", namespace: nsName(i), name: fmt.Sprintf("d-%05d", i), tag: tag})
		jobs <- func() error {
			labels := map[string]string{"app": fmt.Sprintf("d-%05d", i)}
			d := &appsv1.Deployment{
				ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("d-%05d", i), Namespace: nsName(i), Annotations: map[string]string{
					"image.openshift.io/triggers": fmt.Sprintf(`[{"from":{"kind":"ImageStreamTag","name":%q,"namespace":"openshift"},"fieldPath":"spec.template.spec.containers[?(@.name==\"app\")].image"}]`, tag),
				}},
				Spec: appsv1.DeploymentSpec{
					Selector: &metav1.LabelSelector{MatchLabels: labels},
					Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: labels}, Spec: corev1.PodSpec{
						Containers: []corev1.Container{{Name: "app", Image: " "}},
					}},
				},
			}
			_, err := kube.AppsV1().Deployments(d.Namespace).Create(ctx, d, metav1.CreateOptions{})
			return err
		}
	}
	close(jobs)
	wg.Wait()
	return created, firstErr
}

func cmpErr(first, err error) error {
	if first != nil {
		return first
	}
	return err
}

// developer may read the samples and list namespaces, and read workloads in every other
// namespace: `usage` lists each kind namespace by namespace for them.
const developer = "developer"

func grantDeveloper(ctx context.Context, cp *controlplane.ControlPlane, namespaces int) error {
	rbac := kubernetes.NewForConfigOrDie(cp.AdminConfig).RbacV1()
	subjects := []rbacv1.Subject{{Kind: "User", APIGroup: rbacv1.GroupName, Name: developer}}
	roles := []rbacv1.ClusterRole{
		{ObjectMeta: metav1.ObjectMeta{Name: "samples-reader"}, Rules: []rbacv1.PolicyRule{
			{APIGroups: []string{"samples.operator.openshift.io"}, Resources: []string{"configs"}, Verbs: []string{"get"}},
			{APIGroups: []string{""}, Resources: []string{"namespaces"}, Verbs: []string{"list"}},
			{APIGroups: []string{"image.openshift.io"}, Resources: []string{"imagestreams"}, Verbs: []string{"list"}},
			{APIGroups: []string{"template.openshift.io"}, Resources: []string{"templates"}, Verbs: []string{"list"}},
		}},
		{ObjectMeta: metav1.ObjectMeta{Name: "workload-reader"}, Rules: []rbacv1.PolicyRule{
			{APIGroups: []string{"build.openshift.io"}, Resources: []string{"buildconfigs"}, Verbs: []string{"list"}},
			{APIGroups: []string{"apps.openshift.io"}, Resources: []string{"deploymentconfigs"}, Verbs: []string{"list"}},
			{APIGroups: []string{"apps"}, Resources: []string{"deployments", "statefulsets", "daemonsets"}, Verbs: []string{"list"}},
			{APIGroups: []string{"batch"}, Resources: []string{"cronjobs"}, Verbs: []string{"list"}},
			{APIGroups: []string{""}, Resources: []string{"pods"}, Verbs: []string{"list"}},
			{APIGroups: []string{"template.openshift.io"}, Resources: []string{"templateinstances"}, Verbs: []string{"list"}},
		}},
	}
	for i := range roles {
		if _, err := rbac.ClusterRoles().Create(ctx, &roles[i], metav1.CreateOptions{}); err != nil {
			return err
		}
	}
	ref := func(name string) rbacv1.RoleRef {
		return rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: name}
	}
	if _, err := rbac.ClusterRoleBindings().Create(ctx, &rbacv1.ClusterRoleBinding{ObjectMeta: metav1.ObjectMeta{Name: "samples-reader"}, Subjects: subjects, RoleRef: ref("samples-reader")}, metav1.CreateOptions{}); err != nil {
		return err
	}
	for i := range namespaces {
		ns := fmt.Sprintf("app-%03d", i)
		if !developerReads(ns) {
			continue
		}
		if _, err := rbac.RoleBindings(ns).Create(ctx, &rbacv1.RoleBinding{ObjectMeta: metav1.ObjectMeta{Name: "workload-reader"}, Subjects: subjects, RoleRef: ref("workload-reader")}, metav1.CreateOptions{}); err != nil {
			return err
		}
	}
	return nil
}

// developerReads: the developer may list workloads in every other namespace.
func developerReads(namespace string) bool {
	var i int
	_, err := fmt.Sscanf(namespace, "app-%d", &i)
	return err == nil && i%2 == 0
}

// measure runs the plugin once and returns its wall time, peak RSS (KiB) and output.
//
// The plugin is not started from this process. Go starts children with vfork, and Linux then
// counts the parent's peak RSS in the child's (exec records the old address space's high-water
// mark, and under vfork that is the parent's): a plugin started from a benchmark that has just
// created 10,000 objects would report the benchmark's peak. A fresh runner process starts it
// instead, so the figure is the plugin's own, or the runner's small start-up footprint if that is
// higher (runnerFloor measures it).
func measure(plugin, kubeconfig string, args []string) (time.Duration, int64, []byte, error) {
	self, err := os.Executable()
	if err != nil {
		return 0, 0, nil, err
	}
	report, writer, err := os.Pipe()
	if err != nil {
		return 0, 0, nil, err
	}
	defer report.Close()
	cmd := exec.Command(self, append([]string{runnerArg, plugin}, append(append([]string{}, args...), "--kubeconfig", kubeconfig, "-o", "json")...)...)
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	cmd.ExtraFiles = []*os.File{writer}
	started := time.Now()
	err = cmd.Run()
	wall := time.Since(started)
	writer.Close()
	if err != nil && cmd.ProcessState.ExitCode() > 1 {
		return 0, 0, nil, fmt.Errorf("kubectl samples %s: %v: %s", strings.Join(args, " "), err, errOut.String())
	}
	var rss int64
	if _, err := fmt.Fscan(report, &rss); err != nil {
		return 0, 0, nil, fmt.Errorf("reading the plugin's peak RSS from the runner: %v: %s", err, errOut.String())
	}
	return wall, rss, out.Bytes(), nil
}

// usersIn are the objects `usage -o json` listed as users ("Kind namespace/name", each once).
func usersIn(out []byte) ([]string, error) {
	var report struct {
		Users []struct{ Kind, Namespace, Name string } `json:"users"`
	}
	if err := json.Unmarshal(out, &report); err != nil {
		return nil, err
	}
	var users []string
	seen := map[string]bool{}
	for _, u := range report.Users {
		if key := (workload{kind: u.Kind, namespace: u.Namespace, name: u.Name}).key(); !seen[key] {
			seen[key] = true
			users = append(users, key)
		}
	}
	return users, nil
}

// runnerFloor is the lowest peak RSS (KiB) measure can report: that of a runner starting /bin/true.
func runnerFloor() (int64, error) {
	_, rss, _, err := measure("/bin/true", "", nil)
	return rss, err
}

// runAndReportPeakRSS is the runner: it runs argv with this process's standard streams, writes
// the child's peak RSS (KiB) to file descriptor 3 and exits with the child's status.
func runAndReportPeakRSS(argv []string) int {
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = os.Stdin, os.Stdout, os.Stderr
	err := cmd.Run()
	if cmd.ProcessState == nil {
		fmt.Fprintln(os.Stderr, "runner:", err)
		return 2
	}
	report := os.NewFile(3, "peak-rss")
	fmt.Fprintln(report, cmd.ProcessState.SysUsage().(*syscall.Rusage).Maxrss)
	report.Close()
	return cmd.ProcessState.ExitCode()
}
