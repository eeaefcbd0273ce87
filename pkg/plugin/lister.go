package plugin

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"

	"golang.org/x/sync/errgroup"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/tools/pager"
)

// pageSize: pages keep a report's memory flat however many objects a cluster holds.
const pageSize = 500

// namespaceReaders is how many namespaces of one kind are listed at once when the caller may not
// list the kind in all of them.
const namespaceReaders = 8

// lister lists a kind across the namespaces the caller may see: all at once when allowed,
// otherwise namespace by namespace. What it could not list is reported, never taken as empty;
// a kind the cluster does not serve has nothing to list, and is neither.
type lister struct {
	c *clients
	// namespaces named with -n; nil lists every namespace.
	namespaces []string

	visibleOnce  sync.Once
	visible      []string
	visibleWhy   string
	onlyProjects bool

	mu         sync.Mutex
	discovered map[schema.GroupVersion]*discoveredResources
	notServed  []string
}

// discoveredResources is what discovery said of one group version, asked once.
type discoveredResources struct {
	once sync.Once
	// unknown: discovery could not tell.
	unknown   bool
	resources []string
}

// listFunc lists one page of a kind in a namespace ("" for all).
type listFunc func(ctx context.Context, namespace string, opts metav1.ListOptions) (runtime.Object, error)

// served says whether discovery shows the cluster serving the resource. Discovery that cannot
// tell (it failed) counts as served: the list then says whether the kind is there, and a
// failure to read it is not seen.
func (l *lister) served(gvr schema.GroupVersionResource) bool {
	l.mu.Lock()
	if l.discovered == nil {
		l.discovered = map[schema.GroupVersion]*discoveredResources{}
	}
	d := l.discovered[gvr.GroupVersion()]
	if d == nil {
		d = &discoveredResources{}
		l.discovered[gvr.GroupVersion()] = d
	}
	l.mu.Unlock()
	d.once.Do(func() {
		list, err := l.c.kube.Discovery().ServerResourcesForGroupVersion(gvr.GroupVersion().String())
		switch {
		case err == nil:
			for _, r := range list.APIResources {
				d.resources = append(d.resources, r.Name)
			}
		case !apierrors.IsNotFound(err): // NotFound: the group version is not served
			d.unknown = true
		}
	})
	return d.unknown || slices.Contains(d.resources, gvr.Resource)
}

// notServedBy records that the cluster does not serve resource: no object of it to count.
func (l *lister) notServedBy(resource string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if !slices.Contains(l.notServed, resource) {
		l.notServed = append(l.notServed, resource)
	}
}

// notServedKinds are the resources found not served, in the order found.
func (l *lister) notServedKinds() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return slices.Clone(l.notServed)
}

// each calls fn with every object of the kind it could list; notSeen says what it could not.
// A kind the list finds not served is recorded as such (notServedKinds), not as unseen.
// Errors that leave nothing to report (the cluster cannot be reached) are returned.
func (l *lister) each(ctx context.Context, resource string, list listFunc, fn func(runtime.Object)) (notSeen []string, err error) {
	namespaces := l.namespaces
	if namespaces == nil {
		err := l.page(ctx, "", list, fn)
		switch {
		case err == nil:
			return nil, nil
		case !apierrors.IsForbidden(err):
			return l.unseen(resource, "", err)
		}
		var why string
		if namespaces, why = l.visibleNamespaces(ctx); why != "" {
			return []string{fmt.Sprintf("%s: you may not list them in all namespaces, and %s (name namespaces with -n)", resource, why)}, nil
		}
		if l.onlyProjects {
			notSeen = append(notSeen, fmt.Sprintf("%s outside your projects: you may not list them in all namespaces, nor list namespaces", resource))
		}
	}
	// One namespace after another would take a round trip each: a few readers at a time take
	// the namespaces in turn, fn one call at a time.
	var mu sync.Mutex
	locked := func(obj runtime.Object) {
		mu.Lock()
		defer mu.Unlock()
		fn(obj)
	}
	errs := make([]error, len(namespaces))
	var g errgroup.Group
	g.SetLimit(namespaceReaders)
	for i, ns := range namespaces {
		g.Go(func() error {
			errs[i] = l.page(ctx, ns, list, locked)
			return nil
		})
	}
	_ = g.Wait() // every reader's error is in errs
	var forbidden []string
	for i, err := range errs {
		switch {
		case err == nil:
		case apierrors.IsForbidden(err):
			forbidden = append(forbidden, namespaces[i])
		default:
			unseen, err := l.unseen(resource, namespaces[i], err)
			if err != nil {
				return nil, err
			}
			notSeen = append(notSeen, unseen...)
		}
	}
	if len(forbidden) > 0 {
		notSeen = append(notSeen, fmt.Sprintf("%s in %s: forbidden", resource, namespacesPhrase(forbidden)))
	}
	return notSeen, nil
}

