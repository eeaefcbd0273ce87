package integration

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	configv1 "github.com/openshift/api/config/v1"
	operatorv1 "github.com/openshift/api/operator/v1"
	samplesv1 "github.com/openshift/api/samples/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/util/retry"

	"github.com/samples-operator-dev/cluster-samples-operator/pkg/bootstrapstate"
	"github.com/samples-operator-dev/cluster-samples-operator/pkg/configspec"
	"github.com/samples-operator-dev/cluster-samples-operator/pkg/operator"
	"github.com/samples-operator-dev/cluster-samples-operator/pkg/registryprobe"
)

// blackHole accepts connections on loopback and never answers: a registry that hangs.
func blackHole(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var (
		mu    sync.Mutex
		conns []net.Conn
	)
	accepting := make(chan struct{})
	go func() {
		defer close(accepting)
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			mu.Lock()
			conns = append(conns, c)
			mu.Unlock()
		}
	}()
	t.Cleanup(func() {
		l.Close()
		<-accepting
		mu.Lock()
		defer mu.Unlock()
		for _, c := range conns {
			c.Close()
		}
	})
	return l.Addr().String()
}

// waitBootstrappedRemoved waits for the default Config and checks it is Removed for reason, with
// the reason in status and no sample created.
func (e *env) waitBootstrappedRemoved(t *testing.T, timeout time.Duration, reason string) *samplesv1.Config {
	t.Helper()
	var cfg *samplesv1.Config
	eventually(t, timeout, func() (bool, string) {
		c, err := e.samples.SamplesV1().Configs().Get(context.Background(), "cluster", metav1.GetOptions{})
		if err != nil {
			return false, err.Error()
		}
		cfg = c
		cond := configCondition(c, samplesv1.SamplesExist)
		return c.Status.ManagementState == operatorv1.Removed && cond != nil && cond.Reason == reason,
			fmt.Sprintf("spec %q status %q SamplesExist %+v", c.Spec.ManagementState, c.Status.ManagementState, cond)
	})
	if cfg.Spec.ManagementState != operatorv1.Removed {
		t.Errorf("spec.managementState = %q, want Removed", cfg.Spec.ManagementState)
	}
	t.Logf("bootstrapped Removed: %s: %s", reason, configCondition(cfg, samplesv1.SamplesExist).Message)
	list, err := e.images.ImageV1().ImageStreams("openshift").List(context.Background(), metav1.ListOptions{LabelSelector: "samples.operator.openshift.io/managed"})
	if err != nil || len(list.Items) != 0 {
		t.Errorf("samples exist after a Removed bootstrap: %d (%v)", len(list.Items), err)
	}
	return cfg
}

// TestBootstrapRemovedWhenTheRegistryNeverAnswers uses the real probe against a loopback listener
// that accepts and never answers: the probe gives up within about 20 seconds and the operator
// bootstraps Removed on its verdict. The probe is timed by itself: the operator's start-up
// before it (leader election, caches) is the machine's speed, not the probe's bound.
func TestBootstrapRemovedWhenTheRegistryNeverAnswers(t *testing.T) {
	parallel(t, aboutTwentySecond)
	e := newEnv(t)
	addr := blackHole(t)
	opts := defaultOptions()
	prober := registryprobe.Prober{Address: addr}
	var mu sync.Mutex
	var probes []time.Duration
	opts.RegistryProbe = func(ctx context.Context) error {
		start := time.Now()
		err := prober.Probe(ctx)
		mu.Lock()
		probes = append(probes, time.Since(start))
		mu.Unlock()
		return err
	}
	opts.ProbeTarget = addr
	e.startOperator(opts)
	cfg := e.waitBootstrappedRemoved(t, 40*time.Second, configspec.ReasonRegistryUnreachable)
	mu.Lock()
	defer mu.Unlock()
	t.Logf("the probe took %v", probes)
	if len(probes) == 0 {
		t.Fatalf("bootstrapped Removed without probing the registry")
	}
	for _, took := range probes {
		if took > 21*time.Second {
			t.Errorf("the probe took %s, want at most about 20s", took)
		}
	}
	if msg := configCondition(cfg, samplesv1.SamplesExist).Message; !strings.Contains(msg, addr) || !strings.Contains(msg, "samplesRegistry") {
		t.Errorf("the message does not name the registry and the way out: %q", msg)
	}
}

