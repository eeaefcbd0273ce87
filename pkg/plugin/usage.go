package plugin

import (
	"context"
	"slices"
	"sync"

	appsv1 "github.com/openshift/api/apps/v1"
	buildv1 "github.com/openshift/api/build/v1"
	templatev1 "github.com/openshift/api/template/v1"
	"github.com/spf13/cobra"
	"golang.org/x/sync/errgroup"
	kappsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/samples-operator-dev/cluster-samples-operator/pkg/sampleusage"
)

func (o *options) usageCommand() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "usage [SAMPLE[:TAG]]",
		Short: "Who uses each sample: builds, deployments, template instances and running pods",
		Long: `usage lists the objects that use a sample imagestream, one of its tags, or a sample template:
BuildConfigs (strategy and source images, ImageChange triggers), DeploymentConfigs (ImageChange
triggers), Deployments, StatefulSets, DaemonSets and CronJobs (the image.openshift.io/triggers
annotation, or a sample's image in their pod template), TemplateInstances made from a sample
template, and pods that have not ended running a sample's image.

It reads with your permissions. A kind or namespace you may not list, or that the server could
not answer for, is reported as not seen, never as unused; the exit status is then 1. A kind the
cluster does not serve (the Build and DeploymentConfig capabilities can be off) has no user to
miss: it is named as not served, and counts as looked at. A developer who may read the samples in
openshift but not the cluster's samples Config gets the same answer, the Config named as not
seen.

-n asks about the namespaces named alone, and the answer says so; -n with no name (an unset
variable) is an error, never a search of nothing.`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return o.usage(cmd.Context(), args)
		},
	}
	o.addNamespaceFlag(cmd.Flags(), "look for users only in these namespaces (repeat or comma-separate); default: every namespace you may see")
	o.addOKDFlag(cmd.Flags())
	return cmd
}

func (o *options) usage(ctx context.Context, args []string) error {
	v, err := o.readSamples(ctx, false)
	if err != nil {
		return err
	}
	var target sampleusage.Target
	var about string
	if len(args) == 1 {
		if target, err = sampleusage.ParseTarget(args[0], v.known()); err != nil {
			return &exitError{code: ExitUsage, err: err}
		}
		about = args[0]
	}
	found, err := o.findUsers(ctx, v, target)
	if err != nil {
		return err
	}
	notSeen := append(slices.Clone(v.notRead), found.notSeen...)
	if err := o.printUsage(usageReport{Target: about, Users: found.users, NotSeen: notSeen, NotServed: found.notServed,
		Summary: usageSummary(about, o.namespaces, found.users, notSeen)}); err != nil {
		return err
	}
	if len(notSeen) > 0 {
		return errFailing
	}
	return nil
}

// workloadKind is one kind `usage` reads.
type workloadKind struct {
	gvr schema.GroupVersionResource
	// templates: the kind uses templates (else imagestreams).
	templates bool
	list      listFunc
	uses      func(*sampleusage.Catalog, runtime.Object) []sampleusage.Use
}

