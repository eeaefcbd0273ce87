package integration

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	templateclient "github.com/openshift/client-go/template/clientset/versioned"
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/util/retry"

	"github.com/samples-operator-dev/cluster-samples-operator/test/controlplane"
)

// TestARefusedTemplateUpdateWaitsWithoutReadingTheServer: the operator's update of one template
// is refused (a ValidatingAdmissionPolicy of the admin's). While that write waits out its
// backoff, every Config change brings the template back to its sync; the wait is checked before
// anything is read, so the server is read for the template no more often than it is written.
func TestARefusedTemplateUpdateWaitsWithoutReadingTheServer(t *testing.T) {
	parallel(t, aboutHalfAMinute)
	// A policy on templates is applied by kube-apiserver only where templates are its CRDs.
	e := newEnvOnStandIns(t)
	e.probesForbidden = true // the policy's denials are the point
	inv := x86Inventory(t)
	operatorLog := captureKlog(t)
	e.startOperator(defaultOptions())
	e.waitManaged(t, inv, "v1")
	ctx := context.Background()
	name := inv.TemplateNames()[0]

	// The admin's policy refuses the operator's updates of that template.
	policy := &admissionregistrationv1.ValidatingAdmissionPolicy{
		ObjectMeta: metav1.ObjectMeta{Name: "keep-my-template"},
		Spec: admissionregistrationv1.ValidatingAdmissionPolicySpec{
			MatchConstraints: &admissionregistrationv1.MatchResources{ResourceRules: []admissionregistrationv1.NamedRuleWithOperations{{
				ResourceNames: []string{name},
				RuleWithOperations: admissionregistrationv1.RuleWithOperations{
					Operations: []admissionregistrationv1.OperationType{admissionregistrationv1.Update},
					Rule:       admissionregistrationv1.Rule{APIGroups: []string{"template.openshift.io"}, APIVersions: []string{"v1"}, Resources: []string{"templates"}},
				},
			}}},
			Validations: []admissionregistrationv1.Validation{{
				Expression: fmt.Sprintf("request.userInfo.username != %q", controlplane.OperatorUser),
				Message:    "this template is the admin's now",
			}},
		},
	}
	deny := []admissionregistrationv1.ValidationAction{admissionregistrationv1.Deny}
	binding := &admissionregistrationv1.ValidatingAdmissionPolicyBinding{
		ObjectMeta: metav1.ObjectMeta{Name: "keep-my-template"},
		Spec:       admissionregistrationv1.ValidatingAdmissionPolicyBindingSpec{PolicyName: policy.Name, ValidationActions: deny},
	}
	policies := e.kube.AdmissionregistrationV1()
	if _, err := policies.ValidatingAdmissionPolicies().Create(ctx, policy, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := policies.ValidatingAdmissionPolicyBindings().Create(ctx, binding, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	// The policy is in force once it refuses a dry-run update sent as the operator.
	asOperator := rest.CopyConfig(e.cp.AdminConfig)
	asOperator.Impersonate = rest.ImpersonationConfig{UserName: controlplane.OperatorUser}
	operatorTemplates := templateclient.NewForConfigOrDie(asOperator).TemplateV1().Templates("openshift")
	eventually(t, 30*time.Second, func() (bool, string) {
		tmpl, err := e.tmpl.TemplateV1().Templates("openshift").Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return false, err.Error()
		}
		_, err = operatorTemplates.Update(ctx, tmpl, metav1.UpdateOptions{DryRun: []string{metav1.DryRunAll}})
		return err != nil && strings.Contains(err.Error(), "denied request"), fmt.Sprintf("the operator's update is still admitted (%v)", err)
	})

	// The admin changes the template: the operator's revert is refused.
	tmpl, err := e.tmpl.TemplateV1().Templates("openshift").Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	tmpl.Message = "edited by the admin"
	if _, err := e.tmpl.TemplateV1().Templates("openshift").Update(ctx, tmpl, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	edited := time.Now()
	eventually(t, 30*time.Second, func() (bool, string) {
		n := len(e.operatorRequests(t, verb("update"), on("templates"), named(name), not(carriedOut)))
		return n > 0, "no refused update yet"
	})
	// Config changes bring every sample back to its sync while the refused write waits. Each
	// change is followed by the sync it brings, which finds the write held (the positive
	// control: without those syncs the read count below would prove nothing), before the next.
	heldLine := fmt.Sprintf(`"Sample write held back: the server refused it and its backoff runs" kind="Template" name=%q`, name)
	held := func() int { return strings.Count(operatorLog(), heldLine) }
	for i := range 6 {
		before := held()
		// The operator writes the Config's status meanwhile: retry on its conflicts, as an
		// admin's client does.
		if err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
			cfg := e.getConfig()
			if cfg.Labels == nil {
				cfg.Labels = map[string]string{}
			}
			cfg.Labels["touched"] = fmt.Sprint(i)
			_, err := e.samples.SamplesV1().Configs().Update(ctx, cfg, metav1.UpdateOptions{})
			return err
		}); err != nil {
			t.Fatal(err)
		}
		eventually(t, 10*time.Second, func() (bool, string) {
			return held() > before, fmt.Sprintf("Config change %d: no sync of template %s found its write held (%d before the change): the syncs under test did not run", i, name, before)
		})
	}
	reads := len(e.operatorRequests(t, verb("get"), on("templates"), named(name), receivedAfter(edited)))
	refused := len(e.operatorRequests(t, verb("update"), on("templates"), named(name), not(carriedOut), receivedAfter(edited)))
	t.Logf("since the edit: %d refused updates of template %s, %d reads of it from the server", refused, name, reads)
	// One read per write; one more when the last write's read is counted and not yet its answer.
	if reads > refused+1 {
		t.Errorf("the template was read %d times from the server for %d refused updates: a held write reads it", reads, refused)
	}
}
