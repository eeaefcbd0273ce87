package main

import (
	"context"
	"crypto/tls"
	"fmt"
	"os"
	"os/signal"
	"runtime"
	"syscall"
	"time"

	"github.com/spf13/cobra"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	"k8s.io/klog/v2"

	"github.com/samples-operator-dev/cluster-samples-operator/pkg/controller/importscontrol"
	"github.com/samples-operator-dev/cluster-samples-operator/pkg/metrics"
	"github.com/samples-operator-dev/cluster-samples-operator/pkg/operator"
	"github.com/samples-operator-dev/cluster-samples-operator/pkg/registryprobe"
)

type operatorFlags struct {
	kubeconfig              string
	inventoryDir            string
	okd                     bool
	probeAddress            string
	probeInsecureSkipVerify bool
	sampleWorkers           int
	leaderElect             bool
	qps                     float32
	burst                   int
	resync                  time.Duration
	importRetryInterval     time.Duration
	leaseDuration           time.Duration
	renewDeadline           time.Duration
	retryPeriod             time.Duration
	metricsBindAddress      string
	healthBindAddress       string
	tlsCertFile             string
	tlsKeyFile              string
}

func newOperatorCommand() *cobra.Command {
	f := &operatorFlags{}
	cmd := &cobra.Command{
		Use:   "operator",
		Short: "Run the samples operator",
		RunE: func(cmd *cobra.Command, _ []string) error {
			if f.healthBindAddress != "" && f.metricsBindAddress == "" {
				return fmt.Errorf("--%s needs the metrics server: it is that server's second listener", healthBindFlag)
			}
			return runOperator(f, selfSignedServing(cmd.Flags().Changed, f))
		},
	}
	flags := cmd.Flags()
	flags.StringVar(&f.kubeconfig, "kubeconfig", os.Getenv("KUBECONFIG"), "path to a kubeconfig; empty means in-cluster")
	flags.StringVar(&f.inventoryDir, "inventory-dir", os.Getenv("INVENTORY_DIR"), "load the sample inventory from this directory (arch directories beneath it) instead of the embedded one")
	flags.BoolVar(&f.okd, "okd", os.Getenv("OKD") == "true", "install the OKD samples (community images) instead of the OCP ones")
	flags.StringVar(&f.probeAddress, "registry-probe-address", registryprobe.DefaultAddress, "host:port the bootstrap probe dials to decide whether the samples registry is reachable")
	flags.BoolVar(&f.probeInsecureSkipVerify, "registry-probe-insecure-skip-verify", false, "complete the probe's TLS handshake without verifying the certificate (for local test registries only)")
	flags.IntVar(&f.sampleWorkers, "sample-workers", operator.DefaultSampleWorkers, "how many sample writes may run at once")
	flags.Float32Var(&f.qps, "kube-api-qps", operator.DefaultQPS, "steady requests per second the operator may send to the API server")
	flags.IntVar(&f.burst, "kube-api-burst", operator.DefaultBurst, "requests the operator may send at once above --kube-api-qps")
	flags.DurationVar(&f.resync, "resync", operator.DefaultResync, "how often every informer re-delivers its objects (a safety net: a resync with nothing changed writes nothing)")
	flags.DurationVar(&f.importRetryInterval, "import-retry-interval", importscontrol.DefaultRetryInterval, "the longest wait between two retries of an imagestream's failed imports: the first comes about 30s after the failure, each next one twice as late, up to this")
	flags.DurationVar(&f.leaseDuration, "leader-elect-lease-duration", 0, "how long a standby waits before taking the lease of a leader that stopped renewing it; 0 means OpenShift's for the control plane topology (137s, 270s on a single node)")
	flags.DurationVar(&f.renewDeadline, "leader-elect-renew-deadline", 0, "how long the leader keeps trying to renew before it gives up leading; 0 means OpenShift's for the control plane topology (107s, 240s on a single node)")
	flags.DurationVar(&f.retryPeriod, "leader-elect-retry-period", 0, "how often standbys try to take the lease and the leader renews it; 0 means OpenShift's for the control plane topology (26s, 60s on a single node)")
	flags.StringVar(&f.metricsBindAddress, "metrics-bind-address", metrics.DefaultBindAddress, "where to serve /metrics, /healthz and /readyz over HTTPS; empty disables the server")
	flags.StringVar(&f.healthBindAddress, healthBindFlag, "", "where to serve /healthz and /readyz again, in plain HTTP on a listener of their own that no metrics client can crowd out (the kubelet's probes); empty means only on the metrics port")
	flags.StringVar(&f.tlsCertFile, tlsCertFlag, metrics.DefaultCertFile, "serving certificate of the metrics server (reloaded when it changes); when neither this nor --"+tlsKeyFlag+" is given and the default files do not exist, a self-signed certificate is made in memory")
	flags.StringVar(&f.tlsKeyFile, tlsKeyFlag, metrics.DefaultKeyFile, "private key of the metrics server")
	flags.BoolVar(&f.leaderElect, "leader-elect", true, "take the Lease "+operator.LeaseName+" in openshift-cluster-samples-operator before writing, so that only one replica writes")
	return cmd
}

