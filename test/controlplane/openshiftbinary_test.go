package controlplane

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

// TestOpenShiftBinaryDecompressesOnce: callers racing on the same .xz all get the whole binary,
// checked against SHA256SUMS; a wrong checksum leaves nothing behind.
func TestOpenShiftBinaryDecompressesOnce(t *testing.T) {
	if _, err := exec.LookPath("xz"); err != nil {
		t.Skip("no xz on this machine")
	}
	name := fmt.Sprintf("fake-openshift-binary-%d", time.Now().UnixNano())
	out := filepath.Join(RepoRoot(), "_output", "openshift", name)
	t.Cleanup(func() { os.Remove(out) })
	dir := t.TempDir()
	content := []byte(strings.Repeat("#!/bin/sh\necho fake\n", 50000))
	if err := os.WriteFile(filepath.Join(dir, name), content, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := exec.Command("xz", filepath.Join(dir, name)).Run(); err != nil { // leaves only NAME.xz
		t.Fatal(err)
	}
	sum := sha256.Sum256(content)
	if err := os.WriteFile(filepath.Join(dir, "SHA256SUMS"), []byte(hex.EncodeToString(sum[:])+"  "+name+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}

	var wg sync.WaitGroup
	errs := make([]error, 4)
	for i := range errs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var path string
			path, errs[i] = OpenShiftBinary(dir, name)
			if errs[i] == nil && path != out {
				errs[i] = fmt.Errorf("got %s, want %s", path, out)
			}
		}()
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			t.Error(err)
		}
	}
	if got, err := os.ReadFile(out); err != nil || string(got) != string(content) {
		t.Fatalf("the decompressed binary differs (%d bytes, %v)", len(got), err)
	}
	if fi, err := os.Stat(out); err != nil || fi.Mode()&0o111 == 0 {
		t.Errorf("%s is not executable: %v", out, err)
	}
	leftovers, _ := filepath.Glob(filepath.Join(filepath.Dir(out), "."+name+".*"))
	if len(leftovers) != 0 {
		t.Errorf("temporary files left: %v", leftovers)
	}

	// A checksum that does not match: an error, and no binary.
	os.Remove(out)
	if err := os.WriteFile(filepath.Join(dir, "SHA256SUMS"), []byte(strings.Repeat("0", 64)+"  "+name+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := OpenShiftBinary(dir, name); err == nil || !strings.Contains(err.Error(), "SHA-256") {
		t.Errorf("a wrong checksum gave %v", err)
	}
	if _, err := os.Stat(out); err == nil {
		t.Errorf("%s was installed despite the wrong checksum", out)
	}
}
