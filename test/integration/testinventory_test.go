package integration

import (
	"encoding/json"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"testing"

	"github.com/samples-operator-dev/cluster-samples-operator/pkg/inventory"
	"github.com/samples-operator-dev/cluster-samples-operator/test/controlplane"
)

// Most tests install a part of the x86_64 inventory, not all of it. The package is CPU-bound on
// two cores, and every sample installed costs the servers an import, a ConfigMap and a line of
// the tag map; tests that wait for imports took a third of their time on the part (measured in
// a whole run: the real first start on a mirrored cluster 85 -> 30 s). A behaviour (a revert, a
// refusal, a Config change) is the same on 21 samples as on 103.
//
// The part is the inventory's own files, copied unchanged: every sample a test names, the
// templates' imagestreams, and streams from both registries the inventory pulls from. The tests
// whose subject is the whole inventory (its install on every architecture, takeover of an
// upstream cluster's samples, scale) use fullX86Inventory and fullInventoryOptions.
var (
	testInventoryStreams = []string{
		"golang", "httpd", "jenkins", "mysql", "nginx", "nodejs", "perl", "postgresql", "python", "ruby",
		"sso75-openshift-rhel8", "sso76-openshift-rhel8",
		"ubi8-openjdk-8", "ubi8-openjdk-11-runtime", "ubi8-openjdk-17", "ubi8-openjdk-17-runtime",
	}
	testInventoryTemplates = []string{
		"httpd-example", "jenkins-ephemeral", "jenkins-persistent", "nginx-example", "rails-postgresql-example",
	}
)

type testInventory struct {
	dir string
	inv *inventory.Inventory
}

var testInventoryOnce = sync.OnceValues(writeTestInventory)

// writeTestInventory copies the files of the test inventory's samples from assets/operator into
// a new directory laid out as the operator's --inventory-dir expects.
func writeTestInventory() (testInventory, error) {
	dir, err := os.MkdirTemp("", "test-inventory-")
	if err != nil {
		return testInventory{}, err
	}
	src := filepath.Join(controlplane.RepoRoot(), "assets", "operator", inventory.ArchDirOCPX86_64)
	wanted := map[string]bool{}
	for _, name := range testInventoryStreams {
		wanted["ImageStream/"+name] = true
	}
	for _, name := range testInventoryTemplates {
		wanted["Template/"+name] = true
	}
	err = filepath.WalkDir(src, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || filepath.Ext(path) != ".json" {
			return err
		}
		data, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		var head struct {
			Kind     string `json:"kind"`
			Metadata struct {
				Name string `json:"name"`
			} `json:"metadata"`
		}
		if err := json.Unmarshal(data, &head); err != nil {
			return fmt.Errorf("%s: %w", path, err)
		}
		key := head.Kind + "/" + head.Metadata.Name
		if !wanted[key] {
			return nil
		}
		delete(wanted, key)
		rel, _ := filepath.Rel(src, path)
		to := filepath.Join(dir, inventory.ArchDirOCPX86_64, rel)
		if err := os.MkdirAll(filepath.Dir(to), 0o755); err != nil {
			return err
		}
		return os.WriteFile(to, data, 0o644)
	})
	if err == nil && len(wanted) > 0 {
		missing := make([]string, 0, len(wanted))
		for key := range wanted {
			missing = append(missing, key)
		}
		slices.Sort(missing)
		err = fmt.Errorf("the test inventory names samples the x86_64 inventory lacks: %v", missing)
	}
	if err != nil {
		os.RemoveAll(dir)
		return testInventory{}, err
	}
	inv, err := inventory.LoadDir(dir, inventory.ArchDirOCPX86_64)
	if err != nil {
		os.RemoveAll(dir)
		return testInventory{}, err
	}
	return testInventory{dir: dir, inv: inv}, nil
}

// testInventoryDir is the directory of the test inventory, for operator.Options.InventoryDir.
// It panics if the inventory cannot be written: the package cannot run without it.
func testInventoryDir() string {
	ti, err := testInventoryOnce()
	if err != nil {
		panic(fmt.Sprintf("writing the test inventory: %v", err))
	}
	return ti.dir
}

// removeTestInventory removes the test inventory's directory, if it was written.
func removeTestInventory() {
	if ti, err := testInventoryOnce(); err == nil {
		os.RemoveAll(ti.dir)
	}
}

// TestTheTestInventoryIsAPartOfTheRealOne: each sample of the test inventory is the embedded
// inventory's own, and templates find the imagestreams they use.
func TestTheTestInventoryIsAPartOfTheRealOne(t *testing.T) {
	part, full := x86Inventory(t), fullX86Inventory(t)
	if got, want := len(part.ImageStreamNames()), len(testInventoryStreams); got != want {
		t.Errorf("%d imagestreams in the test inventory, want %d", got, want)
	}
	if got, want := len(part.TemplateNames()), len(testInventoryTemplates); got != want {
		t.Errorf("%d templates in the test inventory, want %d", got, want)
	}
	for _, name := range part.ImageStreamNames() {
		a, _ := part.ImageStream(name)
		b, ok := full.ImageStream(name)
		if !ok || !equalJSON(t, a, b) {
			t.Errorf("imagestream %s differs from the embedded inventory's", name)
		}
	}
	for _, name := range part.TemplateNames() {
		a, _ := part.Template(name)
		b, ok := full.Template(name)
		if !ok || !equalJSON(t, a, b) {
			t.Errorf("template %s differs from the embedded inventory's", name)
		}
	}
}

func equalJSON(t *testing.T, a, b any) bool {
	t.Helper()
	x, err := json.Marshal(a)
	if err != nil {
		t.Fatal(err)
	}
	y, err := json.Marshal(b)
	if err != nil {
		t.Fatal(err)
	}
	return string(x) == string(y)
}
