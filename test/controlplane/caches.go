package controlplane

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/wait"
)

// A reset is over once the servers decide from the baseline, not once storage holds it. Most of
// what they decide from they read at the request; some they read from caches that informers
// fill from watches, and those see a reset's deletes a moment after storage does:
// kube-apiserver's ResourceQuota admission, and openshift-apiserver's quota admission on
// ImageStreams and the mirror sets its imports resolve through (ImageTagMirrorSets,
// ImageDigestMirrorSets, ImageContentSourcePolicies). Those are the kinds tests write that
// openshift-apiserver lists and watches (its requests in kube-apiserver's audit log); the
// Image config and a namespace's pull secrets it reads anew at every import (a get of
// images.config.openshift.io/cluster and of the stream's secrets subresource), so no cache of
// theirs lags behind a reset.
//
// No server says how far its informers have read; what it does show, by how it answers, is
// whether its cache holds a given object. So after all its other writes the reset creates a
// marker of each cached kind, waits until every server's answer shows the markers, deletes
// them, and waits until no answer shows them. An informer gets one kind's events in the order
// they were written: a cache that has seen the marker's delete has seen every delete of that
// kind the reset made before it. The answers used: a dry-run create that a quota of zero
// forbids (a dry run is checked against the quotas and charges none), and an ImageStreamImport
// preview (spec.import false: nothing is stored), whose failure names each mirror it tried, the
// markers mirroring sources of their own to a closed loopback port. Waiting on a resourceVersion
// would need the informers' own, which no server exposes; restarting the servers would cost
// seconds. Both round trips take a few milliseconds.

const (
	// resetMarker names the reset's markers; probeNamespace holds those that are namespaced.
	resetMarker    = "control-plane-reset-marker"
	probeNamespace = "default"
	// closedMirror is a loopback port nothing listens on: an import tries the mirror and fails
	// at once.
	closedMirror = "127.0.0.1:1"
)

var (
	resourceQuotaResource = schema.GroupVersionResource{Version: "v1", Resource: "resourcequotas"}
	itmsResource          = schema.GroupVersionResource{Group: "config.openshift.io", Version: "v1", Resource: "imagetagmirrorsets"}
	idmsResource          = schema.GroupVersionResource{Group: "config.openshift.io", Version: "v1", Resource: "imagedigestmirrorsets"}
	icspResource          = schema.GroupVersionResource{Group: "operator.openshift.io", Version: "v1alpha1", Resource: "imagecontentsourcepolicies"}
	isiResource           = schema.GroupVersionResource{Group: "image.openshift.io", Version: "v1", Resource: "imagestreamimports"}
)

// cacheMarker is one marker object and the answer that shows whether a server's cache holds it.
type cacheMarker struct {
	what   string // the cache, for an error
	gvr    schema.GroupVersionResource
	object *unstructured.Unstructured
}

// mirrorMarker mirrors source to a path of its own on closedMirror; the probe imports from
// source by ref.
type mirrorMarker struct {
	cacheMarker
	ref, mirror string
}

const zeroDigest = "@sha256:0000000000000000000000000000000000000000000000000000000000000000"

func (cp *ControlPlane) cacheMarkers() (quota cacheMarker, mirrors []mirrorMarker) {
	hard := map[string]any{"configmaps": "0"}
	if cp.RealOpenShiftAPIServer() {
		hard["openshift.io/imagestreams"] = "0"
	}
	quota = cacheMarker{what: "quota admission", gvr: resourceQuotaResource, object: &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "v1", "kind": "ResourceQuota",
		"metadata": map[string]any{"name": resetMarker, "namespace": probeNamespace},
		"spec":     map[string]any{"hard": hard},
		// Admission judges by the status, which no quota controller fills in here.
		"status": map[string]any{"hard": hard, "used": hard},
	}}}
	if !cp.RealOpenShiftAPIServer() {
		// The stand-ins read the mirror sets at each import.
		return quota, nil
	}
	mirrorSet := func(gvr schema.GroupVersionResource, apiVersion, kind, field, short, ref string) mirrorMarker {
		source := "reset-probe-" + short + ".invalid/probe"
		mirror := closedMirror + "/" + short
		return mirrorMarker{
			cacheMarker: cacheMarker{what: "openshift-apiserver's " + gvr.Resource, gvr: gvr, object: &unstructured.Unstructured{Object: map[string]any{
				"apiVersion": apiVersion, "kind": kind,
				"metadata": map[string]any{"name": resetMarker},
				"spec": map[string]any{field: []any{map[string]any{
					"source": source, "mirrors": []any{mirror},
				}}},
			}}},
			ref:    source + ref,
			mirror: mirror,
		}
	}
	return quota, []mirrorMarker{
		mirrorSet(itmsResource, "config.openshift.io/v1", "ImageTagMirrorSet", "imageTagMirrors", "itms", ":latest"),
		mirrorSet(idmsResource, "config.openshift.io/v1", "ImageDigestMirrorSet", "imageDigestMirrors", "idms", zeroDigest),
		mirrorSet(icspResource, "operator.openshift.io/v1alpha1", "ImageContentSourcePolicy", "repositoryDigestMirrors", "icsp", zeroDigest),
	}
}

