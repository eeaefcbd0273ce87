package usabilitycontrol

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	imagev1 "github.com/openshift/api/image/v1"
	templatev1 "github.com/openshift/api/template/v1"
	"github.com/openshift/library-go/pkg/operator/events"

	"github.com/samples-operator-dev/cluster-samples-operator/pkg/configspec"
	"github.com/samples-operator-dev/cluster-samples-operator/pkg/desired"
	"github.com/samples-operator-dev/cluster-samples-operator/pkg/usability"
)

// toldCause is a cause the admin was told of, by its message, with the samples it stood for
// ("template/NAME", "imagestreamtag/STREAM:TAG", sorted): hidden from the catalog, or kept
// offered by the Config's OfferedAnnotation.
type toldCause struct {
	hidden, offered []string
}

// toldByMarks is what the admin was told, read again from the marks the operator's live samples
// carry: each sample marked unusable carries the messages of its causes (usability.Annotation),
// and whether it is hidden.
//
// The record is derived, not kept: the marks are written from the very verdicts the Events tell
// of, so they are already a durable record of the causes told, on the server, and nothing a
// restart or a leader change loses. A copy of its own (an annotation on the Config) would be a
// second record that can disagree with the marks, a Config write at each change that re-queues
// every sample, and a write that can fail after its Event went. The marks lag the Event by one
// write: an operator stopped between the two tells that cause once more when it starts, and
// never misses one. Messages name their cause exactly (usability.Reason), and a cause's code is
// needed only to tell it appeared, when the verdict that has it gives it.
func toldByMarks(streams []*imagev1.ImageStream, templates []*templatev1.Template) map[string]toldCause {
	told := map[string]toldCause{}
	add := func(sample string, mark desired.Mark) {
		for _, message := range strings.Split(mark.Reason, "; ") {
			if message == "" {
				continue
			}
			t := told[message]
			if mark.Hide {
				t.hidden = append(t.hidden, sample)
			} else {
				t.offered = append(t.offered, sample)
			}
			told[message] = t
		}
	}
	for _, is := range streams {
		if is.Labels[desired.ManagedLabel] != "true" {
			continue
		}
		for tag, mark := range desired.ImageStreamMarks(is) {
			add(strings.ToLower(usability.KindImageStreamTag)+"/"+is.Name+":"+tag, mark)
		}
	}
	for _, t := range templates {
		if t.Labels[desired.ManagedLabel] != "true" {
			continue
		}
		for _, mark := range desired.TemplateMarks(t) {
			add(strings.ToLower(usability.KindTemplate)+"/"+t.Name, mark)
		}
	}
	for message, t := range told {
		slices.Sort(t.hidden)
		slices.Sort(t.offered)
		told[message] = t
	}
	return told
}

// tell emits one Event for each cause that appeared since the admin was last told, naming every
// sample it keeps from working, and one for each cause that went.
func (c *Controller) tell(recorder events.Recorder, verdicts []usability.Verdict, offered configspec.Offered) {
	now := map[string]toldCause{}
	codes := map[string]string{}
	for _, v := range verdicts { // sorted by kind and name: so are the lists
		sample := strings.ToLower(v.Kind) + "/" + v.Name
		for _, r := range v.Reasons {
			t := now[r.Message]
			if offered.Has(v.Kind, v.Name) {
				t.offered = append(t.offered, sample)
			} else {
				t.hidden = append(t.hidden, sample)
			}
			now[r.Message], codes[r.Message] = t, r.Code
		}
	}
	for _, message := range slices.Sorted(maps.Keys(now)) {
		if _, before := c.told[message]; !before {
			recorder.Warningf(codes[message], "%s", appeared(message, now[message]))
		}
	}
	for _, message := range slices.Sorted(maps.Keys(c.told)) {
		if _, still := now[message]; !still {
			recorder.Eventf("SamplesUsableAgain", "%s", went(message, c.told[message]))
		}
	}
	c.told = now
}

// appeared words a cause's first Event. A sample the Config keeps offered is not said hidden.
func appeared(message string, t toldCause) string {
	all := slices.Sorted(slices.Values(append(slices.Clone(t.hidden), t.offered...)))
	switch {
	case len(t.offered) == 0:
		return fmt.Sprintf("%s cannot work on this cluster and %s hidden from the catalog (annotation %s): %s",
			list(t.hidden), isAre(len(t.hidden)), desired.UnusableAnnotation, message)
	case len(t.hidden) == 0:
		return fmt.Sprintf("%s cannot work on this cluster (annotation %s) and %s kept offered by the admin (Config annotation %s): %s",
			list(t.offered), desired.UnusableAnnotation, isAre(len(t.offered)), configspec.OfferedAnnotation, message)
	}
	return fmt.Sprintf("%s cannot work on this cluster (annotation %s): %s; %s hidden from the catalog, %s kept offered by the admin (Config annotation %s)",
		list(all), desired.UnusableAnnotation, message, list(t.hidden), list(t.offered), configspec.OfferedAnnotation)
}

// went words the Event of a cause that went.
func went(message string, t toldCause) string {
	var parts []string
	if len(t.hidden) > 0 {
		parts = append(parts, list(t.hidden)+" offered again")
	}
	if len(t.offered) > 0 {
		parts = append(parts, list(t.offered)+" can work here again (kept offered by the admin)")
	}
	return fmt.Sprintf("no longer so: %s; %s", message, strings.Join(parts, ", "))
}

func list(samples []string) string {
	const shown = 10
	if len(samples) <= shown {
		return strings.Join(samples, ", ")
	}
	return fmt.Sprintf("%s and %d more", strings.Join(samples[:shown], ", "), len(samples)-shown)
}

func isAre(n int) string {
	if n == 1 {
		return "is"
	}
	return "are"
}