// TestBootstrapDecisions: the operator reads each fact of the bootstrap decision from the cluster
// (the decisions themselves are unit-tested in pkg/configspec). The scenarios share one control
// plane: each starts an operator on a cluster without Config, checks what it created, then stops
// it and puts the cluster back. Those that end Managed come last, as they install the samples.
func TestBootstrapDecisions(t *testing.T) {
	parallel(t, aboutTwentySecond)
	ctx := context.Background()
	e := newEnv(t)
	// fresh stops the scenario's operator when it ends, deletes the Config it created (its
	// finalizer has no operator left to remove it) and whatever the scenario set.
	fresh := func(t *testing.T, opts operator.Options, undo ...func()) {
		t.Helper()
		op := e.startOperator(opts)
		t.Cleanup(func() {
			op.stop(t)
			for _, u := range undo {
				u()
			}
			e.deleteConfigWithoutOperator(t)
		})
	}

	t.Run("IPv6-only cluster", func(t *testing.T) {
		network := &configv1.Network{
			ObjectMeta: metav1.ObjectMeta{Name: "cluster"},
			Spec: configv1.NetworkSpec{
				ClusterNetwork: []configv1.ClusterNetworkEntry{{CIDR: "fd01::/48", HostPrefix: 64}},
				ServiceNetwork: []string{"fd02::/112"},
			},
		}
		if _, err := e.config.ConfigV1().Networks().Create(ctx, network, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		fresh(t, defaultOptions(), func() {
			if err := e.config.ConfigV1().Networks().Delete(ctx, "cluster", metav1.DeleteOptions{}); err != nil {
				t.Errorf("deleting the network config: %v", err)
			}
		})
		e.waitBootstrappedRemoved(t, 20*time.Second, configspec.ReasonIPv6Only)
	})
	t.Run("image config blocks the registry", func(t *testing.T) {
		blocked := configv1.ImageSpec{RegistrySources: configv1.RegistrySources{BlockedRegistries: []string{"registry.redhat.io"}}}
		// The real openshift-apiserver needs the Image config, so with it the control plane has
		// created an empty one already.
		var before *configv1.ImageSpec
		if cur, err := e.config.ConfigV1().Images().Get(ctx, "cluster", metav1.GetOptions{}); err == nil {
			before = cur.Spec.DeepCopy()
			cur.Spec = blocked
			if _, err := e.config.ConfigV1().Images().Update(ctx, cur, metav1.UpdateOptions{}); err != nil {
				t.Fatal(err)
			}
		} else if _, err := e.config.ConfigV1().Images().Create(ctx, &configv1.Image{ObjectMeta: metav1.ObjectMeta{Name: "cluster"}, Spec: blocked}, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		fresh(t, defaultOptions(), func() {
			err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
				cur, err := e.config.ConfigV1().Images().Get(ctx, "cluster", metav1.GetOptions{})
				if err != nil || before != nil {
					if err == nil {
						cur.Spec = *before
						_, err = e.config.ConfigV1().Images().Update(ctx, cur, metav1.UpdateOptions{})
					}
					return err
				}
				return e.config.ConfigV1().Images().Delete(ctx, "cluster", metav1.DeleteOptions{})
			})
			if err != nil {
				t.Errorf("putting the image config back: %v", err)
			}
		})
		cfg := e.waitBootstrappedRemoved(t, 20*time.Second, configspec.ReasonImageConfigBlocks)
		if msg := configCondition(cfg, samplesv1.SamplesExist).Message; !strings.Contains(msg, "blockedRegistries") {
			t.Errorf("message does not name the setting: %q", msg)
		}
	})
	t.Run("no inventory for the architecture", func(t *testing.T) {
		opts := defaultOptions()
		opts.GOARCH = "riscv64"
		fresh(t, opts)
		e.waitBootstrappedRemoved(t, 20*time.Second, configspec.ReasonNoInventory)
	})
	t.Run("unreachable registry refuses connections", func(t *testing.T) {
		l, _ := net.Listen("tcp", "127.0.0.1:0")
		addr := l.Addr().String()
		l.Close() // nothing listens there now
		opts := defaultOptions()
		prober := registryprobe.Prober{Address: addr, Interval: 100 * time.Millisecond}
		opts.RegistryProbe, opts.ProbeTarget = prober.Probe, addr
		fresh(t, opts)
		e.waitBootstrappedRemoved(t, 20*time.Second, configspec.ReasonRegistryUnreachable)
	})
	t.Run("an admin's Managed clears the bootstrap reason", func(t *testing.T) {
		opts := defaultOptions()
		opts.RegistryProbe = func(context.Context) error { return fmt.Errorf("dial tcp: i/o timeout") }
		fresh(t, opts)
		e.waitBootstrappedRemoved(t, 20*time.Second, configspec.ReasonRegistryUnreachable)
		e.updateConfig(func(c *samplesv1.Config) { c.Spec.ManagementState = operatorv1.Managed })
		e.waitManaged(t, x86Inventory(t), "v1")
		eventually(t, 5*time.Second, func() (bool, string) {
			c := e.getConfig()
			_, has := c.Annotations[bootstrapstate.ReasonAnnotation]
			return !has, "bootstrap annotation still present"
		})
	})
	t.Run("reachable TLS registry", func(t *testing.T) {
		registry := httptest.NewTLSServer(http.NotFoundHandler())
		defer registry.Close()
		pool := x509.NewCertPool()
		pool.AddCert(registry.Certificate())
		addr := strings.TrimPrefix(registry.URL, "https://")
		opts := defaultOptions()
		prober := registryprobe.Prober{Address: addr, TLSConfig: &tls.Config{RootCAs: pool, ServerName: "example.com"}}
		opts.RegistryProbe, opts.ProbeTarget = prober.Probe, addr
		fresh(t, opts)
		e.waitBootstrappedManaged(t)
	})
	t.Run("cluster proxy skips the probe", func(t *testing.T) {
		proxy, err := e.config.ConfigV1().Proxies().Create(ctx, &configv1.Proxy{ObjectMeta: metav1.ObjectMeta{Name: "cluster"}}, metav1.CreateOptions{})
		if err != nil {
			t.Fatal(err)
		}
		proxy.Status.HTTPSProxy = "http://proxy.example:3128"
		if _, err := e.config.ConfigV1().Proxies().UpdateStatus(ctx, proxy, metav1.UpdateOptions{}); err != nil {
			t.Fatal(err)
		}
		opts := defaultOptions()
		opts.RegistryProbe = func(context.Context) error {
			t.Error("the probe ran although a proxy is configured")
			return fmt.Errorf("no")
		}
		fresh(t, opts, func() {
			if err := e.config.ConfigV1().Proxies().Delete(ctx, "cluster", metav1.DeleteOptions{}); err != nil {
				t.Errorf("deleting the proxy config: %v", err)
			}
		})
		e.waitBootstrappedManaged(t)
	})
}

