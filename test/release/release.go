// Package release builds, from an operator's manifests/, the release payload directory that the
// cluster-version operator reads with PAYLOAD_OVERRIDE, doing to the manifests what
// `oc adm release new` does when it puts an operator into a release image:
//
//   - a manifest file F whose name does not start with "0000_" becomes
//     "0000_50_<component>_F", where component is the tag of the operator's own image;
//   - every image that the operator's image-references names (a tag's from.name) is replaced
//     by the release's pull spec of that tag, and the operator's image-references itself is
//     not copied;
//   - "0.0.1-snapshot" becomes the release version;
//   - every YAML file must hold kind and apiVersion in its first document;
//   - release-metadata (kind cincinnati-metadata-v0) and image-references (the release's
//     ImageStream, named after the version) are written next to the manifests.
//
// The payload directory holds release-manifests/ with all of that and an empty manifests/
// (the CVO's own manifests, which a test does not need).
package release

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strings"

	imagev1 "github.com/openshift/api/image/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/yaml"

	"github.com/samples-operator-dev/cluster-samples-operator/pkg/payload"
)

const (
	// SnapshotVersion is the placeholder that the release tooling replaces with the release
	// version in every manifest.
	SnapshotVersion = "0.0.1-snapshot"
	// DefaultRepository is where the release and its component images are said to live. Nothing
	// ever pulls them.
	DefaultRepository = "registry.release.test/ocp/release"
	// ManifestsDir and ReleaseManifestsDir are the two directories of a payload.
	ManifestsDir        = "manifests"
	ReleaseManifestsDir = "release-manifests"
	// MetadataFile and ImageReferencesFile are written into ReleaseManifestsDir.
	MetadataFile        = "release-metadata"
	ImageReferencesFile = "image-references"
	// runLevel is the run level `oc adm release new` gives an operator's manifests that carry
	// none of their own.
	runLevel = 50
)

// Options says what release to build.
type Options struct {
	// Version is the release version, e.g. 4.21.3.
	Version string
	// Component is the image tag the manifests are prefixed with. Default:
	// payload.OperatorImageTag.
	Component string
	// Repository holds the release image (Repository:Version) and its component images
	// (Repository@sha256:...). Default: DefaultRepository.
	Repository string
	// Previous lists the versions release-metadata says this release updates from.
	Previous []string
}

// Payload is a built payload directory.
type Payload struct {
	Dir          string
	Version      string
	ReleaseImage string
	// Images maps each tag of the operator's image-references to the release's pull spec.
	Images map[string]string
	// Files are the names written into release-manifests/, in the CVO's (name) order, without
	// release-metadata and image-references.
	Files []string
}

// ManifestsPath is the path of one manifest of the payload.
func (p *Payload) ManifestsPath(file string) string {
	return filepath.Join(p.Dir, ReleaseManifestsDir, file)
}

