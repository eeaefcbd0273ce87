package inventory

import (
	"crypto/sha256"
	"encoding/hex"
	"strings"
	"testing"
	"testing/fstest"
)

func sum(s string) string {
	h := sha256.Sum256([]byte(s))
	return hex.EncodeToString(h[:])
}

const lockCommit = "4eeddd3d5721aa1e508957fdad9ab202093a3dc8"

func lockText(files ...string) string {
	var b strings.Builder
	b.WriteString("# comment\nlibrary github.com/openshift/library\ncommit " + lockCommit + "\ndate 2026-08-20T12:05:16Z\n")
	for i := 0; i+1 < len(files); i += 2 {
		b.WriteString("file " + sum(files[i+1]) + " " + files[i] + " operator/lib/" + files[i] + "\n")
	}
	return b.String()
}

func TestLockVerify(t *testing.T) {
	const a, b = "ocp-x86_64/python/imagestreams/python.json", "ocp-x86_64/python/templates/t.json"
	lock, err := ParseLock([]byte(lockText(a, "A", b, "B")))
	if err != nil {
		t.Fatal(err)
	}
	if lock.Commit != lockCommit || lock.Date != "2026-08-20T12:05:16Z" || len(lock.Files) != 2 || lock.Files[0].LibraryPath != "operator/lib/"+a {
		t.Fatalf("parsed %+v", lock)
	}
	for _, tc := range []struct {
		name string
		tree fstest.MapFS
		want []string // one substring per problem, in order
	}{
		{"exact", fstest.MapFS{a: {Data: []byte("A")}, b: {Data: []byte("B")}}, nil},
		{"hand edit", fstest.MapFS{a: {Data: []byte("A ")}, b: {Data: []byte("B")}}, []string{a + " differs from github.com/openshift/library at " + lockCommit + " (operator/lib/" + a + ")"}},
		{"missing", fstest.MapFS{a: {Data: []byte("A")}}, []string{b + " is in the lock but cannot be read"}},
		{"missing, and the next file edited", fstest.MapFS{b: {Data: []byte("B ")}}, []string{a + " is in the lock but cannot be read", b + " differs from"}},
		{"not listed", fstest.MapFS{a: {Data: []byte("A")}, b: {Data: []byte("B")}, "ocp-x86_64/extra/imagestreams/x.json": {Data: []byte("X")}},
			[]string{"ocp-x86_64/extra/imagestreams/x.json is not in the lock"}},
		{"a README counts too", fstest.MapFS{a: {Data: []byte("A")}, b: {Data: []byte("B")}, "README.md": {Data: []byte("x")}}, []string{"README.md is not in the lock"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := lock.Verify(tc.tree)
			if len(got) != len(tc.want) {
				t.Fatalf("Verify = %q, want %d problems", got, len(tc.want))
			}
			for i := range got {
				if !strings.Contains(got[i], tc.want[i]) {
					t.Errorf("problem %d = %q, want it to contain %q", i, got[i], tc.want[i])
				}
			}
		})
	}
}

func TestParseLockRejects(t *testing.T) {
	good := lockText("x/y.json", "Y")
	for _, tc := range []struct{ name, text, want string }{
		{"short commit", strings.Replace(good, lockCommit, "4eeddd3", 1), "not a full 40-hex"},
		{"no files", lockText(), "no file lines"},
		{"bad sum", good + "file 1234 a/b.json operator/a\n", "not a sha256"},
		{"duplicate", good + "file " + sum("Y") + " x/y.json operator/x\n", "listed again (first on line 5)"},
		{"absolute path", good + "file " + sum("Y") + " /etc/passwd operator/x\n", "not a relative"},
		{"unknown", good + "branch master\n", `unknown keyword "branch"`},
		{"commit twice", good + "commit " + lockCommit + "\n", "commit is given twice"},
		{"no library", strings.Replace(good, "library github.com/openshift/library\n", "", 1), "no library line"},
	} {
		if _, err := ParseLock([]byte(tc.text)); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: error %v, want %q", tc.name, err, tc.want)
		}
	}
}
