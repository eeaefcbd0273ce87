// Package sampleusage tells, without clients, which workloads use the samples: the references of
// BuildConfigs, DeploymentConfigs, trigger-annotated workloads, TemplateInstances and pods that
// point at a sample imagestream of the samples namespace, or at an image one of its tags
// imported, and the TemplateInstances made from a sample template. `oc samples usage` feeds it
// what the caller may list; it decides what counts as a use.
package sampleusage

import (
	"cmp"
	"slices"
	"strings"

	appsv1 "github.com/openshift/api/apps/v1"
	buildv1 "github.com/openshift/api/build/v1"
	imagev1 "github.com/openshift/api/image/v1"
	templatev1 "github.com/openshift/api/template/v1"
	"github.com/openshift/library-go/pkg/image/reference"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/samples-operator-dev/cluster-samples-operator/pkg/imagerefs"
)

// How a workload uses a sample, as `usage` prints it.
const (
	ViaStrategy        = "build strategy image"
	ViaSourceImage     = "build source image"
	ViaImageChange     = "ImageChange trigger"
	ViaTriggerAnnot    = imagerefs.TriggersAnnotation
	ViaContainerImage  = "container image"
	ViaRunningImage    = "running image"
	ViaTemplate        = "made from the template"
	imageStreamTagKind = "ImageStreamTag"
	imageStreamImgKind = "ImageStreamImage"
	dockerImageKind    = "DockerImage"
)

// Sample names what a workload uses: an imagestream (with the tag, "" when the reference names
// the stream's repository without one) or a template.
type Sample struct {
	ImageStream string `json:"imagestream,omitempty"`
	Tag         string `json:"tag,omitempty"`
	Template    string `json:"template,omitempty"`
}

func (s Sample) String() string {
	switch {
	case s.Template != "":
		return s.Template
	case s.Tag != "":
		return s.ImageStream + ":" + s.Tag
	}
	return s.ImageStream
}

// Use is one workload using one sample.
type Use struct {
	Sample    Sample `json:"sample"`
	Kind      string `json:"kind"`
	Namespace string `json:"namespace"`
	Name      string `json:"name"`
	// Via is how it uses it (one of the Via constants).
	Via string `json:"via"`
	// Follows are the tags of the stream that Sample.Tag follows, nearest first ("latest" takes
	// the image of "3.3-ubi9"): the use counts for each of them too.
	Follows []string `json:"follows,omitempty"`
}

// same: one use, whatever it follows (that comes from the stream).
func (u Use) same(o Use) bool {
	return u.Sample == o.Sample && u.Kind == o.Kind && u.Namespace == o.Namespace && u.Name == o.Name && u.Via == o.Via
}

// Catalog is what identifies the samples in other objects' references.
type Catalog struct {
	namespace string
	streams   map[string]bool
	templates map[string]bool
	// repositories maps a stream's repository in the internal registry (and its public name,
	// when exposed) to the stream.
	repositories map[string]string
	// imported maps each image a sample tag imported, now or before, to its tags.
	imported map[string][]Sample
	// follows maps each sample tag ("stream:tag") on the cluster to the tags it follows, as the
	// stream's spec says; computed once, shared by every use (and read by concurrent callers).
	follows map[string][]string
}

// NewCatalog knows the imagestreams and templates named (the inventory's and the retired ones)
// in namespace, and, from the live streams, the repositories they are pushed to and every
// image their tags imported.
func NewCatalog(namespace string, streamNames, templateNames []string, live []*imagev1.ImageStream) *Catalog {
	c := &Catalog{
		namespace:    namespace,
		streams:      map[string]bool{},
		templates:    map[string]bool{},
		repositories: map[string]string{},
		imported:     map[string][]Sample{},
		follows:      map[string][]string{},
	}
	for _, n := range streamNames {
		c.streams[n] = true
	}
	for _, n := range templateNames {
		c.templates[n] = true
	}
	for _, is := range live {
		if !c.streams[is.Name] {
			continue
		}
		for _, tag := range is.Spec.Tags {
			if followed := imagerefs.FollowedTags(is, tag.Name); len(followed) > 0 {
				c.follows[is.Name+":"+tag.Name] = followed
			}
		}
		for _, repo := range []string{is.Status.DockerImageRepository, is.Status.PublicDockerImageRepository} {
			if repo != "" {
				c.repositories[repo] = is.Name
			}
		}
		for _, tag := range is.Status.Tags {
			for _, item := range tag.Items {
				if item.Image == "" {
					continue
				}
				s := Sample{ImageStream: is.Name, Tag: tag.Tag}
				if !slices.Contains(c.imported[item.Image], s) {
					c.imported[item.Image] = append(c.imported[item.Image], s)
				}
			}
		}
	}
	return c
}

