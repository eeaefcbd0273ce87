// Command verify-payload checks manifests/ as the release payload uses it (see pkg/payload):
// run by `make verify`, it prints every broken rule and exits 1.
package main

import (
	"flag"
	"fmt"
	"os"

	"github.com/samples-operator-dev/cluster-samples-operator/pkg/payload"
)

func main() {
	dir := flag.String("manifests-dir", "manifests", "the manifests of the release payload, with image-references")
	flag.Parse()
	if err := payload.Check(os.DirFS(*dir)); err != nil {
		fmt.Fprintf(os.Stderr, "%s breaks the rules of the release payload:\n%v\n", *dir, err)
		os.Exit(1)
	}
}
