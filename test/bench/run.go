package main

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	imagev1 "github.com/openshift/api/image/v1"
	configclient "github.com/openshift/client-go/config/clientset/versioned"
	imageclient "github.com/openshift/client-go/image/clientset/versioned"
	samplesclient "github.com/openshift/client-go/samples/clientset/versioned"
	templateclient "github.com/openshift/client-go/template/clientset/versioned"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"

	"github.com/samples-operator-dev/cluster-samples-operator/pkg/inventory"
	"github.com/samples-operator-dev/cluster-samples-operator/test/controlplane"
	"github.com/samples-operator-dev/cluster-samples-operator/test/emulator"
)

// options are the bench's flags.
type options struct {
	binDir         string
	outDir         string
	releaseVersion string
	steady         time.Duration
	reverts        int
	// nodes is how many Node objects the nodes run creates before the operator starts (0: no
	// such run).
	nodes int
	// storm is how long the nodes run writes every Node's status once a minute (nodeStorm),
	// after its steady-state window (0: no storm).
	storm time.Duration
	// outages and heals are how many rounds the recovery runs measure (recovery.go; 0: none);
	// recoveryOnly skips every other run.
	outages, heals int
	recoveryOnly   bool
	resyncFlag     string // "--resync=..." when the binary has the flag, else ""
	// runtimeEnv is GOGC and GOMEMLIMIT as manifests/06-operator.yaml sets them (NAME=value),
	// or as --runtime-env overrides them (runtimeEnvOverride).
	runtimeEnv, runtimeEnvOverride []string
}

// quietFor is how long the operator must write nothing (Lease renewals aside) for a phase to
// count as finished.
const quietFor = time.Second

// scaleRun is one scale's fresh control plane, emulator, operator and admin view.
type scaleRun struct {
	opts  options
	scale int
	nodes int // Node objects created before the operator started
	cp    *controlplane.ControlPlane
	audit *auditLog
	// everyone reads every user's requests (recovery.go), once needed.
	everyone *auditLog
	track    *tracker
	// importer plays the image API's imports on the stand-ins (recovery.go makes some fail).
	importer *emulator.Emulator

	kube      kubernetes.Interface
	images    imageclient.Interface
	templates templateclient.Interface
	samples   samplesclient.Interface

	imageStreams, templateNames []string
	inv                         *inventory.Inventory
	operator                    *exec.Cmd
	started                     time.Time // just before the operator process was started
	metricsAddr                 string
	operatorDone                chan error
	memory                      *memorySampler
	// cpuMarks are readings of the operator's CPU at the ends of the measured windows.
	cpuMarks struct{ converged, steadyFrom, steadyTo, stormFrom, stormTo cpuMark }
}