// refs collects a workload's uses, each once.
type refs struct {
	c    *Catalog
	kind string
	meta metav1.Object
	uses []Use
}

func (c *Catalog) refsOf(kind string, meta metav1.Object) *refs {
	return &refs{c: c, kind: kind, meta: meta}
}

func (r *refs) add(s Sample, via string) {
	u := Use{Sample: s, Kind: r.kind, Namespace: r.meta.GetNamespace(), Name: r.meta.GetName(), Via: via}
	if s.ImageStream != "" && s.Tag != "" {
		u.Follows = r.c.follows[s.String()]
	}
	if !slices.ContainsFunc(r.uses, u.same) {
		r.uses = append(r.uses, u)
	}
}

// object adds the sample an ObjectReference of the image API points at, if any.
func (r *refs) object(kind, namespace, name, via string) {
	if namespace == "" {
		namespace = r.meta.GetNamespace()
	}
	switch kind {
	case imageStreamTagKind:
		stream, tag, found := strings.Cut(name, ":")
		if !found {
			tag = "latest"
		}
		if namespace == r.c.namespace && r.c.streams[stream] {
			r.add(Sample{ImageStream: stream, Tag: tag}, via)
		}
	case imageStreamImgKind:
		stream, id, _ := strings.Cut(name, "@")
		if namespace == r.c.namespace && r.c.streams[stream] {
			r.image(stream, id, via)
		}
	case dockerImageKind:
		r.pullSpec(name, via)
	}
}

// image adds the tags of stream that imported the image id, or the stream alone when none did.
func (r *refs) image(stream, id, via string) {
	found := false
	for _, s := range r.c.imported[id] {
		if s.ImageStream == stream {
			r.add(s, via)
			found = true
		}
	}
	if !found {
		r.add(Sample{ImageStream: stream}, via)
	}
}

// pullSpec adds what a pull spec points at: a sample's repository in the internal registry, or an
// image a sample tag imported, wherever it is pulled from.
func (r *refs) pullSpec(spec, via string) {
	ref, err := reference.Parse(spec)
	if err != nil {
		return
	}
	repo := ref.AsRepository().Exact()
	if stream, ok := r.c.repositories[repo]; ok {
		switch {
		case ref.ID != "":
			r.image(stream, ref.ID, via)
		case ref.Tag != "":
			r.add(Sample{ImageStream: stream, Tag: ref.Tag}, via)
		default:
			r.add(Sample{ImageStream: stream, Tag: "latest"}, via)
		}
		return
	}
	if ref.ID != "" {
		for _, s := range r.c.imported[ref.ID] {
			r.add(s, via)
		}
	}
}

func (r *refs) containers(spec *corev1.PodSpec, via string) {
	if spec == nil {
		return
	}
	for _, c := range spec.InitContainers {
		r.pullSpec(c.Image, via)
	}
	for _, c := range spec.Containers {
		r.pullSpec(c.Image, via)
	}
}

func (r *refs) sorted() []Use {
	Sort(r.uses)
	return r.uses
}

// BuildConfig: the strategy's image, source images, and ImageChange triggers (a trigger without
// from follows the strategy's image).
func (c *Catalog) BuildConfig(bc *buildv1.BuildConfig) []Use {
	r := c.refsOf("BuildConfig", bc)
	var strategyFrom *corev1.ObjectReference
	switch s := bc.Spec.Strategy; {
	case s.SourceStrategy != nil:
		strategyFrom = &s.SourceStrategy.From
	case s.DockerStrategy != nil:
		strategyFrom = s.DockerStrategy.From
	case s.CustomStrategy != nil:
		strategyFrom = &s.CustomStrategy.From
	}
	if strategyFrom != nil {
		r.object(strategyFrom.Kind, strategyFrom.Namespace, strategyFrom.Name, ViaStrategy)
	}
	for _, img := range bc.Spec.Source.Images {
		r.object(img.From.Kind, img.From.Namespace, img.From.Name, ViaSourceImage)
	}
	for _, t := range bc.Spec.Triggers {
		if t.Type != buildv1.ImageChangeBuildTriggerType || t.ImageChange == nil {
			continue
		}
		from := t.ImageChange.From
		if from == nil {
			from = strategyFrom
		}
		if from != nil {
			r.object(from.Kind, from.Namespace, from.Name, ViaImageChange)
		}
	}
	return r.sorted()
}

