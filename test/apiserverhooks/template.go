package apiserverhooks

import (
	"encoding/json"
	"fmt"
	"regexp"

	templatev1 "github.com/openshift/api/template/v1"
	admissionv1 "k8s.io/api/admission/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// parameterNameRE is openshift-apiserver's rule for template parameter names
// (ParameterNameRegexp, osa pkg/template/apis/template/validation/validation.go).
var parameterNameRE = regexp.MustCompile(`^[a-zA-Z0-9_]+$`)

// mutateTemplate changes nothing of its own: openshift-apiserver neither defaults templates nor
// prepares them (osa pkg/template/apiserver/registry/template/strategy.go), and it keeps their
// objects as the raw JSON it was sent, which the CRD's schema already does. It is there for
// NormalizeTemplates.
func (s *Server) mutateTemplate(req *admissionv1.AdmissionRequest) (map[string]any, field.ErrorList, error) {
	fn := s.templateNormalizer()
	if fn == nil {
		return nil, nil, nil
	}
	obj, err := decodeObject(req.Object.Raw)
	if err != nil {
		return nil, nil, err
	}
	before := &templatev1.Template{}
	if err := json.Unmarshal(req.Object.Raw, before); err != nil {
		return nil, nil, fmt.Errorf("decoding the Template: %w", err)
	}
	after := before.DeepCopy()
	fn(after)
	// The objects stay exactly as the normalizer left them, nulls included, as the server keeps
	// them as raw JSON.
	mutated, err := applyTyped(obj, before, after, "objects")
	return mutated, nil, err
}

// validateTemplateRequest checks a created template's parameters. The server checks nothing but
// metadata on an update (ValidateTemplateUpdate), which the CRD machinery does itself.
func validateTemplateRequest(req *admissionv1.AdmissionRequest) (map[string]any, field.ErrorList, error) {
	t := &templatev1.Template{}
	if err := json.Unmarshal(req.Object.Raw, t); err != nil {
		return nil, nil, fmt.Errorf("decoding the Template: %w", err)
	}
	return nil, ValidateTemplate(t), nil
}

// ValidateTemplate is openshift-apiserver's validation of a created template's body
// (validateTemplateBody): every parameter has a name made of letters, digits and '_'. The
// objects are not validated: they are instantiated later, with the parameters substituted.
func ValidateTemplate(t *templatev1.Template) field.ErrorList {
	var errs field.ErrorList
	for i, p := range t.Parameters {
		path := field.NewPath("parameters").Index(i).Child("name")
		switch {
		case p.Name == "":
			errs = append(errs, field.Required(path, ""))
		case !parameterNameRE.MatchString(p.Name):
			errs = append(errs, field.Invalid(path, p.Name, fmt.Sprintf("does not match %v", parameterNameRE)))
		}
	}
	return errs
}
