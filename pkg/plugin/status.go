package plugin

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"

	imagev1 "github.com/openshift/api/image/v1"
	"github.com/spf13/cobra"
	"golang.org/x/sync/errgroup"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/samples-operator-dev/cluster-samples-operator/pkg/mirrorsets"
	"github.com/samples-operator-dev/cluster-samples-operator/pkg/samplereport"
)

func (o *options) statusCommand() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "status",
		Short: "One row per sample: managed, skipped, retired or absent, its version and its imports",
		Long: `status lists every sample imagestream and template: whether the operator manages it, an admin
skipped it, an upgrade retired it, or it is absent; the version that wrote it; how many tags
imported and which fail, with the server's reason; on a cluster with mirror sets, the mirror each
tag is imported through. -o wide gives one row per tag, with the architectures each imported
image covers against those of the cluster's nodes. The last line sums it up.

Exit status 1 when a tag fails to import (not a retired stream's: its imports are no longer
tracked), or when something could not be read (named as not seen).`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return o.status(cmd.Context())
		},
	}
	o.addOKDFlag(cmd.Flags())
	return cmd
}

func (o *options) status(ctx context.Context) error {
	v, err := o.readSamples(ctx, true)
	if err != nil {
		return err
	}
	in := samplereport.Input{
		Config: v.cfg, ImageStreams: v.streams, Templates: v.templates,
		InventoryStreams: v.invStreams, InventoryTemplates: v.invTmpl,
	}
	var notSeen []string
	sets, why := o.mirrorSets(ctx)
	in.Mirrors = &sets
	notSeen = append(notSeen, why...)
	if o.output != outputTable {
		// Architectures are read for the per-tag rows (and the structured outputs) only: one GET
		// per imported image.
		in.Images, why = o.images(ctx, v.streams)
		notSeen = append(notSeen, why...)
		in.NodeArchitectures, why = o.nodeArchitectures(ctx)
		notSeen = append(notSeen, why...)
	}
	report := samplereport.Build(in)
	report.NotSeen = notSeen
	if err := o.printStatus(report); err != nil {
		return err
	}
	if report.Failing() || len(report.NotSeen) > 0 {
		return errFailing
	}
	return nil
}

// mirrorSets reads the mirror sets the caller may list; the kinds they may not are named.
func (o *options) mirrorSets(ctx context.Context) (mirrorsets.Sets, []string) {
	var s mirrorsets.Sets
	var notSeen []string
	c := o.clients
	note := func(kind string, err error) {
		// A kind the cluster does not serve has no mirror set to miss.
		if err != nil && !apierrors.IsNotFound(err) {
			notSeen = append(notSeen, fmt.Sprintf("%ss: %v", kind, err))
		}
	}
	if l, err := c.config.ConfigV1().ImageTagMirrorSets().List(ctx, metav1.ListOptions{}); err == nil {
		for i := range l.Items {
			s.Tag = append(s.Tag, &l.Items[i])
		}
	} else {
		note(mirrorsets.KindTag, err)
	}
	if l, err := c.config.ConfigV1().ImageDigestMirrorSets().List(ctx, metav1.ListOptions{}); err == nil {
		for i := range l.Items {
			s.Digest = append(s.Digest, &l.Items[i])
		}
	} else {
		note(mirrorsets.KindDigest, err)
	}
	if l, err := c.operator.OperatorV1alpha1().ImageContentSourcePolicies().List(ctx, metav1.ListOptions{}); err == nil {
		for i := range l.Items {
			s.ContentPolicy = append(s.ContentPolicy, &l.Items[i])
		}
	} else {
		note(mirrorsets.KindContentPolicy, err)
	}
	return s, notSeen
}

// imageReaders: images are read one by one (listing every image of a cluster would read far
// more than the samples'); a few at a time, within the client's rate limit.
const imageReaders = 8

// images reads the image of each imported sample tag.
func (o *options) images(ctx context.Context, streams []*imagev1.ImageStream) (map[string]*imagev1.Image, []string) {
	var names []string
	for _, is := range streams {
		for _, t := range is.Status.Tags {
			if len(t.Items) > 0 && t.Items[0].Image != "" && !slices.Contains(names, t.Items[0].Image) {
				names = append(names, t.Items[0].Image)
			}
		}
	}
	var (
		mu     sync.Mutex
		images = map[string]*imagev1.Image{}
		g      errgroup.Group
	)
	g.SetLimit(imageReaders)
	for _, name := range names {
		g.Go(func() error {
			img, err := o.clients.images.ImageV1().Images().Get(ctx, name, metav1.GetOptions{})
			switch {
			case err == nil:
				mu.Lock()
				defer mu.Unlock()
				images[name] = img
			case apierrors.IsNotFound(err) && isObjectNotFound(err):
				// pruned since the import: nothing to tell
			default:
				return err
			}
			return nil
		})
	}
	if failed := g.Wait(); failed != nil {
		return images, []string{fmt.Sprintf("architectures of imported images: images.image.openshift.io: %v", failed)}
	}
	return images, nil
}

// isObjectNotFound tells a missing image (pruned) from a resource the server does not serve.
func isObjectNotFound(err error) bool {
	status, ok := err.(apierrors.APIStatus)
	return ok && status.Status().Details != nil && status.Status().Details.Name != ""
}

// nodeArchitectures are the architectures of the cluster's nodes.
func (o *options) nodeArchitectures(ctx context.Context) ([]string, []string) {
	archs := []string{}
	l := &lister{c: o.clients}
	err := l.page(ctx, "", func(ctx context.Context, _ string, opts metav1.ListOptions) (runtime.Object, error) {
		return o.clients.kube.CoreV1().Nodes().List(ctx, opts)
	}, func(obj runtime.Object) {
		if node, ok := obj.(*corev1.Node); ok && node.Status.NodeInfo.Architecture != "" && !slices.Contains(archs, node.Status.NodeInfo.Architecture) {
			archs = append(archs, node.Status.NodeInfo.Architecture)
		}
	})
	if err != nil {
		return nil, []string{fmt.Sprintf("architectures of the nodes: %s", strings.TrimSpace(err.Error()))}
	}
	slices.Sort(archs)
	return archs, nil
}
