package samples

import (
	"testing"

	imagev1 "github.com/openshift/api/image/v1"
	operatorv1 "github.com/openshift/api/operator/v1"
	samplesv1 "github.com/openshift/api/samples/v1"
	templatev1 "github.com/openshift/api/template/v1"

	"github.com/samples-operator-dev/cluster-samples-operator/pkg/desired"
	"github.com/samples-operator-dev/cluster-samples-operator/test/inventorytest"
)

// BenchmarkDecide10x is the decision of a resync of every sample of the 10x inventory of
// `make bench`, each in sync: what it wants, compared with the cached copy (a template trimmed
// as the informer keeps it).
func BenchmarkDecide10x(b *testing.B) {
	inv, err := inventorytest.Scaled(10)
	if err != nil {
		b.Fatal(err)
	}
	spec := &samplesv1.ConfigSpec{ManagementState: operatorv1.Managed}
	choice := desired.Choice{Version: "v1"}
	var streams imageStreams
	var tmpls templates
	liveStreams := map[string]*imagev1.ImageStream{}
	for _, name := range inv.ImageStreamNames() {
		want, _ := streams.want(spec, choice, inv, name)
		liveStreams[name] = want
	}
	liveTemplates := map[string]*templatev1.Template{}
	for _, name := range inv.TemplateNames() {
		want, _ := tmpls.want(spec, choice, inv, name)
		desired.TrimTemplate(want)
		liveTemplates[name] = want
	}
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		for name, live := range liveStreams {
			want, skipped := streams.want(spec, choice, inv, name)
			if a := streams.decide(desired.Managed, want, skipped, live); a.Verb != desired.None {
				b.Fatalf("imagestream %s: %s %v", name, a.Verb, a.Drift)
			}
		}
		for name, live := range liveTemplates {
			want, skipped := tmpls.want(spec, choice, inv, name)
			if a := tmpls.decide(desired.Managed, want, skipped, live); a.Verb != desired.None {
				b.Fatalf("template %s: %s %v", name, a.Verb, a.Drift)
			}
		}
	}
}