// operatorConditionNameEnv names the OperatorCondition OLM made for this operator's CSV.
const operatorConditionNameEnv = "OPERATOR_CONDITION_NAME"

const (
	tlsCertFlag    = "tls-cert-file"
	tlsKeyFlag     = "tls-private-key-file"
	healthBindFlag = "health-probe-bind-address"
)

// selfSignedServing decides whether the metrics server makes its own certificate. Run from a
// laptop against any cluster, the binary has no service CA secret mounted, and asking for a
// certificate there would only get in the way; a file the user named is another matter, and
// stays an error when it is missing.
func selfSignedServing(changed func(flag string) bool, f *operatorFlags) bool {
	if f.metricsBindAddress == "" || changed(tlsCertFlag) || changed(tlsKeyFlag) ||
		!metrics.CertFilesAbsent(f.tlsCertFile, f.tlsKeyFile) {
		return false
	}
	klog.Warningf("No serving certificate was given (--%s, --%s) and none exists at %s and %s: the metrics server uses a self-signed certificate, which scrapers do not trust",
		tlsCertFlag, tlsKeyFlag, f.tlsCertFile, f.tlsKeyFile)
	return true
}

func runOperator(f *operatorFlags, selfSigned bool) error {
	restConfig, err := loadRESTConfig(f.kubeconfig)
	if err != nil {
		return err
	}
	prober := registryprobe.Prober{Address: f.probeAddress}
	if f.probeInsecureSkipVerify {
		prober.TLSConfig = &tls.Config{InsecureSkipVerify: true} //nolint:gosec // opt-in, for loopback test registries
	}
	ctx, stop := signal.NotifyContext(cmdContext(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	klog.InfoS("cluster-samples-operator", "go", runtime.Version(), "os", runtime.GOOS, "arch", runtime.GOARCH)
	return operator.Run(ctx, restConfig, operator.Options{
		Version:             os.Getenv("RELEASE_VERSION"),
		GOARCH:              runtime.GOARCH,
		InventoryDir:        f.inventoryDir,
		OKD:                 f.okd,
		RegistryProbe:       prober.Probe,
		ProbeTarget:         f.probeAddress,
		MirrorProbe:         registryprobe.ProbeMirror,
		SampleWorkers:       f.sampleWorkers,
		QPS:                 f.qps,
		Burst:               f.burst,
		Resync:              f.resync,
		ImportRetryInterval: f.importRetryInterval,
		LeaderElection: operator.LeaderElection{
			Disabled: !f.leaderElect, LeaseDuration: f.leaseDuration, RenewDeadline: f.renewDeadline, RetryPeriod: f.retryPeriod,
		},
		MetricsBindAddress:     f.metricsBindAddress,
		HealthProbeBindAddress: f.healthBindAddress,
		TLSCertFile:            f.tlsCertFile,
		TLSKeyFile:             f.tlsKeyFile,
		TLSSelfSigned:          selfSigned,
		// OLM sets it in every container of a CSV's Deployments; the payload's Deployment does
		// not, and neither does OLM v1.
		OperatorConditionName: os.Getenv(operatorConditionNameEnv),
	})
}

func loadRESTConfig(kubeconfig string) (*rest.Config, error) {
	if kubeconfig == "" {
		cfg, err := rest.InClusterConfig()
		if err != nil {
			return nil, fmt.Errorf("no --kubeconfig given and not running in a cluster: %w", err)
		}
		return cfg, nil
	}
	return clientcmd.NewNonInteractiveDeferredLoadingClientConfig(
		&clientcmd.ClientConfigLoadingRules{ExplicitPath: kubeconfig}, nil).ClientConfig()
}

func cmdContext() context.Context { return context.Background() }
