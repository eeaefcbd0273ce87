package access

import (
	"bytes"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	rbacv1 "k8s.io/api/rbac/v1"
	"sigs.k8s.io/yaml"
)

func TestStateOf(t *testing.T) {
	denied := []Rule{{Verb: "create", Group: "image.openshift.io", Resource: "imagestreams", Namespace: "openshift"}}
	// Written out by hand: the samples grant writes, and every authenticated user may read the
	// samples on OpenShift; the pull secret grant only reads.
	readsProveNothing := map[Grant]bool{Samples: true, PullSecret: false}
	for g, needsReview := range readsProveNothing {
		if got := ReadsProveNothing(g); got != needsReview {
			t.Errorf("ReadsProveNothing(%s) = %v, want %v", g, got, needsReview)
		}
		for _, read := range []Read{ReadUnknown, ReadAllowed, ReadDenied} {
			for _, synced := range []bool{false, true} {
				for _, reviewed := range []bool{false, true} {
					for _, rules := range [][]Rule{nil, denied} {
						o := Observation{Read: read, Synced: synced, Denied: rules, Reviewed: reviewed}
						want := Pending
						switch {
						case read == ReadDenied || rules != nil:
							want = Missing
						case read == ReadAllowed && synced && (reviewed || !needsReview):
							want = Granted
						}
						if got := StateOf(g, o); got != want {
							t.Errorf("StateOf(%s, %+v) = %s, want %s", g, o, got, want)
						}
					}
				}
			}
		}
	}
}

func TestCombineReads(t *testing.T) {
	U, A, D := ReadUnknown, ReadAllowed, ReadDenied
	cases := []struct {
		reads []Read
		want  Read
	}{
		{nil, U},
		{[]Read{U}, U}, {[]Read{A}, A}, {[]Read{D}, D},
		{[]Read{A, A}, A}, {[]Read{A, U}, U}, {[]Read{U, A}, U},
		{[]Read{A, D}, D}, {[]Read{D, A}, D}, {[]Read{U, D}, D}, {[]Read{D, U}, D}, {[]Read{U, U}, U},
	}
	for _, c := range cases {
		if got := CombineReads(c.reads...); got != c.want {
			t.Errorf("CombineReads(%v) = %d, want %d", c.reads, got, c.want)
		}
	}
}

func TestVerdict(t *testing.T) {
	granted := Observation{Read: ReadAllowed, Synced: true, Reviewed: true}
	missing := Observation{Read: ReadDenied}
	cases := []struct {
		name    string
		obs     map[Grant]Observation
		ready   bool
		missing []Grant
	}{
		{"nothing seen", nil, false, nil},
		{"both granted", map[Grant]Observation{Samples: granted, PullSecret: granted}, true, nil},
		{"samples readable, as by every user, before reviews", map[Grant]Observation{Samples: {Read: ReadAllowed, Synced: true}, PullSecret: granted}, false, nil},
		{"one still syncing", map[Grant]Observation{Samples: granted, PullSecret: {Read: ReadAllowed}}, false, nil},
		{"samples missing", map[Grant]Observation{Samples: missing, PullSecret: granted}, false, []Grant{Samples}},
		{"pull secret missing", map[Grant]Observation{Samples: granted, PullSecret: missing}, false, []Grant{PullSecret}},
		{"both missing, in Grants order", map[Grant]Observation{PullSecret: missing, Samples: missing}, false, []Grant{Samples, PullSecret}},
		{"granted caches but a write denied", map[Grant]Observation{Samples: {Read: ReadAllowed, Synced: true, Denied: Rules(Samples)[3:4]}, PullSecret: granted}, false, []Grant{Samples}},
	}
	for _, c := range cases {
		v := Evaluate(c.obs)
		if v.Ready() != c.ready {
			t.Errorf("%s: Ready() = %v, want %v", c.name, v.Ready(), c.ready)
		}
		if got := v.Missing(); !slices.Equal(got, c.missing) {
			t.Errorf("%s: Missing() = %v, want %v", c.name, got, c.missing)
		}
		if !v.Equal(Evaluate(c.obs)) {
			t.Errorf("%s: a verdict is not equal to itself", c.name)
		}
	}
	if Evaluate(map[Grant]Observation{Samples: granted}).Equal(Evaluate(map[Grant]Observation{Samples: missing})) {
		t.Error("different verdicts compare equal")
	}
}

func TestCommand(t *testing.T) {
	cases := []struct {
		g    Grant
		olm  bool
		want string
	}{
		{Samples, true, "oc create rolebinding cluster-samples-operator -n openshift --clusterrole=cluster-samples-operator-openshift --serviceaccount=openshift-cluster-samples-operator:cluster-samples-operator"},
		{PullSecret, true, "oc create rolebinding cluster-samples-operator-pull-secret-reader -n openshift-config --clusterrole=cluster-samples-operator-pull-secret-reader-openshift-config --serviceaccount=openshift-cluster-samples-operator:cluster-samples-operator"},
		{Samples, false, "oc create rolebinding cluster-samples-operator -n openshift --role=cluster-samples-operator --serviceaccount=openshift-cluster-samples-operator:cluster-samples-operator"},
		{PullSecret, false, "oc create rolebinding cluster-samples-operator-pull-secret-reader -n openshift-config --role=cluster-samples-operator-pull-secret-reader --serviceaccount=openshift-cluster-samples-operator:cluster-samples-operator"},
	}
	for _, c := range cases {
		if got := Command(c.g, c.olm); got != c.want {
			t.Errorf("Command(%s, olm=%v) =\n%s\nwant\n%s", c.g, c.olm, got, c.want)
		}
	}
}

