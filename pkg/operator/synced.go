package operator

import (
	"context"
	"time"

	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/tools/cache"
	"k8s.io/klog/v2"
)

// cacheSyncPoll is how often waitSynced looks at the caches. client-go's WaitForCacheSync looks
// every 100 ms: at a start the samples' caches are in a few milliseconds after its first look,
// and the samples controllers then started 100 ms late, an eighth of the whole 1x initial sync
// (issue 56). The caches are read by the informers' HasSynced, a lock and a flag each.
const cacheSyncPoll = 5 * time.Millisecond

// waitSynced waits until every cache has synced, or ctx ends; it reports whether they synced.
func waitSynced(ctx context.Context, name string, synced ...cache.InformerSynced) bool {
	klog.InfoS("Waiting for caches to sync", "controller", name)
	err := wait.PollUntilContextCancel(ctx, cacheSyncPoll, true, func(context.Context) (bool, error) {
		for _, s := range synced {
			if !s() {
				return false, nil
			}
		}
		return true, nil
	})
	if err != nil {
		return false
	}
	klog.InfoS("Caches are synced", "controller", name)
	return true
}
