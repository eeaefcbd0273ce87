package usabilitycontrol

import (
	"cmp"
	"reflect"
	"slices"
	"testing"

	"github.com/samples-operator-dev/cluster-samples-operator/pkg/desired"
	"github.com/samples-operator-dev/cluster-samples-operator/pkg/samplewriter"
	"github.com/samples-operator-dev/cluster-samples-operator/pkg/usability"
)

var (
	notServed = usability.Reason{Code: usability.KindNotServed, Message: "creates apps.openshift.io/v1 DeploymentConfig, which this cluster does not serve"}
	noS390x   = usability.Reason{Code: usability.NoImageForNodes, Message: "no image for node architecture s390x"}
)

func template(name string, reasons ...usability.Reason) usability.Verdict {
	return usability.Verdict{Kind: usability.KindTemplate, Name: name, Reasons: reasons}
}

func tag(name string, reasons ...usability.Reason) usability.Verdict {
	return usability.Verdict{Kind: usability.KindImageStreamTag, Name: name, Reasons: reasons}
}

// told records what the listeners heard, sorted.
type told struct{ samples [][2]string }

func (t *told) listen(kind, name string) { t.samples = append(t.samples, [2]string{kind, name}) }
func (t *told) take() [][2]string {
	out := t.samples
	slices.SortFunc(out, func(a, b [2]string) int { return cmp.Compare(a[0]+"/"+a[1], b[0]+"/"+b[1]) })
	t.samples = nil
	return out
}

// TestTheFirstVerdictsReleaseEverySampleAndLaterOnesOnlyThoseThatChanged: before the first set
// nothing is ready; the first set tells every sample (the samples controller held them all);
// later sets tell only the samples whose marks changed, a tag's change as its stream's.
func TestTheFirstVerdictsReleaseEverySampleAndLaterOnesOnlyThoseThatChanged(t *testing.T) {
	v := NewVerdicts()
	var heard told
	v.OnChange(heard.listen)
	if v.Ready() {
		t.Fatal("ready before any verdict")
	}
	all := [][2]string{{samplewriter.ImageStreamKind, "ruby"}, {samplewriter.TemplateKind, "rails"}, {samplewriter.TemplateKind, "httpd"}}
	v.set([]usability.Verdict{template("rails", notServed)}, nil, all)
	if !v.Ready() {
		t.Fatal("not ready after the first verdicts")
	}
	if got := heard.take(); len(got) != 3 {
		t.Errorf("first verdicts told %v, want every sample", got)
	}

	v.set([]usability.Verdict{template("rails", notServed)}, nil, all)
	if got := heard.take(); len(got) != 0 {
		t.Errorf("the same verdicts told %v, want nothing", got)
	}
	v.set([]usability.Verdict{template("rails", notServed), tag("ruby:3.3-ubi9", noS390x)}, nil, all)
	if got, want := heard.take(), [][2]string{{samplewriter.ImageStreamKind, "ruby"}}; !reflect.DeepEqual(got, want) {
		t.Errorf("a tag's new verdict told %v, want %v", got, want)
	}
	v.set([]usability.Verdict{tag("ruby:3.3-ubi9", noS390x)}, map[string]bool{"ImageStreamTag/ruby:3.3-ubi9": true}, all)
	want := [][2]string{{samplewriter.ImageStreamKind, "ruby"}, {samplewriter.TemplateKind, "rails"}}
	if got := heard.take(); !reflect.DeepEqual(got, want) {
		t.Errorf("a verdict gone and a tag kept offered told %v, want %v", got, want)
	}
	// A partial tag is usable: no mark, nothing to tell; nor does it hide the marks after it.
	partial := func(name string) usability.Verdict {
		return usability.Verdict{Kind: usability.KindImageStreamTag, Name: name, MissingArchitectures: []string{"s390x"}}
	}
	v.set([]usability.Verdict{partial("python:3.12"), tag("ruby:3.3-ubi9", noS390x), partial("ruby:latest")},
		map[string]bool{"ImageStreamTag/ruby:3.3-ubi9": true}, all)
	if got := heard.take(); len(got) != 0 {
		t.Errorf("a partial tag told %v, want nothing", got)
	}
}

