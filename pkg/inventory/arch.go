package inventory

import (
	"fmt"
	"os"
	"path"
	"slices"
	"strings"

	"github.com/samples-operator-dev/cluster-samples-operator/assets"
)

// Architecture directories of the inventory, under assets/operator or an --inventory-dir.
const (
	ArchDirOCPX86_64  = "ocp-x86_64"
	ArchDirOCPAarch64 = "ocp-aarch64"
	ArchDirOCPPpc64le = "ocp-ppc64le"
	ArchDirOCPS390x   = "ocp-s390x"
	ArchDirOKDX86_64  = "okd-x86_64"
)

// Values of the Config's spec.architectures (spec section 10.1).
const (
	ArchX86_64  = "x86_64"
	ArchAMD64   = "amd64"
	ArchARM64   = "arm64"
	ArchPPC64LE = "ppc64le"
	ArchS390X   = "s390x"
)

// embeddedRoot is the directory of assets.Operator that holds the arch directories.
const embeddedRoot = "operator"

// ArchDirs returns every architecture directory the operator ships, sorted.
func ArchDirs() []string {
	return []string{ArchDirOCPAarch64, ArchDirOCPPpc64le, ArchDirOCPS390x, ArchDirOCPX86_64, ArchDirOKDX86_64}
}

// ConfigArchitectures returns the values accepted in spec.architectures, in the order
// messages list them.
func ConfigArchitectures() []string {
	return []string{ArchX86_64, ArchAMD64, ArchARM64, ArchPPC64LE, ArchS390X}
}

// ConfigArch maps a Go architecture (runtime.GOARCH) to the value the operator writes
// into spec.architectures: amd64 becomes x86_64, every other value is kept.
func ConfigArch(goarch string) string {
	if goarch == ArchAMD64 {
		return ArchX86_64
	}
	return goarch
}

// ArchDir returns the architecture directory for a spec.architectures value or a GOARCH
// value: x86_64 and amd64 map to ocp-x86_64 (okd-x86_64 when okd is set), arm64 to
// ocp-aarch64, ppc64le to ocp-ppc64le and s390x to ocp-s390x. OKD content exists only for
// x86_64.
func ArchDir(arch string, okd bool) (string, error) {
	var dir string
	switch arch {
	case ArchX86_64, ArchAMD64:
		if okd {
			return ArchDirOKDX86_64, nil
		}
		dir = ArchDirOCPX86_64
	case ArchARM64:
		dir = ArchDirOCPAarch64
	case ArchPPC64LE:
		dir = ArchDirOCPPpc64le
	case ArchS390X:
		dir = ArchDirOCPS390x
	default:
		return "", fmt.Errorf("architecture %q is not supported; supported values are %s", arch, strings.Join(ConfigArchitectures(), ", "))
	}
	if okd {
		return "", fmt.Errorf("there is no OKD inventory for architecture %q; OKD content exists only for %s", arch, ArchX86_64)
	}
	return dir, nil
}

// Embedded loads one architecture directory (one of ArchDirs) of the inventory compiled
// into the binary (assets.Operator). It parses on every call; callers keep the result.
func Embedded(archDir string) (*Inventory, error) {
	if !slices.Contains(ArchDirs(), archDir) {
		return nil, fmt.Errorf("no embedded inventory %q; known directories are %s", archDir, strings.Join(ArchDirs(), ", "))
	}
	return load(assets.Operator, path.Join(embeddedRoot, archDir), "")
}

// LoadDir loads dir/archDir from disk, for the --inventory-dir flag. dir has the same
// layout as assets/operator: architecture directories directly beneath it. Messages name
// files as dir/archDir/... .
func LoadDir(dir, archDir string) (*Inventory, error) {
	if dir == "" {
		return nil, fmt.Errorf("inventory directory is empty")
	}
	if _, err := os.Stat(dir); err != nil {
		return nil, fmt.Errorf("inventory directory: %w", err)
	}
	return load(os.DirFS(dir), archDir, strings.TrimSuffix(dir, "/"))
}
