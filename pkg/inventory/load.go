package inventory

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"path"
	"regexp"
	"slices"
	"strings"

	imagev1 "github.com/openshift/api/image/v1"
	templatev1 "github.com/openshift/api/template/v1"
	"github.com/openshift/library-go/pkg/image/reference"
	"k8s.io/apimachinery/pkg/util/validation"
)

// MaxFileSize is the largest inventory file Load accepts. The biggest real sample is
// well under 100 KiB; the limit only guards against a wrong file being dropped in.
const MaxFileSize = 4 << 20

const (
	kindImageStream    = "ImageStream"
	kindTemplate       = "Template"
	kindDockerImage    = "DockerImage"
	kindImageStreamTag = "ImageStreamTag"

	imageAPIVersion    = "image.openshift.io/v1"
	templateAPIVersion = "template.openshift.io/v1"

	imageStreamsDir = "imagestreams"
	templatesDir    = "templates"
)

// FileError is one problem with one inventory file. Load returns all of them joined
// with errors.Join; use errors.As or walk the joined error to get each one.
type FileError struct {
	Path string // the file (or directory) as named to Load, prefixed by LoadDir's directory
	Err  error  // what is wrong with it
}

func (e *FileError) Error() string { return e.Path + ": " + e.Err.Error() }
func (e *FileError) Unwrap() error { return e.Err }

// tagNameRE is the syntax of an image tag (the part after ':' in a pull spec).
var tagNameRE = regexp.MustCompile(`^[A-Za-z0-9_][A-Za-z0-9_.-]{0,127}$`)

// paramNameRE is the syntax of a template parameter name.
var paramNameRE = regexp.MustCompile(`^[A-Za-z0-9_]+$`)

// imageStreamNameRE is what openshift-apiserver requires of an imagestream name on top of the
// object name rules (RepositoryNameComponentRegexp in its pkg/image/apis/image/validation): the
// name is a repository path component of the internal registry.
var imageStreamNameRE = regexp.MustCompile(`^[a-z0-9]+(?:[._-][a-z0-9]+)*$`)

// samplesNamespace is where the operator creates the samples. openshift-apiserver limits
// "<namespace>/<name>" of an imagestream to repositoryPathMax characters (distribution's
// NameTotalLengthMax).
const (
	samplesNamespace  = "openshift"
	repositoryPathMax = 255
)

// Load reads and validates the architecture directory root of fsys (for example
// "operator/ocp-x86_64" in assets.Operator). Files are classified by the name of the
// directory that holds them: imagestreams/*.json are ImageStreams and templates/*.json
// are Templates, at any depth below root. Other files are ignored, as are names starting
// with '.'.
//
// Validation: each file is at most MaxFileSize bytes and holds exactly one JSON object of
// the kind and apiVersion its directory implies ("v1" is accepted as a legacy alias and
// normalised); metadata.name is a DNS-1123 subdomain, unique per kind; metadata.namespace
// is unset; every imagestream tag has a valid name and a from of kind DockerImage
// (non-empty name) or ImageStreamTag (an existing tag of the same stream, without cycles);
// every template object has apiVersion and kind and no metadata.namespace. An imagestream
// must also pass what openshift-apiserver checks, so that no create of a sample is refused
// on a cluster: its name, every DockerImage reference (parsed as the server parses them, with
// library-go's reference package), spec.dockerImageRepository, reference policies and import
// modes, and no scheduled import of an ImageStreamTag. A tag may not set generation, which the
// server owns. Symbolic links
// are rejected (they are not followed). Every problem is reported, each as a *FileError
// naming the file, joined into one error.
func Load(fsys fs.FS, root string) (*Inventory, error) {
	return load(fsys, root, "")
}

type loader struct {
	fsys    fs.FS
	display string // prefix for paths in messages
	errs    []error
	inv     *Inventory
}

