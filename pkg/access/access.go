// Package access says, without clients, whether the operator may do its work outside the
// namespaces it is always granted: the samples in openshift and the install pull secret in
// openshift-config. On a payload install the cluster-version operator binds both; an OLM install
// cannot (OLM creates namespaced RBAC only in the install namespace), so an administrator must,
// and until then the operator is not ready and says what to run.
//
// The evidence comes from requests the operator makes anyway (its informers' lists and watches,
// its writes) and, when a write is refused, from SelfSubjectAccessReviews; this package turns
// that evidence into a verdict.
package access

import (
	"fmt"
	"slices"
	"strings"
)

// Grant is one set of permissions an administrator binds in one namespace.
type Grant string

const (
	// Samples is managing imagestreams, templates and imagestreamimports in openshift.
	Samples Grant = "samples"
	// PullSecret is reading the secret openshift-config/pull-secret.
	PullSecret Grant = "pull-secret"
)

// Grants lists every grant, in the order messages name them.
var Grants = []Grant{Samples, PullSecret}

const (
	serviceAccountNamespace = "openshift-cluster-samples-operator"
	serviceAccountName      = "cluster-samples-operator"
)

// Rule is one permission, as a SubjectAccessReview asks about it.
type Rule struct {
	Verb, Group, Resource, Namespace, Name string
}

func (r Rule) String() string {
	what := r.Resource
	if r.Group != "" {
		what += "." + r.Group
	}
	if r.Name != "" {
		what += " " + r.Name
	}
	return fmt.Sprintf("%s %s in %s", r.Verb, what, r.Namespace)
}

// binding is how a grant is given: the RoleBinding of the payload (manifests/04 and 05), which
// binds a Role of the same namespace, and in the OLM bundle a ClusterRole with the same rules that
// an administrator binds in that namespace.
type binding struct {
	namespace   string
	roleBinding string
	role        string
	clusterRole string
	description string
	rules       []Rule
	// optional rules are granted with the others but not reviewed: the operator does without them
	// (a payload or bundle of another version may lack them), only less well.
	optional []Rule
}

// readWrite are the verbs the operator's code uses on the samples: it never patches them.
var readWrite = []string{"get", "list", "watch", "create", "update", "delete"}

func rules(namespace, group, resource, name string, verbs ...string) []Rule {
	out := make([]Rule, 0, len(verbs))
	for _, v := range verbs {
		out = append(out, Rule{Verb: v, Group: group, Resource: resource, Namespace: namespace, Name: name})
	}
	return out
}

// bindings mirror the Roles of manifests/04-openshift-rbac.yaml and 05-openshift-config-rbac.yaml
// (a test holds them equal): what the operator needs is exactly what the payload grants.
var bindings = map[Grant]binding{
	Samples: {
		namespace:   "openshift",
		roleBinding: "cluster-samples-operator",
		role:        "cluster-samples-operator",
		clusterRole: "cluster-samples-operator-openshift",
		description: "manage imagestreams, templates and imagestreamimports in namespace openshift",
		rules: slices.Concat(
			rules("openshift", "image.openshift.io", "imagestreams", "", readWrite...),
			rules("openshift", "image.openshift.io", "imagestreamimports", "", "create"),
			rules("openshift", "template.openshift.io", "templates", "", readWrite...)),
		// Watching them lets a refused write be retried at once when a quota or limit changes,
		// and a failed import when a credential in openshift does; without them the write is
		// retried on its backoff (a minute at most), the import on its own (15 minutes at most).
		optional: slices.Concat(
			rules("openshift", "", "resourcequotas", "", "list", "watch"),
			rules("openshift", "", "limitranges", "", "list", "watch"),
			rules("openshift", "", "secrets", "", "list", "watch")),
	},
	PullSecret: {
		namespace:   "openshift-config",
		roleBinding: "cluster-samples-operator-pull-secret-reader",
		role:        "cluster-samples-operator-pull-secret-reader",
		clusterRole: "cluster-samples-operator-pull-secret-reader-openshift-config",
		description: "read the secret pull-secret in namespace openshift-config",
		rules:       rules("openshift-config", "", "secrets", "pull-secret", "get", "list", "watch"),
	},
}

// Rules are the permissions of a grant the operator cannot do without; they are reviewed.
func Rules(g Grant) []Rule {
	return append([]Rule(nil), bindings[g].rules...)
}

// OptionalRules are the permissions a grant's Role also gives, which the operator uses when it
// has them and does without otherwise; they are not reviewed.
func OptionalRules(g Grant) []Rule {
	return append([]Rule(nil), bindings[g].optional...)
}

// ReadsProveNothing is true for a grant whose rules include writes. OpenShift lets every
// authenticated user read the imagestreams and templates of namespace openshift (its bootstrap
// policy binds shared-resource-viewer there), so an allowed list says nothing about whether the
// operator's own grant is bound: only reviews of the rules do.
func ReadsProveNothing(g Grant) bool {
	for _, r := range bindings[g].rules {
		switch r.Verb {
		case "get", "list", "watch":
		default:
			return true
		}
	}
	return false
}

