package configstatuscontrol

import (
	"context"
	"strings"

	samplesv1 "github.com/openshift/api/samples/v1"
	"github.com/openshift/library-go/pkg/controller/factory"
	"github.com/openshift/library-go/pkg/operator/events"

	"github.com/samples-operator-dev/cluster-samples-operator/pkg/bootstrapstate"
	"github.com/samples-operator-dev/cluster-samples-operator/pkg/configspec"
	"github.com/samples-operator-dev/cluster-samples-operator/pkg/desired"
	"github.com/samples-operator-dev/cluster-samples-operator/pkg/mirrorsets"
)

// watchMirrorSets looks again whenever a mirror set changes. Their caches are not waited for
// (mirrorsetinformers.Informers): until they sync, SamplesExist says nothing of them.
func (c *Controller) watchMirrorSets(_ context.Context, syncCtx factory.SyncContext) error {
	return c.mirrorSets.OnChange(func() { syncCtx.Queue().Add(factory.DefaultQueueKey) })
}

// mirrorCoverage is what the cluster's mirror sets do for the imagestreams a Managed Config
// installs; nil when the Config installs none or the mirror sets are not read (yet).
func (c *Controller) mirrorCoverage(cfg *samplesv1.Config, eval configspec.Evaluation) (*mirrorsets.Coverage, error) {
	if eval.Mode != desired.Managed || eval.Inventory == nil || !c.mirrorSets.Settled() {
		return nil, nil
	}
	sets, err := c.mirrorSets.Sets()
	if err != nil {
		return nil, err
	}
	if _, installedThroughMirrors := bootstrapstate.Of(cfg).ThroughMirrorSets(); sets.Empty() && !installedThroughMirrors {
		// Nothing to say (configstatus.MirrorsMessage), and most clusters have no mirror set:
		// spare each status sync a copy of every wanted imagestream.
		return nil, nil
	}
	coverage := mirrorsets.Cover(sets, eval.WantedPullSpecs(cfg))
	return &coverage, nil
}

// reportMirrors records an event when what SamplesExist says of the mirror sets changes: the
// samples now come through them, or some (all) of them no longer do.
func (c *Controller) reportMirrors(recorder events.Recorder, text string) {
	changed := text != c.reportedMirrors
	c.reportedMirrors = text
	switch {
	case !changed || text == "":
	case strings.Contains(text, "will not import") || strings.Contains(text, "can no longer import"):
		recorder.Warningf("SamplesWithoutMirror", "samples: %s", strings.TrimPrefix(text, "; "))
	default:
		recorder.Eventf("SamplesThroughMirrorSets", "samples: %s", strings.TrimPrefix(text, "; "))
	}
}