// unseen classes a list error: a kind the cluster does not serve (the list's NotFound) has no
// object to miss; one it cannot serve now is not seen; anything else ends the verb.
func (l *lister) unseen(resource, namespace string, err error) ([]string, error) {
	switch {
	case apierrors.IsNotFound(err):
		l.notServedBy(resource)
		return nil, nil
	case apierrors.IsServiceUnavailable(err) || apierrors.IsTimeout(err) || apierrors.IsServerTimeout(err) || apierrors.IsTooManyRequests(err):
		where := "all namespaces"
		if namespace != "" {
			where = "namespace " + namespace
		}
		return []string{fmt.Sprintf("%s in %s: the server did not answer (%v)", resource, where, err)}, nil
	}
	return nil, requestError("list "+resource, err)
}

func (l *lister) page(ctx context.Context, namespace string, list listFunc, fn func(runtime.Object)) error {
	p := pager.New(func(ctx context.Context, opts metav1.ListOptions) (runtime.Object, error) {
		return list(ctx, namespace, opts)
	})
	p.PageSize = pageSize
	return p.EachListItem(ctx, metav1.ListOptions{}, func(obj runtime.Object) error {
		fn(obj)
		return nil
	})
}

// visibleNamespaces are the namespaces the caller may list, or else the projects they may see
// (OpenShift lists a user's projects even when namespaces are forbidden: onlyProjects is then
// true, as the other namespaces were not looked in); why says why neither could be had.
func (l *lister) visibleNamespaces(ctx context.Context) ([]string, string) {
	l.visibleOnce.Do(func() {
		var err error
		if l.visible, err = l.namespaceNames(ctx); err == nil {
			return
		}
		if l.visible, err = l.names(ctx, func(ctx context.Context, _ string, opts metav1.ListOptions) (runtime.Object, error) {
			return l.c.project.ProjectV1().Projects().List(ctx, opts)
		}); err == nil {
			l.onlyProjects = true
			return
		}
		l.visibleWhy = "you may list neither namespaces nor projects"
	})
	return l.visible, l.visibleWhy
}

// namespaceNames are the names of every namespace of the cluster.
func (l *lister) namespaceNames(ctx context.Context) ([]string, error) {
	return l.names(ctx, func(ctx context.Context, _ string, opts metav1.ListOptions) (runtime.Object, error) {
		return l.c.kube.CoreV1().Namespaces().List(ctx, opts)
	})
}

// names are the names of the objects list lists.
func (l *lister) names(ctx context.Context, list listFunc) ([]string, error) {
	var names []string
	err := l.page(ctx, "", list, func(obj runtime.Object) {
		if m, ok := obj.(metav1.Object); ok {
			names = append(names, m.GetName())
		}
	})
	if err != nil {
		return nil, err
	}
	return names, nil
}

// namespacesPhrase names up to five namespaces and counts the rest.
func namespacesPhrase(ns []string) string {
	ns = slices.Sorted(slices.Values(ns))
	const named = 5
	word := "namespace"
	if len(ns) > 1 {
		word = "namespaces"
	}
	if len(ns) <= named {
		return word + " " + strings.Join(ns, ", ")
	}
	return fmt.Sprintf("%d namespaces (%s, ...)", len(ns), strings.Join(ns[:named], ", "))
}
