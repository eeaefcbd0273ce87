package integration

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"k8s.io/apimachinery/pkg/api/equality"

	"github.com/samples-operator-dev/cluster-samples-operator/assets"
	"github.com/samples-operator-dev/cluster-samples-operator/pkg/inventory"
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

// writeTestInventory copies the files of the test inventory's samples, byte for byte, from the
// embedded inventory into a new directory laid out as the operator's --inventory-dir expects.
func writeTestInventory() (testInventory, error) {
	full, err := embeddedX86()
	if err != nil {
		return testInventory{}, err
	}
	var files []string
	for _, name := range testInventoryStreams {
		file, ok := full.ImageStreamFile(name)
		if !ok {
			return testInventory{}, fmt.Errorf("the test inventory names imagestream %s, which the x86_64 inventory lacks", name)
		}
		files = append(files, file)
	}
	for _, name := range testInventoryTemplates {
		file, ok := full.TemplateFile(name)
		if !ok {
			return testInventory{}, fmt.Errorf("the test inventory names template %s, which the x86_64 inventory lacks", name)
		}
		files = append(files, file)
	}
	dir, err := os.MkdirTemp("", "test-inventory-")
	if err != nil {
		return testInventory{}, err
	}
	for _, file := range files { // operator/ocp-x86_64/<group>/<kind>/<name>.json
		if err = copyEmbedded(file, filepath.Join(dir, strings.TrimPrefix(file, "operator/"))); err != nil {
			break
		}
	}
	var inv *inventory.Inventory
	if err == nil {
		inv, err = inventory.LoadDir(dir, inventory.ArchDirOCPX86_64)
	}
	if err != nil {
		os.RemoveAll(dir)
		return testInventory{}, err
	}
	return testInventory{dir: dir, inv: inv}, nil
}

func copyEmbedded(file, to string) error {
	data, err := fs.ReadFile(assets.Operator, file)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(to), 0o755); err != nil {
		return err
	}
	return os.WriteFile(to, data, 0o644)
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
// inventory's own, and it holds exactly the samples the lists name.
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
		if !ok || !equality.Semantic.DeepEqual(a, b) {
			t.Errorf("imagestream %s differs from the embedded inventory's", name)
		}
	}
	for _, name := range part.TemplateNames() {
		a, _ := part.Template(name)
		b, ok := full.Template(name)
		if !ok || !equality.Semantic.DeepEqual(a, b) {
			t.Errorf("template %s differs from the embedded inventory's", name)
		}
	}
}
