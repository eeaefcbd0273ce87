package plugin

import (
	"context"
	"fmt"
	"slices"
	"strings"

	samplesv1 "github.com/openshift/api/samples/v1"
	"github.com/spf13/cobra"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/util/retry"

	"github.com/samples-operator-dev/cluster-samples-operator/pkg/configspec"
	"github.com/samples-operator-dev/cluster-samples-operator/pkg/sampleusage"
)

func (o *options) skipCommand(skip bool) *cobra.Command {
	var force, dryRun bool
	verb := "skip"
	short := "Stop managing a sample imagestream, tag or template: the Config's skipped lists or tag annotation"
	long := `skip adds the sample to the Config: an imagestream to spec.skippedImagestreams, a template to
spec.skippedTemplates, an imagestream tag (STREAM:TAG) to the annotation
` + configspec.SkippedImageStreamTagsAnnotation + `.

It first looks for the sample's users as "usage" does, and refuses when it finds any, or when it
could not look everywhere a user could be, printing what it found; --force skips anyway. A user
of a tag that follows the one skipped ("latest" following "3.3-ubi9") is a user of it too.
-n looks in the namespaces named first: skip still refuses unless they are every namespace of
the cluster, naming the others as not looked in (-n with no name is an error). --dry-run
prints the change without making it.`
	if !skip {
		verb = "unskip"
		short = "Manage a skipped sample again: remove it from the Config's skipped lists or tag annotation"
		long = `unskip removes the sample from the Config's skipped lists (spec.skippedImagestreams,
spec.skippedTemplates) or, for STREAM:TAG, from the annotation ` + configspec.SkippedImageStreamTagsAnnotation + `;
the operator installs it again. --dry-run prints the change without making it.`
	}
	cmd := &cobra.Command{
		Use:   verb + " SAMPLE[:TAG]",
		Short: short,
		Long:  long,
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return o.skip(cmd.Context(), args[0], skip, force, dryRun)
		},
	}
	if skip {
		cmd.Flags().BoolVar(&force, "force", false, "skip even when the sample has users or not all could be seen")
		o.addNamespaceFlag(cmd.Flags(), "look for users in these namespaces (repeat or comma-separate); skip refuses unless they are all the cluster's; default: every namespace you may see")
	}
	cmd.Flags().BoolVar(&dryRun, "dry-run", false, "print the change to the Config and make none")
	o.addOKDFlag(cmd.Flags())
	return cmd
}

func (o *options) skip(ctx context.Context, arg string, skip, force, dryRun bool) error {
	v, err := o.readSamples(ctx, true)
	if err != nil {
		return err
	}
	known := v.known()
	if !skip {
		// A sample skipped long ago may have left the inventory since: it can still be unskipped.
		known.Templates = append(known.Templates, v.cfg.Spec.SkippedTemplates...)
		for _, s := range v.cfg.Spec.SkippedImagestreams {
			if _, ok := known.ImageStreamTags[s]; !ok {
				known.ImageStreamTags[s] = nil
			}
		}
		tags, _ := configspec.SkippedTagsOf(v.cfg, nil)
		for stream, list := range tags {
			known.ImageStreamTags[stream] = append(known.ImageStreamTags[stream], list...)
		}
	}
	target, err := sampleusage.ParseTarget(arg, known)
	if err != nil {
		return &exitError{code: ExitUsage, err: err}
	}
	change, changed := skipEdit(v.cfg.DeepCopy(), target, skip)
	if !changed {
		state := "skipped"
		if !skip {
			state = "not skipped"
		}
		fmt.Fprintf(o.out, "%s is already %s: nothing to change\n", arg, state)
		return nil
	}
	if skip && !force {
		found, err := o.findUsers(ctx, v, target)
		if err != nil {
			return err
		}
		found.notSeen = append(found.notSeen, o.namespacesNotNamed(ctx)...)
		if len(found.users) > 0 || len(found.notSeen) > 0 {
			why := objectsUse(countObjects(found.users)) + " it"
			if len(found.users) == 0 {
				why = "not every user could be seen"
			}
			return &exitError{code: ExitFailing, err: fmt.Errorf("not skipping %s: %s; --force skips it anyway", arg, why), found: &found}
		}
	}
	if dryRun {
		fmt.Fprintf(o.out, "would change the Config: %s (dry run: nothing written)\n", change)
		return nil
	}
	var doing string
	wrote := false
	err = retry.RetryOnConflict(retry.DefaultRetry, func() error {
		doing = "read the samples Config"
		cfg, err := o.clients.samples.SamplesV1().Configs().Get(ctx, configName, metav1.GetOptions{})
		if err != nil {
			return err
		}
		// Someone may have made the change since it was read: then there is nothing to write.
		if change, changed = skipEdit(cfg, target, skip); !changed {
			return nil
		}
		doing = "update the samples Config"
		_, err = o.clients.samples.SamplesV1().Configs().Update(ctx, cfg, metav1.UpdateOptions{FieldManager: "kubectl-samples"})
		wrote = err == nil
		return err
	})
	if err != nil {
		return requestError(doing, err)
	}
	if !wrote {
		fmt.Fprintf(o.out, "%s: someone else made the change meanwhile; nothing to change\n", arg)
		return nil
	}
	fmt.Fprintf(o.out, "changed the Config: %s\n", change)
	return nil
}

