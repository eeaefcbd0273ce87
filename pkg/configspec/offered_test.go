package configspec

import (
	"reflect"
	"strings"
	"testing"

	samplesv1 "github.com/openshift/api/samples/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/samples-operator-dev/cluster-samples-operator/pkg/configspec/configspectest"
)

func TestParseOffered(t *testing.T) {
	inv, err := configspectest.X86Only{}.For("x86_64")
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name, value string
		want        Offered
		problem     []string // parts the problem must hold; none: no problem
	}{
		{"empty", "", Offered{}, nil},
		{"a template and a tag", " rails-postgresql-example ,, ruby:3.3-ubi9,", Offered{"Template/rails-postgresql-example": true, "ImageStreamTag/ruby:3.3-ubi9": true}, nil},
		{"malformed", "ruby:,:3.3-ubi9,ruby:a:b,rails postgresql", Offered{},
			[]string{OfferedAnnotation, `4 entries malformed and ignored: "ruby:" (not TEMPLATE or STREAM:TAG), ":3.3-ubi9" (not TEMPLATE or STREAM:TAG), "ruby:a:b" (not TEMPLATE or STREAM:TAG), "rails postgresql" (spaces inside)`}},
		{"repeated", "ruby:3.3-ubi9,ruby:3.3-ubi9", Offered{"ImageStreamTag/ruby:3.3-ubi9": true}, []string{"1 entry listed more than once: ruby:3.3-ubi9"}},
		{"not shipped", "no-such-template,ruby:1.0,nostream:1", Offered{},
			[]string{"3 entries naming samples this operator does not ship, ignored: no-such-template, ruby:1.0, nostream:1"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, problem := ParseOffered(tc.value, inv)
			if !reflect.DeepEqual(got, tc.want) {
				t.Errorf("offered = %v, want %v", got, tc.want)
			}
			checkProblem(t, problem, tc.problem)
		})
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
