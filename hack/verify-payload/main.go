// Command verify-payload checks manifests/ as the release payload uses it (see test/payloadcheck):
// run by `make verify`, it prints every broken rule and exits 1.
package main

import (
	"flag"
	"fmt"
	"os"

	"github.com/samples-operator-dev/cluster-samples-operator/test/payloadcheck"
)

func main() {
	dir := flag.String("manifests-dir", "manifests", "the manifests of the release payload, with image-references")
	flag.Parse()
	if err := payloadcheck.Check(os.DirFS(*dir)); err != nil {
		fmt.Fprintf(os.Stderr, "%s breaks the rules of the release payload:\n%v\n", *dir, err)
		os.Exit(1)
	}
}