// runScale runs the operator on a fresh control plane with scale times the embedded inventory,
// after creating nodes Node objects (benchNode).
func runScale(ctx context.Context, opts options, scale, nodes int) (*ScaleResult, error) {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	r := &scaleRun{opts: opts, scale: scale, nodes: nodes}
	inv, err := inventory.Embedded(inventory.ArchDirOCPX86_64)
	if err != nil {
		return nil, err
	}
	r.inv = inv
	dir, _ := filepath.Abs(filepath.Join(opts.outDir, runName(scale, nodes)))
	if err := os.RemoveAll(dir); err != nil {
		return nil, err
	}
	if err := os.MkdirAll(filepath.Join(dir, "control-plane"), 0o755); err != nil {
		return nil, err
	}

	var operatorArgs []string
	res := &ScaleResult{Scale: scale, Nodes: nodes, Reverts: map[string]Latencies{}}
	if scale == 1 {
		r.imageStreams, r.templateNames = inv.ImageStreamNames(), inv.TemplateNames()
	} else {
		invDir, err := os.MkdirTemp("", "bench-inventory-")
		if err != nil {
			return nil, err
		}
		defer os.RemoveAll(invDir)
		if _, _, err := multiplyInventory(inv, scale, invDir, inventory.ArchDirOCPX86_64); err != nil {
			return nil, fmt.Errorf("writing the %dx inventory: %w", scale, err)
		}
		big, err := inventory.LoadDir(invDir, inventory.ArchDirOCPX86_64)
		if err != nil {
			return nil, fmt.Errorf("the %dx inventory does not load: %w", scale, err)
		}
		r.imageStreams, r.templateNames = big.ImageStreamNames(), big.TemplateNames()
		operatorArgs = append(operatorArgs, "--inventory-dir", invDir)
	}
	res.ImageStreams, res.Templates = len(r.imageStreams), len(r.templateNames)
	res.Objects = res.ImageStreams + res.Templates

	fmt.Printf("[%s] starting etcd and kube-apiserver ...\n", runName(scale, nodes))
	startCtx, startCancel := context.WithTimeout(ctx, 3*time.Minute)
	// Logs and the audit log stay in dir for a look afterwards; etcd's data goes once it stops.
	defer os.RemoveAll(filepath.Join(dir, "control-plane", "etcd"))
	r.cp, err = controlplane.Start(startCtx, controlplane.Options{BinDir: opts.binDir, Dir: filepath.Join(dir, "control-plane")})
	startCancel()
	if err != nil {
		return nil, err
	}
	defer r.cp.Stop()
	if err := r.prepare(ctx); err != nil {
		return nil, err
	}
	if nodes > 0 {
		fmt.Printf("[%s] creating %d Nodes ...\n", runName(scale, nodes), nodes)
		from := time.Now()
		if err := createNodes(ctx, r.cp.AdminConfig, nodes); err != nil {
			return nil, fmt.Errorf("creating the Nodes: %w", err)
		}
		res.NodesCreateSeconds = time.Since(from).Seconds()
	}

	registry := httptest.NewTLSServer(http.NotFoundHandler())
	defer registry.Close()
	if err := r.startOperator(dir, strings.TrimPrefix(registry.URL, "https://"), operatorArgs); err != nil {
		return nil, err
	}
	defer r.stopOperator()

	if err := r.measure(ctx, res); err != nil {
		return res, err
	}
	if gcs, err := parseGCTrace(filepath.Join(dir, "operator.log")); err != nil {
		fmt.Printf("[%s] reading the operator's GC trace: %v\n", runName(scale, nodes), err)
	} else {
		r.fillCPU(res, gcs)
	}
	status := procStatus(r.operator.Process.Pid)
	res.PeakRSSKiB, res.RSSKiB, res.RSSAnonKiB, res.RSSFileKiB = status["VmHWM"], status["VmRSS"], status["RssAnon"], status["RssFile"]
	res.PeakSample = r.memory.Peak()
	res.Mappings = smapsBreakdown(r.operator.Process.Pid, r.operator.Path)
	if res.GoMemory, err = r.scrapeGoMemory(ctx); err != nil {
		fmt.Printf("[%s] reading the operator's /metrics: %v\n", runName(scale, nodes), err)
	}
	return res, nil
}

// prepare applies manifests/, creates the install pull secret, and starts the import emulator
// and the bench's own informers.
func (r *scaleRun) prepare(ctx context.Context) error {
	if _, err := controlplane.ApplyDir(ctx, r.cp.AdminConfig, filepath.Join(controlplane.RepoRoot(), "manifests")); err != nil {
		return fmt.Errorf("applying manifests/: %w", err)
	}
	r.kube = kubernetes.NewForConfigOrDie(r.cp.AdminConfig)
	r.images = imageclient.NewForConfigOrDie(r.cp.AdminConfig)
	r.templates = templateclient.NewForConfigOrDie(r.cp.AdminConfig)
	r.samples = samplesclient.NewForConfigOrDie(r.cp.AdminConfig)
	if _, err := r.kube.CoreV1().Secrets("openshift-config").Create(ctx, pullSecret(), metav1.CreateOptions{}); err != nil {
		return fmt.Errorf("creating the pull secret: %w", err)
	}
	r.importer = emulator.New(r.images, samplesNamespace)
	go func() { _ = r.importer.Run(ctx) }()
	r.track = newTracker(r.images, r.templates, r.samples, configclient.NewForConfigOrDie(r.cp.AdminConfig))
	if err := r.track.run(ctx); err != nil {
		return err
	}
	r.audit = newAuditLog(r.cp.AuditLogPath, controlplane.OperatorUser)
	return waitCRDsSettled(ctx, r.cp)
}