func load(fsys fs.FS, root, display string) (*Inventory, error) {
	l := &loader{
		fsys:    fsys,
		display: display,
		inv: &Inventory{
			imageStreams:     map[string]*imagev1.ImageStream{},
			templates:        map[string]*templatev1.Template{},
			imageStreamFiles: map[string]string{},
			templateFiles:    map[string]string{},
		},
	}
	if !fs.ValidPath(root) {
		return nil, &FileError{Path: l.name(root), Err: errors.New("not a valid slash-separated relative path")}
	}
	if fi, err := fs.Stat(fsys, root); err != nil {
		return nil, &FileError{Path: l.name(root), Err: fmt.Errorf("cannot read the inventory directory: %w", errUnwrapPath(err))}
	} else if !fi.IsDir() {
		return nil, &FileError{Path: l.name(root), Err: errors.New("is not a directory")}
	}
	walkErr := fs.WalkDir(fsys, root, l.visit)
	if walkErr != nil {
		l.errs = append(l.errs, &FileError{Path: l.name(root), Err: walkErr})
	}
	if len(l.errs) == 0 && len(l.inv.imageStreams) == 0 && len(l.inv.templates) == 0 {
		l.fail(root, errors.New("holds no imagestreams/*.json or templates/*.json files"))
	}
	if len(l.errs) > 0 {
		return nil, errors.Join(l.errs...)
	}
	inv := l.inv
	for name := range inv.imageStreams {
		inv.imageStreamNames = append(inv.imageStreamNames, name)
	}
	for name := range inv.templates {
		inv.templateNames = append(inv.templateNames, name)
	}
	slices.Sort(inv.imageStreamNames)
	slices.Sort(inv.templateNames)
	inv.sourceRegistries = inv.computeSourceRegistries()
	return inv, nil
}

func (l *loader) name(p string) string {
	if l.display == "" {
		return p
	}
	return l.display + "/" + p
}

func (l *loader) fail(p string, err error) {
	l.errs = append(l.errs, &FileError{Path: l.name(p), Err: err})
}

// errUnwrapPath drops the *fs.PathError wrapper, whose path we already print.
func errUnwrapPath(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}

func (l *loader) visit(p string, d fs.DirEntry, err error) error {
	if err != nil {
		l.fail(p, fmt.Errorf("cannot read: %w", errUnwrapPath(err)))
		if d != nil && d.IsDir() {
			return fs.SkipDir
		}
		return nil
	}
	if d.Type()&fs.ModeSymlink != 0 {
		l.fail(p, errors.New("is a symbolic link; the inventory must hold regular files and directories only"))
		return nil
	}
	if d.IsDir() || strings.HasPrefix(d.Name(), ".") {
		return nil
	}
	var kind string
	switch path.Base(path.Dir(p)) {
	case imageStreamsDir:
		kind = kindImageStream
	case templatesDir:
		kind = kindTemplate
	default:
		return nil // not a sample file (README, index.json, ...)
	}
	if !d.Type().IsRegular() {
		l.fail(p, fmt.Errorf("is not a regular file (mode %s)", d.Type()))
		return nil
	}
	if !strings.HasSuffix(d.Name(), ".json") {
		l.fail(p, fmt.Errorf("only .json files may be placed in %s/ directories (YAML is not supported)", path.Base(path.Dir(p))))
		return nil
	}
	data, err := readLimited(l.fsys, p)
	if err != nil {
		l.fail(p, err)
		return nil
	}
	switch kind {
	case kindImageStream:
		is, errs := parseImageStream(data)
		l.add(p, kindImageStream, is, errs)
	case kindTemplate:
		t, errs := parseTemplate(data)
		l.add(p, kindTemplate, t, errs)
	}
	return nil
}

func (l *loader) add(p, kind string, obj any, errs []error) {
	for _, err := range errs {
		l.fail(p, err)
	}
	if len(errs) > 0 {
		return
	}
	var name string
	var files map[string]string
	switch o := obj.(type) {
	case *imagev1.ImageStream:
		name, files = o.Name, l.inv.imageStreamFiles
		if _, dup := files[name]; !dup {
			l.inv.imageStreams[name] = o
		}
	case *templatev1.Template:
		name, files = o.Name, l.inv.templateFiles
		if _, dup := files[name]; !dup {
			l.inv.templates[name] = o
		}
	}
	if first, dup := files[name]; dup {
		l.fail(p, fmt.Errorf("%s %q is already defined in %s; names must be unique per kind", strings.ToLower(kind), name, first))
		return
	}
	files[name] = l.name(p)
}

func readLimited(fsys fs.FS, p string) ([]byte, error) {
	f, err := fsys.Open(p)
	if err != nil {
		return nil, fmt.Errorf("cannot open: %w", errUnwrapPath(err))
	}
	defer f.Close()
	if fi, err := f.Stat(); err == nil && fi.Size() > MaxFileSize {
		return nil, fmt.Errorf("is %d bytes, larger than the %d byte limit for an inventory file", fi.Size(), MaxFileSize)
	}
	data, err := io.ReadAll(io.LimitReader(f, MaxFileSize+1))
	if err != nil {
		return nil, fmt.Errorf("cannot read: %w", errUnwrapPath(err))
	}
	if len(data) > MaxFileSize {
		return nil, fmt.Errorf("is larger than the %d byte limit for an inventory file", MaxFileSize)
	}
	return data, nil
}

