// Command cluster-samples-operator installs and maintains the sample ImageStreams and
// Templates of the openshift namespace. Subcommands: `operator` (the default) and `inventory`.
package main

import (
	"flag"
	"fmt"
	"os"

	"github.com/spf13/cobra"
	"k8s.io/klog/v2"

	"github.com/samples-operator-dev/cluster-samples-operator/pkg/binarypages"
)

func main() {
	// First, before the operator reads anything: the binary's pages that only the package
	// initialisers read stop counting in its memory (pkg/binarypages). Where that cannot be done
	// (no /proc) they just stay mapped, as they would without it.
	_, _ = binarypages.Release()
	if err := newRootCommand().Execute(); err != nil {
		fmt.Fprintln(os.Stderr, "error:", err)
		os.Exit(1)
	}
}

func newRootCommand() *cobra.Command {
	root := &cobra.Command{
		Use:           "cluster-samples-operator",
		Short:         "Installs and keeps in place the sample ImageStreams and Templates of the openshift namespace",
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	// klog's flags (-v, --vmodule, ...) on every command, registered on a fresh set each time so
	// that tests may build the command tree more than once.
	klogFlags := flag.NewFlagSet("klog", flag.ContinueOnError)
	klog.InitFlags(klogFlags)
	root.PersistentFlags().AddGoFlagSet(klogFlags)
	operator := newOperatorCommand()
	root.AddCommand(operator, newInventoryCommand())
	root.AddCommand(newBundleCommand()) // OLM bundle (bundle.go)
	// Running the binary with no subcommand runs the operator, as the Deployment does.
	root.RunE = operator.RunE
	root.Flags().AddFlagSet(operator.Flags())
	return root
}
