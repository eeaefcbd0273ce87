// Package librarysync tests library-sync.sh against small library trees built in a
// temporary directory. It never downloads anything: every run passes --from.
package librarysync

import (
	"archive/tar"
	"archive/zip"
	"compress/gzip"
	"crypto/sha256"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/samples-operator-dev/cluster-samples-operator/pkg/inventory"
)

var ocpDirs = []string{"ocp-x86_64", "ocp-aarch64", "ocp-ppc64le", "ocp-s390x"}

func script(t *testing.T) string {
	t.Helper()
	if _, err := exec.LookPath("bash"); err != nil {
		t.Skip("bash not available")
	}
	p, err := filepath.Abs(filepath.Join("..", "..", "library-sync.sh"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(p); err != nil {
		t.Fatalf("library-sync.sh not found: %v", err)
	}
	return p
}

func imageStream(name, image string) string {
	return fmt.Sprintf(`{
  "kind": "ImageStream",
  "apiVersion": "image.openshift.io/v1",
  "metadata": {"name": %q},
  "spec": {"tags": [
    {"name": "1", "from": {"kind": "DockerImage", "name": %q}},
    {"name": "latest", "from": {"kind": "ImageStreamTag", "name": "1"}}
  ]}
}
`, name, image)
}

func template(name string) string {
	return fmt.Sprintf(`{
  "kind": "Template",
  "apiVersion": "template.openshift.io/v1",
  "metadata": {"name": %q},
  "objects": [{"apiVersion": "v1", "kind": "Service", "metadata": {"name": "${NAME}"}}],
  "parameters": [{"name": "NAME", "value": "x"}]
}
`, name)
}

func writeFile(t *testing.T, p, data string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(data), 0o644); err != nil {
		t.Fatal(err)
	}
}

// buildLibrary writes a miniature openshift/library checkout and returns its root.
func buildLibrary(t *testing.T) string {
	lib := filepath.Join(t.TempDir(), "library")
	op := filepath.Join(lib, "operator")
	for _, arch := range ocpDirs {
		o := filepath.Join(op, arch, "official")
		writeFile(t, filepath.Join(o, "jenkins/imagestreams/jenkins-rhel.json"), imageStream("jenkins", "registry.redhat.io/ocp-tools-4/jenkins-rhel9:v4.17.0"))
		writeFile(t, filepath.Join(o, "jenkins/templates/jenkins-ephemeral.json"), template("jenkins-ephemeral"))
		writeFile(t, filepath.Join(o, "python/imagestreams/python-rhel.json"), imageStream("python", "registry.redhat.io/ubi9/python-312:latest"))
		writeFile(t, filepath.Join(o, "python/README.md"), "# docs, not a sample\n")
		// A group the older sync left out (upstream's OCP_SUPPORTED_SAMPLES): every group is taken now.
		writeFile(t, filepath.Join(o, "sso/imagestreams/sso76.json"), imageStream("sso76-openshift-rhel8", "registry.redhat.io/rh-sso-7/sso76-openshift-rhel8:7.6"))
		writeFile(t, filepath.Join(o, "index.json"), "{}\n")
		// OCP directories ignore community/.
		writeFile(t, filepath.Join(op, arch, "community/wildfly/imagestreams/wildfly.json"), imageStream("wildfly", "quay.io/wildfly/wildfly-s2i:latest"))
	}
	okd := filepath.Join(op, "okd-x86_64")
	writeFile(t, filepath.Join(okd, "official/jenkins/imagestreams/jenkins-origin.json"), imageStream("jenkins", "quay.io/openshift/origin-jenkins:latest"))
	writeFile(t, filepath.Join(okd, "official/jenkins/templates/jenkins-ephemeral.json"), template("jenkins-ephemeral"))
	writeFile(t, filepath.Join(okd, "community/python/imagestreams/python-centos.json"), imageStream("python", "quay.io/sclorg/python-312-c9s:c9s"))
	writeFile(t, filepath.Join(okd, "community/python/templates/django-psql-example.json"), template("django-psql-example"))
	writeFile(t, filepath.Join(lib, "README.md"), "library\n")
	return lib
}

func run(t *testing.T, args ...string) (string, error) {
	t.Helper()
	return runWith(t, nil, args...)
}

// runWith is run with env added to the script's environment.
func runWith(t *testing.T, env []string, args ...string) (string, error) {
	t.Helper()
	cmd := exec.Command("bash", append([]string{script(t)}, args...)...)
	// A download, which only a run without --from makes, goes to a closed loopback port.
	cmd.Env = append(append(os.Environ(), "LIBRARY_ARCHIVE_BASE=http://127.0.0.1:9/archive"), env...)
	out, err := cmd.CombinedOutput()
	return string(out), err
}

func mustRun(t *testing.T, args ...string) string {
	t.Helper()
	out, err := run(t, args...)
	if err != nil {
		t.Fatalf("library-sync.sh %v: %v\n%s", args, err, out)
	}
	return out
}

type fileState struct {
	sum   [32]byte
	mtime time.Time
}

// snapshot returns the content hash and modification time of every file under dir.
func snapshot(t *testing.T, dir string) map[string]fileState {
	t.Helper()
	m := map[string]fileState{}
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		fi, err := d.Info()
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		m[filepath.ToSlash(rel)] = fileState{sha256.Sum256(data), fi.ModTime()}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return m
}

const commitA = "1111111111111111111111111111111111111111"

// gitLibrary turns lib into a git repository with one commit of its files, dated date, and
// returns a bare mirror of it (the form fetch leaves a snapshot in) and the commit.
func gitLibrary(t *testing.T, lib, date string) (mirror, commit string) {
	t.Helper()
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git not available")
	}
	git := func(dir string, args ...string) string {
		cmd := exec.Command("git", args...)
		cmd.Dir = dir
		cmd.Env = append(os.Environ(), "GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@example.com", "GIT_COMMITTER_NAME=t",
			"GIT_COMMITTER_EMAIL=t@example.com", "GIT_AUTHOR_DATE="+date, "GIT_COMMITTER_DATE="+date, "GIT_CONFIG_GLOBAL=/dev/null")
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
		return strings.TrimSpace(string(out))
	}
	if _, err := os.Stat(filepath.Join(lib, ".git")); err != nil {
		git(lib, "init", "-q", "-b", "master")
	}
	git(lib, "add", "-A")
	git(lib, "commit", "-q", "-m", "library update")
	commit = git(lib, "rev-parse", "HEAD")
	mirror = filepath.Join(t.TempDir(), "library.git")
	git(lib, "clone", "-q", "--mirror", lib, mirror)
	return mirror, commit
}

