// Command verify-bundle is make verify's check of the OLM bundle: it loads the bundle
// directory as operator-sdk does (manifests.GetBundleFromDir), runs operator-framework/api's
// validators on it (those of `operator-sdk bundle validate --select-optional
// suite=operatorframework`, plus the deprecated-API and object checks), adds this project's
// rules for OpenShift's infrastructure feature annotations, and fails on any error or
// warning: a warning today is what a catalog's review rejects.
//
//	go run ./hack/verify-bundle [--k8s-version 1.35] BUNDLE_DIR
//
// It reads the directory only; nothing is pulled or dialed.
package main

import (
	"flag"
	"fmt"
	"io"
	"os"
	"regexp"
	"slices"
	"strings"

	"github.com/blang/semver/v4"
	"github.com/operator-framework/api/pkg/manifests"
	"github.com/operator-framework/api/pkg/operators/v1alpha1"
	"github.com/operator-framework/api/pkg/validation"
	"github.com/operator-framework/api/pkg/validation/errors"
	corev1 "k8s.io/api/core/v1"
)

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

func run(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("verify-bundle", flag.ContinueOnError)
	fs.SetOutput(stderr)
	k8sVersion := fs.String("k8s-version", "", "the Kubernetes minor version (1.35) whose removed APIs are errors; deprecated ones warn in any case")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if fs.NArg() != 1 {
		fmt.Fprintln(stderr, "usage: verify-bundle [--k8s-version 1.35] BUNDLE_DIR")
		return 2
	}
	dir := fs.Arg(0)
	problems, err := verify(dir, *k8sVersion)
	if err != nil {
		fmt.Fprintf(stderr, "%s: %v\n", dir, err)
		return 1
	}
	if len(problems) > 0 {
		for _, p := range problems {
			fmt.Fprintln(stderr, p)
		}
		fmt.Fprintf(stderr, "%s: %d problems (errors and warnings both fail)\n", dir, len(problems))
		return 1
	}
	fmt.Fprintf(stdout, "%s: valid\n", dir)
	return 0
}

// verify returns every error and warning about the bundle in dir, or an error when it cannot
// be loaded at all.
func verify(dir, k8sVersion string) ([]string, error) {
	bundle, err := manifests.GetBundleFromDir(dir)
	if err != nil {
		return nil, err
	}
	validators := validation.DefaultBundleValidators.WithValidators(
		validation.OperatorHubV2Validator,
		validation.StandardCapabilitiesValidator,
		validation.StandardCategoriesValidator,
		validation.GoodPracticesValidator,
		validation.AlphaDeprecatedAPIsValidator,
		validation.ObjectValidator,
	)
	objs := bundle.ObjectsToValidate()
	if k8sVersion != "" {
		// How operator-sdk passes --optional-values=k8s-version=...
		objs = append(objs, map[string]string{"k8s-version": k8sVersion})
	}
	var problems []string
	for _, r := range validators.Validate(objs...) {
		for _, e := range slices.Concat(r.Errors, r.Warnings) {
			problems = append(problems, describe(r.Name, e))
		}
	}
	if bundle.CSV != nil {
		problems = append(problems, checkFeatures(bundle.CSV)...)
		problems = append(problems, checkSkipRange(bundle.CSV)...)
	}
	// Several validators report the same finding (minKubeVersion, say); once is enough.
	slices.Sort(problems)
	return slices.Compact(problems), nil
}

func describe(name string, e errors.Error) string {
	if name == "" {
		name = "bundle"
	}
	return name + ": " + e.Error()
}

const featurePrefix = "features.operators.openshift.io/"

// features are the infrastructure features OpenShift's OperatorHub filters on. Its
// guidelines want each declared, "true" or "false": a missing one is neither a yes nor a no.
var features = []string{
	"disconnected", "fips-compliant", "proxy-aware", "tls-profiles",
	"token-auth-aws", "token-auth-azure", "token-auth-gcp", "cnf", "cni", "csi",
}

