// Package configspec says what a samples Config means, without clients: which architecture it
// selects, whether its spec is valid (and what an admin must fix when it is not), which Mode it puts
// the samples in, and which Config the operator creates when none exists.
package configspec

import (
	"fmt"
	"slices"
	"sort"
	"strings"

	configv1 "github.com/openshift/api/config/v1"
	operatorv1 "github.com/openshift/api/operator/v1"
	samplesv1 "github.com/openshift/api/samples/v1"

	"github.com/samples-operator-dev/cluster-samples-operator/pkg/desired"
)

// SupportedArchitectures are the values spec.architectures accepts.
var SupportedArchitectures = []string{"x86_64", "amd64", "arm64", "ppc64le", "s390x"}

// ArchitectureForGOARCH maps a Go GOARCH to the Config's spec.architectures value ("" if none).
func ArchitectureForGOARCH(goarch string) string {
	switch goarch {
	case "amd64":
		return "x86_64"
	case "arm64", "ppc64le", "s390x":
		return goarch
	}
	return ""
}

// NormalizeArchitecture maps equivalent spellings to one value: amd64 is x86_64.
func NormalizeArchitecture(arch string) string {
	if arch == "amd64" {
		return "x86_64"
	}
	return arch
}

// Architecture is the one architecture a Config selects.
func Architecture(spec *samplesv1.ConfigSpec) string {
	if len(spec.Architectures) == 0 {
		return ""
	}
	return NormalizeArchitecture(spec.Architectures[0])
}

// ClusterArchitectures returns what a Config that names no spec.architectures (as one a GitOps
// tool applies may not) stands for: the cluster's architecture, the operator's GOARCH, as in the
// Config the operator creates. ok is false when cfg names architectures, is being deleted, or the
// GOARCH maps to no spec.architectures value.
func ClusterArchitectures(cfg *samplesv1.Config, goarch string) (archs []string, ok bool) {
	arch := ArchitectureForGOARCH(goarch)
	if len(cfg.Spec.Architectures) > 0 || cfg.DeletionTimestamp != nil || arch == "" {
		return nil, false
	}
	return []string{arch}, true
}

// WithClusterArchitecture is cfg as the operator reads it: a Config that names no architectures
// selects the cluster's (ClusterArchitectures), from the moment it is seen until the operator's
// write of spec.architectures lands. It returns cfg itself when nothing is filled in, a copy
// otherwise.
func WithClusterArchitecture(cfg *samplesv1.Config, goarch string) *samplesv1.Config {
	archs, ok := ClusterArchitectures(cfg, goarch)
	if !ok {
		return cfg
	}
	out := cfg.DeepCopy()
	out.Spec.Architectures = archs
	return out
}

// Environment is what validation needs to know beyond the Config itself.
type Environment struct {
	// HasInventory reports whether the operator ships samples for an architecture.
	HasInventory func(arch string) bool
	// ValidateRegistry checks a samplesRegistry value; nil accepts anything.
	ValidateRegistry func(string) error
	// InventoryImageStreams and InventoryTemplates name the samples of the selected
	// architecture, so that skip entries naming nothing can be reported.
	InventoryImageStreams, InventoryTemplates []string
}

// Validation is the verdict on a Config's spec.
type Validation struct {
	// Err is set when the spec cannot be applied; its text says what to fix.
	Err error
	// Warnings are accepted oddities worth telling the admin (skip entries that name nothing).
	Warnings []string
}

