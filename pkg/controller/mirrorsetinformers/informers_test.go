package mirrorsetinformers

import (
	"context"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	configv1 "github.com/openshift/api/config/v1"
	operatorv1alpha1 "github.com/openshift/api/operator/v1alpha1"
	configfake "github.com/openshift/client-go/config/clientset/versioned/fake"
	configinformers "github.com/openshift/client-go/config/informers/externalversions"
	operatorfake "github.com/openshift/client-go/operator/clientset/versioned/fake"
	operatorinformers "github.com/openshift/client-go/operator/informers/externalversions"
	operatorlisters "github.com/openshift/client-go/operator/listers/operator/v1alpha1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/tools/cache"

	"github.com/samples-operator-dev/cluster-samples-operator/pkg/mirrorsets"
)

// forbiddenPolicies is an ImageContentSourcePolicy informer whose every list is forbidden, as on a
// cluster whose ClusterRole for the operator lacks the deprecated kind.
type forbiddenPolicies struct{ informer cache.SharedIndexInformer }

func newForbiddenPolicies() forbiddenPolicies {
	gr := schema.GroupResource{Group: "operator.openshift.io", Resource: "imagecontentsourcepolicies"}
	lw := &cache.ListWatch{
		ListWithContextFunc: func(context.Context, metav1.ListOptions) (runtime.Object, error) {
			return nil, apierrors.NewForbidden(gr, "", nil)
		},
		WatchFuncWithContext: func(context.Context, metav1.ListOptions) (watch.Interface, error) {
			return nil, apierrors.NewForbidden(gr, "", nil)
		},
	}
	return forbiddenPolicies{cache.NewSharedIndexInformer(lw, &operatorv1alpha1.ImageContentSourcePolicy{}, 0, cache.Indexers{cache.NamespaceIndex: cache.MetaNamespaceIndexFunc})}
}

func (f forbiddenPolicies) Informer() cache.SharedIndexInformer { return f.informer }
func (f forbiddenPolicies) Lister() operatorlisters.ImageContentSourcePolicyLister {
	return operatorlisters.NewImageContentSourcePolicyLister(f.informer.GetIndexer())
}

// TestAKindThatCannotBeListedLeavesTheOthersRead: with ImageContentSourcePolicies forbidden, the
// mirror sets settle on the ImageTagMirrorSets and ImageDigestMirrorSets that can be read (they
// used to count as not synced, and the install decided without any mirror set), the forbidden
// kind is named, and subscribers are told.
func TestAKindThatCannotBeListedLeavesTheOthersRead(t *testing.T) {
	itms := &configv1.ImageTagMirrorSet{ObjectMeta: metav1.ObjectMeta{Name: "tags"}}
	idms := &configv1.ImageDigestMirrorSet{ObjectMeta: metav1.ObjectMeta{Name: "digests"}, Spec: configv1.ImageDigestMirrorSetSpec{
		ImageDigestMirrors: []configv1.ImageDigestMirrors{{Source: "registry.redhat.io", Mirrors: []configv1.ImageMirror{"mirror.local/rh"}}}}}
	factory := configinformers.NewSharedInformerFactory(configfake.NewSimpleClientset(itms, idms), 0)
	i := New(factory.Config().V1().ImageTagMirrorSets(), factory.Config().V1().ImageDigestMirrorSets(), newForbiddenPolicies())
	var told atomic.Int32
	if err := i.OnChange(func() { told.Add(1) }); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	factory.Start(ctx.Done())
	go i.ContentPolicy.Informer().RunWithContext(ctx)
	if err := wait.PollUntilContextCancel(ctx, 10*time.Millisecond, true, func(context.Context) (bool, error) { return i.Settled(), nil }); err != nil {
		t.Fatalf("never settled: unreadable %v", i.Unreadable())
	}
	sets, err := i.Sets()
	if err != nil {
		t.Fatal(err)
	}
	if len(sets.Tag) != 1 || len(sets.Digest) != 1 || len(sets.ContentPolicy) != 0 {
		t.Errorf("sets %d tag, %d digest, %d content policy; want 1, 1, 0", len(sets.Tag), len(sets.Digest), len(sets.ContentPolicy))
	}
	if got := i.Unreadable(); len(got) != 1 || !strings.HasPrefix(got[0], mirrorsets.KindContentPolicy+" (") || !strings.Contains(got[0], "forbidden") {
		t.Errorf("unreadable %q, want the ImageContentSourcePolicies, forbidden", got)
	}
	if !mirrorsets.NewResolver(sets).Resolve("registry.redhat.io/ubi9/python-312@sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef").Mirrored() {
		t.Error("the digest mirror set that can be read does not route the image")
	}
	if told.Load() == 0 {
		t.Error("subscribers were not told when the mirror sets were read")
	}
}

