package main

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"

	"github.com/spf13/cobra"

	"github.com/samples-operator-dev/cluster-samples-operator/pkg/bundle"
	"github.com/samples-operator-dev/cluster-samples-operator/pkg/inventory"
)

type bundleOptions struct {
	manifestsDir  string
	out           string
	arch          string
	inventoryDir  string
	version       string
	operatorImage string
	createdAt     string
}

// newBundleCommand returns `bundle`, which writes the operator's OLM bundle.
func newBundleCommand() *cobra.Command {
	o := &bundleOptions{}
	cmd := &cobra.Command{
		Use:   "bundle",
		Short: "Generate the OLM bundle (ClusterServiceVersion, CRD, metadata, bundle.Dockerfile)",
		Long: `Generate the operator's OLM bundle from manifests/ and the sample inventory.

The ClusterServiceVersion's install strategy is built from the Deployment, service
account and RBAC that manifests/ gives a self-managed cluster; its relatedImages are the
operator's image (tag cluster-samples-operator of manifests/image-references) and every
image of the inventory for --arch. With
--inventory-dir (a tree written by 'inventory pin') the images are digests; with
those and a digest --operator-image, the CSV declares disconnected support.

The command replaces manifests/, metadata/ and bundle.Dockerfile under --out and
nothing else. Nothing is fetched; the same input gives the same files.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return o.run(cmd) },
	}
	f := cmd.Flags()
	f.StringVar(&o.manifestsDir, "manifests-dir", "manifests", "the CVO manifests to build the bundle from")
	f.StringVar(&o.out, "out", "bundle", "the bundle directory to write")
	f.StringVar(&o.arch, "arch", inventory.ArchX86_64, "whose samples' images relatedImages lists: a spec.architectures value or an inventory directory name such as okd-x86_64")
	f.StringVar(&o.inventoryDir, "inventory-dir", "", "read the inventory from this directory (such as a pinned one) instead of the embedded one")
	f.StringVar(&o.version, "version", "", "the CSV's version (default: RELEASE_VERSION of the Deployment in manifests/)")
	f.StringVar(&o.operatorImage, "operator-image", "", "the operator's image (default: tag cluster-samples-operator of manifests/image-references)")
	f.StringVar(&o.createdAt, "created-at", "", "the CSV's createdAt, an RFC 3339 time or a date (default "+bundle.DefaultCreatedAt+", so that the output is reproducible)")
	return cmd
}

func (o *bundleOptions) run(cmd *cobra.Command) error {
	archDir := o.arch
	if !slices.Contains(inventory.ArchDirs(), archDir) {
		var err error
		if archDir, err = inventory.ArchDir(o.arch, false); err != nil {
			return fmt.Errorf("--arch: %w", err)
		}
	}
	var inv *inventory.Inventory
	var err error
	if o.inventoryDir != "" {
		inv, err = inventory.LoadDir(o.inventoryDir, archDir)
	} else {
		inv, err = inventory.Embedded(archDir)
	}
	if err != nil {
		return fmt.Errorf("loading the %s inventory:\n%w", archDir, err)
	}
	images := inv.ImagesToMirror()
	files, err := bundle.Generate(os.DirFS(o.manifestsDir), bundle.Options{
		ArchDir:       archDir,
		Images:        images,
		Version:       o.version,
		OperatorImage: o.operatorImage,
		CreatedAt:     o.createdAt,
	})
	if err != nil {
		return err
	}
	if err := replaceBundle(o.out, files); err != nil {
		return err
	}
	pinned := 0
	for _, ref := range images {
		if bundle.ByDigest(ref) {
			pinned++
		}
	}
	if _, err := fmt.Fprintf(cmd.ErrOrStderr(), "wrote %s: %d related images (the operator and %d of the %s inventory, %d of them digests)\n",
		o.out, len(images)+1, len(images), archDir, pinned); err != nil {
		return err
	}
	// A release bundle built from a pinned inventory but with the operator's tag is an easy
	// slip, and its only sign would be one annotation saying "false".
	if pinned == len(images) && len(images) > 0 && !bundle.ByDigest(o.operatorImage) {
		_, err = fmt.Fprintln(cmd.ErrOrStderr(), "warning: every sample image is a digest but the operator's is not, so the bundle does not declare disconnected support; give --operator-image REPOSITORY@sha256:...")
	}
	return err
}

// replaceBundle removes what the generator owns under dir (manifests/, metadata/,
// bundle.Dockerfile), so that no file of an earlier run lingers, and writes files there.
func replaceBundle(dir string, files map[string][]byte) error {
	for _, p := range []string{"manifests", "metadata", bundle.DockerfileFile} {
		if err := os.RemoveAll(filepath.Join(dir, p)); err != nil {
			return err
		}
	}
	for p, data := range files {
		dst := filepath.Join(dir, filepath.FromSlash(p))
		if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
			return err
		}
		if err := os.WriteFile(dst, data, 0o644); err != nil {
			return err
		}
	}
	return nil
}
