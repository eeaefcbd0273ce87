package main

import (
	"fmt"
	"io"
	"os"
	"runtime"
	"slices"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/samples-operator-dev/cluster-samples-operator/pkg/configspec"
	"github.com/samples-operator-dev/cluster-samples-operator/pkg/inventory"
	"github.com/samples-operator-dev/cluster-samples-operator/pkg/pin"
)

// inventoryDirEnv is read when --inventory-dir is not given.
const inventoryDirEnv = "INVENTORY_DIR"

type inventoryOptions struct {
	arch     string
	okd      bool
	registry string
	dir      string
	format   string
	// skippedTags is the value of the Config's skipped-imagestream-tags annotation.
	skippedTags string
}

// newInventoryCommand returns `inventory`, which inspects the sample inventory offline:
// `inventory list`, `inventory images`, `inventory pin` and `inventory check-mirror`.
func newInventoryCommand() *cobra.Command {
	o := &inventoryOptions{}
	cmd := &cobra.Command{
		Use:   "inventory",
		Short: "Inspect the sample inventory (embedded, or from --inventory-dir)",
		Long: `Inspect the ImageStreams and Templates the operator installs, without a cluster.

The inventory compiled into the binary is used unless --inventory-dir (or the
INVENTORY_DIR environment variable) names a directory with the same layout as
assets/operator: one directory per architecture (ocp-x86_64, ocp-aarch64,
ocp-ppc64le, ocp-s390x, okd-x86_64), each holding <group>/imagestreams/*.json
and <group>/templates/*.json.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return cmd.Help() },
	}
	pf := cmd.PersistentFlags()
	pf.StringVar(&o.arch, "arch", inventory.ConfigArch(runtime.GOARCH),
		"architecture: a spec.architectures value (x86_64, amd64, arm64, ppc64le, s390x) or an inventory directory name such as okd-x86_64")
	pf.BoolVar(&o.okd, "okd", false, "use the OKD (community image) inventory; x86_64 only")
	pf.StringVar(&o.registry, "registry", "", "samplesRegistry override applied to image references, host[:port][/path]")
	pf.StringVar(&o.dir, "inventory-dir", "", "read the inventory from this directory instead of the embedded one (default $"+inventoryDirEnv+")")
	pf.StringVar(&o.skippedTags, "skipped-imagestream-tags", "",
		"STREAM:TAG,... left out of images and check-mirror, as the Config's annotation "+configspec.SkippedImageStreamTagsAnnotation+" skips them")

	list := &cobra.Command{
		Use:   "list",
		Short: "List the imagestreams and templates, with their tags",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			inv, archDir, err := o.load(cmd)
			if err != nil {
				return err
			}
			return writeList(cmd.OutOrStdout(), cmd.ErrOrStderr(), inv, archDir)
		},
	}
	images := &cobra.Command{
		Use:   "images",
		Short: "Print the images to mirror for a disconnected cluster",
		Long: `Print the image references of every DockerImage tag, sorted and de-duplicated.

With --registry the references are shown as the operator will use them after
the samplesRegistry rewrite. --format oc-mirror prints an ImageSetConfiguration
fragment whose additionalImages are the source references to copy.

--skipped-imagestream-tags leaves out the images only skipped tags use; give it the
cluster's list with
  --skipped-imagestream-tags "$(oc get config.samples cluster -o jsonpath='{.metadata.annotations.samples\.operator\.openshift\.io/skipped-imagestream-tags}')"`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if o.format != "plain" && o.format != "oc-mirror" {
				return fmt.Errorf("--format %q is not supported; use plain or oc-mirror", o.format)
			}
			inv, _, err := o.load(cmd)
			if err != nil {
				return err
			}
			return writeImages(cmd.OutOrStdout(), inv.ImagesToMirrorExcept(o.skippedTagsIn(cmd, inv)), inv, o.registry, o.format)
		},
	}
	images.Flags().StringVar(&o.format, "format", "plain", "output format: plain (one reference per line) or oc-mirror (ImageSetConfiguration fragment)")
	cmd.AddCommand(list, images, newInventoryPinCommand(o)) // pin: see the end of this file
	cmd.AddCommand(newInventoryCheckMirrorCommand(o))       // checkmirror.go
	return cmd
}

// load resolves the flags and returns the inventory and the arch directory it came from.
func (o *inventoryOptions) load(cmd *cobra.Command) (*inventory.Inventory, string, error) {
	if err := inventory.ValidateRegistry(o.registry); err != nil {
		return nil, "", fmt.Errorf("--registry: %w", err)
	}
	archDir := o.arch
	if !slices.Contains(inventory.ArchDirs(), archDir) {
		var err error
		if archDir, err = inventory.ArchDir(o.arch, o.okd); err != nil {
			return nil, "", fmt.Errorf("--arch: %w", err)
		}
	} else if o.okd && archDir != inventory.ArchDirOKDX86_64 {
		return nil, "", fmt.Errorf("--okd conflicts with --arch %s", archDir)
	}
	dir := o.dir
	if !cmd.Flags().Changed("inventory-dir") {
		dir = os.Getenv(inventoryDirEnv)
	}
	var inv *inventory.Inventory
	var err error
	if dir != "" {
		inv, err = inventory.LoadDir(dir, archDir)
	} else {
		inv, err = inventory.Embedded(archDir)
	}
	if err != nil {
		return nil, "", fmt.Errorf("loading the %s inventory:\n%w", archDir, err)
	}
	return inv, archDir, nil
}

func writeList(out, summary io.Writer, inv *inventory.Inventory, archDir string) error {
	tw := tabwriter.NewWriter(out, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "KIND\tNAME\tTAGS")
	tags := 0
	for _, name := range inv.ImageStreamNames() {
		is, _ := inv.ImageStream(name)
		names := make([]string, 0, len(is.Spec.Tags))
		for _, t := range is.Spec.Tags {
			names = append(names, t.Name)
		}
		tags += len(names)
		fmt.Fprintf(tw, "ImageStream\t%s\t%s\n", name, strings.Join(names, ","))
	}
	for _, name := range inv.TemplateNames() {
		fmt.Fprintf(tw, "Template\t%s\t-\n", name)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	_, err := fmt.Fprintf(summary, "%s: %d imagestreams (%d tags), %d templates\n",
		archDir, len(inv.ImageStreamNames()), tags, len(inv.TemplateNames()))
	return err
}

// skippedTagsIn parses --skipped-imagestream-tags against inv; what it ignores is said on
// standard error, as the operator says it in ConfigurationValid.
func (o *inventoryOptions) skippedTagsIn(cmd *cobra.Command, inv *inventory.Inventory) func(stream, tag string) bool {
	if o.skippedTags == "" {
		return nil
	}
	skipped, problem := configspec.ParseSkippedTags(o.skippedTags, configspec.InventoryTags(inv))
	if problem != "" {
		fmt.Fprintln(cmd.ErrOrStderr(), "warning: --skipped-imagestream-tags: "+problem)
	}
	return skipped.Has
}

func writeImages(out io.Writer, refs []string, inv *inventory.Inventory, registry, format string) error {
	if format == "oc-mirror" {
		var b strings.Builder
		if registry != "" {
			fmt.Fprintf(&b, "# Mirror these with: oc mirror --config <this file> docker://%s\n", registry)
			fmt.Fprintf(&b, "# The operator then pulls them from %s (spec.samplesRegistry).\n", registry)
		}
		b.WriteString("kind: ImageSetConfiguration\napiVersion: mirror.openshift.io/v1alpha2\nmirror:\n  additionalImages:\n")
		for _, ref := range refs {
			fmt.Fprintf(&b, "  - name: %s\n", ref)
		}
		_, err := io.WriteString(out, b.String())
		return err
	}
	if registry != "" {
		sources := inv.SourceRegistries()
		for i, ref := range refs {
			refs[i] = inventory.RewriteRegistry(ref, registry, sources)
		}
		slices.Sort(refs)
		refs = slices.Compact(refs)
	}
	_, err := io.WriteString(out, strings.Join(refs, "\n")+"\n")
	return err
}

// ---- inventory pin (digest pinning for disconnected clusters; pkg/pin) ----

// newInventoryPinCommand returns `inventory pin`, which writes a copy of the inventory whose
// image references are digests, from a map file made where a registry is reachable.
func newInventoryPinCommand(o *inventoryOptions) *cobra.Command {
	var digestsFile, out string
	var allowUnpinned bool
	cmd := &cobra.Command{
		Use:   "pin --digests FILE --out DIR",
		Short: "Write a copy of the inventory whose image references are digests",
		Long: `Rewrite every DockerImage tag reference of the inventory for --arch to
repository@sha256:... from a map file, without network access, and write the
result to DIR/<arch-dir> in the layout --inventory-dir reads (for the operator,
and for 'make bundle BUNDLE_INVENTORY_DIR=DIR').

The map file has one '<reference> <digest>' pair per line, the reference exactly
as 'inventory images' prints it; blank lines and '#' comments are ignored. For
example, with skopeo:

  cluster-samples-operator inventory images | while read -r ref; do
    echo "$ref $(skopeo inspect --format '{{.Digest}}' "docker://$ref")"
  done > digests.txt

References missing from the map are listed and the command fails, unless
--allow-unpinned keeps them as tags. References that already name a digest are
kept as they are.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if o.registry != "" {
				return fmt.Errorf("--registry does not apply to pin: the pinned inventory keeps the source registries, and samplesRegistry rewrites them on the cluster")
			}
			_, archDir, err := o.load(cmd)
			if err != nil {
				return err
			}
			return runPin(cmd, o.inventoryDir(cmd), archDir, digestsFile, out, allowUnpinned)
		},
	}
	cmd.Flags().StringVar(&digestsFile, "digests", "", "map file of '<reference> <digest>' lines (required)")
	cmd.Flags().StringVar(&out, "out", "", "directory to write <arch-dir>/ into; <arch-dir> must not exist yet (required)")
	cmd.Flags().BoolVar(&allowUnpinned, "allow-unpinned", false, "keep references missing from the map as tags instead of failing")
	_ = cmd.MarkFlagRequired("digests")
	_ = cmd.MarkFlagRequired("out")
	return cmd
}

