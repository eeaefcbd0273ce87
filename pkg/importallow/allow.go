// Package importallow decides, as openshift-apiserver does, whether an image reference may be
// written into an imagestream: the cluster's images.config.openshift.io/cluster
// spec.allowedRegistriesForImport, which openshift-apiserver receives as
// imagePolicyConfig.allowedRegistriesForImport and applies with its registry allow-list
// (pkg/image/apis/image/validation/whitelist) to every DockerImage reference of a create or update.
// A reference it refuses makes the write fail with 422, so the operator must know before it writes.
//
// The rules, from that code and its tests: an entry is "host" or "host:port", each part a glob
// where '*' matches any run of characters (dots included) and '?' any one character; an entry
// without a port allows 443 (80 when the entry is insecure). A reference's host is matched whole
// against the host globs, never by suffix, and its port (443 when it names none) against the
// entry's port. docker.io, index.docker.io and registry-1.docker.io are one registry. The
// cluster's internal registry is always allowed. An empty or missing list allows everything.
//
// An update is judged by a wider list (ValidateImageStreamUpdateWithWhitelister, ForUpdateOf):
// a reference to a repository the stream already names is admitted whatever its registry.
package importallow

import (
	"fmt"
	"net"
	"strings"

	configv1 "github.com/openshift/api/config/v1"
	imagev1 "github.com/openshift/api/image/v1"
	"github.com/openshift/library-go/pkg/image/reference"
)

// Transport is how the reference will be pulled: it chooses the default port of an entry or of a
// reference that names none.
type Transport int

const (
	// Secure: an entry without a port allows 443, and a reference without a port is on 443. The
	// server checks imagestream tags this way unless the tag's import is insecure.
	Secure Transport = iota
	// Insecure: 80 in both places.
	Insecure
	// Any: an entry without a port allows 80 and 443; a reference without a port matches any
	// entry whose port is 80, 443 or '*'.
	Any
)

type hostPort struct{ host, port string }

// List is an allow-list; the zero value and nil allow everything.
type List struct {
	restricted bool
	entries    []hostPort
	invalid    []string
	// repositories are admitted whatever their registry (ForUpdateOf), keyed by Repository.
	repositories map[string]bool
}

// New builds the list from the image config's entries. internalRegistry (the image config's
// status.internalRegistryHostname, "" if unknown) is always allowed, as the server allows it.
// Entries the server cannot parse (more than one ':') are left out and reported by Invalid.
func New(allowed []configv1.RegistryLocation, internalRegistry string) *List {
	if len(allowed) == 0 {
		return nil // openshift-apiserver-operator configures no allow-list for an empty one
	}
	return newList(allowed, internalRegistry)
}

// newList is New without the empty-list shortcut: the server's own list when it is given one.
func newList(allowed []configv1.RegistryLocation, internalRegistry string) *List {
	l := &List{restricted: true}
	if internalRegistry != "" {
		_ = l.add(internalRegistry, Secure) // the server puts it first
	}
	for _, a := range allowed {
		t := Secure
		if a.Insecure {
			t = Insecure
		}
		if err := l.add(a.DomainName, t); err != nil {
			l.invalid = append(l.invalid, a.DomainName)
		}
	}
	return l
}

func (l *List) add(entry string, t Transport) error {
	var hps []hostPort
	switch parts := strings.SplitN(entry, ":", 3); len(parts) {
	case 1:
		switch t {
		case Any:
			hps = []hostPort{{parts[0], "80"}, {parts[0], "443"}}
		case Insecure:
			hps = []hostPort{{parts[0], "80"}}
		default:
			hps = []hostPort{{parts[0], "443"}}
		}
	case 2:
		hps = []hostPort{{parts[0], parts[1]}}
	default:
		return fmt.Errorf("allowed registry %q has more than one ':'", entry)
	}
	for _, hp := range hps {
		dup := false
		for _, have := range l.entries {
			dup = dup || have == hp
		}
		if !dup {
			l.entries = append(l.entries, hp)
		}
	}
	return nil
}

// Invalid lists the entries left out because the server cannot parse them either.
func (l *List) Invalid() []string {
	if l == nil {
		return nil
	}
	return l.invalid
}

// Restricted reports whether the list allows less than every registry.
func (l *List) Restricted() bool { return l != nil && l.restricted }