// TestSubscribersHearWhenNoMirrorSetIsRead: a cluster without mirror sets lists none, and a list
// of nothing delivers no event. The install decision waits for the mirror sets, so it must still
// be told when they are read, not find out by looking again later.
func TestSubscribersHearWhenNoMirrorSetIsRead(t *testing.T) {
	factory := configinformers.NewSharedInformerFactory(configfake.NewSimpleClientset(), 0)
	i := New(factory.Config().V1().ImageTagMirrorSets(), factory.Config().V1().ImageDigestMirrorSets(), nil)
	told := make(chan struct{}, 10)
	if err := i.OnChange(func() { told <- struct{}{} }); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	factory.Start(ctx.Done())
	go i.NotifyWhenSettled(ctx)
	select {
	case <-told:
		if !i.Settled() {
			t.Error("told before the mirror sets were read")
		}
	case <-ctx.Done():
		t.Fatal("never told that the mirror sets were read")
	}
}

// TestEveryKindThatIsReadIsListedAndHeard: with all three kinds served, each one's sets are
// listed and a change of any of them reaches the subscribers; none is unreadable, not even before
// the first list.
func TestEveryKindThatIsReadIsListedAndHeard(t *testing.T) {
	configs := configfake.NewSimpleClientset(&configv1.ImageTagMirrorSet{ObjectMeta: metav1.ObjectMeta{Name: "tags"}},
		&configv1.ImageDigestMirrorSet{ObjectMeta: metav1.ObjectMeta{Name: "digests"}})
	operators := operatorfake.NewSimpleClientset(&operatorv1alpha1.ImageContentSourcePolicy{ObjectMeta: metav1.ObjectMeta{Name: "policies"}})
	configFactory := configinformers.NewSharedInformerFactory(configs, 0)
	operatorFactory := operatorinformers.NewSharedInformerFactory(operators, 0)
	i := New(configFactory.Config().V1().ImageTagMirrorSets(), configFactory.Config().V1().ImageDigestMirrorSets(),
		operatorFactory.Operator().V1alpha1().ImageContentSourcePolicies())
	var told atomic.Int32
	if err := i.OnChange(func() { told.Add(1) }); err != nil {
		t.Fatal(err)
	}
	if got := i.Unreadable(); len(got) != 0 {
		t.Errorf("before the first list: unreadable %q, want none", got)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	configFactory.Start(ctx.Done())
	operatorFactory.Start(ctx.Done())
	if err := wait.PollUntilContextCancel(ctx, 10*time.Millisecond, true, func(context.Context) (bool, error) { return i.Settled(), nil }); err != nil {
		t.Fatal("never settled")
	}
	sets, err := i.Sets()
	if err != nil || len(sets.Tag) != 1 || len(sets.Digest) != 1 || len(sets.ContentPolicy) != 1 {
		t.Errorf("sets %d tag, %d digest, %d content policy (%v); want one of each", len(sets.Tag), len(sets.Digest), len(sets.ContentPolicy), err)
	}
	before := told.Load()
	if _, err := configs.ConfigV1().ImageDigestMirrorSets().Create(ctx, &configv1.ImageDigestMirrorSet{ObjectMeta: metav1.ObjectMeta{Name: "more"}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := wait.PollUntilContextCancel(ctx, 10*time.Millisecond, true, func(context.Context) (bool, error) { return told.Load() > before, nil }); err != nil {
		t.Error("a new ImageDigestMirrorSet was not heard")
	}
}

// TestOnlyTheTagMirrorSetsOnAClusterWithoutTheOthers: the kinds not given are not read.
func TestOnlyTheTagMirrorSetsOnAClusterWithoutTheOthers(t *testing.T) {
	factory := configinformers.NewSharedInformerFactory(configfake.NewSimpleClientset(&configv1.ImageTagMirrorSet{ObjectMeta: metav1.ObjectMeta{Name: "tags"}}), 0)
	i := New(factory.Config().V1().ImageTagMirrorSets(), nil, nil)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	factory.Start(ctx.Done())
	if !cache.WaitForCacheSync(ctx.Done(), i.Settled) {
		t.Fatal("never settled")
	}
	if sets, err := i.Sets(); err != nil || len(sets.Tag) != 1 || sets.Digest != nil || sets.ContentPolicy != nil {
		t.Errorf("sets %+v (%v), want the one tag mirror set", sets, err)
	}
}

// TestAKindBecomesUnreadableOnce: the first lasting refusal of a kind is news, the next is not.
func TestAKindBecomesUnreadableOnce(t *testing.T) {
	l := &listErrors{byKind: map[string]error{}}
	forbidden := apierrors.NewForbidden(schema.GroupResource{Group: "config.openshift.io", Resource: "imagedigestmirrorsets"}, "", nil)
	if !l.set(mirrorsets.KindDigest, forbidden) {
		t.Error("the first refusal did not make the kind unreadable")
	}
	if l.set(mirrorsets.KindDigest, forbidden) {
		t.Error("the second refusal made the kind unreadable again")
	}
}
