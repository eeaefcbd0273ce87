// Command crdgen writes the CustomResourceDefinitions through which the local control plane
// (test/controlplane) serves the aggregated OpenShift kinds the operator uses (ImageStream,
// ImageStreamImport and Template) and those that clients tested against it list or that the
// samples' Templates create (BuildConfig, DeploymentConfig, TemplateInstance, Route, and the
// RoleBinding of authorization.openshift.io). On a cluster openshift-apiserver serves them;
// without its binary a CRD stands in, and its schema must be the real API's, not a guess: crdgen
// derives it from the OpenAPI definitions github.com/openshift/api generates for its own Go types
// (openapi/generated_openapi), which is what openshift-apiserver itself publishes (its
// hack/update-generated-openapi.sh runs the same openapi-gen over the same vendored types).
// Only the CRD envelope (names, scope, subresources; see kinds in generate.go) and the mapping
// rules of convert.go are written by hand.
//
// Route (route.openshift.io) is the exception: openshift/api ships a CRD for it, whose defaults
// and validation rules restate openshift-apiserver's own; crdgen writes that file as shipped,
// below a header naming its source (copies in generate.go).
//
// It also writes the CRD of prometheus-operator's ServiceMonitor (monitoring.coreos.com), which
// every control plane serves whichever server plays openshift-apiserver: a CRD without a schema
// source, whose spec and status keep every field (see its header).
//
// With these schemas kube-apiserver prunes unknown fields, rejects wrong types, and treats
// spec.tags as a list keyed by name, as on a cluster. What openshift-apiserver does beyond its
// schema (defaulting, tag generations, validation) is played for ImageStreams and Templates by the
// admission webhooks of test/apiserverhooks; for the other kinds by nothing: they are stored as
// sent (a BuildConfig gets no runPolicy, a DeploymentConfig no strategy, a TemplateInstance no
// spec.requester, a RoleBinding no userNames from its subjects and no RBAC RoleBinding).
//
//	crdgen -out DIR          write DIR/aggregated/<plural>.crd.yaml (the stand-ins) and
//	                         DIR/monitoring/servicemonitors.crd.yaml
//	crdgen -out DIR -check   exit 1 when a file below DIR differs from what would be written
//	crdgen -v ...            also print the notes on schema parts that needed a choice
//
// `make update` runs it through hack/update-crds.sh, and `make verify` checks its output is
// current.
package main

import (
	"bytes"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"runtime/debug"
)

func main() {
	out := flag.String("out", "", "directory to write the CRDs below (test/crds)")
	check := flag.Bool("check", false, "compare with the files in -out instead of writing them")
	verbose := flag.Bool("v", false, "print notes on schema parts that needed a choice")
	flag.Parse()
	if *out == "" {
		fmt.Fprintln(os.Stderr, "crdgen: -out is required")
		os.Exit(2)
	}

	files, notes, err := Generate()
	if err != nil {
		fmt.Fprintln(os.Stderr, "crdgen:", err)
		os.Exit(1)
	}
	if *verbose {
		for _, n := range notes {
			fmt.Fprintln(os.Stderr, "note:", n)
		}
	}
	stale := false
	for _, f := range files {
		path := filepath.Join(*out, f.Dir, f.Name)
		if *check {
			cur, err := os.ReadFile(path)
			if err != nil || !bytes.Equal(cur, f.Data) {
				fmt.Fprintf(os.Stderr, "stale: %s differs from what hack/crdgen generates (run make update)\n", path)
				stale = true
			}
			continue
		}
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			fmt.Fprintln(os.Stderr, "crdgen:", err)
			os.Exit(1)
		}
		if err := os.WriteFile(path, f.Data, 0o644); err != nil {
			fmt.Fprintln(os.Stderr, "crdgen:", err)
			os.Exit(1)
		}
	}
	if stale {
		os.Exit(1)
	}
}

// apiVersion is the version of github.com/openshift/api linked into this binary. It goes into
// every header so that a diff of the generated files names the bump that caused it.
func apiVersion() string {
	if bi, ok := debug.ReadBuildInfo(); ok {
		for _, d := range bi.Deps {
			if d.Path == "github.com/openshift/api" {
				if d.Replace != nil {
					return d.Replace.Version
				}
				return d.Version
			}
		}
	}
	return "(unknown)"
}
