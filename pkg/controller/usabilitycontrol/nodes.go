package usabilitycontrol

import (
	"slices"
	"sync"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/tools/cache"
)

// NodeArchitectures keeps the set of the nodes' architectures from a Node informer, and calls
// back only when the set changes: nodes report their status far more often than a cluster gains
// or loses an architecture.
//
// It indexes the nodes its handler was given, not the informer's own store: the informer hands
// its handlers each change after its store has moved on, so the store, read from the handler,
// could not tell which change made an architecture come or go, nor could the verdicts wait on
// the handler's HasSynced and read a store that had nodes the handler was not yet given.
type NodeArchitectures struct {
	mu    sync.Mutex // one change at a time between reading the set before and after it
	nodes cache.Indexer
}

const byArchitecture = "architecture"

// NewNodeArchitectures keeps nothing until it is fed.
func NewNodeArchitectures() *NodeArchitectures {
	return &NodeArchitectures{nodes: cache.NewIndexer(cache.DeletionHandlingMetaNamespaceKeyFunc, cache.Indexers{
		byArchitecture: func(obj any) ([]string, error) {
			if arch := nodeArchitecture(obj); arch != "" {
				return []string{arch}, nil
			}
			return nil, nil
		},
	})}
}

// TrimNode keeps of a Node what the set needs, as an informer transform: its name, its
// resourceVersion (the informer's own bookkeeping) and its architecture, as a TrimmedNode. On a
// large cluster the Node objects are most of what such an informer would otherwise hold.
func TrimNode(obj any) (any, error) {
	switch node := obj.(type) {
	case *corev1.Node:
		return &TrimmedNode{Name: node.Name, ResourceVersion: node.ResourceVersion, Architecture: node.Status.NodeInfo.Architecture}, nil
	case *metav1.PartialObjectMetadata:
		return &TrimmedNode{Name: node.Name, ResourceVersion: node.ResourceVersion, Architecture: node.Labels[corev1.LabelArchStable]}, nil
	}
	return obj, nil // a tombstone, or a node trimmed already
}

// TrimmedNode is what the Nodes informer keeps of a Node: three strings. A corev1.Node with only
// these three fields set still takes 768 bytes, its empty status most of them, and about 1 KB a
// node with the cache's own entry: 5 MB on a cluster of 5,000 nodes, twice over while the
// informer's first list is moved into its cache, where issue 50 allows the Nodes 5 MiB in all.
// Even an empty ObjectMeta takes 232 bytes; the cache reads a TrimmedNode's name through
// GetObjectMeta.
type TrimmedNode struct {
	Name, ResourceVersion, Architecture string
}

// GetObjectMeta is the node's name and resourceVersion, for the cache's key.
func (n *TrimmedNode) GetObjectMeta() metav1.Object {
	return &metav1.ObjectMeta{Name: n.Name, ResourceVersion: n.ResourceVersion}
}

// GetObjectKind: a TrimmedNode is never sent or decoded, and has no kind.
func (n *TrimmedNode) GetObjectKind() schema.ObjectKind { return schema.EmptyObjectKind }

// DeepCopyObject copies the node.
func (n *TrimmedNode) DeepCopyObject() runtime.Object {
	out := *n
	return &out
}

// nodeArchitecture is the architecture of a node as the informer gives it ("": none).
func nodeArchitecture(obj any) string {
	switch node := obj.(type) {
	case *TrimmedNode:
		return node.Architecture
	case *corev1.Node:
		return node.Status.NodeInfo.Architecture
	}
	return ""
}

// Handler feeds the set from a Node informer; changed is called, without the lock, when the
// set of architectures changes.
func (n *NodeArchitectures) Handler(changed func()) cache.ResourceEventHandler {
	set := func(obj any, present bool) {
		if n.apply(obj, present) {
			changed()
		}
	}
	return cache.ResourceEventHandlerFuncs{
		AddFunc:    func(obj any) { set(obj, true) },
		UpdateFunc: func(_, obj any) { set(obj, true) },
		DeleteFunc: func(obj any) { set(obj, false) },
	}
}

// apply records one node (a tombstone deletes by its key) and reports whether the set of
// architectures changed.
func (n *NodeArchitectures) apply(obj any, present bool) bool {
	n.mu.Lock()
	defer n.mu.Unlock()
	before := n.List()
	if present {
		_ = n.nodes.Update(obj) // fails only for an object without a name, which is no node
	} else {
		_ = n.nodes.Delete(obj)
	}
	return !slices.Equal(before, n.List())
}

// List is the architectures of the nodes, sorted; empty when no node reports one (the index
// drops an architecture with its last node).
func (n *NodeArchitectures) List() []string {
	archs := n.nodes.ListIndexFuncValues(byArchitecture)
	slices.Sort(archs)
	return archs
}

// nodesChanged re-judges every tag when the nodes' architectures change: the images not read
// yet, or answered NotFound, are read at once, whatever put their reads off (issue 56: tags
// left unjudged for minutes after the nodes turned arm64).
func (c *Controller) nodesChanged() {
	c.images.LookAgainAll()
	c.resync()
}
