package plugin

import (
	"context"
	"fmt"
	"slices"

	imagev1 "github.com/openshift/api/image/v1"
	samplesv1 "github.com/openshift/api/samples/v1"
	templatev1 "github.com/openshift/api/template/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/samples-operator-dev/cluster-samples-operator/pkg/inventory"
	"github.com/samples-operator-dev/cluster-samples-operator/pkg/names"
	"github.com/samples-operator-dev/cluster-samples-operator/pkg/samplereport"
	"github.com/samples-operator-dev/cluster-samples-operator/pkg/sampleusage"
)

// configName is the samples Config singleton.
const configName = "cluster"

// samplesView is the Config, the samples on the cluster, and the inventory this plugin was built
// with (the operator of the same release ships the same one).
type samplesView struct {
	cfg        *samplesv1.Config
	streams    []*imagev1.ImageStream
	templates  []*templatev1.Template
	invStreams []*imagev1.ImageStream
	invNames   []string
	invTmpl    []string
	// notRead says what could not be read (the Config, for a developer) and was assumed.
	notRead []string
}

// readSamples reads what every verb needs. Without needConfig, a Config the caller may not read
// is taken as the default one and named in notRead.
func (o *options) readSamples(ctx context.Context, needConfig bool) (*samplesView, error) {
	if err := o.connect(); err != nil {
		return nil, err
	}
	c := o.clients
	v := &samplesView{}
	cfg, err := c.samples.SamplesV1().Configs().Get(ctx, configName, metav1.GetOptions{})
	switch {
	case apierrors.IsNotFound(err):
		return nil, usageErrorf("this cluster has no samples Config (configs.samples.operator.openshift.io/%s): the cluster-samples-operator is not installed, or has not started yet", configName)
	case apierrors.IsForbidden(err) && !needConfig:
		// A developer may read the samples in openshift and no cluster-scoped object: the
		// samples are then named from the live ones and the default inventory.
		v.notRead = append(v.notRead, fmt.Sprintf("the samples Config: you may not read it, so the samples are those on the cluster and the %s inventory's", inventory.ArchX86_64))
		cfg = &samplesv1.Config{}
	case err != nil:
		return nil, requestError("read the samples Config", err)
	}
	v.cfg = cfg
	streams, err := c.images.ImageV1().ImageStreams(names.SamplesNamespace).List(ctx, metav1.ListOptions{})
	if err != nil {
		return nil, requestError("list the imagestreams of "+names.SamplesNamespace, err)
	}
	for i := range streams.Items {
		v.streams = append(v.streams, &streams.Items[i])
	}
	templates, err := c.template.TemplateV1().Templates(names.SamplesNamespace).List(ctx, metav1.ListOptions{})
	if err != nil {
		return nil, requestError("list the templates of "+names.SamplesNamespace, err)
	}
	for i := range templates.Items {
		v.templates = append(v.templates, &templates.Items[i])
	}
	arch := inventory.ArchX86_64
	if len(cfg.Spec.Architectures) > 0 {
		arch = cfg.Spec.Architectures[0]
	}
	dir, err := inventory.ArchDir(arch, o.okd)
	if err != nil {
		return nil, usageErrorf("the Config's architecture: %v", err)
	}
	inv, err := inventory.Embedded(dir)
	if err != nil {
		return nil, usageErrorf("the inventory: %v", err)
	}
	v.invNames, v.invTmpl = inv.ImageStreamNames(), inv.TemplateNames()
	for _, name := range v.invNames {
		if is, ok := inv.ImageStreamForRegistry(name, cfg.Spec.SamplesRegistry); ok {
			v.invStreams = append(v.invStreams, is)
		}
	}
	return v, nil
}

func (v *samplesView) streamNames() []string   { return sampleNames(v.invNames, v.streams) }
func (v *samplesView) templateNames() []string { return sampleNames(v.invTmpl, v.templates) }

// sampleNames are the inventory's names of a kind and the samples of that kind on the cluster
// it lacks, sorted.
func sampleNames[T metav1.Object](inventory []string, live []T) []string {
	names := slices.Clone(inventory)
	for _, o := range live {
		if !slices.Contains(names, o.GetName()) && samplereport.IsSample(o) {
			names = append(names, o.GetName())
		}
	}
	slices.Sort(names)
	return names
}

// known are the names and tags a verb's argument may give.
func (v *samplesView) known() sampleusage.Known {
	k := sampleusage.Known{ImageStreamTags: map[string][]string{}, Templates: v.templateNames()}
	add := func(name, tag string) {
		if !slices.Contains(k.ImageStreamTags[name], tag) {
			k.ImageStreamTags[name] = append(k.ImageStreamTags[name], tag)
		}
	}
	names := v.streamNames()
	for _, n := range names {
		k.ImageStreamTags[n] = nil
	}
	for _, list := range [][]*imagev1.ImageStream{v.invStreams, v.streams} {
		for _, is := range list {
			if _, ok := k.ImageStreamTags[is.Name]; !ok {
				continue
			}
			for _, t := range is.Spec.Tags {
				add(is.Name, t.Name)
			}
			for _, t := range is.Status.Tags {
				add(is.Name, t.Tag)
			}
		}
	}
	for n := range k.ImageStreamTags {
		slices.Sort(k.ImageStreamTags[n])
	}
	return k
}

func (v *samplesView) catalog() *sampleusage.Catalog {
	return sampleusage.NewCatalog(names.SamplesNamespace, v.streamNames(), v.templateNames(), v.streams)
}

// liveStream is the stream of that name on the cluster.
func (v *samplesView) liveStream(name string) *imagev1.ImageStream {
	for _, is := range v.streams {
		if is.Name == name {
			return is
		}
	}
	return nil
}