// DeploymentConfig: ImageChange triggers and the images of its pod template.
func (c *Catalog) DeploymentConfig(dc *appsv1.DeploymentConfig) []Use {
	r := c.refsOf("DeploymentConfig", dc)
	for _, t := range dc.Spec.Triggers {
		if t.Type == appsv1.DeploymentTriggerOnImageChange && t.ImageChangeParams != nil {
			from := t.ImageChangeParams.From
			r.object(from.Kind, from.Namespace, from.Name, ViaImageChange)
		}
	}
	if dc.Spec.Template != nil {
		r.containers(&dc.Spec.Template.Spec, ViaContainerImage)
	}
	return r.sorted()
}

// Workload: a Deployment, StatefulSet, DaemonSet or CronJob: the image.openshift.io/triggers
// annotation and the images of its pod template (nil when it has none).
func (c *Catalog) Workload(kind string, meta metav1.Object, template *corev1.PodSpec) []Use {
	r := c.refsOf(kind, meta)
	// A malformed annotation triggers nothing on the cluster either.
	if value, found := meta.GetAnnotations()[imagerefs.TriggersAnnotation]; found {
		refs, _ := imagerefs.Triggers(value)
		for _, from := range refs {
			r.object(from.Kind, from.Namespace, from.Name, ViaTriggerAnnot)
		}
	}
	r.containers(template, ViaContainerImage)
	return r.sorted()
}

// TemplateInstance: made from a sample template (the template it carries has the sample's name).
func (c *Catalog) TemplateInstance(ti *templatev1.TemplateInstance) []Use {
	r := c.refsOf("TemplateInstance", ti)
	if c.templates[ti.Spec.Template.Name] {
		r.add(Sample{Template: ti.Spec.Template.Name}, ViaTemplate)
	}
	return r.sorted()
}

// Pod: a pod that has not ended, whose containers run a sample's image (as written in the spec,
// or as the kubelet resolved it).
func (c *Catalog) Pod(pod *corev1.Pod) []Use {
	r := c.refsOf("Pod", pod)
	if pod.Status.Phase == corev1.PodSucceeded || pod.Status.Phase == corev1.PodFailed {
		return nil
	}
	r.containers(&pod.Spec, ViaRunningImage)
	for _, statuses := range [][]corev1.ContainerStatus{pod.Status.InitContainerStatuses, pod.Status.ContainerStatuses} {
		for _, st := range statuses {
			if _, id, found := strings.Cut(st.ImageID, "@"); found {
				for _, s := range c.imported[id] {
					r.add(s, ViaRunningImage)
				}
			}
		}
	}
	return r.sorted()
}

// Sort orders uses by sample, then namespace, kind, name and how.
func Sort(uses []Use) {
	slices.SortFunc(uses, func(a, b Use) int {
		return cmp.Or(
			cmp.Compare(a.Sample.String(), b.Sample.String()),
			cmp.Compare(a.Namespace, b.Namespace),
			cmp.Compare(a.Kind, b.Kind),
			cmp.Compare(a.Name, b.Name),
			cmp.Compare(a.Via, b.Via),
		)
	})
}

// Target is what `usage` and `skip` ask about: a whole imagestream, one tag of it, or a template.
type Target struct {
	ImageStream string
	Tag         string
	Template    string
}

// Matches reports whether the use falls under the target (the zero Target matches every use). A
// use of a stream without a tag (a pull by an image the stream has but no tag names) falls under
// each of its tags; a use of a tag, under each tag it follows.
func (t Target) Matches(u Use) bool {
	switch {
	case t.Template != "":
		return u.Sample.Template == t.Template
	case t.ImageStream != "":
		return u.Sample.ImageStream == t.ImageStream && (t.Tag == "" || u.Sample.Tag == "" || u.Sample.Tag == t.Tag || slices.Contains(u.Follows, t.Tag))
	}
	return true
}
