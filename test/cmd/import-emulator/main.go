// Command import-emulator fills ImageStream status in a cluster without an
// OpenShift image importer (see package test/emulator). It runs until
// SIGINT or SIGTERM.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"strings"
	"syscall"

	imageclient "github.com/openshift/client-go/image/clientset/versioned"
	"k8s.io/client-go/tools/clientcmd"
	"k8s.io/klog/v2"

	"github.com/samples-operator-dev/cluster-samples-operator/test/emulator"
)

// failures collects repeated --fail REF=MESSAGE flags.
type failures map[string]string

func (f failures) String() string {
	parts := make([]string, 0, len(f))
	for ref, msg := range f {
		parts = append(parts, ref+"="+msg)
	}
	return strings.Join(parts, ",")
}

func (f failures) Set(v string) error {
	ref, msg, ok := strings.Cut(v, "=")
	if !ok || ref == "" {
		return errors.New("want REF=MESSAGE")
	}
	f[ref] = msg
	return nil
}

func main() {
	klog.InitFlags(nil)
	kubeconfig := flag.String("kubeconfig", "", "path to a kubeconfig; default: $KUBECONFIG, ~/.kube/config or in-cluster")
	namespace := flag.String("namespace", "openshift", "namespace whose ImageStreams are emulated")
	fail := failures{}
	flag.Var(fail, "fail", "REF=MESSAGE: imports of image reference REF fail with MESSAGE (repeatable)")
	mirrorSets := flag.Bool("mirror-sets", true, "import through the cluster's ImageTagMirrorSets, ImageDigestMirrorSets and ImageContentSourcePolicies, as openshift-apiserver does (their CRDs must be installed)")
	flag.Parse()

	if err := run(*kubeconfig, *namespace, fail, *mirrorSets); err != nil {
		fmt.Fprintln(os.Stderr, "import-emulator:", err)
		os.Exit(1)
	}
}

func run(kubeconfig, namespace string, fail failures, mirrorSets bool) error {
	rules := clientcmd.NewDefaultClientConfigLoadingRules()
	rules.ExplicitPath = kubeconfig
	cfg, err := clientcmd.NewNonInteractiveDeferredLoadingClientConfig(rules, &clientcmd.ConfigOverrides{}).ClientConfig()
	if err != nil {
		return fmt.Errorf("loading kubeconfig: %w", err)
	}
	client, err := imageclient.NewForConfig(cfg)
	if err != nil {
		return err
	}

	e := emulator.New(client, namespace)
	if mirrorSets {
		if err := e.ResolveMirrorSets(cfg); err != nil {
			return err
		}
	}
	for ref, msg := range fail {
		e.FailReference(ref, msg)
	}

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	ctx = klog.NewContext(ctx, klog.Background())
	return e.Run(ctx)
}