// ForUpdateOf is the list openshift-apiserver applies to an update of the imagestream old
// (validation.go ValidateImageStreamUpdateWithWhitelister): l, and every repository old already
// names, in spec.dockerImageRepository, a DockerImage tag's from or a status tag event, admitted
// whatever its registry. A repository is compared whole (registry with its port as written,
// namespace and name; tag and digest aside; Repository), never by registry alone: an update may
// move a tag to another tag of a repository the stream pulls from, not to another repository of
// that registry. (A /status write is judged otherwise: there only the exact references the old
// status held are exempt.)
func (l *List) ForUpdateOf(old *imagev1.ImageStream) *List {
	if !l.Restricted() || old == nil {
		return l
	}
	wider := *l
	wider.repositories = map[string]bool{}
	keep := func(pullSpec string) {
		// The server skips what it cannot parse: it is refused as invalid anyway.
		if ref, err := reference.Parse(pullSpec); err == nil {
			wider.repositories[Repository(ref)] = true
		}
	}
	if old.Spec.DockerImageRepository != "" {
		keep(old.Spec.DockerImageRepository)
	}
	for _, tag := range old.Spec.Tags {
		if tag.From != nil && tag.From.Kind == "DockerImage" {
			keep(tag.From.Name)
		}
	}
	for _, events := range old.Status.Tags {
		for _, item := range events.Items {
			keep(item.DockerImageReference)
		}
	}
	return &wider
}

// Repository is how the server names the repository of a reference when it compares them
// (whitelister.go canonicalRepository): registry[:port]/namespace/name, with docker.io and
// library/ filled in where the reference leaves them out.
func Repository(ref reference.DockerImageReference) string {
	return ref.DockerClientDefaults().AsRepository().Exact()
}

// AdmitPullSpec returns nil when ref may be written with transport t, and otherwise an error that
// names the registry and the entries, as the server's does.
func (l *List) AdmitPullSpec(ref string, t Transport) error {
	parsed, err := reference.Parse(ref)
	if err != nil {
		return err
	}
	return l.AdmitReference(parsed, t)
}

// AdmitHost is AdmitPullSpec for a bare "host[:port]".
func (l *List) AdmitHost(host string, t Transport) error {
	return l.AdmitReference(reference.DockerImageReference{Registry: host}, t)
}

// AdmitReference is AdmitPullSpec for a parsed reference.
func (l *List) AdmitReference(ref reference.DockerImageReference, t Transport) error {
	if !l.Restricted() || l.repositories[Repository(ref)] {
		return nil
	}
	var host, port string
	switch t {
	case Any:
		h, p, err := net.SplitHostPort(ref.Registry)
		if err != nil || p == "" {
			h, p = ref.Registry, ""
		}
		host, port = h, p
		if host == "" {
			host, _ = ref.RegistryHostPort(false)
		}
	case Insecure:
		host, port = ref.RegistryHostPort(true)
	default:
		host, port = ref.RegistryHostPort(false)
	}
	if host == reference.DockerDefaultV1Registry || host == reference.DockerDefaultV2Registry {
		if l.matches(reference.DockerDefaultRegistry, port) {
			return nil
		}
	}
	if l.matches(host, port) {
		return nil
	}
	name := ref.Registry
	if name == "" {
		name = host
		if port != "" {
			name = net.JoinHostPort(host, port)
		}
	}
	var allowed []string
	for _, e := range l.entries {
		allowed = append(allowed, fmt.Sprintf("%q", net.JoinHostPort(e.host, e.port)))
	}
	const shown = 5
	switch {
	case len(allowed) == 0:
		return fmt.Errorf("registry %q not allowed by empty whitelist", name)
	case len(allowed) > shown:
		return fmt.Errorf("registry %q not allowed by whitelist: %s, and %d more ...", name, strings.Join(allowed[:shown-1], ", "), len(allowed)-shown+1)
	}
	return fmt.Errorf("registry %q not allowed by whitelist: %s", name, strings.Join(allowed, ", "))
}

func (l *List) matches(host, port string) bool {
	for _, e := range l.entries {
		if !glob(e.host, host) {
			continue
		}
		if port == "" {
			if e.port == "80" || e.port == "443" || e.port == "*" {
				return true
			}
			continue
		}
		if glob(e.port, port) {
			return true
		}
	}
	return false
}

// glob matches s against pattern, where '*' stands for any run of characters and '?' for one.
func glob(pattern, s string) bool {
	// match[i] reports whether pattern[:j] matches s[:i], for the j of the current round.
	match := make([]bool, len(s)+1)
	match[0] = true
	for j := 0; j < len(pattern); j++ {
		c := pattern[j]
		if c == '*' {
			for i := 1; i <= len(s); i++ {
				match[i] = match[i] || match[i-1]
			}
			continue
		}
		for i := len(s); i >= 1; i-- {
			match[i] = match[i-1] && (c == '?' || c == s[i-1])
		}
		match[0] = false
	}
	return match[len(s)]
}
