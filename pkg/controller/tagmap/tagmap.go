// Package tagmap keeps the imagestreamtag-to-image ConfigMap in the operator namespace: every
// inventory tag's source image (key <imagestream>_<tag>), as the inventory names it, before any
// samplesRegistry override. It is what an admin of a disconnected cluster mirrors from, so it is
// kept whatever the management state, Removed included.
package tagmap

import (
	"context"
	"maps"

	samplesinformers "github.com/openshift/client-go/samples/informers/externalversions/samples/v1"
	sampleslisters "github.com/openshift/client-go/samples/listers/samples/v1"
	"github.com/openshift/library-go/pkg/controller/factory"
	"github.com/openshift/library-go/pkg/operator/events"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	coreinformers "k8s.io/client-go/informers/core/v1"
	coreclient "k8s.io/client-go/kubernetes/typed/core/v1"

	"github.com/samples-operator-dev/cluster-samples-operator/pkg/configspec"
	"github.com/samples-operator-dev/cluster-samples-operator/pkg/controller/eventfilter"
	"github.com/samples-operator-dev/cluster-samples-operator/pkg/controller/ownwrites"
	"github.com/samples-operator-dev/cluster-samples-operator/pkg/desired"
	"github.com/samples-operator-dev/cluster-samples-operator/pkg/imports"
	"github.com/samples-operator-dev/cluster-samples-operator/pkg/names"
)

// Controller writes the tag-to-image map.
type Controller struct {
	version     string
	goarch      string
	inventories configspec.Inventories
	configs     sampleslisters.ConfigLister
	client      coreclient.ConfigMapInterface
	// configMaps shows the ConfigMap as this controller last wrote it until the informer shows
	// as much: a sync in between (the Config's status moves often during the initial sync) must
	// not create it again.
	configMaps *ownwrites.Cache[*corev1.ConfigMap]
}

// New wires the controller.
func New(version, goarch string, inventories configspec.Inventories, configInformer samplesinformers.ConfigInformer,
	configMapInformer coreinformers.ConfigMapInformer, coreClient coreclient.CoreV1Interface, recorder events.Recorder) factory.Controller {
	c := newController(version, goarch, inventories, configInformer, configMapInformer, coreClient)
	return factory.New().
		WithSync(c.sync).
		WithInformers(configInformer.Informer()).
		WithFilteredEventsInformers(eventfilter.NamesFilter(imports.TagToImageName), configMapInformer.Informer()).
		WithPostStartHooks(func(ctx context.Context, syncCtx factory.SyncContext) error {
			syncCtx.Queue().Add(factory.DefaultQueueKey)
			return nil
		}).
		ToController("TagToImageController", recorder)
}

// newController is the controller New wires, apart so that tests can sync it by hand.
func newController(version, goarch string, inventories configspec.Inventories, configInformer samplesinformers.ConfigInformer,
	configMapInformer coreinformers.ConfigMapInformer, coreClient coreclient.CoreV1Interface) *Controller {
	return &Controller{
		version:     version,
		goarch:      goarch,
		inventories: inventories,
		configs:     configInformer.Lister(),
		configMaps:  ownwrites.New[*corev1.ConfigMap](configMapInformer.Informer(), names.OperatorNamespace, corev1.Resource("configmaps")),
		client:      coreClient.ConfigMaps(names.OperatorNamespace),
	}
}

func (c *Controller) sync(ctx context.Context, syncCtx factory.SyncContext) error {
	arch := configspec.ArchitectureForGOARCH(c.goarch)
	if cfg, err := c.configs.Get(names.ConfigName); err == nil && configspec.Architecture(&cfg.Spec) != "" {
		arch = configspec.Architecture(&cfg.Spec)
	}
	inv, err := c.inventories.For(arch)
	if err != nil {
		return nil // no inventory, nothing to mirror
	}
	want := imports.TagToImageConfigMap(names.OperatorNamespace, c.version, inv.TagToImage())
	live, unseen, err := c.configMaps.Get(imports.TagToImageName)
	switch {
	case apierrors.IsNotFound(err):
		created, err := c.client.Create(ctx, want, metav1.CreateOptions{})
		if err == nil {
			c.configMaps.Wrote(created)
		}
		if apierrors.IsAlreadyExists(err) {
			return nil // its add event brings the controller back
		}
		return err
	case err != nil:
		return err
	case unseen:
		// Created by an earlier sync; its add event brings the controller back, and should the
		// map have been deleted meanwhile, so does this.
		syncCtx.Queue().AddAfter(syncCtx.QueueKey(), ownwrites.Recheck)
	}
	if maps.Equal(live.Data, want.Data) && live.Annotations[desired.VersionAnnotation] == c.version {
		return nil
	}
	updated := live.DeepCopy()
	updated.Data = want.Data
	if updated.Annotations == nil {
		updated.Annotations = map[string]string{}
	}
	updated.Annotations[desired.VersionAnnotation] = c.version
	written, err := c.client.Update(ctx, updated, metav1.UpdateOptions{})
	if err == nil {
		c.configMaps.Wrote(written)
	}
	return err
}