// cachedKinds are the kinds a server decides from through an informer (see the top).
var cachedKinds = []schema.GroupResource{
	resourceQuotaResource.GroupResource(),
	itmsResource.GroupResource(),
	idmsResource.GroupResource(),
	icspResource.GroupResource(),
}

// cachesToProbe says which cached kinds a reset must wait for: those written since the control
// plane was last handed out (events, the test's requests and the reset's), and all of them when a
// server was restarted meanwhile (its informers, or those of openshift-apiserver, list anew, after
// a backoff when kube-apiserver was away). A cache nothing wrote to still holds what it held when
// the control plane was handed out: most tests write none of these kinds, and their resets wait
// for nothing.
func cachesToProbe(events []AuditEvent, restarted bool) map[schema.GroupResource]bool {
	probe := map[schema.GroupResource]bool{}
	for _, gr := range cachedKinds {
		if restarted {
			probe[gr] = true
			continue
		}
		for _, e := range events {
			if e.IsWrite() && e.Group == gr.Group && e.Resource == gr.Resource {
				probe[gr] = true
				break
			}
		}
	}
	return probe
}

// waitCachesSeeReset returns once the caches of the kinds named have seen the reset's last write
// (see the comment at the top), naming the kinds a server here caches (the stand-ins read the
// mirror sets at each import).
func (cp *ControlPlane) waitCachesSeeReset(ctx context.Context, c *recycleClients, kinds map[schema.GroupResource]bool) (cached []string, err error) {
	quota, allMirrors := cp.cacheMarkers()
	var markers []cacheMarker
	if kinds[quota.gvr.GroupResource()] {
		markers = append(markers, quota)
	}
	var mirrors []mirrorMarker
	for _, m := range allMirrors {
		if kinds[m.gvr.GroupResource()] {
			mirrors = append(mirrors, m)
			markers = append(markers, m.cacheMarker)
		}
	}
	if len(markers) == 0 {
		return nil, nil
	}
	withQuota := kinds[quota.gvr.GroupResource()]
	for _, m := range markers {
		cached = append(cached, m.gvr.Resource)
	}
	slices.Sort(cached)
	for _, m := range markers {
		created, err := c.dyn.Resource(m.gvr).Namespace(m.object.GetNamespace()).Create(ctx, m.object, metav1.CreateOptions{})
		if err != nil {
			return nil, fmt.Errorf("creating the marker %s: %w", m.gvr.Resource, err)
		}
		if status, ok := m.object.Object["status"]; ok {
			created.Object["status"] = status
			if _, err := c.dyn.Resource(m.gvr).Namespace(m.object.GetNamespace()).UpdateStatus(ctx, created, metav1.UpdateOptions{}); err != nil {
				return nil, fmt.Errorf("setting the status of the marker %s: %w", m.gvr.Resource, err)
			}
		}
	}
	if err := cp.waitMarkersShown(ctx, c, withQuota, mirrors, true); err != nil {
		return nil, err
	}
	for _, m := range markers {
		err := c.dyn.Resource(m.gvr).Namespace(m.object.GetNamespace()).Delete(ctx, resetMarker, metav1.DeleteOptions{})
		if err != nil && !apierrors.IsNotFound(err) {
			return nil, fmt.Errorf("deleting the marker %s: %w", m.gvr.Resource, err)
		}
	}
	return cached, cp.waitMarkersShown(ctx, c, withQuota, mirrors, false)
}