// inventoryDir is the inventory directory load uses: the flag, else $INVENTORY_DIR.
func (o *inventoryOptions) inventoryDir(cmd *cobra.Command) string {
	if cmd.Flags().Changed("inventory-dir") {
		return o.dir
	}
	return os.Getenv(inventoryDirEnv)
}

func runPin(cmd *cobra.Command, inventoryDir, archDir, digestsFile, out string, allowUnpinned bool) error {
	data, err := os.ReadFile(digestsFile)
	if err != nil {
		return err
	}
	digests, err := pin.ParseDigests(data)
	if err != nil {
		return fmt.Errorf("%s:\n%w", digestsFile, err)
	}
	src, err := pin.Source(inventoryDir)
	if err != nil {
		return err
	}
	r, err := pin.Tree(src, archDir, digests, allowUnpinned)
	if err != nil {
		return err
	}
	if err := pin.WriteTree(out, r.Files); err != nil {
		return err
	}
	if _, err := inventory.LoadDir(out, archDir); err != nil {
		return fmt.Errorf("the pinned inventory does not load:\n%w", err)
	}
	stderr := cmd.ErrOrStderr()
	for _, ref := range r.Unpinned {
		fmt.Fprintf(stderr, "warning: not pinned, no digest in %s: %s\n", digestsFile, ref)
	}
	_, err = fmt.Fprintf(stderr, "%s/%s: %d references pinned, %d already digests, %d left as tags\n",
		strings.TrimSuffix(out, "/"), archDir, len(r.Pinned), len(r.AlreadyPinned), len(r.Unpinned))
	return err
}
