package operator

import (
	"fmt"
	"strings"
	"sync"

	"github.com/samples-operator-dev/cluster-samples-operator/pkg/configspec"
	"github.com/samples-operator-dev/cluster-samples-operator/pkg/inventory"
)

// inventories parses each architecture's inventory once, from the binary or from a directory,
// and keeps it: the inventory never changes while the process runs.
type inventories struct {
	dir    string // "" means the embedded inventory
	okd    bool
	goarch string

	mu     sync.Mutex
	loaded map[string]*inventory.Inventory
	errs   map[string]error
}

func newInventories(dir string, okd bool, goarch string) *inventories {
	return &inventories{dir: dir, okd: okd, goarch: goarch, loaded: map[string]*inventory.Inventory{}, errs: map[string]error{}}
}

func (i *inventories) GOARCH() string { return i.goarch }

func (i *inventories) Has(arch string) bool {
	_, err := i.For(arch)
	return err == nil
}

func (i *inventories) For(arch string) (*inventory.Inventory, error) {
	arch = configspec.NormalizeArchitecture(arch)
	i.mu.Lock()
	defer i.mu.Unlock()
	if inv, ok := i.loaded[arch]; ok {
		return inv, nil
	}
	if err, ok := i.errs[arch]; ok {
		return nil, err
	}
	inv, err := i.load(arch)
	if err != nil {
		i.errs[arch] = err
		return nil, err
	}
	i.loaded[arch] = inv
	return inv, nil
}

func (i *inventories) load(arch string) (*inventory.Inventory, error) {
	archDir, err := inventory.ArchDir(arch, i.okd)
	if err != nil {
		return nil, err
	}
	if i.dir == "" {
		return inventory.Embedded(archDir)
	}
	inv, err := inventory.LoadDir(i.dir, archDir)
	if err != nil {
		return nil, fmt.Errorf("loading the inventory of %s from %s: %w", arch, i.dir, err)
	}
	return inv, nil
}

// namesImagesByDigest reports whether the inventory of the cluster's architecture names any
// image by digest (a pinned inventory).
func namesImagesByDigest(i *inventories, goarch string) bool {
	inv, err := i.For(configspec.ArchitectureForGOARCH(goarch))
	if err != nil {
		return false
	}
	for _, ref := range inv.ImagesToMirror() {
		if strings.Contains(ref, "@sha256:") {
			return true
		}
	}
	return false
}