func (o *options) workloadKinds() []workloadKind {
	c := o.clients
	return []workloadKind{
		{gvr: buildv1.GroupVersion.WithResource("buildconfigs"), list: func(ctx context.Context, ns string, opts metav1.ListOptions) (runtime.Object, error) {
			return c.build.BuildV1().BuildConfigs(ns).List(ctx, opts)
		}, uses: func(cat *sampleusage.Catalog, obj runtime.Object) []sampleusage.Use {
			return cat.BuildConfig(obj.(*buildv1.BuildConfig))
		}},
		{gvr: appsv1.GroupVersion.WithResource("deploymentconfigs"), list: func(ctx context.Context, ns string, opts metav1.ListOptions) (runtime.Object, error) {
			return c.apps.AppsV1().DeploymentConfigs(ns).List(ctx, opts)
		}, uses: func(cat *sampleusage.Catalog, obj runtime.Object) []sampleusage.Use {
			return cat.DeploymentConfig(obj.(*appsv1.DeploymentConfig))
		}},
		{gvr: kappsv1.SchemeGroupVersion.WithResource("deployments"), list: func(ctx context.Context, ns string, opts metav1.ListOptions) (runtime.Object, error) {
			return c.kube.AppsV1().Deployments(ns).List(ctx, opts)
		}, uses: func(cat *sampleusage.Catalog, obj runtime.Object) []sampleusage.Use {
			d := obj.(*kappsv1.Deployment)
			return cat.Workload("Deployment", d, &d.Spec.Template.Spec)
		}},
		{gvr: kappsv1.SchemeGroupVersion.WithResource("statefulsets"), list: func(ctx context.Context, ns string, opts metav1.ListOptions) (runtime.Object, error) {
			return c.kube.AppsV1().StatefulSets(ns).List(ctx, opts)
		}, uses: func(cat *sampleusage.Catalog, obj runtime.Object) []sampleusage.Use {
			s := obj.(*kappsv1.StatefulSet)
			return cat.Workload("StatefulSet", s, &s.Spec.Template.Spec)
		}},
		{gvr: kappsv1.SchemeGroupVersion.WithResource("daemonsets"), list: func(ctx context.Context, ns string, opts metav1.ListOptions) (runtime.Object, error) {
			return c.kube.AppsV1().DaemonSets(ns).List(ctx, opts)
		}, uses: func(cat *sampleusage.Catalog, obj runtime.Object) []sampleusage.Use {
			d := obj.(*kappsv1.DaemonSet)
			return cat.Workload("DaemonSet", d, &d.Spec.Template.Spec)
		}},
		{gvr: batchv1.SchemeGroupVersion.WithResource("cronjobs"), list: func(ctx context.Context, ns string, opts metav1.ListOptions) (runtime.Object, error) {
			return c.kube.BatchV1().CronJobs(ns).List(ctx, opts)
		}, uses: func(cat *sampleusage.Catalog, obj runtime.Object) []sampleusage.Use {
			j := obj.(*batchv1.CronJob)
			return cat.Workload("CronJob", j, &j.Spec.JobTemplate.Spec.Template.Spec)
		}},
		{gvr: corev1.SchemeGroupVersion.WithResource("pods"), list: func(ctx context.Context, ns string, opts metav1.ListOptions) (runtime.Object, error) {
			return c.kube.CoreV1().Pods(ns).List(ctx, opts)
		}, uses: func(cat *sampleusage.Catalog, obj runtime.Object) []sampleusage.Use {
			return cat.Pod(obj.(*corev1.Pod))
		}},
		{gvr: templatev1.GroupVersion.WithResource("templateinstances"), templates: true, list: func(ctx context.Context, ns string, opts metav1.ListOptions) (runtime.Object, error) {
			return c.template.TemplateV1().TemplateInstances(ns).List(ctx, opts)
		}, uses: func(cat *sampleusage.Catalog, obj runtime.Object) []sampleusage.Use {
			return cat.TemplateInstance(obj.(*templatev1.TemplateInstance))
		}},
	}
}

// usersFound is what findUsers found: the users, what could not be seen, and the kinds the
// cluster does not serve (nothing of them to count).
type usersFound struct {
	users     []sampleusage.Use
	notSeen   []string
	notServed []string
}

// findUsers reads every kind that can use the target, all kinds at once, each in pages.
func (o *options) findUsers(ctx context.Context, v *samplesView, target sampleusage.Target) (usersFound, error) {
	cat := v.catalog()
	l := &lister{c: o.clients, namespaces: o.namespaces}
	var (
		mu      sync.Mutex
		users   []sampleusage.Use
		notSeen = map[string][]string{}
		g       errgroup.Group
	)
	kinds := o.workloadKinds()
	for _, k := range kinds {
		if target.Template != "" && !k.templates || target.ImageStream != "" && k.templates {
			continue
		}
		g.Go(func() error {
			if !l.served(k.gvr) {
				// Asked first, as listing an unserved kind is refused to whoever may not list
				// it, which would pass for a kind they may not see.
				l.notServedBy(k.gvr.Resource)
				return nil
			}
			var found []sampleusage.Use
			unseen, err := l.each(ctx, k.gvr.Resource, k.list, func(obj runtime.Object) {
				for _, u := range k.uses(cat, obj) {
					if target.Matches(u) {
						found = append(found, u)
					}
				}
			})
			mu.Lock()
			defer mu.Unlock()
			users = append(users, found...)
			notSeen[k.gvr.Resource] = unseen
			return err
		})
	}
	if err := g.Wait(); err != nil {
		return usersFound{}, err
	}
	sampleusage.Sort(users)
	r := usersFound{users: users}
	notServed := l.notServedKinds()
	for _, k := range kinds { // in a fixed order
		r.notSeen = append(r.notSeen, notSeen[k.gvr.Resource]...)
		if slices.Contains(notServed, k.gvr.Resource) {
			r.notServed = append(r.notServed, k.gvr.Resource)
		}
	}
	return r, nil
}
