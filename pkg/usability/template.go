package usability

import (
	"encoding/json"
	"fmt"
	"regexp"
	"slices"
	"strings"

	imagev1 "github.com/openshift/api/image/v1"
	templatev1 "github.com/openshift/api/template/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/samples-operator-dev/cluster-samples-operator/pkg/desired"
	"github.com/samples-operator-dev/cluster-samples-operator/pkg/imagerefs"
	"github.com/samples-operator-dev/cluster-samples-operator/pkg/names"
)

const imageStreamTagKind = "ImageStreamTag"

// ForTemplate is whether the template can be instantiated on this cluster: not when it creates a
// kind the cluster does not serve (a legacy "v1" OpenShift kind counts as its group's), nor when
// an object names, once the parameters take their default values, an ImageStreamTag of the
// samples namespace that is missing, skipped, retired, not imported or unusable on the nodes.
// Images are named by a BuildConfig's strategy, a DeploymentConfig's ImageChange triggers and
// any object's image.openshift.io/triggers annotation. A retired template is judged like any
// other (its retirement is marked elsewhere).
func ForTemplate(t *templatev1.Template, c Cluster) Verdict {
	return Read(t).Verdict(c)
}

// Facts are what a template's objects say that decides whether it can work here: their kinds
// and the images they name, parameters substituted. Reading them is most of a verdict's cost,
// and a template the operator installs does not change while it runs: read it once.
type Facts struct {
	name    string
	objects []object
}

// Read reads a template's facts.
func Read(t *templatev1.Template) Facts {
	p := newParameters(t)
	f := Facts{name: t.Name, objects: make([]object, 0, len(t.Objects))}
	for _, raw := range t.Objects {
		f.objects = append(f.objects, decodeObject(raw, p))
	}
	return f
}

// GroupVersions are the group/versions whose kinds decide the templates' verdicts: those of
// their objects whose apiVersion and kind the parameters' defaults resolve, sorted. Discovery of
// these alone is what Cluster.Served needs.
func GroupVersions(templates []Facts) []schema.GroupVersion {
	seen := map[schema.GroupVersion]bool{}
	var out []schema.GroupVersion
	for _, f := range templates {
		for _, o := range f.objects {
			if o.kindKnown && !seen[o.gv] {
				seen[o.gv] = true
				out = append(out, o.gv)
			}
		}
	}
	slices.SortFunc(out, func(a, b schema.GroupVersion) int { return strings.Compare(a.String(), b.String()) })
	return out
}

// Verdict is ForTemplate of the template the facts were read from.
func (f Facts) Verdict(c Cluster) Verdict {
	var reasons []Reason
	for _, o := range f.objects {
		if r, ok := kindReason(o, c); ok {
			reasons = append(reasons, r)
		}
		for _, ref := range o.images {
			if r, ok := imageReason(ref, c); ok {
				reasons = append(reasons, r)
			}
		}
	}
	return Verdict{Kind: KindTemplate, Name: f.name, Reasons: sortReasons(reasons)}
}

// parameters are a template's parameters that have a default value, by name; one without (a
// generated or a required value) is known only when the template is instantiated.
type parameters map[string]string

func newParameters(t *templatev1.Template) parameters {
	p := parameters{}
	for _, param := range t.Parameters {
		if param.Value != "" {
			p[param.Name] = param.Value
		}
	}
	return p
}

// parameterRE is a parameter's use in a string: ${NAME}, or ${{NAME}} (which the template
// processor writes as a JSON value; inside a string, the same text).
var parameterRE = regexp.MustCompile(`\$\{\{([A-Za-z0-9_]+)\}\}|\$\{([A-Za-z0-9_]+)\}`)

// substitute writes each parameter's default value in s; a parameter without one is left as
// written.
func (p parameters) substitute(s string) string {
	return parameterRE.ReplaceAllStringFunc(s, func(use string) string {
		m := parameterRE.FindStringSubmatch(use)
		if value, ok := p[m[1]+m[2]]; ok {
			return value
		}
		return use
	})
}

// resolved reports whether no parameter is left in a substituted string.
func resolved(s string) bool { return !parameterRE.MatchString(s) }

// object is what a template object says that matters here, parameters substituted.
type object struct {
	apiVersion, kind string
	images           []corev1.ObjectReference
	// kindKnown: the parameters' defaults resolve apiVersion and kind, which name gv. Read
	// once with the facts: a verdict is made at every import of a stream, over every template.
	kindKnown bool
	gv        schema.GroupVersion
}