var crdResource = schema.GroupVersionResource{Group: "apiextensions.k8s.io", Version: "v1", Resource: "customresourcedefinitions"}

// waitCRDsSettled waits until every CRD has been Established for over two seconds: the API
// server holds each create of a custom resource whose CRD was established less than 2 s ago for
// 2 s (apiextensions-apiserver's customresource_handler.go, for HA servers). On a cluster the
// samples Config CRD is installed long before the operator starts; the bench must not time that.
func waitCRDsSettled(ctx context.Context, cp *controlplane.ControlPlane) error {
	dyn, err := dynamic.NewForConfig(cp.AdminConfig)
	if err != nil {
		return err
	}
	list, err := dyn.Resource(crdResource).List(ctx, metav1.ListOptions{})
	if err != nil {
		return err
	}
	latest := time.Time{}
	for _, crd := range list.Items {
		conds, _, _ := unstructured.NestedSlice(crd.Object, "status", "conditions")
		established := false
		for _, c := range conds {
			m, _ := c.(map[string]any)
			if m["type"] != "Established" || m["status"] != "True" {
				continue
			}
			established = true
			if at, err := time.Parse(time.RFC3339, fmt.Sprint(m["lastTransitionTime"])); err == nil && at.After(latest) {
				latest = at
			}
		}
		if !established {
			return fmt.Errorf("CRD %s is not established", crd.GetName())
		}
	}
	// lastTransitionTime has a resolution of one second: allow for it.
	wait := time.Until(latest.Add(3 * time.Second))
	if wait > 0 {
		select {
		case <-time.After(wait):
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	return nil
}

// pullSecret is the install pull secret of every OpenShift cluster, with a (fake) credential for
// registry.redhat.io.
func pullSecret() *corev1.Secret {
	const auth = "YmVuY2g6bm90LWEtcmVhbC10b2tlbg=="
	return &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Name: "pull-secret", Namespace: "openshift-config"},
		Type:       corev1.SecretTypeDockerConfigJson,
		Data:       map[string][]byte{corev1.DockerConfigJsonKey: []byte(`{"auths":{"registry.redhat.io":{"auth":"` + auth + `"}}}`)},
	}
}

func (r *scaleRun) startOperator(dir, registryAddr string, extra []string) error {
	metricsPort, err := controlplane.FreePort()
	if err != nil {
		return err
	}
	r.metricsAddr = "127.0.0.1:" + strconv.Itoa(metricsPort)
	logFile, err := os.Create(filepath.Join(dir, "operator.log"))
	if err != nil {
		return err
	}
	args := []string{"operator",
		"--kubeconfig", r.cp.OperatorKubeconfig,
		"--registry-probe-address", registryAddr, "--registry-probe-insecure-skip-verify",
		"--metrics-bind-address", r.metricsAddr,
		"--tls-cert-file", r.cp.ServingCertFile, "--tls-private-key-file", r.cp.ServingKeyFile}
	if r.opts.resyncFlag != "" {
		args = append(args, r.opts.resyncFlag)
	}
	args = append(args, extra...)
	binary := filepath.Join(r.opts.binDir, "cluster-samples-operator")
	cmd := exec.Command(binary, args...)
	// The Deployment's runtime settings come last, so that they win over the bench's own. The
	// GC trace (one line on stderr per collection) is how the bench tells the GC's CPU.
	cmd.Env = append(append(os.Environ(), "RELEASE_VERSION="+r.opts.releaseVersion, "GODEBUG=gctrace=1"), r.opts.runtimeEnv...)
	cmd.Stdout, cmd.Stderr = logFile, logFile
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	if err := dropPageCache(binary); err != nil {
		logFile.Close()
		return fmt.Errorf("dropping the operator binary's cached pages: %w", err)
	}
	fmt.Printf("[%s] starting the operator (%d imagestreams, %d templates) ...\n", runName(r.scale, r.nodes), len(r.imageStreams), len(r.templateNames))
	r.started = time.Now()
	if err := cmd.Start(); err != nil {
		logFile.Close()
		return fmt.Errorf("starting the operator: %w", err)
	}
	r.operator = cmd
	r.memory = startMemorySampler(cmd.Process.Pid, r.started)
	r.operatorDone = make(chan error, 1)
	go func() {
		r.operatorDone <- cmd.Wait()
		logFile.Close()
	}()
	return nil
}

