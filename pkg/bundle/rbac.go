package bundle

import (
	"fmt"
	"strings"

	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// rbacPlan is where each RBAC object of manifests/ goes in the bundle.
type rbacPlan struct {
	// clusterPermissions and permissions are the rules of the ClusterRoles and the
	// own-namespace Roles bound to the operator's service account, in manifests/ order.
	clusterPermissions [][]rbacv1.PolicyRule
	permissions        [][]rbacv1.PolicyRule
	// extra are RBAC objects for other subjects, shipped as they are.
	extra []object
	// outside are the operator's Roles in other namespaces.
	outside []outsideGrant
}

// outsideGrant is a Role of the operator in a namespace other than its own: its rules ship
// as an unbound ClusterRole, and an administrator binds it in namespace.
type outsideGrant struct {
	namespace   string
	binding     string // the RoleBinding's name in manifests/
	clusterRole rbacv1.ClusterRole
}

type use int

const (
	unused use = iota
	byOperator
	byOthers
)

// planRBAC sorts the Roles, ClusterRoles and their bindings of manifests/ by whom they bind:
// the operator's service account (opNS/sa) or anyone else. A binding must bind either the
// operator alone or no part of it, and every role must be bound by something.
func planRBAC(objs []object, opNS, sa string) (*rbacPlan, error) {
	type role struct {
		obj   object
		rules []rbacv1.PolicyRule
		use   use
	}
	roles := map[string]*role{} // "ClusterRole/name" or "Role/namespace/name"
	type binding struct {
		obj object
		use use
	}
	var bindings []*binding
	bindingOf := map[string]string{} // role key -> the name of the RoleBinding that binds it to the operator
	for _, o := range objs {
		switch o.Kind {
		case "ClusterRole":
			cr := &rbacv1.ClusterRole{}
			if err := o.Decode(cr); err != nil {
				return nil, err
			}
			if cr.AggregationRule != nil {
				return nil, fmt.Errorf("%s: aggregated ClusterRoles are not supported in the bundle", o)
			}
			roles["ClusterRole/"+o.Name] = &role{obj: o, rules: cr.Rules}
		case "Role":
			r := &rbacv1.Role{}
			if err := o.Decode(r); err != nil {
				return nil, err
			}
			roles["Role/"+o.Namespace+"/"+o.Name] = &role{obj: o, rules: r.Rules}
		}
	}
	for _, o := range objs {
		var subjects []rbacv1.Subject
		var ref rbacv1.RoleRef
		var key string
		switch o.Kind {
		case "ClusterRoleBinding":
			b := &rbacv1.ClusterRoleBinding{}
			if err := o.Decode(b); err != nil {
				return nil, err
			}
			subjects, ref = b.Subjects, b.RoleRef
			if ref.Kind != "ClusterRole" {
				return nil, fmt.Errorf("%s: a ClusterRoleBinding must refer to a ClusterRole", o)
			}
			key = "ClusterRole/" + ref.Name
		case "RoleBinding":
			b := &rbacv1.RoleBinding{}
			if err := o.Decode(b); err != nil {
				return nil, err
			}
			subjects, ref = b.Subjects, b.RoleRef
			if ref.Kind != "Role" {
				return nil, fmt.Errorf("%s: only RoleBindings to a Role of the same namespace are supported in the bundle", o)
			}
			key = "Role/" + o.Namespace + "/" + ref.Name
		default:
			continue
		}
		r := roles[key]
		if r == nil {
			return nil, fmt.Errorf("%s refers to %s %s, which manifests/ does not define", o, ref.Kind, ref.Name)
		}
		operator := 0
		for _, s := range subjects {
			if s.Kind == rbacv1.ServiceAccountKind && s.Name == sa && s.Namespace == opNS {
				operator++
			}
		}
		u := byOthers
		switch {
		case operator == 0:
		case operator == len(subjects):
			u = byOperator
			bindingOf[key] = o.Name
		default:
			return nil, fmt.Errorf("%s binds the operator's service account together with other subjects; split it", o)
		}
		if r.use != unused && r.use != u {
			return nil, fmt.Errorf("%s is bound both to the operator and to other subjects; give each its own role", r.obj)
		}
		r.use = u
		bindings = append(bindings, &binding{obj: o, use: u})
	}

	plan := &rbacPlan{}
	for _, o := range objs {
		switch o.Kind {
		case "ClusterRole", "Role":
		default:
			continue
		}
		key := "ClusterRole/" + o.Name
		if o.Kind == "Role" {
			key = "Role/" + o.Namespace + "/" + o.Name
		}
		r := roles[key]
		switch {
		case r.use == unused && o.Kind == "ClusterRole" && aggregatedIntoOthers(o):
			// Its rules reach users through the roles it is aggregated into, not a binding.
			plan.extra = append(plan.extra, o)
		case r.use == unused:
			return nil, fmt.Errorf("%s is bound to nobody in manifests/", o)
		case r.use == byOthers && o.Kind == "Role" && o.Namespace != opNS:
			return nil, fmt.Errorf("%s: a Role outside %s for other subjects cannot be shipped in the bundle", o, opNS)
		case r.use == byOthers:
			plan.extra = append(plan.extra, o)
		case o.Kind == "ClusterRole":
			plan.clusterPermissions = append(plan.clusterPermissions, r.rules)
		case o.Namespace == opNS:
			plan.permissions = append(plan.permissions, r.rules)
		default:
			plan.outside = append(plan.outside, outsideGrant{
				namespace: o.Namespace,
				binding:   bindingOf[key],
				clusterRole: rbacv1.ClusterRole{
					TypeMeta: metav1.TypeMeta{APIVersion: "rbac.authorization.k8s.io/v1", Kind: "ClusterRole"},
					ObjectMeta: metav1.ObjectMeta{
						Name: o.Name + "-" + o.Namespace,
						Annotations: map[string]string{
							"kubernetes.io/description": fmt.Sprintf("The rules of Role %s/%s of the samples operator. It grants nothing until bound with a RoleBinding in namespace %s to ServiceAccount %s/%s.", o.Namespace, o.Name, o.Namespace, opNS, sa),
						},
					},
					Rules: r.rules,
				},
			})
		}
	}
	for _, b := range bindings {
		if b.use == byOthers {
			plan.extra = append(plan.extra, b.obj)
		}
	}
	return plan, nil
}

// aggregateToPrefix + the name of an aggregating ClusterRole, as a label set to "true", adds
// a ClusterRole's rules to that role.
const aggregateToPrefix = "rbac.authorization.k8s.io/aggregate-to-"

func aggregatedIntoOthers(o object) bool {
	for k, v := range o.Labels {
		if strings.HasPrefix(k, aggregateToPrefix) && v == "true" {
			return true
		}
	}
	return false
}
