// Package plugin is `kubectl samples` (`oc samples`): what each sample is doing, who uses it,
// and the Config edits and import retries an admin makes from that. It works with the caller's
// kubeconfig and RBAC, so that the operator needs no read of workloads; what the caller may not
// see is reported as not seen, never as unused. The answers are computed by pkg/samplereport and
// pkg/sampleusage; this package reads the cluster, prints, and writes the Config.
package plugin

import (
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/samples-operator-dev/cluster-samples-operator/pkg/sampleusage"
)

// Output formats of -o.
const (
	outputTable = "table"
	outputWide  = "wide"
	outputJSON  = "json"
	outputYAML  = "yaml"
)

// options are the flags every verb has.
type options struct {
	out, errOut io.Writer
	kubeconfig  clientcmd.ClientConfig
	output      string
	timeout     time.Duration
	okd         bool
	namespaces  []string
	clients     *clients
}

// Main runs the plugin with args (without the program name) and returns its exit status.
func Main(args []string, out, errOut io.Writer) int {
	return run(&options{out: out, errOut: errOut}, args)
}

// run runs the command tree on o (whose clients a test may have set) and returns the exit status.
func run(o *options, args []string) int {
	cmd := newCommand(o)
	cmd.SetArgs(args)
	err := cmd.ExecuteContext(context.Background())
	if err == nil {
		return ExitOK
	}
	code := ExitUsage // Cobra's own errors: unknown flags, verbs, argument counts
	var exit *exitError
	if errors.As(err, &exit) {
		if code = exit.code; exit.err.Error() == "" {
			return code // the verb printed its answer
		}
		err = exit.err
	}
	o.printError(err, code, exit)
	return code
}

// errorReport is what an error prints on stdout under -o json and yaml: a script reading the
// output gets an object, never a table or nothing. The error's line goes to stderr still.
type errorReport struct {
	Error      string            `json:"error"`
	ExitStatus int               `json:"exitStatus"`
	Users      []sampleusage.Use `json:"users,omitempty"`
	NotSeen    []string          `json:"notSeen,omitempty"`
}

func (o *options) printError(err error, code int, exit *exitError) {
	r := errorReport{Error: err.Error(), ExitStatus: code}
	if exit != nil && exit.found != nil {
		r.Users, r.NotSeen = exit.found.users, exit.found.notSeen
	}
	if o.output == outputJSON || o.output == outputYAML {
		_, _ = o.printStructured(r)
	} else if exit != nil && exit.found != nil {
		writeUsers(o.out, r.Users)
		printNotSeen(o.out, r.NotSeen)
	}
	fmt.Fprintln(o.errOut, "error:", err)
}

// newCommand is the command tree.
func newCommand(o *options) *cobra.Command {
	root := &cobra.Command{
		Use:   "kubectl-samples",
		Short: "What every OpenShift sample imagestream and template is doing, and who uses it",
		Long: `kubectl samples (oc samples) reports on the samples the cluster-samples-operator installs
in the openshift namespace, with your kubeconfig and your permissions.

Exit status: 0 when all is well, 1 when something reported is failing (an import, a skip
refused, something you may not see), 2 on a usage or connection error.`,
		SilenceUsage:  true,
		SilenceErrors: true,
		PersistentPreRunE: func(cmd *cobra.Command, _ []string) error {
			if !slices.Contains([]string{outputTable, outputWide, outputJSON, outputYAML}, o.output) {
				return usageErrorf("-o %q: use table, wide, json or yaml", o.output)
			}
			if f := cmd.Flags().Lookup("namespace"); f != nil && f.Changed {
				var err error
				o.namespaces, err = namedNamespaces(o.namespaces)
				return err
			}
			return nil
		},
	}
	flags := root.PersistentFlags()
	loading := clientcmd.NewDefaultClientConfigLoadingRules()
	overrides := &clientcmd.ConfigOverrides{}
	flags.StringVar(&loading.ExplicitPath, "kubeconfig", "", "path to the kubeconfig file")
	clientcmd.BindOverrideFlags(overrides, flags, clientcmd.ConfigOverrideFlags{
		AuthOverrideFlags: clientcmd.RecommendedAuthOverrideFlags(""),
		ClusterOverrideFlags: clientcmd.ClusterOverrideFlags{
			APIServer:             clientcmd.FlagInfo{LongName: "server", ShortName: "s", Description: "the address of the API server"},
			CertificateAuthority:  clientcmd.FlagInfo{LongName: "certificate-authority", Description: "path to a CA file"},
			InsecureSkipTLSVerify: clientcmd.FlagInfo{LongName: "insecure-skip-tls-verify", Default: "false", Description: "do not check the server's certificate"},
		},
		ContextOverrideFlags: clientcmd.ContextOverrideFlags{},
		CurrentContext:       clientcmd.FlagInfo{LongName: "context", Description: "the kubeconfig context to use"},
	})
	o.kubeconfig = clientcmd.NewNonInteractiveDeferredLoadingClientConfig(loading, overrides)
	flags.StringVarP(&o.output, "output", "o", outputTable, "output format: table, wide, json or yaml")
	flags.DurationVar(&o.timeout, "request-timeout", 30*time.Second, "how long to wait for each request")
	root.CompletionOptions.DisableDefaultCmd = true
	root.AddCommand(o.statusCommand(), o.usageCommand(), o.skipCommand(true), o.skipCommand(false), o.retryImportsCommand())
	return root
}

// connect builds the caller's clients once.
func (o *options) connect() error {
	if o.clients != nil {
		return nil
	}
	c, err := newClients(o.kubeconfig, o.timeout)
	if err != nil {
		return err
	}
	o.clients = c
	return nil
}

// addNamespaceFlag: -n limits the workloads read to the namespaces named.
func (o *options) addNamespaceFlag(fs *pflag.FlagSet, help string) {
	fs.StringSliceVarP(&o.namespaces, "namespace", "n", nil, help)
}

// namedNamespaces are the names -n gave, trimmed ("-n 'a, b'"). A -n that names no namespace,
// or an empty one, is refused: "-n $NS" with NS unset would otherwise look nowhere and find no
// user.
func namedNamespaces(namespaces []string) ([]string, error) {
	if len(namespaces) == 0 {
		return nil, usageErrorf("-n names no namespace (an unset variable?): name one, or leave -n out to look in every namespace you may see")
	}
	named := make([]string, len(namespaces))
	for i, ns := range namespaces {
		if named[i] = strings.TrimSpace(ns); named[i] == "" {
			return nil, usageErrorf("-n %q: a namespace name is empty", strings.Join(namespaces, ","))
		}
	}
	return named, nil
}

func (o *options) addOKDFlag(fs *pflag.FlagSet) {
	fs.BoolVar(&o.okd, "okd", false, "the cluster runs OKD's samples (community images) rather than OCP's")
}
