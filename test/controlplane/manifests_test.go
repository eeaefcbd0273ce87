package controlplane

import (
	"os"
	"path/filepath"
	"testing"
	"time"
)

// TestReadManifestsSeesAChangedFileAndHandsOutCopies: decoded files are kept, but a file
// written again is decoded again, and what a caller changes in the objects it got is its own.
func TestReadManifestsSeesAChangedFileAndHandsOutCopies(t *testing.T) {
	path := filepath.Join(t.TempDir(), "cm.yaml")
	write := func(name string, mtime time.Time) {
		doc := "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: " + name + "\n---\n# nothing\n"
		if err := os.WriteFile(path, []byte(doc), 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.Chtimes(path, mtime, mtime); err != nil {
			t.Fatal(err)
		}
	}
	names := func() []string {
		objs, err := ReadManifests(path)
		if err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, o := range objs {
			out = append(out, o.GetName())
		}
		return out
	}
	t0 := time.Now().Add(-time.Hour)
	write("first", t0)
	if got := names(); len(got) != 1 || got[0] != "first" {
		t.Fatalf("objects %v, want [first]", got)
	}
	objs, _ := ReadManifests(path)
	objs[0].SetName("changed-by-a-caller")
	if got := names(); got[0] != "first" {
		t.Errorf("a caller's change showed in the next read: %v", got)
	}
	write("other", t0.Add(time.Second)) // same size, written later
	if got := names(); len(got) != 1 || got[0] != "other" {
		t.Errorf("after the file was written again: %v, want [other]", got)
	}
}