// readLock parses a lock file written by the script.
func readLock(t *testing.T, p string) *inventory.Lock {
	t.Helper()
	data, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	lock, err := inventory.ParseLock(data)
	if err != nil {
		t.Fatalf("%s: %v\n%s", p, err, data)
	}
	return lock
}

func TestSyncFromAGitMirrorWritesTheLockAndIsIdempotent(t *testing.T) {
	lib := buildLibrary(t)
	mirror, commit := gitLibrary(t, lib, "2026-08-20T12:05:16+02:00")
	dest := filepath.Join(t.TempDir(), "operator")
	lockFile := filepath.Join(t.TempDir(), "library.lock")
	out := mustRun(t, "--from", mirror, "--commit", commit[:10], "--dest", dest, "--lock", lockFile)
	if !strings.Contains(out, "added") || !strings.Contains(out, "openshift/library at "+commit) {
		t.Errorf("first run:\n%s", out)
	}

	// Every group of every arch-dir, flattened; OKD takes community/ too; nothing else is copied.
	want := map[string]string{}
	for _, arch := range ocpDirs {
		want[arch+"/jenkins/imagestreams/jenkins-rhel.json"] = "operator/" + arch + "/official/jenkins/imagestreams/jenkins-rhel.json"
		want[arch+"/jenkins/templates/jenkins-ephemeral.json"] = "operator/" + arch + "/official/jenkins/templates/jenkins-ephemeral.json"
		want[arch+"/python/imagestreams/python-rhel.json"] = "operator/" + arch + "/official/python/imagestreams/python-rhel.json"
		want[arch+"/sso/imagestreams/sso76.json"] = "operator/" + arch + "/official/sso/imagestreams/sso76.json"
	}
	want["okd-x86_64/jenkins/imagestreams/jenkins-origin.json"] = "operator/okd-x86_64/official/jenkins/imagestreams/jenkins-origin.json"
	want["okd-x86_64/jenkins/templates/jenkins-ephemeral.json"] = "operator/okd-x86_64/official/jenkins/templates/jenkins-ephemeral.json"
	want["okd-x86_64/python/imagestreams/python-centos.json"] = "operator/okd-x86_64/community/python/imagestreams/python-centos.json"
	want["okd-x86_64/python/templates/django-psql-example.json"] = "operator/okd-x86_64/community/python/templates/django-psql-example.json"
	got := snapshot(t, dest)
	if len(got) != len(want) {
		t.Errorf("dest holds %d files, want %d: %v", len(got), len(want), got)
	}
	for p := range want {
		if _, ok := got[p]; !ok {
			t.Errorf("%s not synced", p)
		}
	}
	// Byte for byte the library's file.
	orig, _ := os.ReadFile(filepath.Join(lib, "operator/ocp-x86_64/official/python/imagestreams/python-rhel.json"))
	if copied, _ := os.ReadFile(filepath.Join(dest, "ocp-x86_64/python/imagestreams/python-rhel.json")); string(copied) != string(orig) {
		t.Errorf("the copy differs from the library's file")
	}

	lock := readLock(t, lockFile)
	if lock.Commit != commit || lock.Date != "2026-08-20T10:05:16Z" || lock.Library != "github.com/openshift/library" {
		t.Errorf("lock header: commit %s date %s library %s; want %s, the UTC commit date", lock.Commit, lock.Date, lock.Library, commit)
	}
	if len(lock.Files) != len(want) {
		t.Errorf("lock lists %d files, want %d", len(lock.Files), len(want))
	}
	for _, f := range lock.Files {
		if want[f.Path] != f.LibraryPath {
			t.Errorf("lock: %s from %s, want from %s", f.Path, f.LibraryPath, want[f.Path])
		}
		if f.SHA256 != fmt.Sprintf("%x", got[f.Path].sum) {
			t.Errorf("lock: %s checksum %s is not the file's", f.Path, f.SHA256)
		}
	}
	if problems := lock.Verify(os.DirFS(dest)); len(problems) > 0 {
		t.Errorf("Verify of a fresh sync: %q", problems)
	}
	for _, arch := range inventory.ArchDirs() {
		if _, err := inventory.LoadDir(dest, arch); err != nil {
			t.Errorf("synced %s does not load: %v", arch, err)
		}
	}

	// A second run, with the commit taken from the lock, changes nothing, not even mtimes.
	lockBefore, _ := os.ReadFile(lockFile)
	out = mustRun(t, "--from", mirror, "--dest", dest, "--lock", lockFile)
	if !strings.Contains(out, "no changes") || strings.Contains(out, "wrote") {
		t.Errorf("second run:\n%s", out)
	}
	for p, s := range snapshot(t, dest) {
		if got[p] != s {
			t.Errorf("%s rewritten by an idempotent run", p)
		}
	}
	if lockAfter, _ := os.ReadFile(lockFile); string(lockAfter) != string(lockBefore) {
		t.Errorf("lock rewritten by an idempotent run")
	}
}

