package plugin

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"

	"sigs.k8s.io/yaml"

	"github.com/samples-operator-dev/cluster-samples-operator/pkg/samplereport"
	"github.com/samples-operator-dev/cluster-samples-operator/pkg/sampleusage"
)

// printStructured writes v as JSON or YAML; false for the table formats.
func (o *options) printStructured(v any) (bool, error) {
	switch o.output {
	case outputJSON:
		enc := json.NewEncoder(o.out)
		enc.SetIndent("", "  ")
		return true, enc.Encode(v)
	case outputYAML:
		data, err := yaml.Marshal(v)
		if err != nil {
			return true, err
		}
		_, err = o.out.Write(data)
		return true, err
	}
	return false, nil
}

func newTable(w io.Writer) *tabwriter.Writer { return tabwriter.NewWriter(w, 0, 0, 3, ' ', 0) }

// dash stands for an empty cell.
func dash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

func (o *options) printStatus(r samplereport.Report) error {
	if done, err := o.printStructured(r); done {
		return err
	}
	registry := r.SamplesRegistry
	if registry == "" {
		registry = "(the inventory's)"
	}
	fmt.Fprintf(o.out, "Config cluster: %s, version %s, samples registry %s\n\n", r.ManagementState, dash(r.Version), registry)
	tw := newTable(o.out)
	if o.output == outputWide {
		fmt.Fprintln(tw, "KIND\tNAME\tTAG\tSTATE\tVERSION\tIMAGE\tMIRROR\tARCHITECTURES\tREASON\tUNUSABLE HERE")
		for _, s := range r.Samples {
			if len(s.Tags) == 0 {
				fmt.Fprintf(tw, "%s\t%s\t-\t%s\t%s\t-\t-\t-\t%s\t%s\n", kindWord(s.Kind), s.Name, s.State, dash(s.Version), dash(sampleReason(s)), dash(oneLine(s.Unusable)))
			}
			for _, t := range s.Tags {
				state := string(t.State)
				if s.State != samplereport.Managed && s.State != samplereport.Unmanaged {
					state = string(s.State) + "/" + state
				}
				fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n", kindWord(s.Kind), s.Name, t.Name, state, dash(s.Version),
					dash(shortDigest(t.Image)), dash(mirrorCell(t)), dash(archCell(t)), dash(oneLine(t.Reason)), dash(oneLine(t.Unusable)))
			}
		}
	} else {
		fmt.Fprintln(tw, "KIND\tNAME\tSTATE\tVERSION\tIMPORTED\tFAILING\tDETAILS\tUNUSABLE HERE")
		for _, s := range r.Samples {
			imported, failing := "-", "-"
			if s.Kind == samplereport.KindImageStream && len(s.Tags) > 0 && s.State != samplereport.Skipped && s.State != samplereport.Absent {
				imported = fmt.Sprintf("%d/%d", s.Imported, countable(s))
				if s.State != samplereport.Retired { // its imports are no longer tracked
					failing = fmt.Sprint(s.Failing)
				}
			}
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n", kindWord(s.Kind), s.Name, s.State, dash(s.Version), imported, failing, dash(details(s)), dash(unusableCell(s)))
		}
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	printNotSeen(o.out, r.NotSeen)
	fmt.Fprintln(o.out, r.Summary)
	return nil
}

func kindWord(kind string) string { return strings.ToLower(kind) }

// unusableCell says why a template, or which tags of a stream, cannot work on this cluster.
func unusableCell(s samplereport.Sample) string {
	if s.Unusable != "" {
		return oneLine(s.Unusable)
	}
	var tags []string
	for _, t := range s.Tags {
		if t.Unusable != "" {
			tags = append(tags, t.Name+": "+oneLine(t.Unusable))
		}
	}
	return strings.Join(tags, "; ")
}

// countable is the number of tags expected to import (not skipped, not retired).
func countable(s samplereport.Sample) int {
	n := 0
	for _, t := range s.Tags {
		if t.State != samplereport.TagSkipped && t.State != samplereport.TagRetired {
			n++
		}
	}
	return n
}

func sampleReason(s samplereport.Sample) string {
	if s.RetiredIn != "" {
		return "retired in " + s.RetiredIn
	}
	return ""
}

// details: each failing tag with the server's reason, the mirrors, skipped and retired tags.
func details(s samplereport.Sample) string {
	var parts []string
	if r := sampleReason(s); r != "" {
		parts = append(parts, r)
	}
	var skipped, retired []string
	mirrors := map[string]int{}
	var mirrorOrder []string
	for _, t := range s.Tags {
		switch t.State {
		case samplereport.TagFailing:
			parts = append(parts, t.Name+": "+oneLine(t.Reason))
		case samplereport.TagSkipped:
			skipped = append(skipped, t.Name)
		case samplereport.TagRetired:
			retired = append(retired, t.Name)
		}
		if t.Mirror != "" && t.State != samplereport.TagSkipped {
			host := mirrorHost(t.Mirror)
			if mirrors[host] == 0 {
				mirrorOrder = append(mirrorOrder, host)
			}
			mirrors[host]++
		}
	}
	for _, m := range mirrorOrder {
		parts = append(parts, fmt.Sprintf("%d tags through mirror %s", mirrors[m], m))
	}
	if len(skipped) > 0 {
		parts = append(parts, "skipped tags "+strings.Join(skipped, ","))
	}
	if len(retired) > 0 {
		parts = append(parts, "retired tags "+strings.Join(retired, ","))
	}
	return strings.Join(parts, "; ")
}