// waitMarkersShown waits until every probe shows the markers (shown) or none does.
func (cp *ControlPlane) waitMarkersShown(ctx context.Context, c *recycleClients, withQuota bool, mirrors []mirrorMarker, shown bool) error {
	var differing []string
	// After kube-apiserver was away, openshift-apiserver's informers list again only after a
	// backoff (seconds; a minute at most).
	err := wait.PollUntilContextTimeout(ctx, 5*time.Millisecond, 45*time.Second, true, func(ctx context.Context) (bool, error) {
		seen, err := cp.markersSeen(ctx, c, withQuota, mirrors)
		if err != nil {
			return false, err
		}
		differing = differing[:0]
		for what, is := range seen {
			if is != shown {
				differing = append(differing, what)
			}
		}
		return len(differing) == 0, nil
	})
	if err != nil {
		state := "seen"
		if shown {
			state = "not seen"
		}
		return fmt.Errorf("the reset's markers still %s by %s: %w", state, strings.Join(differing, ", "), err)
	}
	return nil
}

// markersSeen asks each cache whether it holds its marker.
func (cp *ControlPlane) markersSeen(ctx context.Context, c *recycleClients, withQuota bool, mirrors []mirrorMarker) (map[string]bool, error) {
	seen := map[string]bool{}
	if withQuota {
		if err := cp.quotaMarkerSeen(ctx, c, seen); err != nil {
			return nil, err
		}
	}
	if len(mirrors) == 0 {
		return seen, nil
	}
	var images []any
	for _, m := range mirrors {
		images = append(images, map[string]any{"from": map[string]any{"kind": "DockerImage", "name": m.ref}})
	}
	isi := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "image.openshift.io/v1", "kind": "ImageStreamImport",
		"metadata": map[string]any{"name": resetMarker, "namespace": probeNamespace},
		"spec":     map[string]any{"import": false, "images": images},
	}}
	answer, err := c.dyn.Resource(isiResource).Namespace(probeNamespace).Create(ctx, isi, metav1.CreateOptions{})
	if err != nil {
		return nil, fmt.Errorf("probing openshift-apiserver's mirror sets: %w", err)
	}
	statuses, _, _ := unstructured.NestedSlice(answer.Object, "status", "images")
	if len(statuses) != len(mirrors) {
		return nil, fmt.Errorf("probing openshift-apiserver's mirror sets: %d image statuses for %d images", len(statuses), len(mirrors))
	}
	for i, m := range mirrors {
		st, _ := statuses[i].(map[string]any)
		message, _, _ := unstructured.NestedString(st, "status", "message")
		seen[m.what] = strings.Contains(message, m.mirror)
	}
	return seen, nil
}

// quotaMarkerSeen asks each server's quota admission whether it holds the marker quota.
func (cp *ControlPlane) quotaMarkerSeen(ctx context.Context, c *recycleClients, seen map[string]bool) error {
	dryRun := metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}}
	probe := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: resetMarker, Namespace: probeNamespace}}
	_, err := c.kube.CoreV1().ConfigMaps(probeNamespace).Create(ctx, probe, dryRun)
	if err != nil && !apierrors.IsForbidden(err) {
		return fmt.Errorf("probing kube-apiserver's quota admission: %w", err)
	}
	seen["kube-apiserver's quota admission"] = err != nil
	if !cp.RealOpenShiftAPIServer() {
		return nil
	}
	stream := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "image.openshift.io/v1", "kind": "ImageStream",
		"metadata": map[string]any{"name": resetMarker, "namespace": probeNamespace},
	}}
	_, err = c.dyn.Resource(imageStreamResource).Namespace(probeNamespace).Create(ctx, stream, dryRun)
	if err != nil && !apierrors.IsForbidden(err) {
		return fmt.Errorf("probing openshift-apiserver's quota admission: %w", err)
	}
	seen["openshift-apiserver's quota admission"] = err != nil
	return nil
}