// Validate checks a Config's spec against its status (the architecture may not change once samples
// were installed for it) and the environment. It returns every problem at once.
func Validate(cfg *samplesv1.Config, env Environment) Validation {
	var problems, warnings []string
	spec := &cfg.Spec

	switch {
	case len(spec.Architectures) == 0:
		problems = append(problems, fmt.Sprintf("spec.architectures is empty: set it to one of %s", strings.Join(SupportedArchitectures, ", ")))
	default:
		for _, arch := range spec.Architectures {
			if !slices.Contains(SupportedArchitectures, arch) {
				problems = append(problems, fmt.Sprintf("architecture %q is unsupported: use one of %s", arch, strings.Join(SupportedArchitectures, ", ")))
			}
		}
		if distinct := distinctArchitectures(spec.Architectures); len(distinct) > 1 {
			problems = append(problems, fmt.Sprintf("spec.architectures names %d architectures (%s): a cluster's samples are for one architecture, list exactly one", len(distinct), strings.Join(distinct, ", ")))
		} else if len(spec.Architectures) > 1 {
			problems = append(problems, fmt.Sprintf("spec.architectures lists %q more than once: list it once", spec.Architectures[0]))
		}
		arch := Architecture(spec)
		if len(problems) == 0 && env.HasInventory != nil && !env.HasInventory(arch) {
			problems = append(problems, fmt.Sprintf("this operator ships no samples for architecture %q", arch))
		}
		if applied := cfg.Status.Architectures; len(applied) > 0 && !sameArchitectures(applied, spec.Architectures) {
			problems = append(problems, fmt.Sprintf("spec.architectures cannot change from [%s] to [%s] while samples are installed: set it back, or set managementState Removed first",
				strings.Join(applied, " "), strings.Join(spec.Architectures, " ")))
		}
	}

	if spec.SamplesRegistry != "" && env.ValidateRegistry != nil {
		if err := env.ValidateRegistry(spec.SamplesRegistry); err != nil {
			problems = append(problems, fmt.Sprintf("spec.samplesRegistry %q is invalid: %v", spec.SamplesRegistry, err))
		}
	}
	// images.config.openshift.io/cluster does not make a spec invalid: openshift-apiserver applies
	// its allowedRegistriesForImport per imagestream (Evaluation), and its registrySources
	// is the nodes' pull policy, not an import policy: Evaluate warns of the samples it keeps
	// from nodes.

	for _, list := range []struct {
		field     string
		names     []string
		inventory []string
	}{
		{"spec.skippedImagestreams", spec.SkippedImagestreams, env.InventoryImageStreams},
		{"spec.skippedTemplates", spec.SkippedTemplates, env.InventoryTemplates},
	} {
		seen := map[string]bool{}
		var unknown []string
		for _, name := range list.names {
			if seen[name] {
				problems = append(problems, fmt.Sprintf("%s lists %q more than once: list it once", list.field, name))
				continue
			}
			seen[name] = true
			if list.inventory != nil && !slices.Contains(list.inventory, name) {
				unknown = append(unknown, name)
			}
		}
		if len(unknown) > 0 {
			sort.Strings(unknown)
			warnings = append(warnings, fmt.Sprintf("%s names samples this operator does not ship: %s", list.field, strings.Join(unknown, ", ")))
		}
	}

	if len(spec.SkippedHelmCharts) > 0 {
		charts := make([]string, len(spec.SkippedHelmCharts))
		for i, c := range spec.SkippedHelmCharts {
			charts[i] = string(c)
		}
		warnings = append(warnings, fmt.Sprintf("spec.skippedHelmCharts is ignored: this operator installs no Helm charts, only imagestreams and templates (it lists %s)", strings.Join(charts, ", ")))
	}

	v := Validation{Warnings: warnings}
	if len(problems) > 0 {
		v.Err = fmt.Errorf("%s", strings.Join(problems, "; "))
	}
	return v
}

// RegistryBlocked reports whether the cluster's image configuration spec.registrySources refuses
// one of the registries the samples would use (samplesRegistry, or else every registry the
// inventory pulls from), with a message that names the setting and the registry. Only the
// bootstrap asks it, to create the default Config Removed then; a Config an admin has is never
// invalid for registrySources.
func RegistryBlocked(image *configv1.Image, samplesRegistry string, sourceRegistries []string) (bool, string) {
	if image == nil {
		return false, ""
	}
	registries := []string{samplesRegistry}
	if samplesRegistry == "" {
		registries = sourceRegistries
		if len(registries) == 0 {
			registries = DefaultRegistries
		}
	}
	const where = "images.config.openshift.io/cluster spec."
	if allowed := image.Spec.RegistrySources.AllowedRegistries; len(allowed) > 0 {
		for _, r := range registries {
			if !desired.RegistrySourcesMatch(allowed, r) {
				return true, fmt.Sprintf(where+"registrySources.allowedRegistries does not include %s: add it there, or point spec.samplesRegistry at an allowed mirror", r)
			}
		}
	}
	for _, r := range registries {
		if desired.RegistrySourcesMatch(image.Spec.RegistrySources.BlockedRegistries, r) {
			return true, fmt.Sprintf(where+"registrySources.blockedRegistries blocks %s: remove it there, or point spec.samplesRegistry at another mirror", r)
		}
	}
	return false, ""
}

// DefaultRegistries stand in for the inventory's registries when none is known.
var DefaultRegistries = []string{"registry.redhat.io"}

// Mode is what a Config asks of the samples.
func Mode(cfg *samplesv1.Config, valid bool) desired.Mode {
	if cfg.DeletionTimestamp != nil {
		return desired.Removing
	}
	switch cfg.Spec.ManagementState {
	case operatorv1.Removed:
		return desired.Removing
	case operatorv1.Unmanaged:
		return desired.Frozen
	}
	// Managed, and the values the CRD also admits ("" and Force), which mean Managed.
	if !valid {
		return desired.Frozen
	}
	return desired.Managed
}

func distinctArchitectures(archs []string) []string {
	var out []string
	for _, a := range archs {
		if n := NormalizeArchitecture(a); !slices.Contains(out, n) {
			out = append(out, n)
		}
	}
	return out
}

func sameArchitectures(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if NormalizeArchitecture(a[i]) != NormalizeArchitecture(b[i]) {
			return false
		}
	}
	return true
}
