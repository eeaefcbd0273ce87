package configspec

import (
	"fmt"
	"reflect"
	"strings"
	"testing"

	samplesv1 "github.com/openshift/api/samples/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/samples-operator-dev/cluster-samples-operator/pkg/configspec/configspectest"
	"github.com/samples-operator-dev/cluster-samples-operator/pkg/inventory"
)

// TestParseOffered: as TestParseSkippedTags, each row with the inventory and, unless it names
// what the inventory lacks, without one.
func TestParseOffered(t *testing.T) {
	inv, err := configspectest.X86Only{}.For("x86_64")
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name, value string
		want        Offered
		problem     string // after "annotation NAME: "; "" for none
		unshipped   bool
	}{
		{name: "empty", value: "", want: Offered{}},
		{name: "a template and a tag", value: " rails-postgresql-example ,, ruby:3.3-ubi9,", want: Offered{"Template/rails-postgresql-example": true, "ImageStreamTag/ruby:3.3-ubi9": true}},
		{name: "malformed", value: "ruby:,:3.3-ubi9,ruby:a:b,rails postgresql", want: Offered{},
			problem: `4 entries malformed and ignored: "ruby:" (not TEMPLATE or STREAM:TAG), ":3.3-ubi9" (not TEMPLATE or STREAM:TAG), "ruby:a:b" (not TEMPLATE or STREAM:TAG), "rails postgresql" (spaces inside)`},
		{name: "repeated", value: "ruby:3.3-ubi9,ruby:3.3-ubi9,rails-postgresql-example,rails-postgresql-example", want: Offered{"ImageStreamTag/ruby:3.3-ubi9": true, "Template/rails-postgresql-example": true},
			problem: "2 entries listed more than once: ruby:3.3-ubi9, rails-postgresql-example"},
		{name: "not shipped", value: "no-such-template,ruby:1.0,nostream:1,ruby:3.3-ubi9", want: Offered{"ImageStreamTag/ruby:3.3-ubi9": true},
			problem: "3 entries naming samples this operator does not ship, ignored: no-such-template, ruby:1.0, nostream:1", unshipped: true},
	} {
		for _, withInventory := range []bool{true, false} {
			if tc.unshipped && !withInventory {
				continue
			}
			t.Run(fmt.Sprintf("%s, inventory %t", tc.name, withInventory), func(t *testing.T) {
				var with *inventory.Inventory
				if withInventory {
					with = inv
				}
				got, problem := ParseOffered(tc.value, with)
				if !reflect.DeepEqual(got, tc.want) {
					t.Errorf("offered = %v, want %v", got, tc.want)
				}
				checkProblem(t, problem, OfferedAnnotation, tc.problem)
			})
		}
	}
}

// TestTheEvaluationCarriesTheOfferedSamplesAndWarnsOfBadEntries.
func TestTheEvaluationCarriesTheOfferedSamplesAndWarnsOfBadEntries(t *testing.T) {
	cfg := &samplesv1.Config{ObjectMeta: metav1.ObjectMeta{Name: "cluster", Annotations: map[string]string{OfferedAnnotation: "rails-postgresql-example,nope"}},
		Spec: samplesv1.ConfigSpec{ManagementState: "Managed", Architectures: []string{"x86_64"}}}
	eval := Evaluate(cfg, configspectest.X86Only{}, nil)
	if !eval.Offered.Has("Template", "rails-postgresql-example") || len(eval.Offered) != 1 {
		t.Errorf("offered = %v", eval.Offered)
	}
	if !strings.Contains(strings.Join(eval.Validation.Warnings, "\n"), OfferedAnnotation+": 1 entry naming samples this operator does not ship, ignored: nope") {
		t.Errorf("warnings = %q", eval.Validation.Warnings)
	}
}