func (r *scaleRun) stopOperator() {
	if r.operator == nil {
		return
	}
	r.memory.Stop()
	_ = syscall.Kill(-r.operator.Process.Pid, syscall.SIGTERM)
	select {
	case <-r.operatorDone:
	case <-time.After(15 * time.Second):
		_ = syscall.Kill(-r.operator.Process.Pid, syscall.SIGKILL)
		<-r.operatorDone
	}
}

// measure runs the phases in order on the running operator.
func (r *scaleRun) measure(ctx context.Context, res *ScaleResult) error {
	tag := "[" + runName(r.scale, r.nodes) + "]"
	converged := r.track.converged(r.opts.releaseVersion, r.imageStreams, r.templateNames)
	at, err := r.awaitOrExit(ctx, r.track.expect(converged), 3*time.Minute, "initial convergence")
	if err != nil {
		return err
	}
	res.ConvergeSeconds = at.Sub(r.started).Seconds()
	r.cpuMarks.converged = r.cpuNow()
	quiet, err := r.waitQuiet(ctx, at)
	if err != nil {
		return err
	}
	reqs, err := r.audit.refresh()
	if err != nil {
		return err
	}
	res.InitialSync = countRequests(between(reqs, r.started, at))
	res.Timeline = timeline(between(reqs, r.started, at), r.started)
	res.Settle = countRequests(between(reqs, at, quiet))
	res.SettleSeconds = quiet.Sub(at).Seconds()
	res.PeakRSSAfterSyncKiB, _ = readRSS(r.operator.Process.Pid)
	fmt.Printf("%s converged in %.2fs: %d requests, %d writes (+%d events); settled %.1fs later\n", tag,
		res.ConvergeSeconds, res.InitialSync.Total, res.InitialSync.Writes, res.InitialSync.EventWrites, res.SettleSeconds)

	fmt.Printf("%s steady state for %s ...\n", tag, r.opts.steady)
	from := time.Now()
	r.cpuMarks.steadyFrom = r.cpuNow()
	select {
	case <-time.After(r.opts.steady):
	case <-ctx.Done():
		return ctx.Err()
	case err := <-r.operatorDone:
		return fmt.Errorf("the operator exited: %v", err)
	}
	to := time.Now()
	r.cpuMarks.steadyTo = r.cpuNow()
	if res.Steady, err = r.requestsBetween(from, to); err != nil {
		return err
	}
	res.SteadySeconds = to.Sub(from).Seconds()
	if r.nodes > 0 && r.opts.storm > 0 {
		fmt.Printf("%s Node update storm for %s (every Node's status written once a minute) ...\n", tag, r.opts.storm)
		if err := r.storm(ctx, res); err != nil {
			return err
		}
	}

	if err := r.noopTouch(ctx, res); err != nil {
		return err
	}
	fmt.Printf("%s reverts (%d of each) ...\n", tag, r.opts.reverts)
	if err := r.reverts(ctx, res); err != nil {
		return err
	}
	fmt.Printf("%s Managed -> Removed -> Managed ...\n", tag)
	return r.removedAndBack(ctx, res)
}