// TestMarksAreTheSamplesOwn: a template's mark is under "", a stream's by tag; a sample the
// Config keeps offered is marked but not hidden; a usable or partial verdict marks nothing.
func TestMarksAreTheSamplesOwn(t *testing.T) {
	v := NewVerdicts()
	v.set([]usability.Verdict{
		template("rails", notServed),
		tag("ruby:3.3-ubi9", noS390x),
		tag("ruby:latest", noS390x),
		{Kind: usability.KindImageStreamTag, Name: "python:3.12", MissingArchitectures: []string{"s390x"}},
	}, map[string]bool{"ImageStreamTag/ruby:latest": true}, nil)

	if got, want := v.Marks(samplewriter.TemplateKind, "rails"), (desired.Marks{"": {Reason: notServed.Message, Hide: true}}); !reflect.DeepEqual(got, want) {
		t.Errorf("rails: %v, want %v", got, want)
	}
	want := desired.Marks{"3.3-ubi9": {Reason: noS390x.Message, Hide: true}, "latest": {Reason: noS390x.Message}}
	if got := v.Marks(samplewriter.ImageStreamKind, "ruby"); !reflect.DeepEqual(got, want) {
		t.Errorf("ruby: %v, want %v", got, want)
	}
	for _, sample := range [][2]string{{samplewriter.ImageStreamKind, "python"}, {samplewriter.TemplateKind, "ruby"}, {samplewriter.ImageStreamKind, "rails"}, {samplewriter.TemplateKind, "httpd"}} {
		if got := v.Marks(sample[0], sample[1]); got != nil {
			t.Errorf("%v: %v, want no marks", sample, got)
		}
	}
	if !v.Offered(usability.KindImageStreamTag, "ruby:latest") || v.Offered(usability.KindTemplate, "rails") {
		t.Errorf("Offered does not say what the Config keeps offered")
	}
}

// TestAListenerThatComesAfterTheFirstVerdictsIsToldEverySample: the samples controller registers
// when it starts, which may be after the usability controller's first sync; until told, it
// writes no sample.
func TestAListenerThatComesAfterTheFirstVerdictsIsToldEverySample(t *testing.T) {
	v := NewVerdicts()
	all := [][2]string{{samplewriter.ImageStreamKind, "ruby"}, {samplewriter.TemplateKind, "rails"}}
	v.set(nil, nil, all)
	var late told
	v.OnChange(late.listen)
	if got := late.take(); len(got) != 2 {
		t.Errorf("a listener after the first verdicts was told %v, want every sample", got)
	}
	v.set([]usability.Verdict{template("rails", notServed)}, nil, all)
	if got, want := late.take(), [][2]string{{samplewriter.TemplateKind, "rails"}}; !reflect.DeepEqual(got, want) {
		t.Errorf("then %v, want %v", got, want)
	}
}

// TestAChangeOfAnyTagsMarkIsToldAsItsStreams: the marks of a stream's tags are written in one
// update of the stream; a change of any of its tags' marks, not only of the last, must bring it.
func TestAChangeOfAnyTagsMarkIsToldAsItsStreams(t *testing.T) {
	v := NewVerdicts()
	var heard told
	v.OnChange(heard.listen)
	all := [][2]string{{samplewriter.ImageStreamKind, "ruby"}}
	v.set([]usability.Verdict{tag("ruby:3.3-ubi9", noS390x), tag("ruby:latest", noS390x)}, nil, all)
	heard.take()
	v.set([]usability.Verdict{tag("ruby:3.3-ubi9", notServed), tag("ruby:latest", noS390x)}, nil, all)
	if got := heard.take(); !reflect.DeepEqual(got, all) {
		t.Errorf("ruby:3.3-ubi9's mark changed: told %v, want %v", got, all)
	}
	v.set([]usability.Verdict{tag("ruby:3.3-ubi9", notServed), tag("ruby:latest", noS390x)}, map[string]bool{"ImageStreamTag/ruby:3.3-ubi9": true}, all)
	if got := heard.take(); !reflect.DeepEqual(got, all) {
		t.Errorf("ruby:3.3-ubi9 kept offered: told %v, want %v", got, all)
	}
}