func TestSyncToANewCommitUpdatesRemovesAndDropsHandWrittenGroups(t *testing.T) {
	lib := buildLibrary(t)
	mirror, first := gitLibrary(t, lib, "2026-08-01T00:00:00Z")
	dest := filepath.Join(t.TempDir(), "operator")
	lockFile := filepath.Join(t.TempDir(), "library.lock")
	mustRun(t, "--from", mirror, "--commit", first, "--dest", dest, "--lock", lockFile)
	// A hand-written group and a hand edit, as the inventory had before it came from the library.
	writeFile(t, filepath.Join(dest, "ocp-x86_64/handmade/imagestreams/handmade.json"), imageStream("handmade", "quay.io/x/y:1"))
	writeFile(t, filepath.Join(dest, "ocp-aarch64/python/imagestreams/python-rhel.json"), imageStream("python", "quay.io/edited/by-hand:1"))

	// The library moves on: python changes, sso goes from ocp-x86_64, nodejs comes.
	o := filepath.Join(lib, "operator/ocp-x86_64/official")
	writeFile(t, filepath.Join(o, "python/imagestreams/python-rhel.json"), imageStream("python", "registry.redhat.io/ubi10/python-312:latest"))
	if err := os.RemoveAll(filepath.Join(o, "sso")); err != nil {
		t.Fatal(err)
	}
	writeFile(t, filepath.Join(o, "nodejs/imagestreams/nodejs.json"), imageStream("nodejs", "registry.redhat.io/ubi9/nodejs-22:latest"))
	mirror, second := gitLibrary(t, lib, "2026-09-01T00:00:00Z")

	out := mustRun(t, "--from", mirror, "--commit", second, "--dest", dest, "--lock", lockFile)
	for _, line := range []string{
		"updated  ocp-x86_64/python/imagestreams/python-rhel.json",
		"updated  ocp-aarch64/python/imagestreams/python-rhel.json",
		"removed  ocp-x86_64/sso/imagestreams/sso76.json",
		"removed  ocp-x86_64/handmade/imagestreams/handmade.json",
		"added    ocp-x86_64/nodejs/imagestreams/nodejs.json",
		"1 added, 2 updated, 2 removed",
	} {
		if !strings.Contains(out, line) {
			t.Errorf("output lacks %q:\n%s", line, out)
		}
	}
	for _, gone := range []string{"ocp-x86_64/sso", "ocp-x86_64/handmade"} {
		if _, err := os.Stat(filepath.Join(dest, gone)); !os.IsNotExist(err) {
			t.Errorf("%s still there (%v)", gone, err)
		}
	}
	lock := readLock(t, lockFile)
	if lock.Commit != second || lock.Date != "2026-09-01T00:00:00Z" {
		t.Errorf("lock: commit %s date %s, want %s", lock.Commit, lock.Date, second)
	}
	if problems := lock.Verify(os.DirFS(dest)); len(problems) > 0 {
		t.Errorf("Verify after the move: %q", problems)
	}
	// Going back to the first commit is the same operation.
	mustRun(t, "--from", mirror, "--commit", first, "--dest", dest, "--lock", lockFile)
	if _, err := os.Stat(filepath.Join(dest, "ocp-x86_64/sso/imagestreams/sso76.json")); err != nil {
		t.Errorf("sso not back at the first commit: %v", err)
	}
}