// waitBootstrappedManaged waits for the default Config the operator creates to be Managed with
// every sample installed.
func (e *env) waitBootstrappedManaged(t *testing.T) {
	t.Helper()
	eventually(t, 20*time.Second, func() (bool, string) {
		c, err := e.samples.SamplesV1().Configs().Get(context.Background(), "cluster", metav1.GetOptions{})
		if err != nil {
			return false, err.Error()
		}
		return c.Spec.ManagementState == operatorv1.Managed, fmt.Sprintf("spec.managementState %q", c.Spec.ManagementState)
	})
	e.waitManaged(t, x86Inventory(t), "v1")
}

// deleteConfigWithoutOperator deletes Config cluster while no operator runs, removing the
// finalizer the operator would have removed, and waits until it is gone.
func (e *env) deleteConfigWithoutOperator(t *testing.T) {
	t.Helper()
	ctx := context.Background()
	configs := e.samples.SamplesV1().Configs()
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		cfg, err := configs.Get(ctx, samplesv1.ConfigName, metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			return nil
		}
		if err != nil {
			return err
		}
		if len(cfg.Finalizers) > 0 {
			cfg.Finalizers = nil
			if _, err := configs.Update(ctx, cfg, metav1.UpdateOptions{}); err != nil {
				return err
			}
		}
		return configs.Delete(ctx, samplesv1.ConfigName, metav1.DeleteOptions{})
	})
	if err != nil && !apierrors.IsNotFound(err) {
		t.Errorf("deleting Config cluster: %v", err)
		return
	}
	eventually(t, 10*time.Second, func() (bool, string) {
		_, err := configs.Get(ctx, samplesv1.ConfigName, metav1.GetOptions{})
		return apierrors.IsNotFound(err), fmt.Sprintf("Config cluster still there: %v", err)
	})
}