// Build writes into dir (created if missing, and expected empty) the payload made of the
// manifests in fsys: every regular file at its top except image-references, which says what
// images to substitute.
func Build(fsys fs.FS, dir string, opts Options) (*Payload, error) {
	if opts.Version == "" {
		return nil, fmt.Errorf("a release needs a version")
	}
	if opts.Component == "" {
		opts.Component = payload.OperatorImageTag
	}
	if opts.Repository == "" {
		opts.Repository = DefaultRepository
	}
	refs, err := payload.ReadImageReferences(fsys)
	if err != nil {
		return nil, err
	}
	p := &Payload{
		Dir:          dir,
		Version:      opts.Version,
		ReleaseImage: opts.Repository + ":" + opts.Version,
		Images:       map[string]string{},
	}
	for _, r := range refs {
		p.Images[r.Tag] = opts.Repository + "@" + componentDigest(opts.Version, r.Tag)
	}

	entries, err := fs.ReadDir(fsys, ".")
	if err != nil {
		return nil, err
	}
	out := map[string][]byte{}
	for _, e := range entries {
		if !e.Type().IsRegular() || e.Name() == payload.ImageReferencesFile {
			continue
		}
		data, err := fs.ReadFile(fsys, e.Name())
		if err != nil {
			return nil, err
		}
		if isYAML(e.Name()) {
			if err := checkFirstDocument(e.Name(), data); err != nil {
				return nil, err
			}
		}
		data = substituteImages(data, refs, p.Images)
		data = bytes.ReplaceAll(data, []byte(SnapshotVersion), []byte(opts.Version))
		name := e.Name()
		if !strings.HasPrefix(name, "0000_") {
			name = fmt.Sprintf("0000_%02d_%s_%s", runLevel, opts.Component, name)
		}
		if _, dup := out[name]; dup {
			return nil, fmt.Errorf("two manifests become %s", name)
		}
		out[name] = data
	}

	metadata, err := json.Marshal(map[string]any{
		"kind":     "cincinnati-metadata-v0",
		"version":  opts.Version,
		"previous": append([]string{}, opts.Previous...),
		"metadata": map[string]string{},
	})
	if err != nil {
		return nil, err
	}
	stream := imagev1.ImageStream{
		TypeMeta:   metav1.TypeMeta{Kind: "ImageStream", APIVersion: "image.openshift.io/v1"},
		ObjectMeta: metav1.ObjectMeta{Name: opts.Version},
	}
	for _, r := range refs {
		stream.Spec.Tags = append(stream.Spec.Tags, imagev1.TagReference{
			Name: r.Tag,
			From: &corev1.ObjectReference{Kind: "DockerImage", Name: p.Images[r.Tag]},
		})
	}
	imageRefs, err := json.MarshalIndent(stream, "", "  ")
	if err != nil {
		return nil, err
	}

	release := filepath.Join(dir, ReleaseManifestsDir)
	for _, d := range []string{release, filepath.Join(dir, ManifestsDir)} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			return nil, err
		}
	}
	for name, data := range out {
		if err := os.WriteFile(filepath.Join(release, name), data, 0o644); err != nil {
			return nil, err
		}
		p.Files = append(p.Files, name)
	}
	sort.Strings(p.Files)
	if err := os.WriteFile(filepath.Join(release, MetadataFile), metadata, 0o644); err != nil {
		return nil, err
	}
	if err := os.WriteFile(filepath.Join(release, ImageReferencesFile), imageRefs, 0o644); err != nil {
		return nil, err
	}
	return p, nil
}

// componentDigest is a made-up but stable digest for a component image of a release.
func componentDigest(version, tag string) string {
	sum := sha256.Sum256([]byte(version + "/" + tag))
	return "sha256:" + hex.EncodeToString(sum[:])
}

func isYAML(name string) bool {
	ext := path.Ext(name)
	return ext == ".yaml" || ext == ".yml"
}

// checkFirstDocument rejects a YAML file whose first document lacks kind or apiVersion, as the
// release tooling does.
func checkFirstDocument(name string, data []byte) error {
	first := data
	for _, sep := range []string{"\n---\n", "\n---\r\n"} {
		if i := bytes.Index(first, []byte(sep)); i >= 0 {
			first = first[:i]
		}
	}
	if bytes.HasPrefix(first, []byte("---\n")) {
		first = first[4:]
	}
	var h struct {
		APIVersion string `json:"apiVersion"`
		Kind       string `json:"kind"`
	}
	if err := yaml.Unmarshal(first, &h); err != nil {
		return fmt.Errorf("%s: %w", name, err)
	}
	if h.APIVersion == "" || h.Kind == "" {
		return fmt.Errorf("%s: the first document has no kind or apiVersion", name)
	}
	return nil
}

// substituteImages replaces each image of refs where it stands as a whole image reference: the
// characters around it may not continue a pull spec.
func substituteImages(data []byte, refs []payload.ImageReference, images map[string]string) []byte {
	// Longest first, so that an image that is a prefix of another cannot take its place.
	sorted := append([]payload.ImageReference{}, refs...)
	sort.Slice(sorted, func(i, j int) bool { return len(sorted[i].Image) > len(sorted[j].Image) })
	for _, r := range sorted {
		data = replaceWhole(data, []byte(r.Image), []byte(images[r.Tag]))
	}
	return data
}

func replaceWhole(data, old, repl []byte) []byte {
	var out bytes.Buffer
	for {
		i := bytes.Index(data, old)
		if i < 0 {
			out.Write(data)
			return out.Bytes()
		}
		end := i + len(old)
		whole := (i == 0 || !pullSpecByte(data[i-1])) && (end == len(data) || !pullSpecByte(data[end]))
		out.Write(data[:i])
		if whole {
			out.Write(repl)
		} else {
			out.Write(old)
		}
		data = data[end:]
	}
}

func pullSpecByte(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || strings.IndexByte("._-/:@", c) >= 0
}
