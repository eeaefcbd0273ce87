package inventory

import (
	"errors"
	"fmt"
	"regexp"
	"strconv"
	"strings"

	imagev1 "github.com/openshift/api/image/v1"
)

// Registry override (Config spec.samplesRegistry, spec section 6.3).
//
// Upstream substitutes a prefix only for pull specs with exactly two '/' and prepends the
// override to everything else, so registry.redhat.io/a/b/c:1 became R/registry.redhat.io/a/b/c:1
// (spec 16, item 14). Here the registry host is parsed the way container runtimes do and
// replaced whatever the depth of the repository path.

// splitRegistryHost splits a pull spec into its registry host and the remainder. The first
// '/'-separated component is a host when it contains '.' or ':', is "localhost", or has
// upper-case letters; otherwise the reference has no host (a Docker Hub short name such
// as centos/ruby) and host is "".
func splitRegistryHost(ref string) (host, rest string) {
	first, after, ok := strings.Cut(ref, "/")
	if !ok {
		return "", ref
	}
	if strings.ContainsAny(first, ".:") || first == "localhost" || first != strings.ToLower(first) {
		return first, after
	}
	return "", ref
}

// RegistryHost returns the registry host of a pull spec, or "" when it names none.
func RegistryHost(ref string) string {
	h, _ := splitRegistryHost(ref)
	return h
}

// RewriteRegistry applies samplesRegistry to one DockerImage pull spec:
//   - samplesRegistry empty: ref is returned unchanged;
//   - ref already starts with samplesRegistry + "/": unchanged, so the rewrite is idempotent;
//   - ref's registry host is one of sourceRegistries (compared case-insensitively): the host is
//     replaced by samplesRegistry, keeping the whole repository path, tag and digest;
//   - ref has no registry host (centos/ruby): samplesRegistry + "/" is prepended;
//   - ref is on any other registry: unchanged.
//
// samplesRegistry may be host, host:port, host/path or host:port/path; check it first with
// ValidateRegistry.
func RewriteRegistry(ref, samplesRegistry string, sourceRegistries []string) string {
	if samplesRegistry == "" || ref == "" || strings.HasPrefix(ref, samplesRegistry+"/") {
		return ref
	}
	host, rest := splitRegistryHost(ref)
	if host == "" {
		return samplesRegistry + "/" + ref
	}
	for _, src := range sourceRegistries {
		if strings.EqualFold(host, src) {
			return samplesRegistry + "/" + rest
		}
	}
	return ref
}

// RewriteImageStream returns a deep copy of is in which spec.dockerImageRepository and
// every DockerImage tag's from.name have been passed through RewriteRegistry.
// ImageStreamTag references are left alone. is itself is not modified.
func RewriteImageStream(is *imagev1.ImageStream, samplesRegistry string, sourceRegistries []string) *imagev1.ImageStream {
	out := is.DeepCopy()
	if samplesRegistry == "" {
		return out
	}
	if out.Spec.DockerImageRepository != "" {
		out.Spec.DockerImageRepository = RewriteRegistry(out.Spec.DockerImageRepository, samplesRegistry, sourceRegistries)
	}
	for i := range out.Spec.Tags {
		if from := out.Spec.Tags[i].From; isDockerImage(from) {
			from.Name = RewriteRegistry(from.Name, samplesRegistry, sourceRegistries)
		}
	}
	return out
}

// pathComponentRE is a repository path component as the distribution reference grammar
// defines it: lower-case alphanumerics joined by '.', '_', '__' or runs of '-'.
var pathComponentRE = regexp.MustCompile(`^[a-z0-9]+(?:(?:[._]|__|-+)[a-z0-9]+)*$`)

// hostLabelRE is one DNS label of a registry host name.
var hostLabelRE = regexp.MustCompile(`^[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?$`)

// ValidateRegistry checks a spec.samplesRegistry value. Empty means "no override" and is
// valid. Otherwise the value must be host[:port][/path] where host is a DNS name (with at
// least one '.'), "localhost", or any name followed by a port; the port is 1-65535; path
// components follow the image repository grammar (lower case). Schemes, white space,
// trailing '/', tags, digests and IPv6 literals are rejected. Each error says what to fix.
func ValidateRegistry(s string) error {
	if s == "" {
		return nil
	}
	bad := func(format string, args ...any) error {
		return fmt.Errorf("samplesRegistry %q: "+format, append([]any{s}, args...)...)
	}
	if strings.ContainsAny(s, " \t\r\n\v\f") {
		return bad("contains white space; remove it")
	}
	if scheme, rest, ok := strings.Cut(s, "://"); ok {
		return bad("must not start with a scheme; remove %q and give host[:port][/path], for example %q", scheme+"://", strings.TrimSuffix(rest, "/"))
	}
	if len(s) > 255 {
		return bad("is %d characters long; at most 255 are allowed", len(s))
	}
	if strings.HasSuffix(s, "/") {
		return bad("must not end with '/'; use %q", strings.TrimRight(s, "/"))
	}
	if strings.Contains(s, "@") {
		return bad("must not contain a digest ('@'); give only host[:port][/path]")
	}
	host, repoPath, hasPath := strings.Cut(s, "/")
	if err := validateHost(host); err != nil {
		return bad("%v", err)
	}
	if hasPath {
		for _, c := range strings.Split(repoPath, "/") {
			switch {
			case c == "":
				return bad("path has an empty component ('//'); remove the extra '/'")
			case strings.Contains(c, ":"):
				return bad("path component %q contains ':'; a tag is not allowed, and a port belongs right after the host", c)
			case c != strings.ToLower(c):
				return bad("path component %q has upper-case letters; repository paths must be lower case (use %q)", c, strings.ToLower(c))
			case !pathComponentRE.MatchString(c):
				return bad("path component %q is not valid; use lower-case letters and digits, separated by single '.', '_', '__' or '-'", c)
			}
		}
	}
	return nil
}

func validateHost(host string) error {
	if host == "" {
		return errors.New("the registry host is empty; give host[:port][/path], for example mirror.example.com:5000/samples")
	}
	if strings.HasPrefix(host, "[") || strings.Count(host, ":") > 1 {
		return errors.New("IPv6 address literals are not supported; use a host name")
	}
	name, port, hasPort := strings.Cut(host, ":")
	if name == "" {
		return errors.New("the registry host name before the port is empty")
	}
	if hasPort {
		n, err := strconv.Atoi(port)
		if err != nil || n < 1 || n > 65535 || port != strconv.Itoa(n) {
			return fmt.Errorf("port %q is not a number between 1 and 65535", port)
		}
	}
	if len(name) > 253 {
		return fmt.Errorf("host name is %d characters long; at most 253 are allowed", len(name))
	}
	for _, label := range strings.Split(name, ".") {
		if !hostLabelRE.MatchString(label) {
			return fmt.Errorf("host name %q is not valid; use letters, digits and '-' in dot-separated labels that do not start or end with '-'", name)
		}
	}
	if !hasPort && !strings.Contains(name, ".") && name != "localhost" {
		return fmt.Errorf("host %q has neither a '.' nor a port, so image pulls would read it as a Docker Hub namespace; use a fully qualified name (%s.example.com), add a port (%s:5000) or use localhost", name, name, name)
	}
	return nil
}