// header holds the fields every Kubernetes object has.
type header struct {
	APIVersion string `json:"apiVersion"`
	Kind       string `json:"kind"`
	Metadata   struct {
		Name      string `json:"name"`
		Namespace string `json:"namespace"`
	} `json:"metadata"`
}

// decodeOne checks that data is exactly one JSON object and returns its header.
func decodeOne(data []byte) (json.RawMessage, header, error) {
	var raw json.RawMessage
	var h header
	dec := json.NewDecoder(bytes.NewReader(data))
	if err := dec.Decode(&raw); err != nil {
		if err == io.EOF {
			return nil, h, errors.New("invalid JSON: the file is empty")
		}
		if err == io.ErrUnexpectedEOF {
			return nil, h, fmt.Errorf("invalid JSON: the file ends inside a JSON value (line %d); check for a missing '}' or ']'", 1+bytes.Count(data, []byte("\n")))
		}
		return nil, h, fmt.Errorf("invalid JSON: %s", describeJSONError(data, err))
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, h, errors.New("invalid JSON: more than one JSON value; put exactly one object in each file")
	}
	if trimmed := bytes.TrimSpace(raw); len(trimmed) == 0 || trimmed[0] != '{' {
		return nil, h, errors.New("the file must hold a JSON object")
	}
	if err := json.Unmarshal(raw, &h); err != nil {
		return nil, h, fmt.Errorf("apiVersion, kind or metadata has the wrong type: %s", describeJSONError(raw, err))
	}
	return raw, h, nil
}

// describeJSONError adds a line and column to syntax errors.
func describeJSONError(data []byte, err error) string {
	var se *json.SyntaxError
	var te *json.UnmarshalTypeError
	var off int64
	switch {
	case errors.As(err, &se):
		off = se.Offset
	case errors.As(err, &te):
		off = te.Offset
	default:
		return err.Error()
	}
	if off > int64(len(data)) {
		off = int64(len(data))
	}
	// The decoder stops just after the byte it could not take (or the value of the wrong type
	// ends): name that byte, at, by its line and column.
	at := max(off-1, 0)
	line := 1 + bytes.Count(data[:at], []byte("\n"))
	col := at - int64(bytes.LastIndexByte(data[:at], '\n'))
	return fmt.Sprintf("line %d, column %d: %v", line, col, err)
}

// checkHeader validates kind, apiVersion and metadata. fatal is set when the kind is
// wrong, in which case nothing else about the file is worth reporting.
func checkHeader(h header, wantKind, wantAPIVersion, dir string) (errs []error, fatal bool) {
	if h.Kind != wantKind {
		kind := h.Kind
		if kind == "" {
			kind = "missing"
		} else {
			kind = fmt.Sprintf("%q", kind)
		}
		hint := ""
		if strings.HasSuffix(h.Kind, "List") {
			hint = "; split the list into one file per object"
		}
		return []error{fmt.Errorf("kind is %s, but files in %s/ must be kind %s%s", kind, dir, wantKind, hint)}, true
	}
	if h.APIVersion != wantAPIVersion && h.APIVersion != "v1" {
		errs = append(errs, fmt.Errorf("apiVersion is %q; a %s must use %s", h.APIVersion, wantKind, wantAPIVersion))
	}
	errs = append(errs, checkMeta(h.Metadata.Name, h.Metadata.Namespace)...)
	return errs, false
}

func checkMeta(name, namespace string) []error {
	var errs []error
	if name == "" {
		errs = append(errs, errors.New("metadata.name is missing"))
	} else if msgs := validation.IsDNS1123Subdomain(name); len(msgs) > 0 {
		errs = append(errs, fmt.Errorf("metadata.name %q is not a valid name: %s", name, strings.Join(msgs, "; ")))
	}
	if namespace != "" {
		errs = append(errs, fmt.Errorf("metadata.namespace is set to %q; remove it, samples must not name a namespace (the operator installs them into openshift)", namespace))
	}
	return errs
}

func parseImageStream(data []byte) (*imagev1.ImageStream, []error) {
	raw, h, err := decodeOne(data)
	if err != nil {
		return nil, []error{err}
	}
	errs, fatal := checkHeader(h, kindImageStream, imageAPIVersion, imageStreamsDir)
	if fatal {
		return nil, errs
	}
	is := &imagev1.ImageStream{}
	if err := json.Unmarshal(raw, is); err != nil {
		return nil, append(errs, fmt.Errorf("does not match the ImageStream schema: %s", describeJSONError(raw, err)))
	}
	is.APIVersion, is.Kind = imageAPIVersion, kindImageStream
	errs = append(errs, validateImageStreamForServer(is)...)
	if errs = append(errs, validateTags(is)...); len(errs) > 0 {
		return nil, errs
	}
	return is, nil
}

