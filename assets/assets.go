// Package assets holds the sample inventory shipped inside the operator binary.
//
// The tree below operator/ has one directory per architecture flavour
// (ocp-x86_64, ocp-aarch64, ocp-ppc64le, ocp-s390x, okd-x86_64), each laid out as
// <group>/imagestreams/*.json and <group>/templates/*.json. library-sync.sh at the
// repository root refreshes it from openshift/library; pkg/inventory parses and
// validates it.
package assets

import "embed"

// Operator is the embedded inventory. Paths inside it start with "operator/",
// for example "operator/ocp-x86_64/python/imagestreams/python-rhel.json".
//
//go:embed operator
var Operator embed.FS
