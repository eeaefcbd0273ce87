package operator

import (
	"context"
	"fmt"
	"time"

	operatorv1alpha1 "github.com/openshift/api/operator/v1alpha1"
	operatorlisters "github.com/openshift/client-go/operator/listers/operator/v1alpha1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/tools/cache"
)

var contentPolicies = operatorv1alpha1.GroupVersion.WithResource("imagecontentsourcepolicies")

// contentPolicyInformer watches the cluster's ImageContentSourcePolicies through the dynamic
// client and keeps them typed. The generated informer would link the operator.openshift.io
// clientset, whose scheme registers every type of that group when the process starts: about
// 180 KB of heap and the pages of its code, for one kind, on every cluster.
type contentPolicyInformer struct {
	informer cache.SharedIndexInformer
}

func newContentPolicyInformer(dyn dynamic.Interface, resync time.Duration) *contentPolicyInformer {
	client := dyn.Resource(contentPolicies)
	lw := &cache.ListWatch{
		ListWithContextFunc: func(ctx context.Context, opts metav1.ListOptions) (runtime.Object, error) {
			list, err := client.List(ctx, opts)
			if err != nil {
				return nil, err
			}
			out := &operatorv1alpha1.ImageContentSourcePolicyList{ListMeta: metav1.ListMeta{ResourceVersion: list.GetResourceVersion(), Continue: list.GetContinue()}}
			for i := range list.Items {
				policy, err := typedContentPolicy(&list.Items[i])
				if err != nil {
					return nil, err
				}
				out.Items = append(out.Items, *policy)
			}
			return out, nil
		},
		WatchFuncWithContext: func(ctx context.Context, opts metav1.ListOptions) (watch.Interface, error) {
			w, err := client.Watch(ctx, opts)
			if err != nil {
				return nil, err
			}
			return watch.Filter(w, func(ev watch.Event) (watch.Event, bool) {
				if u, ok := ev.Object.(*unstructured.Unstructured); ok {
					if policy, err := typedContentPolicy(u); err == nil {
						ev.Object = policy
					}
				}
				return ev, true
			}), nil
		},
	}
	inf := cache.NewSharedIndexInformer(lw, &operatorv1alpha1.ImageContentSourcePolicy{}, resync, cache.Indexers{})
	_ = inf.SetTransform(dropManagedFields) // cannot fail before the informer runs
	return &contentPolicyInformer{informer: inf}
}

// typedContentPolicy converts what the dynamic client read.
func typedContentPolicy(u *unstructured.Unstructured) (*operatorv1alpha1.ImageContentSourcePolicy, error) {
	policy := &operatorv1alpha1.ImageContentSourcePolicy{}
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, policy); err != nil {
		return nil, fmt.Errorf("reading ImageContentSourcePolicy %s: %w", u.GetName(), err)
	}
	return policy, nil
}

func (c *contentPolicyInformer) Informer() cache.SharedIndexInformer { return c.informer }

func (c *contentPolicyInformer) Lister() operatorlisters.ImageContentSourcePolicyLister {
	return operatorlisters.NewImageContentSourcePolicyLister(c.informer.GetIndexer())
}