func TestSyncFromArchivesAndDirectories(t *testing.T) {
	lib := buildLibrary(t)
	mirror, commit := gitLibrary(t, lib, "2026-08-01T00:00:00Z")
	ref := filepath.Join(t.TempDir(), "ref")
	refLock := filepath.Join(t.TempDir(), "ref.lock")
	mustRun(t, "--from", mirror, "--commit", commit, "--dest", ref, "--lock", refLock)
	want := snapshot(t, ref)

	tgz := filepath.Join(t.TempDir(), "library-"+commit+".tar.gz")
	writeTarGz(t, lib, "library-"+commit, tgz)
	plain := filepath.Join(t.TempDir(), "plain")
	writeFile(t, filepath.Join(plain, "keep"), "")
	if err := os.CopyFS(plain, os.DirFS(filepath.Join(lib))); err != nil {
		t.Fatal(err)
	}
	if err := os.RemoveAll(filepath.Join(plain, ".git")); err != nil {
		t.Fatal(err)
	}
	sources := map[string]string{"tar.gz": tgz, "directory": plain}
	if _, err := exec.LookPath("unzip"); err == nil {
		z := filepath.Join(t.TempDir(), commit+".zip")
		writeZip(t, lib, "library-"+commit, z)
		sources["zip"] = z
	} else {
		t.Log("unzip not available; zip archive not tested")
	}
	for name, src := range sources {
		dest := filepath.Join(t.TempDir(), "operator")
		lockFile := filepath.Join(t.TempDir(), "library.lock")
		// Only a git repository can say which commit it is.
		if out, err := run(t, "--from", src, "--dest", dest, "--lock", lockFile); err == nil || !strings.Contains(out, "say which library commit") {
			t.Errorf("%s without --commit: %v\n%s", name, err, out)
		}
		mustRun(t, "--from", src, "--commit", commit, "--date", "2026-08-01T00:00:00Z", "--dest", dest, "--lock", lockFile)
		got := snapshot(t, dest)
		if len(got) != len(want) {
			t.Errorf("%s: %d files, want %d", name, len(got), len(want))
		}
		for p, s := range want {
			if got[p].sum != s.sum {
				t.Errorf("%s: %s differs from the git sync", name, p)
			}
		}
		a, _ := os.ReadFile(refLock)
		b, _ := os.ReadFile(lockFile)
		if string(a) != string(b) {
			t.Errorf("%s: lock differs from the git sync's:\n%s\nwant\n%s", name, b, a)
		}
	}
}

