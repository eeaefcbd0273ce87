// Package inventory parses, validates and queries the sample inventory: the ImageStreams and
// Templates that the operator installs into the openshift namespace.
//
// The package is pure. It reads files from an fs.FS (the embedded assets or a directory),
// never talks to a cluster, and keeps no package-level mutable state. An *Inventory is
// immutable after Load: every accessor returns a deep copy, so it can be shared by all
// controllers and parsed once per process.
//
// Layout of one architecture directory (see assets/ and spec section 4.2):
//
//	<arch-dir>/<group>/imagestreams/<file>.json   one image.openshift.io/v1 ImageStream per file
//	<arch-dir>/<group>/templates/<file>.json      one template.openshift.io/v1 Template per file
//
// The identity of a sample is metadata.name, not the file name.
package inventory

import (
	"slices"

	imagev1 "github.com/openshift/api/image/v1"
	templatev1 "github.com/openshift/api/template/v1"
	corev1 "k8s.io/api/core/v1"
)

// Inventory is the validated content of one architecture directory.
type Inventory struct {
	imageStreams map[string]*imagev1.ImageStream
	templates    map[string]*templatev1.Template
	// files maps each sample to the file that defined it, for messages.
	imageStreamFiles map[string]string
	templateFiles    map[string]string
	imageStreamNames []string
	templateNames    []string
	sourceRegistries []string
}

// ImageStreamNames returns the names of all imagestreams, sorted.
func (inv *Inventory) ImageStreamNames() []string { return slices.Clone(inv.imageStreamNames) }

// TemplateNames returns the names of all templates, sorted.
func (inv *Inventory) TemplateNames() []string { return slices.Clone(inv.templateNames) }

// ImageStream returns a deep copy of the named imagestream, exactly as in its file
// (no registry rewrite). The second result is false when there is no such imagestream.
func (inv *Inventory) ImageStream(name string) (*imagev1.ImageStream, bool) {
	is, ok := inv.imageStreams[name]
	if !ok {
		return nil, false
	}
	return is.DeepCopy(), true
}

// TagNames returns the names of the named imagestream's tags, in file order, without copying
// the stream: controllers that only need the tags ask at every sync. Nil when there is no such
// imagestream.
func (inv *Inventory) TagNames(stream string) []string {
	is, ok := inv.imageStreams[stream]
	if !ok {
		return nil
	}
	names := make([]string, 0, len(is.Spec.Tags))
	for _, t := range is.Spec.Tags {
		names = append(names, t.Name)
	}
	return names
}

// Template returns a deep copy of the named template.
func (inv *Inventory) Template(name string) (*templatev1.Template, bool) {
	t, ok := inv.templates[name]
	if !ok {
		return nil, false
	}
	return t.DeepCopy(), true
}

// ImageStreamFile returns the path of the file that defines the named imagestream.
func (inv *Inventory) ImageStreamFile(name string) (string, bool) {
	p, ok := inv.imageStreamFiles[name]
	return p, ok
}

// TemplateFile returns the path of the file that defines the named template.
func (inv *Inventory) TemplateFile(name string) (string, bool) {
	p, ok := inv.templateFiles[name]
	return p, ok
}

// ImagesToMirror returns the sorted, de-duplicated pull specs of every DockerImage tag of
// every imagestream, as written in the inventory (before any samplesRegistry rewrite).
// These are the images an administrator mirrors for a disconnected cluster.
func (inv *Inventory) ImagesToMirror() []string {
	return inv.ImagesToMirrorExcept(nil)
}

// ImagesToMirrorExcept is ImagesToMirror without the images only tags for which skip is true
// use (nil skips none).
func (inv *Inventory) ImagesToMirrorExcept(skip func(stream, tag string) bool) []string {
	var refs []string
	for _, name := range inv.imageStreamNames {
		for _, tag := range inv.imageStreams[name].Spec.Tags {
			if isDockerImage(tag.From) && (skip == nil || !skip(name, tag.Name)) {
				refs = append(refs, tag.From.Name)
			}
		}
	}
	slices.Sort(refs)
	return slices.Compact(refs)
}

// TagToImage returns the data of the imagestreamtag-to-image ConfigMap: for every
// DockerImage tag of every imagestream, the key "<imagestream>_<tag>" maps to the tag's
// from.name before any registry rewrite. Unlike upstream, jenkins streams are included.
func (inv *Inventory) TagToImage() map[string]string {
	m := map[string]string{}
	for _, name := range inv.imageStreamNames {
		for _, tag := range inv.imageStreams[name].Spec.Tags {
			if isDockerImage(tag.From) {
				m[name+"_"+tag.Name] = tag.From.Name
			}
		}
	}
	return m
}

// SourceRegistries returns the sorted registry hosts that the inventory's DockerImage
// references (and any spec.dockerImageRepository) pull from. RewriteRegistry replaces
// exactly these hosts.
func (inv *Inventory) SourceRegistries() []string { return slices.Clone(inv.sourceRegistries) }

// isDockerImage reports whether a tag's from names an image by pull spec: the tags the samples
// import, as opposed to those that follow another tag of their stream.
func isDockerImage(from *corev1.ObjectReference) bool {
	return from != nil && from.Kind == kindDockerImage
}

func (inv *Inventory) computeSourceRegistries() []string {
	var hosts []string
	add := func(ref string) {
		if h, _ := splitRegistryHost(ref); h != "" {
			hosts = append(hosts, h)
		}
	}
	for _, name := range inv.imageStreamNames {
		is := inv.imageStreams[name]
		add(is.Spec.DockerImageRepository)
		for _, tag := range is.Spec.Tags {
			if isDockerImage(tag.From) {
				add(tag.From.Name)
			}
		}
	}
	slices.Sort(hosts)
	return slices.Compact(hosts)
}

// ImageStreamForRegistry returns a deep copy of the named imagestream with samplesRegistry
// applied (see RewriteImageStream); an empty samplesRegistry returns it unchanged.
func (inv *Inventory) ImageStreamForRegistry(name, samplesRegistry string) (*imagev1.ImageStream, bool) {
	is, ok := inv.imageStreams[name]
	if !ok {
		return nil, false
	}
	return RewriteImageStream(is, samplesRegistry, inv.sourceRegistries), true
}