// Command is what an administrator runs to give a grant. Installed by OLM, the operator's rules
// come as ClusterRoles that grant nothing until bound; from the payload, the Role exists and only
// its binding can be missing (the cluster-version operator puts it back, but need not be waited for).
func Command(g Grant, olm bool) string {
	b := bindings[g]
	role := "--role=" + b.role
	if olm {
		role = "--clusterrole=" + b.clusterRole
	}
	return fmt.Sprintf("oc create rolebinding %s -n %s %s --serviceaccount=%s:%s",
		b.roleBinding, b.namespace, role, serviceAccountNamespace, serviceAccountName)
}

// Message tells an administrator what the operator may not do and the commands that fix it, one
// per missing grant; "" when nothing is missing.
func Message(missing []Grant, olm bool) string {
	if len(missing) == 0 {
		return ""
	}
	var what, commands []string
	for _, g := range missing {
		what = append(what, bindings[g].description)
		commands = append(commands, Command(g, olm))
	}
	return fmt.Sprintf("the service account %s/%s may not %s; grant it with: %s",
		serviceAccountNamespace, serviceAccountName, strings.Join(what, ", nor "), strings.Join(commands, " ; "))
}

// Read is what the operator's informers were last told when they listed or watched.
type Read int

const (
	// ReadUnknown: no answer yet.
	ReadUnknown Read = iota
	// ReadAllowed: the last list or watch was authorized.
	ReadAllowed
	// ReadDenied: the last list or watch was forbidden.
	ReadDenied
)

// CombineReads is what the informers of one grant were told, together: denied if any was,
// allowed once all were, unknown otherwise. Each informer lists one resource, and an
// administrator's own role may grant one and not another.
func CombineReads(reads ...Read) Read {
	out := ReadAllowed
	for _, r := range reads {
		switch r {
		case ReadDenied:
			return ReadDenied
		case ReadUnknown:
			out = ReadUnknown
		}
	}
	if len(reads) == 0 {
		return ReadUnknown
	}
	return out
}

// Observation is the evidence about one grant.
type Observation struct {
	Read Read
	// Synced is true once the grant's informers have filled their caches.
	Synced bool
	// Denied lists the rules the last SelfSubjectAccessReviews found missing.
	Denied []Rule
	// Reviewed is true once SelfSubjectAccessReviews of the grant's rules were answered (Denied
	// holds what they refused), or were themselves refused, which leaves the reads as the only
	// evidence. They are asked after a refused write, and once the reads are allowed for a grant
	// whose reads prove nothing.
	Reviewed bool
}

// State is what an observation means.
type State int

const (
	// Pending: not known yet, or granted with the caches still filling.
	Pending State = iota
	// Granted: the operator may do all of it, and its caches show the namespace.
	Granted
	// Missing: an administrator must grant it.
	Missing
)

func (s State) String() string {
	switch s {
	case Granted:
		return "Granted"
	case Missing:
		return "Missing"
	}
	return "Pending"
}

// StateOf decides what an observation of grant g means. A refused read or a denied rule is
// missing access whatever else was seen; a grant counts only once the caches it fills are
// synced, since until then the operator cannot tell what it would have to do, and, for a grant
// whose reads prove nothing, once reviews have confirmed its rules.
func StateOf(g Grant, o Observation) State {
	// Ifs, not a switch: Go's coverage profile has no block for a case's expression, so gremlins
	// would never run its mutants.
	if o.Read == ReadDenied || len(o.Denied) > 0 {
		return Missing
	}
	if o.Read == ReadAllowed && o.Synced && (o.Reviewed || !ReadsProveNothing(g)) {
		return Granted
	}
	return Pending
}

// Verdict is the state of every grant.
type Verdict map[Grant]State

// Evaluate turns the observations into a verdict; a grant without observation is Pending.
func Evaluate(obs map[Grant]Observation) Verdict {
	v := Verdict{}
	for _, g := range Grants {
		v[g] = StateOf(g, obs[g])
	}
	return v
}

// State of one grant.
func (v Verdict) State(g Grant) State {
	return v[g]
}

// Ready is true when every grant is Granted.
func (v Verdict) Ready() bool {
	for _, g := range Grants {
		if v[g] != Granted {
			return false
		}
	}
	return true
}

// Missing lists the missing grants in Grants order.
func (v Verdict) Missing() []Grant {
	var out []Grant
	for _, g := range Grants {
		if v[g] == Missing {
			out = append(out, g)
		}
	}
	return out
}

// Equal compares two verdicts grant by grant.
func (v Verdict) Equal(o Verdict) bool {
	for _, g := range Grants {
		if v[g] != o[g] {
			return false
		}
	}
	return true
}

// Outcome classifies an API server's answer to a request: Denied only for 403, Authorized for
// any answer that authorization let through (2xx, 404, 409, 422, ...), and Unknown for those that
// say nothing about it (401, 429, 5xx).
type Outcome int

const (
	Unknown Outcome = iota
	Authorized
	Denied
)

// Classify returns the outcome of an HTTP status code.
func Classify(code int) Outcome {
	if code == 403 { // ifs, not a switch, for the reason StateOf gives
		return Denied
	}
	if code == 401 || code == 429 || code >= 500 || code < 200 {
		return Unknown
	}
	return Authorized
}