// storm runs nodeStorm for opts.storm and counts the operator's requests and CPU meanwhile.
func (r *scaleRun) storm(ctx context.Context, res *ScaleResult) error {
	stormCtx, cancel := context.WithTimeout(ctx, r.opts.storm)
	defer cancel()
	from := time.Now()
	r.cpuMarks.stormFrom = r.cpuNow()
	res.StormNodeWrites, res.StormNodeWritesFailed = nodeStorm(stormCtx, r.cp.AdminConfig, r.nodes, time.Minute)
	to := time.Now()
	r.cpuMarks.stormTo = r.cpuNow()
	if ctx.Err() != nil {
		return ctx.Err()
	}
	var err error
	res.Storm, err = r.requestsBetween(from, to)
	res.StormSeconds = to.Sub(from).Seconds()
	return err
}

// cpuNow reads the operator's CPU seconds so far.
func (r *scaleRun) cpuNow() cpuMark {
	return cpuMark{at: time.Since(r.started).Seconds(), cpu: cpuSeconds(r.operator.Process.Pid)}
}

// fillCPU sets the CPU windows of res from the readings taken and the GC trace.
func (r *scaleRun) fillCPU(res *ScaleResult, gcs []gcCycle) {
	m := r.cpuMarks
	res.CPUInit = window(cpuMark{}, m.converged, gcs)
	res.CPUSteady = window(m.steadyFrom, m.steadyTo, gcs)
	if m.stormTo.at > 0 {
		res.CPUStorm = window(m.stormFrom, m.stormTo, gcs)
	}
	res.CPUTotal = window(cpuMark{}, r.cpuNow(), gcs)
}

// awaitOrExit is await that also gives up when the operator exits.
func (r *scaleRun) awaitOrExit(ctx context.Context, ch <-chan time.Time, timeout time.Duration, what string) (time.Time, error) {
	exitCtx, cancel := context.WithCancel(ctx)
	defer cancel()
	go func() {
		select {
		case err := <-r.operatorDone:
			r.operatorDone <- err // leave it for stopOperator
			cancel()
		case <-exitCtx.Done():
		}
	}()
	at, err := await(exitCtx, ch, timeout, what)
	if err != nil && ctx.Err() == nil && exitCtx.Err() != nil {
		return at, fmt.Errorf("%s: the operator exited; see its log", what)
	}
	return at, err
}

// waitQuiet waits, from since, until the operator has written nothing but Lease renewals for
// quietFor, and returns the time of its last such write (or since).
func (r *scaleRun) waitQuiet(ctx context.Context, since time.Time) (time.Time, error) {
	deadline := time.Now().Add(30 * time.Second)
	for {
		reqs, err := r.audit.refresh()
		if err != nil {
			return time.Time{}, err
		}
		last := since
		for _, q := range reqs {
			if q.isWrite() && q.Resource != "leases" && q.Received.After(last) {
				last = q.Received
			}
		}
		if time.Since(last) >= quietFor {
			// Include the last write itself in the window that ends here.
			return last.Add(time.Millisecond), nil
		}
		if time.Now().After(deadline) {
			return last, fmt.Errorf("the operator kept writing for 30s (last write %s ago)", time.Since(last))
		}
		select {
		case <-time.After(200 * time.Millisecond):
		case <-ctx.Done():
			return time.Time{}, ctx.Err()
		}
	}
}

// requestsBetween counts the operator's requests in [from, to), after giving the audit log a
// moment to catch up.
func (r *scaleRun) requestsBetween(from, to time.Time) (RequestStats, error) {
	time.Sleep(300 * time.Millisecond)
	reqs, err := r.audit.refresh()
	if err != nil {
		return RequestStats{}, err
	}
	return countRequests(between(reqs, from, to)), nil
}

// noopTouch changes only an annotation of the Config and counts what the operator writes in the
// following seconds. When the binary has a --resync flag, the steady-state window also covered
// informer resyncs.
func (r *scaleRun) noopTouch(ctx context.Context, res *ScaleResult) error {
	const window = 3 * time.Second
	from := time.Now()
	patch := fmt.Sprintf(`{"metadata":{"annotations":{"bench.samples.operator.openshift.io/touched":%q}}}`, from.Format(time.RFC3339Nano))
	if _, err := r.samples.SamplesV1().Configs().Patch(ctx, "cluster", types.MergePatchType, []byte(patch), metav1.PatchOptions{}); err != nil {
		return fmt.Errorf("touching the Config: %w", err)
	}
	time.Sleep(window)
	to := time.Now()
	var err error
	res.NoopTouch, err = r.requestsBetween(from, to)
	res.NoopTouchSeconds = to.Sub(from).Seconds()
	return err
}