// mirrorHost is a mirror pull spec without its repository's last element and tag: where a
// stream's tags come from.
func mirrorHost(pullSpec string) string {
	if i := strings.LastIndex(pullSpec, "/"); i > 0 {
		return pullSpec[:i]
	}
	return pullSpec
}

func mirrorCell(t samplereport.Tag) string {
	if t.Mirror == "" {
		return ""
	}
	return t.Mirror + " (" + strings.Join(t.MirroredBy, ",") + ")"
}

func archCell(t samplereport.Tag) string {
	if t.Architectures == nil {
		return ""
	}
	cell := strings.Join(t.Architectures, ",")
	if len(t.MissingArchitectures) > 0 {
		cell += " (lacks nodes' " + strings.Join(t.MissingArchitectures, ",") + ")"
	}
	return cell
}

func shortDigest(d string) string {
	if _, hex, ok := strings.Cut(d, ":"); ok && len(hex) > 12 {
		return d[:len(d)-len(hex)] + hex[:12]
	}
	return d
}

// oneLine keeps a server message on its row.
func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }

func printNotSeen(w io.Writer, notSeen []string) {
	for _, n := range notSeen {
		fmt.Fprintln(w, "not seen:", n)
	}
}

// usageReport is what `usage` prints.
type usageReport struct {
	Target  string            `json:"target,omitempty"`
	Users   []sampleusage.Use `json:"users"`
	NotSeen []string          `json:"notSeen,omitempty"`
	// NotServed are the kinds the cluster does not serve (a capability off): no user to miss.
	NotServed []string `json:"notServed,omitempty"`
	Summary   string   `json:"summary"`
}

func (o *options) printUsage(r usageReport) error {
	if r.Users == nil {
		r.Users = []sampleusage.Use{} // "users": [] says none was found; null would say nothing
	}
	if done, err := o.printStructured(r); done {
		return err
	}
	writeUsers(o.out, r.Users)
	printNotSeen(o.out, r.NotSeen)
	if len(r.NotServed) > 0 {
		fmt.Fprintf(o.out, "not served by this cluster (its capability may be off): %s, no user to count\n", strings.Join(r.NotServed, ", "))
	}
	fmt.Fprintln(o.out, r.Summary)
	return nil
}

func writeUsers(w io.Writer, users []sampleusage.Use) {
	if len(users) == 0 {
		return
	}
	tw := newTable(w)
	fmt.Fprintln(tw, "SAMPLE\tNAMESPACE\tKIND\tNAME\tVIA")
	for _, u := range users {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", sampleCell(u), u.Namespace, u.Kind, u.Name, u.Via)
	}
	_ = tw.Flush()
}

// sampleCell is the sample a use names, with the tags it follows: "ruby:latest -> 3.3-ubi9".
func sampleCell(u sampleusage.Use) string {
	return strings.Join(append([]string{u.Sample.String()}, u.Follows...), " -> ")
}

// countObjects counts the distinct objects among uses (one BuildConfig may use a sample twice).
func countObjects(users []sampleusage.Use) int {
	objects := map[string]bool{}
	for _, u := range users {
		objects[u.Kind+"/"+u.Namespace+"/"+u.Name] = true
	}
	return len(objects)
}

// usageSummary: "4 users of 3 samples in 2 namespaces", or that none was found, and where it
// looked when -n named namespaces.
func usageSummary(target string, named []string, users []sampleusage.Use, notSeen []string) string {
	samples, namespaces, objects := map[string]bool{}, map[string]bool{}, map[string]bool{}
	for _, u := range users {
		samples[u.Sample.String()] = true
		namespaces[u.Namespace] = true
		objects[u.Kind+"/"+u.Namespace+"/"+u.Name] = true
	}
	about := "the samples"
	if target != "" {
		about = target
	}
	var line string
	if len(users) == 0 {
		line = "no user of " + about + " found"
	} else {
		line = fmt.Sprintf("%s %s (%s in %s)", objectsUse(len(objects)), about, plural(len(samples), "sample"), plural(len(namespaces), "namespace"))
	}
	if named != nil {
		line += "; looked in " + namespacesPhrase(named) + " only (-n)"
	}
	if len(notSeen) > 0 {
		line += "; not everything could be seen (above)"
	}
	return line
}

// objectsUse is "1 object uses" or "3 objects use".
func objectsUse(n int) string {
	if n == 1 {
		return "1 object uses"
	}
	return plural(n, "object") + " use"
}

func plural(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return fmt.Sprintf("%d %ss", n, noun)
}
