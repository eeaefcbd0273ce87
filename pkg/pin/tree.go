package pin

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"

	"github.com/samples-operator-dev/cluster-samples-operator/assets"
)

// Result is a pinned inventory tree and what happened to its references.
type Result struct {
	// Files are the pinned tree's files keyed by slash-separated path, starting with the
	// architecture directory ("ocp-x86_64/python/imagestreams/python.json"), so that writing
	// them beneath a directory gives the layout --inventory-dir reads.
	Files map[string][]byte
	// Pinned are the tag references that were rewritten to digests, sorted.
	Pinned []string
	// AlreadyPinned are the references that named a digest already and were kept, sorted.
	AlreadyPinned []string
	// Unpinned are the tag references the map has no digest for, sorted. They are left as
	// they are, which Tree allows only when told to.
	Unpinned []string
}

// MissingError is returned by Tree when references have no digest in the map.
type MissingError struct {
	Refs []string // sorted, de-duplicated
}

func (e *MissingError) Error() string {
	return fmt.Sprintf("%d image references have no digest in the map (add them, or pass --allow-unpinned to keep them as tags):\n  %s",
		len(e.Refs), strings.Join(e.Refs, "\n  "))
}

const kindDockerImage = "DockerImage"

// Tree pins the inventory directory archDir of src (an fs.FS whose top level holds
// architecture directories, like assets/operator or an --inventory-dir). Every DockerImage
// tag reference of every imagestreams/*.json file is replaced by repository@digest from d;
// references that already name a digest, ImageStreamTag references, templates and every
// other file are copied unchanged. An imagestream file whose references all stay as they
// were is copied byte for byte; a rewritten one is re-encoded as indented JSON (keys sorted).
//
// References missing from d are all reported, sorted, in a *MissingError, unless
// allowUnpinned is set: then they stay tags and are listed in Result.Unpinned. Entries of
// d that the inventory does not use are ignored, so one map may serve every architecture.
func Tree(src fs.FS, archDir string, d Digests, allowUnpinned bool) (*Result, error) {
	if !fs.ValidPath(archDir) || archDir == "." || strings.Contains(archDir, "/") {
		return nil, fmt.Errorf("architecture directory %q is not a single directory name", archDir)
	}
	r := &Result{Files: map[string][]byte{}}
	pinned, already, missing := map[string]bool{}, map[string]bool{}, map[string]bool{}
	err := fs.WalkDir(src, archDir, func(p string, de fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if de.IsDir() {
			return nil
		}
		if !de.Type().IsRegular() {
			return fmt.Errorf("%s: not a regular file (mode %s); an inventory holds regular files and directories only", p, de.Type())
		}
		data, err := fs.ReadFile(src, p)
		if err != nil {
			return err
		}
		if path.Base(path.Dir(p)) == "imagestreams" && strings.HasSuffix(p, ".json") && !strings.HasPrefix(de.Name(), ".") {
			out, err := pinImageStream(data, d, pinned, already, missing)
			if err != nil {
				return fmt.Errorf("%s: %w", p, err)
			}
			data = out
		}
		r.Files[p] = data
		return nil
	})
	if err != nil {
		return nil, err
	}
	r.Pinned, r.AlreadyPinned, r.Unpinned = sortedKeys(pinned), sortedKeys(already), sortedKeys(missing)
	if len(r.Unpinned) > 0 && !allowUnpinned {
		return nil, &MissingError{Refs: r.Unpinned}
	}
	return r, nil
}

// pinImageStream rewrites the DockerImage references of one imagestream file. It works on
// the generic JSON object so that every field of the file survives.
func pinImageStream(data []byte, d Digests, pinned, already, missing map[string]bool) ([]byte, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	var obj map[string]any
	if err := dec.Decode(&obj); err != nil {
		return nil, fmt.Errorf("not a JSON object: %w", err)
	}
	spec, _ := obj["spec"].(map[string]any)
	tags, _ := spec["tags"].([]any)
	changed := false
	for _, t := range tags {
		tag, _ := t.(map[string]any)
		from, _ := tag["from"].(map[string]any)
		if from == nil || from["kind"] != kindDockerImage {
			continue
		}
		ref, ok := from["name"].(string)
		if !ok || ref == "" {
			return nil, fmt.Errorf("tag %v: from.name is not a non-empty string", tag["name"])
		}
		switch digest, found := d[ref]; {
		case IsPinned(ref):
			already[ref] = true
		case found:
			from["name"] = PinnedReference(ref, digest)
			pinned[ref] = true
			changed = true
		default:
			missing[ref] = true
		}
	}
	if !changed {
		return data, nil
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(obj); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

func sortedKeys[V any](m map[string]V) []string { return slices.Sorted(maps.Keys(m)) }

// WriteTree writes files (slash-separated paths) beneath dir. It refuses to write into an
// architecture directory that already exists, so that a stale file of an earlier run can
// never end up in the pinned tree: remove it first.
func WriteTree(dir string, files map[string][]byte) error {
	tops := map[string]bool{}
	for p := range files {
		if !fs.ValidPath(p) {
			return fmt.Errorf("invalid path %q", p)
		}
		top, _, _ := strings.Cut(p, "/")
		tops[top] = true
	}
	for top := range tops {
		if _, err := os.Lstat(filepath.Join(dir, top)); err == nil {
			return fmt.Errorf("%s already exists; remove it or choose another --out", filepath.Join(dir, top))
		} else if !errors.Is(err, fs.ErrNotExist) {
			return err
		}
	}
	for _, p := range sortedKeys(files) {
		dst := filepath.Join(dir, filepath.FromSlash(p))
		if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
			return err
		}
		if err := os.WriteFile(dst, files[p], 0o644); err != nil {
			return err
		}
	}
	return nil
}

// Source returns the inventory root to pin from: the directory dir (architecture
// directories beneath it), or the inventory compiled into the binary when dir is empty.
func Source(dir string) (fs.FS, error) {
	if dir == "" {
		return fs.Sub(assets.Operator, "operator")
	}
	if fi, err := os.Stat(dir); err != nil {
		return nil, fmt.Errorf("inventory directory: %w", err)
	} else if !fi.IsDir() {
		return nil, fmt.Errorf("inventory directory %s is not a directory", dir)
	}
	return os.DirFS(dir), nil
}