// A program started costs a sync more than a file copied (about 10 ms each on the CI machine):
// the copies of a library ten times larger start no more of them.
func TestASyncStartsNoMoreCopyProgramsForMoreFiles(t *testing.T) {
	// The programs that copy files and make directories, each run through a wrapper that
	// counts it.
	wrappers := t.TempDir()
	for _, name := range []string{"cp", "mkdir", "tar", "install"} {
		real, err := exec.LookPath(name)
		if err != nil {
			continue
		}
		wrapper := fmt.Sprintf("#!/bin/sh\necho %s >>\"$STARTED_LOG\"\nexec %s \"$@\"\n", name, real)
		if err := os.WriteFile(filepath.Join(wrappers, name), []byte(wrapper), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	started := func(lib string) int {
		t.Helper()
		startedLog := filepath.Join(t.TempDir(), "started")
		env := []string{"PATH=" + wrappers + string(os.PathListSeparator) + os.Getenv("PATH"), "STARTED_LOG=" + startedLog}
		if out, err := runWith(t, env, "--from", lib, "--commit", commitA, "--date", "2026-08-01T00:00:00Z",
			"--dest", filepath.Join(t.TempDir(), "operator"), "--lock", filepath.Join(t.TempDir(), "library.lock")); err != nil {
			t.Fatalf("library-sync.sh: %v\n%s", err, out)
		}
		data, err := os.ReadFile(startedLog)
		if err != nil {
			t.Fatal(err)
		}
		return strings.Count(string(data), "\n")
	}
	small := buildLibrary(t)
	large := buildLibrary(t)
	for _, arch := range append(ocpDirs, "okd-x86_64") {
		for i := range 40 {
			name := fmt.Sprintf("python-%d", i)
			writeFile(t, filepath.Join(large, "operator", arch, "official/python/imagestreams", name+".json"), imageStream(name, "registry.redhat.io/ubi9/python-312:latest"))
			writeFile(t, filepath.Join(large, "operator", arch, "official", name, "templates", name+".json"), template(name))
		}
	}
	few, many := started(small), started(large)
	if many > few {
		t.Errorf("the sync of 400 more files started %d programs that copy or make directories, the sync of a few %d: want no more", many, few)
	}
	t.Logf("programs that copy or make directories: %d for a few files, %d for 400 more", few, many)
}

// TestAnAbbreviatedCommitIsLockedInFull: the lock records the full hash whatever the source. A
// source that is not a git repository gives it by the commit git archive records (GitHub's
// archives are made so), by its top directory library-<hash>, or by the lock already holding it;
// one that gives it nowhere is refused, rather than an abbreviated hash written into the lock.
func TestAnAbbreviatedCommitIsLockedInFull(t *testing.T) {
	lib := buildLibrary(t)
	_, commit := gitLibrary(t, lib, "2026-08-01T00:00:00Z")
	abbrev := commit[:8]
	gitArchive := func(format string) string {
		out := filepath.Join(t.TempDir(), "library."+format)
		// Named after the abbreviation, as GitHub names the archive of an abbreviated ref: only
		// the commit recorded inside gives the full hash.
		cmd := exec.Command("git", "-C", lib, "archive", "--format="+format, "--prefix=library-"+abbrev+"/", "-o", out, commit)
		if b, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git archive: %v\n%s", err, b)
		}
		return out
	}
	plain := func(name string) string {
		dir := filepath.Join(t.TempDir(), name)
		if err := os.CopyFS(dir, os.DirFS(lib)); err != nil {
			t.Fatal(err)
		}
		if err := os.RemoveAll(filepath.Join(dir, ".git")); err != nil {
			t.Fatal(err)
		}
		return dir
	}
	sources := []struct {
		name, from, lock string
	}{
		{"a tar.gz made by git archive", gitArchive("tar.gz"), ""},
		{"an extracted archive, library-<hash>", plain("library-" + commit), ""},
		{"a checkout whose commit the lock holds", plain("library"), "commit " + commit + "\n"},
	}
	if _, err := exec.LookPath("unzip"); err == nil {
		sources = append(sources, struct{ name, from, lock string }{"a zip made by git archive", gitArchive("zip"), ""})
	}
	for _, src := range sources {
		dest := filepath.Join(t.TempDir(), "operator")
		lockFile := filepath.Join(t.TempDir(), "library.lock")
		if src.lock != "" {
			writeFile(t, lockFile, src.lock)
		}
		out := mustRun(t, "--from", src.from, "--commit", abbrev, "--dest", dest, "--lock", lockFile)
		if lock := readLock(t, lockFile); lock.Commit != commit {
			t.Errorf("%s: lock commit %q, want the full %s\n%s", src.name, lock.Commit, commit, out)
		}
	}

	dest := filepath.Join(t.TempDir(), "operator")
	lockFile := filepath.Join(t.TempDir(), "library.lock")
	writeFile(t, lockFile, "commit "+commitA+"\n")
	out, err := run(t, "--from", plain("library"), "--commit", abbrev, "--dest", dest, "--lock", lockFile)
	if err == nil || !strings.Contains(out, "--commit "+abbrev+" is abbreviated") {
		t.Errorf("a source that names no commit: %v\n%s", err, out)
	}
	if b, _ := os.ReadFile(lockFile); string(b) != "commit "+commitA+"\n" {
		t.Errorf("the refused run wrote the lock:\n%s", b)
	}
}

func TestSyncErrorsAndHelp(t *testing.T) {
	lib := buildLibrary(t)
	dest := filepath.Join(t.TempDir(), "operator")
	lockFile := filepath.Join(t.TempDir(), "library.lock")

	out, err := run(t, "--help")
	if err != nil || !strings.Contains(out, "Usage: library-sync.sh") || !strings.Contains(out, "--commit REV") {
		t.Errorf("--help: %v\n%s", err, out)
	}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--bogus"}, "unknown argument: --bogus"},
		{[]string{"--from"}, "--from needs a value"},
		{[]string{"--from", filepath.Join(lib, "missing"), "--dest", dest, "--lock", lockFile}, "no such file or directory"},
		{[]string{"--from", filepath.Join(lib, "operator"), "--commit", commitA, "--dest", dest, "--lock", lockFile}, "no operator/ directory"},
		{[]string{"--from", filepath.Join(lib, "README.md"), "--commit", commitA, "--dest", dest, "--lock", lockFile}, "unsupported archive"},
		{[]string{"--dest", dest, "--lock", lockFile}, "--commit must be a full 40-hex commit"},
	} {
		out, err := run(t, tc.args...)
		if err == nil || !strings.Contains(out, tc.want) {
			t.Errorf("%v: error %v, output:\n%s\nwant %q", tc.args, err, out, tc.want)
		}
	}
	// Without --from the locked commit's archive is downloaded: here from a closed loopback port.
	if _, err := exec.LookPath("curl"); err == nil {
		writeFile(t, lockFile, "commit "+commitA+"\n")
		if out, err := run(t, "--dest", dest, "--lock", lockFile); err == nil || !strings.Contains(out, "download of http://127.0.0.1:9/archive/"+commitA+".tar.gz failed") {
			t.Errorf("download: %v\n%s", err, out)
		}
		os.Remove(lockFile)
	}
	// A directory in dest that is not an arch-dir is refused rather than kept or deleted silently.
	mustRun(t, "--from", lib, "--commit", commitA, "--dest", dest, "--lock", lockFile)
	writeFile(t, filepath.Join(dest, "ocp-mips/python/imagestreams/p.json"), imageStream("p", "quay.io/a/b:1"))
	if out, err := run(t, "--from", lib, "--commit", commitA, "--dest", dest, "--lock", lockFile); err == nil || !strings.Contains(out, "holds ocp-mips, which is not an arch-dir") {
		t.Errorf("stray dir: %v\n%s", err, out)
	}
	os.RemoveAll(filepath.Join(dest, "ocp-mips"))

	// An arch directory missing from the library, or left empty, is an error, never a wipe.
	if err := os.RemoveAll(filepath.Join(lib, "operator/ocp-s390x")); err != nil {
		t.Fatal(err)
	}
	if out, err := run(t, "--from", lib, "--commit", commitA, "--dest", dest, "--lock", lockFile); err == nil || !strings.Contains(out, "no operator/ocp-s390x directory") {
		t.Errorf("missing arch dir: %v\n%s", err, out)
	}
	if err := os.MkdirAll(filepath.Join(lib, "operator/ocp-s390x/official"), 0o755); err != nil {
		t.Fatal(err)
	}
	if out, err := run(t, "--from", lib, "--commit", commitA, "--dest", dest, "--lock", lockFile); err == nil || !strings.Contains(out, "refusing to empty") {
		t.Errorf("empty arch dir: %v\n%s", err, out)
	}
	if _, err := os.Stat(filepath.Join(dest, "ocp-s390x/python/imagestreams/python-rhel.json")); err != nil {
		t.Errorf("a failed run touched dest: %v", err)
	}

	// OKD: the same file in official/ and community/ is a conflict.
	writeFile(t, filepath.Join(lib, "operator/ocp-s390x/official/python/imagestreams/python-rhel.json"), imageStream("python", "registry.redhat.io/ubi9/python-312:latest"))
	okd := filepath.Join(lib, "operator/okd-x86_64")
	writeFile(t, filepath.Join(okd, "community/jenkins/imagestreams/jenkins-origin.json"), imageStream("jenkins", "quay.io/x/y:1"))
	if out, err := run(t, "--from", lib, "--commit", commitA, "--dest", dest, "--lock", lockFile); err == nil || !strings.Contains(out, "jenkins/imagestreams/jenkins-origin.json exists in more than one of: official community") {
		t.Errorf("OKD conflict: %v\n%s", err, out)
	}
}

