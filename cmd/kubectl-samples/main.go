// Command kubectl-samples is the `kubectl samples` / `oc samples` plugin: what each OpenShift
// sample is doing and who uses it (pkg/plugin). Put it on PATH; kubectl and oc find it by name.
package main

import (
	"os"

	"github.com/go-logr/logr"
	"k8s.io/klog/v2"

	"github.com/samples-operator-dev/cluster-samples-operator/pkg/plugin"
)

func main() {
	// client-go's own log lines are not the caller's business: what goes wrong reaches them as
	// the verb's answer or error.
	klog.SetLogger(logr.Discard())
	os.Exit(plugin.Main(os.Args[1:], os.Stdout, os.Stderr))
}