// decodeObject reads a template object. Each part is read on its own: a field that does not
// decode (a "${{REPLICAS}}" where a number belongs) hides nothing else.
func decodeObject(raw runtime.RawExtension, p parameters) object {
	data := raw.Raw
	if len(data) == 0 && raw.Object != nil {
		data, _ = json.Marshal(raw.Object)
	}
	var header struct {
		APIVersion string `json:"apiVersion"`
		Kind       string `json:"kind"`
		Metadata   struct {
			Annotations map[string]string `json:"annotations"`
		} `json:"metadata"`
	}
	_ = json.Unmarshal(data, &header)
	o := object{apiVersion: p.substitute(header.APIVersion), kind: p.substitute(header.Kind)}
	if o.kind != "" && resolved(o.apiVersion) && resolved(o.kind) {
		o.gv, o.kindKnown = groupVersionOf(o.apiVersion, o.kind)
	}
	from := func(ref *corev1.ObjectReference) {
		if ref != nil {
			o.images = append(o.images, corev1.ObjectReference{Kind: p.substitute(ref.Kind), Namespace: p.substitute(ref.Namespace), Name: p.substitute(ref.Name)})
		}
	}

	if value, ok := header.Metadata.Annotations[imagerefs.TriggersAnnotation]; ok {
		// Substituted as a whole, as the template processor does, then read as the trigger
		// controller reads it.
		refs, _ := imagerefs.Triggers(p.substitute(value))
		for _, from := range refs {
			o.images = append(o.images, corev1.ObjectReference{Kind: from.Kind, Namespace: from.Namespace, Name: from.Name})
		}
	}

	switch o.kind {
	case "BuildConfig":
		type strategy struct {
			From *corev1.ObjectReference `json:"from"`
		}
		var bc struct {
			Spec struct {
				Strategy struct {
					Source *strategy `json:"sourceStrategy"`
					Docker *strategy `json:"dockerStrategy"`
					Custom *strategy `json:"customStrategy"`
				} `json:"strategy"`
			} `json:"spec"`
		}
		_ = json.Unmarshal(data, &bc)
		for _, s := range []*strategy{bc.Spec.Strategy.Source, bc.Spec.Strategy.Docker, bc.Spec.Strategy.Custom} {
			if s != nil {
				from(s.From)
			}
		}
	case "DeploymentConfig":
		var dc struct {
			Spec struct {
				Triggers []struct {
					ImageChangeParams *struct {
						From corev1.ObjectReference `json:"from"`
					} `json:"imageChangeParams"`
				} `json:"triggers"`
			} `json:"spec"`
		}
		_ = json.Unmarshal(data, &dc)
		for _, t := range dc.Spec.Triggers {
			if t.ImageChangeParams != nil {
				from(&t.ImageChangeParams.From)
			}
		}
	}
	return o
}

// kindReason is the reason a template cannot create the object: discovery does not list its
// kind. None when its kind or group is unknown, or discovery was not seen.
func kindReason(o object, c Cluster) (Reason, bool) {
	gv := o.gv
	if c.Served == nil || !o.kindKnown || c.Unknown.Has(gv.Group) || c.Served[gv].Has(o.kind) {
		return Reason{}, false
	}
	return Reason{Code: KindNotServed, Message: fmt.Sprintf("creates %s %s, which this cluster does not serve", gv, o.kind)}, true
}

// imageReason is the reason the ImageStreamTag ref names, if it is one of the samples
// namespace, makes a template unusable: one, the first of skipped, missing, retired, not
// imported and unusable on the nodes. None for a reference a parameter without a default value
// leaves unknown, or when the streams were not seen.
func imageReason(ref corev1.ObjectReference, c Cluster) (Reason, bool) {
	if c.Streams == nil || ref.Kind != imageStreamTagKind || ref.Namespace != names.SamplesNamespace || !resolved(ref.Name) {
		return Reason{}, false
	}
	stream, tag, found := strings.Cut(ref.Name, ":")
	if !found {
		tag = "latest"
	}
	if stream == "" || tag == "" {
		return Reason{}, false
	}
	image := names.SamplesNamespace + "/" + stream + ":" + tag
	reason := func(code, format string, args ...any) (Reason, bool) {
		return Reason{Code: code, Message: "image " + image + " " + fmt.Sprintf(format, args...)}, true
	}
	if c.SkippedStreams.Has(stream) || c.SkippedTags.Has(stream+":"+tag) {
		return reason(ImageSkipped, "is skipped by the Config")
	}
	// A tag the operator installs that is not there yet is on its way: no verdict until it is. A
	// stream it installs is known as one, there or not yet (even when the Config skips all its
	// tags), so that the verdict and its words are the same before and after it is created.
	pending := c.Installing.Has(stream + ":" + tag)
	is := c.Streams[stream]
	if is == nil && !pending && !c.InstallingStreams.Has(stream) {
		return reason(ImageMissing, "does not exist (no image stream %s/%s)", names.SamplesNamespace, stream)
	}
	spec, found := specTag(is, tag)
	if !found {
		if pending {
			return Reason{}, false
		}
		return reason(ImageMissing, "does not exist (image stream %s/%s has no tag %s)", names.SamplesNamespace, stream, tag)
	}
	if version, retired := is.Annotations[desired.RetiredAnnotation]; retired {
		return reason(ImageRetired, "was retired%s with its image stream", retiredIn(version))
	}
	if desired.IsRetiredTag(spec) {
		return reason(ImageRetired, "was retired%s", retiredIn(spec.Annotations[desired.RetiredAnnotation]))
	}
	if _, imported := currentImage(is, tag); !imported {
		if !importFailed(is, tag) {
			return Reason{}, false // not imported yet: pending
		}
		return reason(ImageNotImported, "has no image (its import failed)")
	}
	if r, _ := architectureVerdict(is, tag, c); r != nil {
		return reason(ImageUnusable, "is unusable: %s", r.Message)
	}
	return Reason{}, false
}

// specTag is the stream's spec tag of that name; none for a nil stream.
func specTag(is *imagev1.ImageStream, tag string) (imagev1.TagReference, bool) {
	if is == nil {
		return imagev1.TagReference{}, false
	}
	for _, t := range is.Spec.Tags {
		if t.Name == tag {
			return t, true
		}
	}
	return imagev1.TagReference{}, false
}

// retiredIn names the version that retired a sample, when the annotation gives one.
func retiredIn(version string) string {
	if version == "" {
		return ""
	}
	return " in " + version
}