var digestRef = regexp.MustCompile(`^[^@\s]+@sha256:[0-9a-f]{64}$`)

// checkFeatures returns what is wrong with the CSV's infrastructure feature annotations: a
// missing or non-boolean one, or a claim of disconnected support while any image the
// bundle runs or lists is not a digest (a mirror cannot be trusted to serve a tag as the
// source does, and oc-mirror's mirror configuration redirects digests only).
func checkFeatures(csv *v1alpha1.ClusterServiceVersion) []string {
	var problems []string
	ann := csv.GetAnnotations()
	for _, f := range features {
		switch v, ok := ann[featurePrefix+f]; {
		case !ok:
			problems = append(problems, fmt.Sprintf("%s: Error: annotation %s%s is missing; declare it \"true\" or \"false\"", csv.Name, featurePrefix, f))
		case v != "true" && v != "false":
			problems = append(problems, fmt.Sprintf("%s: Error: annotation %s%s is %q, not \"true\" or \"false\"", csv.Name, featurePrefix, f, v))
		}
	}
	if ann[featurePrefix+"disconnected"] != "true" {
		return problems
	}
	for _, ref := range images(csv) {
		if !digestRef.MatchString(ref.image) {
			problems = append(problems, fmt.Sprintf("%s: Error: declares %sdisconnected \"true\" but %s is %q, not a sha256 digest reference", csv.Name, featurePrefix, ref.where, ref.image))
		}
	}
	return problems
}

// checkSkipRange returns what is wrong with the olm.skipRange annotation, which no validator
// of operator-framework/api parses: a range OLM cannot parse breaks upgrades to this version,
// and one holding the version itself would have the bundle replace itself.
func checkSkipRange(csv *v1alpha1.ClusterServiceVersion) []string {
	r, ok := csv.GetAnnotations()[v1alpha1.SkipRangeAnnotationKey]
	if !ok {
		return nil
	}
	inRange, err := semver.ParseRange(r)
	if err != nil {
		return []string{fmt.Sprintf("%s: Error: annotation %s %q: %v", csv.Name, v1alpha1.SkipRangeAnnotationKey, r, err)}
	}
	if inRange(csv.Spec.Version.Version) {
		return []string{fmt.Sprintf("%s: Error: annotation %s %q holds the CSV's own version %s", csv.Name, v1alpha1.SkipRangeAnnotationKey, r, csv.Spec.Version)}
	}
	return nil
}

type imageRef struct{ where, image string }

// images are every image reference of the CSV: relatedImages, the containerImage
// annotation, and the images and RELATED_IMAGE_* variables of the install strategy's pods.
func images(csv *v1alpha1.ClusterServiceVersion) []imageRef {
	var out []imageRef
	for _, ri := range csv.Spec.RelatedImages {
		out = append(out, imageRef{fmt.Sprintf("relatedImages %q", ri.Name), ri.Image})
	}
	if img, ok := csv.GetAnnotations()["containerImage"]; ok {
		out = append(out, imageRef{"annotation containerImage", img})
	}
	for _, d := range csv.Spec.InstallStrategy.StrategySpec.DeploymentSpecs {
		pod := d.Spec.Template.Spec
		for _, c := range slices.Concat(pod.InitContainers, pod.Containers) {
			where := fmt.Sprintf("deployment %s container %s", d.Name, c.Name)
			out = append(out, imageRef{where + " image", c.Image})
			out = append(out, relatedImageEnv(where, c.Env)...)
		}
	}
	return out
}

func relatedImageEnv(where string, env []corev1.EnvVar) []imageRef {
	var out []imageRef
	for _, e := range env {
		if strings.HasPrefix(e.Name, "RELATED_IMAGE_") {
			out = append(out, imageRef{where + " env " + e.Name, e.Value})
		}
	}
	return out
}
