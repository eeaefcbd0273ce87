package assets_test

import (
	"io/fs"
	"os"
	"testing"

	"github.com/samples-operator-dev/cluster-samples-operator/assets"
	"github.com/samples-operator-dev/cluster-samples-operator/pkg/inventory"
)

// The binary ships what library.lock records: openshift/library's files, none edited by hand.
func TestEmbeddedInventoryIsTheLockedLibrary(t *testing.T) {
	data, err := os.ReadFile("library.lock")
	if err != nil {
		t.Fatal(err)
	}
	lock, err := inventory.ParseLock(data)
	if err != nil {
		t.Fatalf("library.lock: %v", err)
	}
	tree, err := fs.Sub(assets.Operator, "operator")
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range lock.Verify(tree) {
		t.Error(p)
	}
}