// revertTimeout bounds how long one drift may stay before it counts as never reverted.
const revertTimeout = 10 * time.Second

func (r *scaleRun) reverts(ctx context.Context, res *ScaleResult) error {
	streams := r.editableStreams()
	if len(streams) == 0 {
		return fmt.Errorf("no imagestream with two or more tags and a display name to edit")
	}
	templates := slices.Clone(r.templateNames)
	specMs, annMs, delMs := []float64{}, []float64{}, []float64{}
	var specLost, annLost, delLost int
	for i := range r.opts.reverts {
		is := streams[i%len(streams)]
		if ms, err := r.revertSpecEdit(ctx, is); err != nil {
			fmt.Printf("  spec edit of %s: %v\n", is, err)
			specLost++
		} else {
			specMs = append(specMs, ms)
		}
		is = streams[(i+len(streams)/2)%len(streams)]
		if ms, err := r.revertAnnotationEdit(ctx, is, i); err != nil {
			fmt.Printf("  annotation edit of %s: %v\n", is, err)
			annLost++
		} else {
			annMs = append(annMs, ms)
		}
		t := templates[(i*7)%len(templates)]
		if ms, err := r.revertTemplateDelete(ctx, t); err != nil {
			fmt.Printf("  delete of template %s: %v\n", t, err)
			delLost++
		} else {
			delMs = append(delMs, ms)
		}
		if ctx.Err() != nil {
			return ctx.Err()
		}
	}
	res.Reverts["spec edit"] = newLatencies(specMs, specLost)
	res.Reverts["annotation edit"] = newLatencies(annMs, annLost)
	res.Reverts["template delete"] = newLatencies(delMs, delLost)
	return nil
}

// editableStreams are imagestreams with at least two tags whose last tag has a display name.
func (r *scaleRun) editableStreams() []string {
	var out []string
	for _, name := range r.imageStreams {
		is := r.track.imageStream(name)
		if is == nil || len(is.Spec.Tags) < 2 {
			continue
		}
		if is.Spec.Tags[len(is.Spec.Tags)-1].Annotations["openshift.io/display-name"] != "" {
			out = append(out, name)
		}
	}
	return out
}

// updateStream applies mutate to the live imagestream as the admin, retrying on conflicts, and
// returns the resourceVersion written.
func (r *scaleRun) updateStream(ctx context.Context, name string, mutate func(*imagev1.ImageStream)) (string, error) {
	for i := 0; ; i++ {
		is, err := r.images.ImageV1().ImageStreams(samplesNamespace).Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return "", err
		}
		mutate(is)
		out, err := r.images.ImageV1().ImageStreams(samplesNamespace).Update(ctx, is, metav1.UpdateOptions{})
		if err == nil {
			return out.ResourceVersion, nil
		}
		if !apierrors.IsConflict(err) || i > 10 {
			return "", err
		}
	}
}

// awaitRestored reads the watch events of one object and returns the time of the first one
// after the admin's write (resourceVersion written) for which restored holds. Events that
// arrive before the admin's own write is seen are skipped.
func awaitRestored(ctx context.Context, events <-chan event, written string, restored func(event) bool) (time.Time, error) {
	seen := false
	timeout := time.After(revertTimeout)
	for {
		select {
		case ev := <-events:
			if !seen {
				if ev.obj.GetResourceVersion() != written {
					continue
				}
				seen = true
				continue
			}
			if restored(ev) {
				return ev.at, nil
			}
		case <-timeout:
			return time.Time{}, fmt.Errorf("not restored within %s", revertTimeout)
		case <-ctx.Done():
			return time.Time{}, ctx.Err()
		}
	}
}