// validateImageStreamForServer checks the stream-level fields as openshift-apiserver does
// (ValidateImageStreamWithWhitelister, without the registry allow-list, which the operator's
// Config validation handles).
func validateImageStreamForServer(is *imagev1.ImageStream) []error {
	var errs []error
	if is.Name != "" && validation.IsDNS1123Subdomain(is.Name) == nil {
		if !imageStreamNameRE.MatchString(is.Name) {
			errs = append(errs, fmt.Errorf("metadata.name %q is not a valid imagestream name: each '.', '-' or '_' must sit between lower-case letters or digits (%s)", is.Name, imageStreamNameRE))
		}
		if n := len(samplesNamespace + "/" + is.Name); n > repositoryPathMax {
			errs = append(errs, fmt.Errorf("metadata.name is too long: %q is %d characters, an imagestream's <namespace>/<name> may have at most %d", samplesNamespace+"/"+is.Name, n, repositoryPathMax))
		}
	}
	if repo := is.Spec.DockerImageRepository; repo != "" {
		ref, err := reference.Parse(repo)
		switch {
		case err != nil:
			errs = append(errs, fmt.Errorf("spec.dockerImageRepository %q is not an image repository: %v", repo, err))
		case ref.Tag != "" || ref.ID != "":
			errs = append(errs, fmt.Errorf("spec.dockerImageRepository %q names a tag or digest; give the repository only", repo))
		}
	}
	return errs
}

func validateTags(is *imagev1.ImageStream) []error {
	var errs []error
	tags := map[string]*imagev1.TagReference{}
	for i := range is.Spec.Tags {
		tag := &is.Spec.Tags[i]
		switch {
		case tag.Name == "":
			errs = append(errs, fmt.Errorf("spec.tags[%d] has no name", i))
			continue
		case !tagNameRE.MatchString(tag.Name):
			errs = append(errs, fmt.Errorf("tag %q: not a valid tag name (letters, digits, '_', '.', '-'; at most 128 characters; not starting with '.' or '-')", tag.Name))
		case tags[tag.Name] != nil:
			errs = append(errs, fmt.Errorf("tag %q appears more than once in spec.tags", tag.Name))
			continue
		}
		tags[tag.Name] = tag
	}
	for i := range is.Spec.Tags {
		tag := &is.Spec.Tags[i]
		if tag.Name == "" || tags[tag.Name] != tag {
			continue // reported above
		}
		if tag.Generation != nil {
			errs = append(errs, fmt.Errorf("tag %q sets generation; remove it, the server sets a tag's generation and ignores the one sent", tag.Name))
		}
		switch tag.ReferencePolicy.Type {
		case "", imagev1.SourceTagReferencePolicy, imagev1.LocalTagReferencePolicy:
		default:
			errs = append(errs, fmt.Errorf("tag %q: referencePolicy.type %q is not valid; use %s or %s", tag.Name, tag.ReferencePolicy.Type, imagev1.LocalTagReferencePolicy, imagev1.SourceTagReferencePolicy))
		}
		switch tag.ImportPolicy.ImportMode {
		case "", imagev1.ImportModeLegacy, imagev1.ImportModePreserveOriginal:
		default:
			errs = append(errs, fmt.Errorf("tag %q: importPolicy.importMode %q is not valid; use %s or %s", tag.Name, tag.ImportPolicy.ImportMode, imagev1.ImportModeLegacy, imagev1.ImportModePreserveOriginal))
		}
		from := tag.From
		switch {
		case from == nil:
			errs = append(errs, fmt.Errorf("tag %q has no from; give a DockerImage pull spec or an ImageStreamTag of this stream", tag.Name))
		case from.Kind == kindDockerImage:
			if from.Name == "" {
				errs = append(errs, fmt.Errorf("tag %q: from.name is empty; give a pull spec such as registry.example.com/repo/image:tag", tag.Name))
			} else if _, err := reference.Parse(from.Name); err != nil {
				errs = append(errs, fmt.Errorf("tag %q: from.name %q is not a pull spec such as registry.example.com/repo/image:tag: %v", tag.Name, from.Name, err))
			}
		case from.Kind == kindImageStreamTag:
			if tag.ImportPolicy.Scheduled {
				errs = append(errs, fmt.Errorf("tag %q: importPolicy.scheduled is set on an ImageStreamTag; only DockerImage tags may be scheduled", tag.Name))
			}
			if err := checkTagChain(is.Name, tag.Name, tags); err != nil {
				errs = append(errs, err)
			}
		default:
			kind := from.Kind
			if kind == "" {
				kind = "(empty)"
			}
			errs = append(errs, fmt.Errorf("tag %q: from.kind %s is not supported; use DockerImage or ImageStreamTag", tag.Name, kind))
		}
	}
	return errs
}