// walkLib calls fn for every regular file under lib with its slash path below prefix.
func walkLib(t *testing.T, lib, prefix string, fn func(name string, data []byte)) {
	t.Helper()
	err := filepath.WalkDir(lib, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(lib, p)
		fn(prefix+"/"+filepath.ToSlash(rel), data)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

func writeTarGz(t *testing.T, lib, prefix, out string) {
	f, err := os.Create(out)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	gz := gzip.NewWriter(f)
	tw := tar.NewWriter(gz)
	walkLib(t, lib, prefix, func(name string, data []byte) {
		if err := tw.WriteHeader(&tar.Header{Name: name, Mode: 0o644, Size: int64(len(data)), Typeflag: tar.TypeReg}); err != nil {
			t.Fatal(err)
		}
		if _, err := tw.Write(data); err != nil {
			t.Fatal(err)
		}
	})
	for _, c := range []io.Closer{tw, gz} {
		if err := c.Close(); err != nil {
			t.Fatal(err)
		}
	}
}

func writeZip(t *testing.T, lib, prefix, out string) {
	f, err := os.Create(out)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	zw := zip.NewWriter(f)
	walkLib(t, lib, prefix, func(name string, data []byte) {
		w, err := zw.Create(name)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := w.Write(data); err != nil {
			t.Fatal(err)
		}
	})
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
}
