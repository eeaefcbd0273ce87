package inventory

import (
	"slices"
	"strings"
	"testing"
)

func TestArchDir(t *testing.T) {
	cases := []struct {
		arch string
		okd  bool
		want string
	}{
		{"x86_64", false, "ocp-x86_64"},
		{"amd64", false, "ocp-x86_64"},
		{"arm64", false, "ocp-aarch64"},
		{"ppc64le", false, "ocp-ppc64le"},
		{"s390x", false, "ocp-s390x"},
		{"x86_64", true, "okd-x86_64"},
		{"amd64", true, "okd-x86_64"},
	}
	for _, tc := range cases {
		got, err := ArchDir(tc.arch, tc.okd)
		if err != nil || got != tc.want {
			t.Errorf("ArchDir(%q, %v) = %q, %v; want %q", tc.arch, tc.okd, got, err, tc.want)
		}
		if !slices.Contains(ArchDirs(), got) {
			t.Errorf("ArchDir(%q) = %q is not in ArchDirs()", tc.arch, got)
		}
	}
	for _, bad := range []struct {
		arch string
		okd  bool
		want string
	}{
		{"bad", false, `architecture "bad" is not supported; supported values are x86_64, amd64, arm64, ppc64le, s390x`},
		{"aarch64", false, "not supported"},
		{"", false, "not supported"},
		{"X86_64", false, "not supported"},
		{"arm64", true, "no OKD inventory"},
		{"s390x", true, "no OKD inventory"},
	} {
		if _, err := ArchDir(bad.arch, bad.okd); err == nil || !strings.Contains(err.Error(), bad.want) {
			t.Errorf("ArchDir(%q, %v) error = %v, want %q", bad.arch, bad.okd, err, bad.want)
		}
	}
}

func TestConfigArch(t *testing.T) {
	cases := map[string]string{"amd64": "x86_64", "arm64": "arm64", "ppc64le": "ppc64le", "s390x": "s390x", "riscv64": "riscv64"}
	for in, want := range cases {
		if got := ConfigArch(in); got != want {
			t.Errorf("ConfigArch(%q) = %q, want %q", in, got, want)
		}
	}
	// Every Config value maps to a shipped directory.
	for _, a := range ConfigArchitectures() {
		if _, err := ArchDir(a, false); err != nil {
			t.Errorf("ArchDir(%q): %v", a, err)
		}
	}
}