// localTarget returns the tag an ImageStreamTag reference points at, or an error if it
// leaves the stream. Accepted: "tag" and "<this stream>:tag", without a namespace.
func localTarget(stream string, from *imagev1.TagReference) (string, error) {
	ref := from.From
	if ref.Namespace != "" {
		return "", fmt.Errorf("tag %q: from.namespace %q is set; a sample tag may only point at a tag of the same stream", from.Name, ref.Namespace)
	}
	target := ref.Name
	if s, t, ok := strings.Cut(target, ":"); ok {
		if s != stream {
			return "", fmt.Errorf("tag %q: from.name %q points at another imagestream; a sample tag may only point at a tag of the same stream", from.Name, target)
		}
		target = t
	}
	if target == "" {
		return "", fmt.Errorf("tag %q: from.name is empty; give the name of another tag of this stream", from.Name)
	}
	return target, nil
}

// checkTagChain follows ImageStreamTag references from start until a DockerImage tag.
func checkTagChain(stream, start string, tags map[string]*imagev1.TagReference) error {
	seen := []string{start}
	cur := tags[start]
	for cur.From != nil && cur.From.Kind == kindImageStreamTag {
		target, err := localTarget(stream, cur)
		if err != nil {
			if cur.Name == start {
				return err
			}
			return nil // reported for the tag that has the problem
		}
		next, ok := tags[target]
		if !ok {
			if cur.Name == start {
				return fmt.Errorf("tag %q: from.name %q names a tag that does not exist in this imagestream", start, cur.From.Name)
			}
			return nil
		}
		if slices.Contains(seen, target) {
			return fmt.Errorf("tag %q: ImageStreamTag references form a cycle: %s -> %s", start, strings.Join(seen, " -> "), target)
		}
		seen = append(seen, target)
		cur = next
	}
	return nil
}

func parseTemplate(data []byte) (*templatev1.Template, []error) {
	raw, h, err := decodeOne(data)
	if err != nil {
		return nil, []error{err}
	}
	errs, fatal := checkHeader(h, kindTemplate, templateAPIVersion, templatesDir)
	if fatal {
		return nil, errs
	}
	t := &templatev1.Template{}
	if err := json.Unmarshal(raw, t); err != nil {
		return nil, append(errs, fmt.Errorf("does not match the Template schema: %s", describeJSONError(raw, err)))
	}
	t.APIVersion, t.Kind = templateAPIVersion, kindTemplate
	if len(t.Objects) == 0 {
		errs = append(errs, errors.New("objects is empty; a template must create at least one object"))
	}
	for i, obj := range t.Objects {
		var oh header
		if err := json.Unmarshal(obj.Raw, &oh); err != nil {
			errs = append(errs, fmt.Errorf("objects[%d] is not a JSON object with string apiVersion and kind: %v", i, err))
			continue
		}
		// Held compacted: the files' indentation is a large share of the objects, which the
		// operator keeps for as long as it runs and which are sent compacted anyway.
		var compact bytes.Buffer
		if json.Compact(&compact, obj.Raw) == nil {
			t.Objects[i].Raw = bytes.Clone(compact.Bytes())
		}
		if oh.APIVersion == "" {
			errs = append(errs, fmt.Errorf("objects[%d] (kind %q, name %q) has no apiVersion", i, oh.Kind, oh.Metadata.Name))
		}
		if oh.Kind == "" {
			errs = append(errs, fmt.Errorf("objects[%d] (name %q) has no kind", i, oh.Metadata.Name))
		}
		if oh.Metadata.Namespace != "" {
			errs = append(errs, fmt.Errorf("objects[%d] (%s %q) sets metadata.namespace %q; remove it, objects are created in the namespace the template is processed in", i, oh.Kind, oh.Metadata.Name, oh.Metadata.Namespace))
		}
	}
	params := map[string]bool{}
	for i, p := range t.Parameters {
		switch {
		case !paramNameRE.MatchString(p.Name):
			errs = append(errs, fmt.Errorf("parameters[%d]: name %q is not valid (letters, digits and '_' only)", i, p.Name))
		case params[p.Name]:
			errs = append(errs, fmt.Errorf("parameters[%d]: parameter %q is declared more than once", i, p.Name))
		}
		params[p.Name] = true
	}
	if len(errs) > 0 {
		return nil, errs
	}
	return t, nil
}
