// Command kubectl-samples is the `kubectl samples` / `oc samples` plugin: what each OpenShift
// sample is doing and who uses it (pkg/plugin). Put it on PATH; kubectl and oc find it by name.
package main

import (
	"os"

	"github.com/samples-operator-dev/cluster-samples-operator/pkg/plugin"
)

func main() {
	os.Exit(plugin.Main(os.Args[1:], os.Stdout, os.Stderr))
}
