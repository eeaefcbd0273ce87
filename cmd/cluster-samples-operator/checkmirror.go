package main

import (
	"context"
	"fmt"
	"time"

	"github.com/google/go-containerregistry/pkg/authn"
	"github.com/spf13/cobra"

	"github.com/samples-operator-dev/cluster-samples-operator/pkg/inventory"
	"github.com/samples-operator-dev/cluster-samples-operator/pkg/mirrorcheck"
)

// checkMirrorOptions are the flags of `inventory check-mirror` besides the inventory's.
type checkMirrorOptions struct {
	mirrorSets []string
	authFile   string
	caFile     string
	insecure   bool
	output     string
	parallel   int
	timeout    time.Duration
}

// newInventoryCheckMirrorCommand returns `inventory check-mirror`, which asks a mirror for every
// image of the inventory before a disconnected cluster relies on it (pkg/mirrorcheck).
func newInventoryCheckMirrorCommand(o *inventoryOptions) *cobra.Command {
	c := &checkMirrorOptions{}
	cmd := &cobra.Command{
		Use:   "check-mirror (--mirror-sets PATH... | --registry HOST[:PORT][/PATH])",
		Short: "Check that a mirror holds every image of the inventory",
		Long: `Ask a mirror for every image of the inventory (of --arch, or the pinned tree of
--inventory-dir) and print which are present and which are missing.

The mirror is given as the cluster will use it, either way:
  --mirror-sets PATH   the ImageTagMirrorSets, ImageDigestMirrorSets or
                       ImageContentSourcePolicies oc-mirror wrote (files, or a
                       directory such as oc-mirror's cluster-resources); each image
                       is looked for on the mirrors openshift-apiserver would try,
                       in order, and is present when any of them has it
  --registry VALUE     a samplesRegistry value; each image is looked for where the
                       operator's rewrite points it

Only the mirrors are contacted, never the images' own registries. Credentials come
from --authfile (a docker or containers auth file, or the cluster's pull secret as
'oc get secret pull-secret -n openshift-config -o json' prints it), otherwise from
the default docker and containers auth files. The exit status is 1 when any image
is missing, is covered by no mirror set, or could not be checked.`,
		Example: `  cluster-samples-operator inventory check-mirror --mirror-sets oc-mirror-workspace/working-dir/cluster-resources --authfile pull-secret.json
  cluster-samples-operator inventory check-mirror --registry mirror.example:5000 -o json`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return c.run(cmd, o) },
	}
	f := cmd.Flags()
	f.StringArrayVar(&c.mirrorSets, "mirror-sets", nil, "file or directory of mirror sets (ImageTagMirrorSet, ImageDigestMirrorSet, ImageContentSourcePolicy); repeatable")
	f.StringVar(&c.authFile, "authfile", "", "registry credentials: an auth file ({\"auths\": ...}) or the pull secret as JSON")
	f.StringVar(&c.caFile, "ca-file", "", "PEM file of the mirror's CA, trusted besides the system's")
	f.BoolVar(&c.insecure, "insecure", false, "allow plain HTTP and unverified certificates, for a mirror in the cluster's insecureRegistries")
	f.StringVarP(&c.output, "output", "o", "table", "output format: table or json")
	f.IntVar(&c.parallel, "parallel", 8, "images looked up at a time")
	f.DurationVar(&c.timeout, "timeout", 30*time.Second, "how long one lookup may take")
	return cmd
}

func (c *checkMirrorOptions) run(cmd *cobra.Command, o *inventoryOptions) error {
	if c.output != "table" && c.output != "json" {
		return fmt.Errorf("--output %q is not supported; use table or json", c.output)
	}
	if (len(c.mirrorSets) > 0) == (o.registry != "") {
		return fmt.Errorf("give the mirror either as --mirror-sets or as --registry (a samplesRegistry value)")
	}
	inv, _, err := o.load(cmd)
	if err != nil {
		return err
	}
	var target mirrorcheck.Target
	if o.registry != "" {
		sources := inv.SourceRegistries()
		target = mirrorcheck.SamplesRegistry(func(image string) string { return inventory.RewriteRegistry(image, o.registry, sources) })
	} else {
		sets, err := mirrorcheck.LoadSets(c.mirrorSets)
		if err != nil {
			return fmt.Errorf("--mirror-sets: %w", err)
		}
		target = mirrorcheck.MirrorSets(sets)
	}
	var keychain authn.Keychain = authn.DefaultKeychain
	if c.authFile != "" {
		if keychain, err = mirrorcheck.AuthFileKeychain(c.authFile); err != nil {
			return fmt.Errorf("--authfile: %w", err)
		}
	}
	lookup, err := mirrorcheck.Remote(mirrorcheck.RemoteOptions{Keychain: keychain, CAFile: c.caFile, Insecure: c.insecure, Parallel: c.parallel})
	if err != nil {
		return err
	}
	timed := func(ctx context.Context, ref string) error {
		ctx, cancel := context.WithTimeout(ctx, c.timeout)
		defer cancel()
		return lookup(ctx, ref)
	}
	report := mirrorcheck.Check(cmd.Context(), inv.ImagesToMirrorExcept(o.skippedTagsIn(cmd, inv)), target, timed, c.parallel)
	if c.output == "json" {
		err = report.WriteJSON(cmd.OutOrStdout())
	} else {
		err = report.WriteTable(cmd.OutOrStdout())
	}
	if err != nil {
		return err
	}
	if s := report.Summary; !s.OK() {
		return fmt.Errorf("%d of %d images are not on the mirror", s.Images-s.Present, s.Images)
	}
	return nil
}
