package operator

import (
	"context"
	"errors"
	"fmt"
	"os"
	"time"

	configv1 "github.com/openshift/api/config/v1"
	configv1client "github.com/openshift/client-go/config/clientset/versioned/typed/config/v1"
	leaderelectionconfig "github.com/openshift/library-go/pkg/config/leaderelection"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/uuid"
	coordinationv1client "k8s.io/client-go/kubernetes/typed/coordination/v1"
	"k8s.io/client-go/tools/leaderelection"
	"k8s.io/client-go/tools/leaderelection/resourcelock"
	"k8s.io/klog/v2"

	"github.com/samples-operator-dev/cluster-samples-operator/pkg/names"
)

// LeaseName is the Lease in the operator namespace that decides which replica writes.
const LeaseName = "cluster-samples-operator-lock"

// LeaderElection tunes the Lease. Durations left zero are OpenShift's for operators on the
// cluster's control plane topology (leaseTiming): a leader that dies without releasing is replaced
// within LeaseDuration; one that shuts down releases at once.
type LeaderElection struct {
	Disabled      bool
	Identity      string
	LeaseDuration time.Duration
	RenewDeadline time.Duration
	RetryPeriod   time.Duration
}

func (le *LeaderElection) defaults() {
	if le.Identity == "" {
		host, _ := os.Hostname()
		le.Identity = fmt.Sprintf("%s_%s", host, uuid.NewUUID())
	}
}

// timed reports whether every duration was given, so the topology need not be read.
func (le LeaderElection) timed() bool {
	return le.LeaseDuration > 0 && le.RenewDeadline > 0 && le.RetryPeriod > 0
}

// leaseTiming fills the durations not given with library-go's for the control plane topology
// (infrastructures.config.openshift.io/cluster status.controlPlaneTopology): 137/107/26 s on a
// highly available control plane; 270/240/60 s on a single node, whose one kube-apiserver
// restarts during an upgrade, so that the restart does not cost the lease.
func leaseTiming(le LeaderElection, topology configv1.TopologyMode) LeaderElection {
	timing := leaderelectionconfig.LeaderElectionDefaulting(configv1.LeaderElection{}, names.OperatorNamespace, LeaseName)
	if topology == configv1.SingleReplicaTopologyMode {
		timing = leaderelectionconfig.LeaderElectionSNOConfig(timing)
	}
	if le.LeaseDuration <= 0 {
		le.LeaseDuration = timing.LeaseDuration.Duration
	}
	if le.RenewDeadline <= 0 {
		le.RenewDeadline = timing.RenewDeadline.Duration
	}
	if le.RetryPeriod <= 0 {
		le.RetryPeriod = timing.RetryPeriod.Duration
	}
	return le
}

// controlPlaneTopology reads the cluster's control plane topology once, at start. Without the
// object (or the right to read it) the cluster counts as highly available, OpenShift's default.
func controlPlaneTopology(ctx context.Context, infrastructures configv1client.InfrastructureInterface) configv1.TopologyMode {
	infra, err := infrastructures.Get(ctx, names.ClusterConfigName, metav1.GetOptions{})
	if err != nil {
		klog.InfoS("Cannot read the control plane topology; leader election uses the highly available timing", "err", err)
		return configv1.HighlyAvailableTopologyMode
	}
	if infra.Status.ControlPlaneTopology == "" {
		return configv1.HighlyAvailableTopologyMode
	}
	return infra.Status.ControlPlaneTopology
}

// errLostLease makes the process exit and restart, so that a replica that lost the lease never
// keeps writing.
var errLostLease = errors.New("lost the leader lease")

// runAsLeader runs work while this replica holds the lease. On shutdown (ctx done) it waits for
// work to stop before releasing the lease, so the next leader never overlaps with this one.
func runAsLeader(ctx context.Context, kube interface {
	CoordinationV1() coordinationv1client.CoordinationV1Interface
}, cfg LeaderElection, work func(context.Context) error) error {
	if cfg.Disabled {
		return work(ctx)
	}
	cfg.defaults()
	klog.InfoS("Leader election", "lease", LeaseName, "leaseDuration", cfg.LeaseDuration, "renewDeadline", cfg.RenewDeadline, "retryPeriod", cfg.RetryPeriod)
	lock := &resourcelock.LeaseLock{
		LeaseMeta:  metav1.ObjectMeta{Name: LeaseName, Namespace: names.OperatorNamespace},
		Client:     kube.CoordinationV1(),
		LockConfig: resourcelock.ResourceLockConfig{Identity: cfg.Identity},
	}

	electionCtx, stopElection := context.WithCancel(context.Background())
	defer stopElection()
	workStarted, workFinished := make(chan struct{}), make(chan struct{})
	var workErr error
	elector, err := leaderelection.NewLeaderElector(leaderelection.LeaderElectionConfig{
		Lock:            lock,
		Name:            LeaseName,
		LeaseDuration:   cfg.LeaseDuration,
		RenewDeadline:   cfg.RenewDeadline,
		RetryPeriod:     cfg.RetryPeriod,
		ReleaseOnCancel: true,
		Callbacks: leaderelection.LeaderCallbacks{
			OnStartedLeading: func(leaderCtx context.Context) {
				close(workStarted)
				defer close(workFinished)
				klog.InfoS("Became the leader", "identity", cfg.Identity, "lease", LeaseName)
				// Work stops when the lease is lost or when the process shuts down.
				workCtx, cancel := context.WithCancel(leaderCtx)
				defer cancel()
				defer context.AfterFunc(ctx, cancel)()
				workErr = work(workCtx)
			},
			OnStoppedLeading: func() { klog.InfoS("Leader election ended", "identity", cfg.Identity) },
		},
	})
	if err != nil {
		return err
	}
	go func() {
		<-ctx.Done()
		select {
		case <-workStarted:
			<-workFinished
		default:
		}
		stopElection() // releases the lease
	}()
	elector.Run(electionCtx)
	select {
	case <-workStarted:
		<-workFinished
	default:
	}
	if ctx.Err() != nil {
		releaseIfStillOurs(lock, cfg)
		return workErr
	}
	return errLostLease
}

// releaseIfStillOurs clears a lease that names this replica after its elector has stopped. The
// elector releases only a lease it knows it holds; a create or renewal that the server committed
// while shutdown canceled its answer leaves the lease in this replica's name, and the next
// replica would wait a whole LeaseDuration (270 s on a single node) for a holder that is gone.
func releaseIfStillOurs(lock *resourcelock.LeaseLock, cfg LeaderElection) {
	ctx, cancel := context.WithTimeout(context.Background(), min(cfg.RenewDeadline, 10*time.Second))
	defer cancel()
	record, _, err := lock.Get(ctx)
	if err != nil {
		if !apierrors.IsNotFound(err) {
			klog.InfoS("Cannot read the lease at shutdown; it lapses on its own", "lease", LeaseName, "err", err)
		}
		return
	}
	if record.HolderIdentity != cfg.Identity {
		return
	}
	now := metav1.NewTime(time.Now())
	released := resourcelock.LeaderElectionRecord{
		LeaseDurationSeconds: 1,
		AcquireTime:          now,
		RenewTime:            now,
		LeaderTransitions:    record.LeaderTransitions,
	}
	// The update carries the resourceVersion just read: a replica that took the lease meanwhile keeps it.
	if err := lock.Update(ctx, released); err != nil {
		klog.InfoS("Cannot release the lease at shutdown; it lapses on its own", "lease", LeaseName, "err", err)
		return
	}
	klog.InfoS("Released a lease left in this replica's name", "identity", cfg.Identity, "lease", LeaseName)
}
