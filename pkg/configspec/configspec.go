// Package configspec says what a samples Config means, without clients: which architecture it
// selects, whether its spec is valid (and what an admin must fix when it is not), which Mode it puts
// the samples in, and which Config the operator creates when none exists.
package configspec

import (
	"fmt"
	"sort"
	"strings"

	configv1 "github.com/openshift/api/config/v1"
	operatorv1 "github.com/openshift/api/operator/v1"
	samplesv1 "github.com/openshift/api/samples/v1"

	"github.com/samples-operator-dev/cluster-samples-operator/pkg/desired"
)

// ConfigName is the singleton's name; Configs with any other name are ignored.
const ConfigName = samplesv1.ConfigName

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

// Environment is what validation needs to know beyond the Config itself.
type Environment struct {
	// HasInventory reports whether the operator ships samples for an architecture.
	HasInventory func(arch string) bool
	// ValidateRegistry checks a samplesRegistry value; nil accepts anything.
	ValidateRegistry func(string) error
	// ImageConfig is images.config.openshift.io/cluster, nil when absent.
	ImageConfig *configv1.Image
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
			if !contains(SupportedArchitectures, arch) {
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
	if blocked, why := RegistryBlocked(env.ImageConfig, spec.SamplesRegistry); blocked {
		problems = append(problems, why)
	}

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
			if list.inventory != nil && !contains(list.inventory, name) {
				unknown = append(unknown, name)
			}
		}
		if len(unknown) > 0 {
			sort.Strings(unknown)
			warnings = append(warnings, fmt.Sprintf("%s names samples this operator does not ship: %s", list.field, strings.Join(unknown, ", ")))
		}
	}

	v := Validation{Warnings: warnings}
	if len(problems) > 0 {
		v.Err = fmt.Errorf("%s", strings.Join(problems, "; "))
	}
	return v
}

// RegistryBlocked reports whether the cluster's image configuration forbids importing from the
// registry the samples would use (samplesRegistry, or the default registries when it is empty),
// with a message that names the setting.
func RegistryBlocked(image *configv1.Image, samplesRegistry string) (bool, string) {
	if image == nil {
		return false, ""
	}
	registries := []string{samplesRegistry}
	if samplesRegistry == "" {
		registries = DefaultRegistries
	}
	host := func(r string) string { return strings.SplitN(r, "/", 2)[0] }

	if allowed := image.Spec.AllowedRegistriesForImport; len(allowed) > 0 {
		for _, r := range registries {
			ok := false
			for _, a := range allowed {
				if a.DomainName != "" && strings.HasSuffix(host(r), a.DomainName) {
					ok = true
				}
			}
			if !ok {
				return true, fmt.Sprintf("images.config.openshift.io/cluster spec.allowedRegistriesForImport does not allow %s: add it there, or point spec.samplesRegistry at an allowed mirror", r)
			}
		}
	}
	if allowed := image.Spec.RegistrySources.AllowedRegistries; len(allowed) > 0 {
		for _, r := range registries {
			if !contains(trimAll(allowed), host(r)) {
				return true, fmt.Sprintf("images.config.openshift.io/cluster spec.registrySources.allowedRegistries does not include %s: add it there, or point spec.samplesRegistry at an allowed mirror", host(r))
			}
		}
	}
	for _, r := range registries {
		if contains(trimAll(image.Spec.RegistrySources.BlockedRegistries), host(r)) {
			return true, fmt.Sprintf("images.config.openshift.io/cluster spec.registrySources.blockedRegistries blocks %s: remove it there, or point spec.samplesRegistry at another mirror", host(r))
		}
	}
	return false, ""
}

// DefaultRegistries are the registries the OCP samples come from when samplesRegistry is empty.
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
		if n := NormalizeArchitecture(a); !contains(out, n) {
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

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

func trimAll(list []string) []string {
	out := make([]string, len(list))
	for i, s := range list {
		out[i] = strings.TrimSpace(s)
	}
	return out
}