// The README's bundle section and the CSV description tell administrators to run these two
// commands: the message must say exactly the same.
func TestCommandsMatchTheREADME(t *testing.T) {
	readme, err := os.ReadFile(filepath.Join("..", "..", "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	for _, g := range Grants {
		if !bytes.Contains(readme, []byte(Command(g, true))) {
			t.Errorf("README.md does not show %q", Command(g, true))
		}
	}
}

func TestMessage(t *testing.T) {
	cases := []struct {
		missing []Grant
		olm     bool
		want    []string
		not     []string
	}{
		{nil, true, nil, nil},
		{[]Grant{Samples}, true, []string{
			"may not manage imagestreams, templates and imagestreamimports in namespace openshift; grant it with: " + Command(Samples, true),
		}, []string{"pull-secret", " ; "}},
		{[]Grant{PullSecret}, true, []string{
			"may not read the secret pull-secret in namespace openshift-config; grant it with: " + Command(PullSecret, true),
		}, []string{"imagestreams"}},
		{[]Grant{Samples, PullSecret}, true, []string{
			"the service account openshift-cluster-samples-operator/cluster-samples-operator may not manage imagestreams, templates and imagestreamimports in namespace openshift, nor read the secret pull-secret in namespace openshift-config",
			"grant it with: " + Command(Samples, true) + " ; " + Command(PullSecret, true),
		}, nil},
		{[]Grant{Samples, PullSecret}, false, []string{Command(Samples, false), Command(PullSecret, false)}, []string{"--clusterrole"}},
	}
	for _, c := range cases {
		got := Message(c.missing, c.olm)
		if len(c.want) == 0 && got != "" {
			t.Errorf("Message(%v) = %q, want empty", c.missing, got)
		}
		for _, w := range c.want {
			if !strings.Contains(got, w) {
				t.Errorf("Message(%v, olm=%v) =\n%s\nmissing\n%s", c.missing, c.olm, got, w)
			}
		}
		for _, n := range c.not {
			if strings.Contains(got, n) {
				t.Errorf("Message(%v, olm=%v) = %s\nshould not contain %q", c.missing, c.olm, got, n)
			}
		}
	}
}

func TestClassify(t *testing.T) {
	cases := map[int]Outcome{
		200: Authorized, 201: Authorized, 204: Authorized, 404: Authorized, 409: Authorized, 410: Authorized, 422: Authorized,
		403: Denied,
		401: Unknown, 429: Unknown, 500: Unknown, 503: Unknown, 0: Unknown,
	}
	for code, want := range cases {
		if got := Classify(code); got != want {
			t.Errorf("Classify(%d) = %d, want %d", code, got, want)
		}
	}
}

// What the operator checks is what the payload's Roles grant (and, through them, the bundle's
// ClusterRoles, which are generated from them).
func TestRulesAreThePayloadRoles(t *testing.T) {
	for g, file := range map[Grant]string{Samples: "04-openshift-rbac.yaml", PullSecret: "05-openshift-config-rbac.yaml"} {
		data, err := os.ReadFile(filepath.Join("..", "..", "manifests", file))
		if err != nil {
			t.Fatal(err)
		}
		var fromManifest []Rule
		found := false
		for _, doc := range strings.Split(string(data), "\n---\n") {
			var role rbacv1.Role
			if err := yaml.Unmarshal([]byte(doc), &role); err != nil {
				t.Fatalf("%s: %v", file, err)
			}
			if role.Kind != "Role" {
				continue
			}
			b := bindings[g]
			if role.Name != b.role || role.Namespace != b.namespace {
				t.Errorf("%s: Role %s/%s, want %s/%s", file, role.Namespace, role.Name, b.namespace, b.role)
			}
			found = true
			for _, r := range role.Rules {
				names := r.ResourceNames
				if len(names) == 0 {
					names = []string{""}
				}
				for _, group := range r.APIGroups {
					for _, resource := range r.Resources {
						for _, name := range names {
							fromManifest = append(fromManifest, rules(role.Namespace, group, resource, name, r.Verbs...)...)
						}
					}
				}
			}
		}
		if !found {
			t.Fatalf("%s has no Role", file)
		}
		key := func(r Rule) string { return r.String() }
		got, want := append(Rules(g), OptionalRules(g)...), fromManifest
		slices.SortFunc(got, func(a, b Rule) int { return strings.Compare(key(a), key(b)) })
		slices.SortFunc(want, func(a, b Rule) int { return strings.Compare(key(a), key(b)) })
		if !slices.Equal(got, want) {
			t.Errorf("%s: the operator checks\n%v\nthe payload grants\n%v", g, got, want)
		}
	}
}

// A rule reads as the permission it asks for: the group only when not core, the name only when
// the rule is about one object.
func TestRuleString(t *testing.T) {
	for rule, want := range map[Rule]string{
		{Verb: "get", Resource: "secrets", Namespace: "openshift-config", Name: "pull-secret"}:          "get secrets pull-secret in openshift-config",
		{Verb: "create", Group: "image.openshift.io", Resource: "imagestreams", Namespace: "openshift"}: "create imagestreams.image.openshift.io in openshift",
	} {
		if got := rule.String(); got != want {
			t.Errorf("%#v.String() = %q, want %q", rule, got, want)
		}
	}
}
