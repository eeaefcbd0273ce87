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
		// A group outside OCP_SUPPORTED_SAMPLES.
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
	cmd := exec.Command("bash", append([]string{script(t)}, args...)...)
	// Make an accidental download fail fast instead of reaching the network.
	cmd.Env = append(os.Environ(), "LIBRARY_URL=http://127.0.0.1:9/none.tar.gz")
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

func TestSyncIntoEmptyDestAndIdempotence(t *testing.T) {
	lib := buildLibrary(t)
	dest := filepath.Join(t.TempDir(), "operator")

	out := mustRun(t, "--ocp", "--okd", "--from", lib, "--dest", dest)
	for _, want := range []string{
		"added    ocp-x86_64/jenkins/imagestreams/jenkins-rhel.json",
		"added    ocp-s390x/python/imagestreams/python-rhel.json",
		"added    okd-x86_64/python/templates/django-psql-example.json",
		"ocp-x86_64: skipped groups not in OCP_SUPPORTED_SAMPLES (use --ocp-all): sso\n",
		"16 added, 0 updated, 0 removed",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	for _, arch := range append(ocpDirs, "okd-x86_64") {
		inv, err := inventory.LoadDir(dest, arch)
		if err != nil {
			t.Fatalf("synced %s does not load: %v", arch, err)
		}
		if _, ok := inv.ImageStream("jenkins"); !ok {
			t.Errorf("%s: jenkins missing", arch)
		}
		if _, ok := inv.Template("jenkins-ephemeral"); !ok {
			t.Errorf("%s: jenkins-ephemeral missing", arch)
		}
	}
	before := snapshot(t, dest)
	for p := range before {
		if strings.Contains(p, "sso") || strings.Contains(p, "wildfly") || strings.HasSuffix(p, ".md") || strings.HasSuffix(p, "index.json") {
			t.Errorf("%s should not have been copied", p)
		}
	}

	// Second run: nothing to do, nothing touched.
	time.Sleep(10 * time.Millisecond)
	out = mustRun(t, "--ocp", "--okd", "--from", lib, "--dest", dest)
	if !strings.Contains(out, "no changes: "+dest+" is up to date") || strings.Contains(out, "added ") || strings.Contains(out, "updated ") {
		t.Errorf("second run was not a no-op:\n%s", out)
	}
	after := snapshot(t, dest)
	if len(after) != len(before) {
		t.Fatalf("second run changed the file count: %d -> %d", len(before), len(after))
	}
	for p, s := range before {
		if after[p] != s {
			t.Errorf("second run touched %s", p)
		}
	}
}

func TestSyncUpdatesRemovesAndKeepsUnsupportedGroups(t *testing.T) {
	lib := buildLibrary(t)
	dest := filepath.Join(t.TempDir(), "operator")
	// A group this repository carries that the library does not supply for OCP: kept.
	custom := filepath.Join(dest, "ocp-x86_64/custom/imagestreams/custom.json")
	writeFile(t, custom, imageStream("custom", "registry.redhat.io/x/custom:1"))
	mustRun(t, "--from", lib, "--dest", dest) // --ocp is the default

	if _, err := os.Stat(filepath.Join(dest, "okd-x86_64")); !os.IsNotExist(err) {
		t.Errorf("okd-x86_64 synced without --okd (stat error %v)", err)
	}
	// Change one file, delete another and add a third in the library.
	o := filepath.Join(lib, "operator/ocp-x86_64/official")
	writeFile(t, filepath.Join(o, "python/imagestreams/python-rhel.json"), imageStream("python", "registry.redhat.io/ubi9/python-313:latest"))
	if err := os.Remove(filepath.Join(o, "jenkins/templates/jenkins-ephemeral.json")); err != nil {
		t.Fatal(err)
	}
	writeFile(t, filepath.Join(o, "ruby/imagestreams/ruby-rhel.json"), imageStream("ruby", "registry.redhat.io/ubi9/ruby-33:latest"))

	out := mustRun(t, "--from", lib, "--dest", dest)
	for _, want := range []string{
		"updated  ocp-x86_64/python/imagestreams/python-rhel.json",
		"removed  ocp-x86_64/jenkins/templates/jenkins-ephemeral.json",
		"added    ocp-x86_64/ruby/imagestreams/ruby-rhel.json",
		"1 added, 1 updated, 1 removed",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	if _, err := os.Stat(filepath.Join(dest, "ocp-x86_64/jenkins/templates")); !os.IsNotExist(err) {
		t.Errorf("empty templates directory left behind (stat error %v)", err)
	}
	if _, err := os.Stat(custom); err != nil {
		t.Errorf("unsupported group custom was touched: %v", err)
	}
	inv, err := inventory.LoadDir(dest, "ocp-x86_64")
	if err != nil {
		t.Fatal(err)
	}
	if is, _ := inv.ImageStream("python"); is.Spec.Tags[0].From.Name != "registry.redhat.io/ubi9/python-313:latest" {
		t.Errorf("python not updated: %s", is.Spec.Tags[0].From.Name)
	}

	// --ocp-all syncs every library group and removes groups the library lacks.
	out = mustRun(t, "--ocp-all", "--from", lib, "--dest", dest)
	if !strings.Contains(out, "added    ocp-x86_64/sso/imagestreams/sso76.json") || !strings.Contains(out, "removed  ocp-x86_64/custom/imagestreams/custom.json") {
		t.Errorf("--ocp-all output:\n%s", out)
	}
	if out := mustRun(t, "--ocp-all", "--from", lib, "--dest", dest); !strings.Contains(out, "no changes") {
		t.Errorf("--ocp-all second run:\n%s", out)
	}
}

func TestSyncFromArchives(t *testing.T) {
	lib := buildLibrary(t)
	ref := filepath.Join(t.TempDir(), "ref")
	mustRun(t, "--ocp", "--okd", "--from", lib, "--dest", ref)
	want := snapshot(t, ref)

	tgz := filepath.Join(t.TempDir(), "library-master.tar.gz")
	writeTarGz(t, lib, "library-master", tgz)
	formats := map[string]string{"tar.gz": tgz}
	if _, err := exec.LookPath("unzip"); err == nil {
		z := filepath.Join(t.TempDir(), "master.zip")
		writeZip(t, lib, "library-master", z)
		formats["zip"] = z
	} else {
		t.Log("unzip not available; zip archive not tested")
	}
	for name, archive := range formats {
		dest := filepath.Join(t.TempDir(), "operator")
		mustRun(t, "--ocp", "--okd", "--from", archive, "--dest", dest)
		got := snapshot(t, dest)
		if len(got) != len(want) {
			t.Errorf("%s: %d files, want %d", name, len(got), len(want))
		}
		for p, s := range want {
			if got[p].sum != s.sum {
				t.Errorf("%s: %s differs from the directory sync", name, p)
			}
		}
	}
}

func TestSyncErrorsAndHelp(t *testing.T) {
	lib := buildLibrary(t)
	dest := filepath.Join(t.TempDir(), "operator")

	out, err := run(t, "--help")
	if err != nil || !strings.Contains(out, "Usage: library-sync.sh") || !strings.Contains(out, "--ocp-all") {
		t.Errorf("--help: %v\n%s", err, out)
	}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--bogus"}, "unknown argument: --bogus"},
		{[]string{"--from"}, "--from needs a value"},
		{[]string{"--from", filepath.Join(lib, "missing"), "--dest", dest}, "no such file or directory"},
		{[]string{"--from", filepath.Join(lib, "operator"), "--dest", dest}, "no operator/ directory"},
		{[]string{"--from", filepath.Join(lib, "README.md"), "--dest", dest}, "unsupported archive"},
	} {
		out, err := run(t, tc.args...)
		if err == nil || !strings.Contains(out, tc.want) {
			t.Errorf("%v: error %v, output:\n%s\nwant %q", tc.args, err, out, tc.want)
		}
	}

	// An arch directory missing from the library, or left empty, is an error, never a wipe.
	if err := os.RemoveAll(filepath.Join(lib, "operator/ocp-s390x")); err != nil {
		t.Fatal(err)
	}
	if out, err := run(t, "--from", lib, "--dest", dest); err == nil || !strings.Contains(out, "no operator/ocp-s390x directory") {
		t.Errorf("missing arch dir: %v\n%s", err, out)
	}
	if err := os.MkdirAll(filepath.Join(lib, "operator/ocp-s390x/official"), 0o755); err != nil {
		t.Fatal(err)
	}
	if out, err := run(t, "--from", lib, "--dest", dest); err == nil || !strings.Contains(out, "refusing to empty") {
		t.Errorf("empty arch dir: %v\n%s", err, out)
	}

	// OKD: the same file in official/ and community/ is a conflict.
	okd := filepath.Join(lib, "operator/okd-x86_64")
	writeFile(t, filepath.Join(okd, "community/jenkins/imagestreams/jenkins-origin.json"), imageStream("jenkins", "quay.io/x/y:1"))
	if out, err := run(t, "--okd", "--from", lib, "--dest", dest); err == nil || !strings.Contains(out, "jenkins/imagestreams/jenkins-origin.json exists in more than one of: official community") {
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
