package configspec

import (
	samplesv1 "github.com/openshift/api/samples/v1"
	"k8s.io/apimachinery/pkg/api/equality"
)

// ReadChanged reports whether an update of the Config changes what the controllers that act on
// every sample read of it: its spec, its metadata (annotations such as the skipped tags and the
// offered samples, finalizers, deletionTimestamp, labels, the generation and uid), and of its
// status only the architectures, which Validate holds the spec to. The rest of the status is
// what the status controller writes; that write is no reason to look at every sample again.
// The resourceVersion and managedFields change with every write and say nothing.
func ReadChanged(old, updated *samplesv1.Config) bool {
	return !equality.Semantic.DeepEqual(readPart(old), readPart(updated))
}

func readPart(cfg *samplesv1.Config) *samplesv1.Config {
	part := &samplesv1.Config{ObjectMeta: *cfg.ObjectMeta.DeepCopy(), Spec: cfg.Spec}
	part.ResourceVersion, part.ManagedFields = "", nil
	part.Status.Architectures = cfg.Status.Architectures
	return part
}