// settle waits a little between drifts so that one revert's status work does not overlap the
// next measurement.
func settle() { time.Sleep(150 * time.Millisecond) }

func (r *scaleRun) revertSpecEdit(ctx context.Context, name string) (float64, error) {
	defer settle()
	events, cancel := r.track.subscribe(kindImageStream, name)
	defer cancel()
	var removed string
	rv, err := r.updateStream(ctx, name, func(is *imagev1.ImageStream) {
		removed = is.Spec.Tags[len(is.Spec.Tags)-1].Name
		is.Spec.Tags = is.Spec.Tags[:len(is.Spec.Tags)-1]
	})
	returned := time.Now()
	if err != nil {
		return 0, err
	}
	at, err := awaitRestored(ctx, events, rv, func(ev event) bool {
		is, ok := ev.obj.(*imagev1.ImageStream)
		return ok && !ev.deleted && slices.ContainsFunc(is.Spec.Tags, func(t imagev1.TagReference) bool { return t.Name == removed })
	})
	if err != nil {
		return 0, err
	}
	return millisSince(returned, at), nil
}

func (r *scaleRun) revertAnnotationEdit(ctx context.Context, name string, i int) (float64, error) {
	defer settle()
	events, cancel := r.track.subscribe(kindImageStream, name)
	defer cancel()
	var tag, original string
	edited := fmt.Sprintf("bench edit %d", i)
	rv, err := r.updateStream(ctx, name, func(is *imagev1.ImageStream) {
		t := &is.Spec.Tags[len(is.Spec.Tags)-1]
		tag, original = t.Name, t.Annotations["openshift.io/display-name"]
		t.Annotations["openshift.io/display-name"] = edited
	})
	returned := time.Now()
	if err != nil {
		return 0, err
	}
	at, err := awaitRestored(ctx, events, rv, func(ev event) bool {
		is, ok := ev.obj.(*imagev1.ImageStream)
		if !ok || ev.deleted {
			return false
		}
		for _, t := range is.Spec.Tags {
			if t.Name == tag {
				return t.Annotations["openshift.io/display-name"] == original
			}
		}
		return false
	})
	if err != nil {
		return 0, err
	}
	return millisSince(returned, at), nil
}

func (r *scaleRun) revertTemplateDelete(ctx context.Context, name string) (float64, error) {
	defer settle()
	old := r.track.template(name)
	if old == nil {
		return 0, fmt.Errorf("template %s is not there to delete", name)
	}
	events, cancel := r.track.subscribe(kindTemplate, name)
	defer cancel()
	err := r.templates.TemplateV1().Templates(samplesNamespace).Delete(ctx, name, metav1.DeleteOptions{})
	returned := time.Now()
	if err != nil {
		return 0, err
	}
	timeout := time.After(revertTimeout)
	for {
		select {
		case ev := <-events:
			if !ev.deleted && ev.obj.GetUID() != old.UID {
				return millisSince(returned, ev.at), nil
			}
		case <-timeout:
			return 0, fmt.Errorf("not recreated within %s", revertTimeout)
		case <-ctx.Done():
			return 0, ctx.Err()
		}
	}
}

// millisSince is the milliseconds from a write returning to the event that showed it undone; an
// event seen before the write call returned counts as zero.
func millisSince(returned, at time.Time) float64 {
	return max(0, float64(at.Sub(returned).Microseconds())/1000)
}

