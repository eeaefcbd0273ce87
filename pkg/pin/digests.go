// Package pin rewrites the image references of a sample inventory from tags to digests,
// without network access: the digests come from a map file that whoever has registry access
// produced beforehand (see ParseDigests for its format).
//
// Tree is pure: it reads an inventory from an fs.FS and returns the files of the pinned
// inventory, in the same layout, with a report of what was and was not pinned. WriteTree
// puts those files on disk.
package pin

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"regexp"
	"strings"
)

// Digests maps an image reference, exactly as the inventory writes it (what
// `cluster-samples-operator inventory images` prints), to the digest of the manifest it
// resolved to, such as "sha256:4f3c...".
type Digests map[string]string

// digestRE is the only digest form accepted: sha256 with 64 lower-case hex digits.
var digestRE = regexp.MustCompile(`^sha256:[0-9a-f]{64}$`)

// ValidateDigest reports whether d is a sha256 digest as registries print it.
func ValidateDigest(d string) error {
	if digestRE.MatchString(d) {
		return nil
	}
	if strings.HasPrefix(strings.ToLower(d), "sha256:") && len(d) == len("sha256:")+64 && d != strings.ToLower(d) {
		return fmt.Errorf("digest %q has upper-case letters; registries print digests in lower case", d)
	}
	return fmt.Errorf("digest %q is malformed; want sha256: followed by 64 lower-case hex digits", d)
}

// ParseDigests reads a digest map file. Each line is
//
//	<reference> <digest>
//
// separated by blanks, for example
//
//	registry.redhat.io/ubi9/python-311:latest sha256:4f3c...
//
// Blank lines and lines starting with '#' are ignored. A reference must be a tag (or
// name-only) reference, not already a digest; a digest must be sha256 with 64 lower-case
// hex digits. A reference listed twice must map to the same digest. Every problem is
// reported with its line number, all of them in one error.
func ParseDigests(data []byte) (Digests, error) {
	d := Digests{}
	lineOf := map[string]int{}
	var errs []error
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(make([]byte, 0, 64*1024), 1<<20)
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		fields := strings.Fields(line)
		if len(fields) != 2 {
			errs = append(errs, fmt.Errorf("line %d: want two fields, <reference> <digest>, got %d: %q", n, len(fields), line))
			continue
		}
		ref, digest := fields[0], fields[1]
		if strings.Contains(ref, "@") {
			errs = append(errs, fmt.Errorf("line %d: reference %q already names a digest; give the tag reference the inventory uses", n, ref))
			continue
		}
		if err := ValidateDigest(digest); err != nil {
			errs = append(errs, fmt.Errorf("line %d: %w", n, err))
			continue
		}
		if prev, dup := d[ref]; dup {
			if prev != digest {
				errs = append(errs, fmt.Errorf("line %d: %s maps to %s here but to %s on line %d", n, ref, digest, prev, lineOf[ref]))
			}
			continue
		}
		d[ref], lineOf[ref] = digest, n
	}
	if err := sc.Err(); err != nil {
		errs = append(errs, err)
	}
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	return d, nil
}

// PinnedReference returns ref rewritten to repository@digest: the tag, if any, is dropped
// (the digest alone names the image). A ':' counts as a tag separator only after the last
// '/', so a registry port is kept.
func PinnedReference(ref, digest string) string {
	return Repository(ref) + "@" + digest
}

// Repository returns ref without its tag or digest.
func Repository(ref string) string {
	if at := strings.Index(ref, "@"); at >= 0 {
		ref = ref[:at]
	}
	if colon := strings.LastIndex(ref, ":"); colon > strings.LastIndex(ref, "/") {
		ref = ref[:colon]
	}
	return ref
}

// IsPinned reports whether ref already names a digest.
func IsPinned(ref string) bool { return strings.Contains(ref, "@") }
