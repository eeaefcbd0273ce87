package usabilitycontrol

import (
	"context"
	"testing"
	"time"

	configv1 "github.com/openshift/api/config/v1"
	imagev1 "github.com/openshift/api/image/v1"
	operatorv1 "github.com/openshift/api/operator/v1"
	samplesv1 "github.com/openshift/api/samples/v1"
	configlisters "github.com/openshift/client-go/config/listers/config/v1"
	sampleslisters "github.com/openshift/client-go/samples/listers/samples/v1"
	"github.com/openshift/library-go/pkg/controller/factory"
	"github.com/openshift/library-go/pkg/operator/events"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	testingclock "k8s.io/utils/clock/testing"

	"github.com/samples-operator-dev/cluster-samples-operator/pkg/configspec/configspectest"
	"github.com/samples-operator-dev/cluster-samples-operator/pkg/controller/configreader"
	"github.com/samples-operator-dev/cluster-samples-operator/pkg/desired"
	"github.com/samples-operator-dev/cluster-samples-operator/pkg/names"
	"github.com/samples-operator-dev/cluster-samples-operator/test/inventorytest"
)

// BenchmarkSync10x is one sync over the 10x inventory of `make bench`, every stream installed
// and imported, every image read: the sync that runs at each import of a stream and at each
// resync of the streams' informer.
func BenchmarkSync10x(b *testing.B) {
	inv, err := inventorytest.Scaled(10)
	if err != nil {
		b.Fatal(err)
	}
	streams, store := indexer(), &images{archs: map[string]string{}}
	for _, name := range inv.ImageStreamNames() {
		is, _ := inv.ImageStream(name)
		is.Namespace, is.ResourceVersion = names.SamplesNamespace, "1"
		is.Labels = map[string]string{desired.ManagedLabel: "true"}
		for _, tag := range is.Spec.Tags {
			digest := "sha256:" + name + "-" + tag.Name
			store.archs[digest] = "amd64"
			is.Status.Tags = append(is.Status.Tags, imagev1.NamedTagEventList{Tag: tag.Name, Items: []imagev1.TagEvent{{Image: digest}}})
		}
		_ = streams.Add(is)
	}
	c := controllerOver(streams, store, servingAllBut(), testingclock.NewFakeClock(time.Now()))
	scaled := configspectest.X86Only{Inventory: inv}
	cfg := &samplesv1.Config{ObjectMeta: metav1.ObjectMeta{Name: "cluster"}, Spec: samplesv1.ConfigSpec{ManagementState: operatorv1.Managed}}
	image := &configv1.Image{ObjectMeta: metav1.ObjectMeta{Name: "cluster"}}
	c.inventories, c.config = scaled, configreader.New(sampleslisters.NewConfigLister(indexer(cfg)), configlisters.NewImageLister(indexer(image)), scaled)
	c.nodes.Handler(c.nodesChanged).OnAdd(node("node-amd64", "amd64"), true)
	syncCtx := factory.NewSyncContext("bench", events.NewInMemoryRecorder("bench", testingclock.NewFakePassiveClock(time.Now())))
	if err := c.sync(context.Background(), syncCtx); err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		if err := c.sync(context.Background(), syncCtx); err != nil {
			b.Fatal(err)
		}
	}
}