// removedAndBack switches the Config to Removed and back to Managed.
func (r *scaleRun) removedAndBack(ctx context.Context, res *ScaleResult) error {
	removed := r.track.expect(r.track.statusRemoved)
	gone := r.track.expect(r.track.samplesGone(r.imageStreams, r.templateNames))
	from := time.Now()
	returned, err := r.setManagementState(ctx, "Removed")
	if err != nil {
		return err
	}
	at, err := r.awaitOrExit(ctx, removed, 2*time.Minute, "status Removed")
	if err != nil {
		return err
	}
	res.RemovedSeconds = at.Sub(returned).Seconds()
	at2, err := r.awaitOrExit(ctx, gone, 2*time.Minute, "every sample deleted")
	if err != nil {
		return err
	}
	res.RemovedEmptySeconds = at2.Sub(returned).Seconds()
	quiet, err := r.waitQuiet(ctx, at2)
	if err != nil {
		return err
	}
	if res.RemovedRequests, err = r.requestsBetween(from, quiet); err != nil {
		return err
	}

	converged := r.track.expect(r.track.converged(r.opts.releaseVersion, r.imageStreams, r.templateNames))
	from = time.Now()
	returned, err = r.setManagementState(ctx, "Managed")
	if err != nil {
		return err
	}
	at, err = r.awaitOrExit(ctx, converged, 2*time.Minute, "converged after Managed")
	if err != nil {
		return err
	}
	res.ManagedSeconds = at.Sub(returned).Seconds()
	if quiet, err = r.waitQuiet(ctx, at); err != nil {
		return err
	}
	res.ManagedRequests, err = r.requestsBetween(from, quiet)
	return err
}

func (r *scaleRun) setManagementState(ctx context.Context, state string) (time.Time, error) {
	patch := fmt.Sprintf(`{"spec":{"managementState":%q}}`, state)
	if _, err := r.samples.SamplesV1().Configs().Patch(ctx, "cluster", types.MergePatchType, []byte(patch), metav1.PatchOptions{}); err != nil {
		return time.Time{}, fmt.Errorf("setting managementState %s: %w", state, err)
	}
	return time.Now(), nil
}

// readRSS returns VmHWM and VmRSS of a process, in KiB.
func readRSS(pid int) (hwm, rss int64) {
	m := procStatus(pid)
	return m["VmHWM"], m["VmRSS"]
}

// procStatus returns the kB fields of /proc/PID/status (VmHWM, VmRSS, RssAnon, RssFile, ...).
func procStatus(pid int) map[string]int64 {
	out := map[string]int64{}
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return out
	}
	for _, line := range strings.Split(string(data), "\n") {
		fields := strings.Fields(line)
		if len(fields) < 2 {
			continue
		}
		if n, err := strconv.ParseInt(fields[1], 10, 64); err == nil {
			out[strings.TrimSuffix(fields[0], ":")] = n
		}
	}
	return out
}

// goGauges are the Go runtime gauges read from the operator's /metrics.
var goGauges = []string{"go_memstats_heap_inuse_bytes", "go_memstats_heap_alloc_bytes", "go_memstats_stack_inuse_bytes", "go_memstats_sys_bytes", "go_goroutines",
	"go_memstats_heap_idle_bytes", "go_memstats_heap_released_bytes", "go_memstats_mspan_inuse_bytes", "go_memstats_gc_sys_bytes", "go_memstats_other_sys_bytes"}

// scrapeGoMemory reads the Go runtime gauges from the operator's metrics endpoint, as the admin
// (the API server authorizes the scrape), over TLS verified with the control plane's CA.
func (r *scaleRun) scrapeGoMemory(ctx context.Context) (map[string]float64, error) {
	ca, err := os.ReadFile(r.cp.CAFile)
	if err != nil {
		return nil, err
	}
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(ca)
	client := &http.Client{Timeout: 5 * time.Second, Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool}}}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, "https://"+r.metricsAddr+"/metrics", nil)
	if err != nil {
		return nil, err
	}
	req.Header.Set("Authorization", "Bearer "+r.cp.AdminConfig.BearerToken)
	resp, err := client.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("%s", resp.Status)
	}
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		return nil, err
	}
	return parseGauges(string(body), goGauges), nil
}

// parseGauges picks unlabelled samples of the named metrics from Prometheus text format.
func parseGauges(text string, names []string) map[string]float64 {
	out := map[string]float64{}
	for _, line := range strings.Split(text, "\n") {
		name, value, ok := strings.Cut(line, " ")
		if !ok || !slices.Contains(names, name) {
			continue
		}
		if v, err := strconv.ParseFloat(strings.TrimSpace(value), 64); err == nil {
			out[name] = v
		}
	}
	return out
}
