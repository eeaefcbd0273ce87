package operator

import (
	"context"
	"errors"
	"fmt"
	"os"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/uuid"
	coordinationv1client "k8s.io/client-go/kubernetes/typed/coordination/v1"
	"k8s.io/client-go/tools/leaderelection"
	"k8s.io/client-go/tools/leaderelection/resourcelock"
	"k8s.io/klog/v2"

	"github.com/samples-operator-dev/cluster-samples-operator/pkg/controller/common"
)

// LeaseName is the Lease in the operator namespace that decides which replica writes.
const LeaseName = "cluster-samples-operator-lock"

// LeaderElection tunes the Lease. The defaults are OpenShift's for operators: a leader that dies
// without releasing is replaced within LeaseDuration; one that shuts down releases at once.
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
	if le.LeaseDuration <= 0 {
		le.LeaseDuration = 137 * time.Second
	}
	if le.RenewDeadline <= 0 {
		le.RenewDeadline = 107 * time.Second
	}
	if le.RetryPeriod <= 0 {
		le.RetryPeriod = 26 * time.Second
	}
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
	lock := &resourcelock.LeaseLock{
		LeaseMeta:  metav1.ObjectMeta{Name: LeaseName, Namespace: common.OperatorNamespace},
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
		return workErr
	}
	return errLostLease
}
