// Package configspectest holds the test double of configspec.Inventories that the tests of
// several packages share; the operator's binary never links it.
package configspectest

import (
	"fmt"

	"github.com/samples-operator-dev/cluster-samples-operator/pkg/inventory"
)

// X86Only is a cluster that ships one inventory, for x86_64, and runs on Goarch ("amd64" when
// empty).
type X86Only struct {
	// Inventory is what For("x86_64") returns; nil: the embedded x86_64 inventory.
	Inventory *inventory.Inventory
	Goarch    string
}

func (X86Only) Has(arch string) bool { return arch == "x86_64" }

func (i X86Only) For(arch string) (*inventory.Inventory, error) {
	switch {
	case !i.Has(arch):
		return nil, fmt.Errorf("no inventory for %q", arch)
	case i.Inventory != nil:
		return i.Inventory, nil
	}
	return inventory.Embedded(inventory.ArchDirOCPX86_64)
}

func (i X86Only) GOARCH() string {
	if i.Goarch == "" {
		return "amd64"
	}
	return i.Goarch
}