// namespacesNotNamed are, when -n named namespaces, the cluster's other namespaces, which skip
// did not look in: a skip must not cut off a user it did not count.
func (o *options) namespacesNotNamed(ctx context.Context) []string {
	if o.namespaces == nil {
		return nil
	}
	all, err := (&lister{c: o.clients}).namespaceNames(ctx)
	others := slices.DeleteFunc(all, func(ns string) bool { return slices.Contains(o.namespaces, ns) })
	switch {
	case err != nil:
		return []string{fmt.Sprintf("namespaces not named with -n: not looked in, and the namespaces could not be listed to tell whether there are any (%v)", err)}
	case len(others) > 0:
		return []string{fmt.Sprintf("%s: not looked in (not named with -n)", namespacesPhrase(others))}
	}
	return nil
}

// skipEdit adds the target to (or removes it from) the Config's skips in place, and says what
// changed. Entries of the tag annotation it does not touch are kept as written, malformed ones
// included: the operator reports those.
func skipEdit(cfg *samplesv1.Config, t sampleusage.Target, skip bool) (string, bool) {
	edit := func(list []string, name string) ([]string, bool) {
		has := slices.Contains(list, name)
		switch {
		case skip && !has:
			return append(list, name), true
		case !skip && has:
			return slices.DeleteFunc(slices.Clone(list), func(s string) bool { return s == name }), true
		}
		return list, false
	}
	var changed bool
	switch {
	case t.Template != "":
		before := fmt.Sprint(cfg.Spec.SkippedTemplates)
		cfg.Spec.SkippedTemplates, changed = edit(cfg.Spec.SkippedTemplates, t.Template)
		return fmt.Sprintf("spec.skippedTemplates %s -> %v", before, cfg.Spec.SkippedTemplates), changed
	case t.Tag == "":
		before := fmt.Sprint(cfg.Spec.SkippedImagestreams)
		cfg.Spec.SkippedImagestreams, changed = edit(cfg.Spec.SkippedImagestreams, t.ImageStream)
		return fmt.Sprintf("spec.skippedImagestreams %s -> %v", before, cfg.Spec.SkippedImagestreams), changed
	}
	before := cfg.Annotations[configspec.SkippedImageStreamTagsAnnotation]
	var entries []string
	for _, e := range strings.Split(before, ",") {
		if e = strings.TrimSpace(e); e != "" {
			entries = append(entries, e)
		}
	}
	entries, changed = edit(entries, t.ImageStream+":"+t.Tag)
	after := strings.Join(entries, ",")
	if cfg.Annotations == nil {
		cfg.Annotations = map[string]string{}
	}
	if after == "" {
		delete(cfg.Annotations, configspec.SkippedImageStreamTagsAnnotation)
	} else {
		cfg.Annotations[configspec.SkippedImageStreamTagsAnnotation] = after
	}
	return fmt.Sprintf("annotation %s %q -> %q", configspec.SkippedImageStreamTagsAnnotation, before, after), changed
}
