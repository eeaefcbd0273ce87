package inventory

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io/fs"
	"regexp"
	"slices"
	"strings"
)

// Lock is what library-sync.sh records in assets/library.lock: the openshift/library commit the
// inventory was taken from, and a checksum of every file, so that a hand edit of a sample, a file
// added by hand or a file lost on the way shows up in make verify.
type Lock struct {
	Library string // the repository, github.com/openshift/library
	Commit  string // the full commit hash
	Date    string // the commit's date as library-sync.sh read it, or "unknown"
	Files   []LockedFile
}

// LockedFile is one file of the inventory.
type LockedFile struct {
	SHA256      string // hex
	Path        string // below assets/operator, e.g. ocp-x86_64/python/imagestreams/python-rhel.json
	LibraryPath string // where it is in the library, e.g. operator/ocp-x86_64/official/python/imagestreams/python-rhel.json
}

var (
	commitRE = regexp.MustCompile(`^[0-9a-f]{40}$`)
	sha256RE = regexp.MustCompile(`^[0-9a-f]{64}$`)
)

// ParseLock reads a lock file. Lines are "library R", "commit C", "date D" and
// "file SHA256 PATH LIBRARY-PATH"; blank lines and lines starting with '#' are comments.
func ParseLock(data []byte) (*Lock, error) {
	l := &Lock{}
	seen := map[string]int{}
	sc := bufio.NewScanner(bytes.NewReader(data))
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		f := strings.Fields(line)
		bad := func(format string, args ...any) error {
			return fmt.Errorf("line %d: %s", n, fmt.Sprintf(format, args...))
		}
		switch f[0] {
		case "library", "commit", "date":
			if len(f) != 2 {
				return nil, bad("%s takes one value", f[0])
			}
			field := map[string]*string{"library": &l.Library, "commit": &l.Commit, "date": &l.Date}[f[0]]
			if *field != "" {
				return nil, bad("%s is given twice", f[0])
			}
			*field = f[1]
		case "file":
			if len(f) != 4 {
				return nil, bad("a file line is: file SHA256 PATH LIBRARY-PATH")
			}
			if !sha256RE.MatchString(f[1]) {
				return nil, bad("%q is not a sha256 in hex", f[1])
			}
			if !fs.ValidPath(f[2]) {
				return nil, bad("%q is not a relative slash-separated path", f[2])
			}
			if first, dup := seen[f[2]]; dup {
				return nil, bad("%s is listed again (first on line %d)", f[2], first)
			}
			seen[f[2]] = n
			l.Files = append(l.Files, LockedFile{SHA256: f[1], Path: f[2], LibraryPath: f[3]})
		default:
			return nil, bad("unknown keyword %q", f[0])
		}
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	switch {
	case l.Library == "":
		return nil, fmt.Errorf("no library line")
	case !commitRE.MatchString(l.Commit):
		return nil, fmt.Errorf("commit %q is not a full 40-hex commit hash", l.Commit)
	case l.Date == "":
		return nil, fmt.Errorf("no date line")
	case len(l.Files) == 0:
		return nil, fmt.Errorf("no file lines")
	}
	return l, nil
}

// Verify compares the inventory tree fsys (rooted where assets/operator is) with the lock and
// returns one sentence per problem: a file whose content differs from its checksum, a listed file
// that is missing, a file that is not listed. Nil means the tree is exactly the locked library.
func (l *Lock) Verify(fsys fs.FS) []string {
	var problems []string
	listed := map[string]bool{}
	for _, f := range l.Files {
		listed[f.Path] = true
		data, err := fs.ReadFile(fsys, f.Path)
		if err != nil {
			problems = append(problems, fmt.Sprintf("%s is in the lock but cannot be read: %v", f.Path, errUnwrapPath(err)))
			continue
		}
		if sum := sha256.Sum256(data); hex.EncodeToString(sum[:]) != f.SHA256 {
			problems = append(problems, fmt.Sprintf("%s differs from %s at %s (%s): samples are never edited by hand; run library-sync.sh", f.Path, l.Library, l.Commit, f.LibraryPath))
		}
	}
	err := fs.WalkDir(fsys, ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			problems = append(problems, fmt.Sprintf("%s cannot be read: %v", p, errUnwrapPath(err)))
			return nil
		}
		if !d.IsDir() && !listed[p] {
			problems = append(problems, fmt.Sprintf("%s is not in the lock: the inventory holds only what library-sync.sh copied from %s", p, l.Library))
		}
		return nil
	})
	if err != nil {
		problems = append(problems, err.Error())
	}
	slices.Sort(problems)
	return problems
}
