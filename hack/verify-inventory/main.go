// verify-inventory fails when assets/operator is not exactly what assets/library.lock records:
// openshift/library's files at one commit, none edited, added or lost by hand.
package main

import (
	"flag"
	"fmt"
	"os"

	"github.com/samples-operator-dev/cluster-samples-operator/pkg/inventory"
)

func main() {
	lockPath := flag.String("lock", "assets/library.lock", "the lock file library-sync.sh writes")
	dir := flag.String("inventory-dir", "assets/operator", "the inventory it describes")
	flag.Parse()
	data, err := os.ReadFile(*lockPath)
	if err != nil {
		fmt.Fprintln(os.Stderr, "verify-inventory:", err)
		os.Exit(1)
	}
	lock, err := inventory.ParseLock(data)
	if err != nil {
		fmt.Fprintf(os.Stderr, "verify-inventory: %s: %v\n", *lockPath, err)
		os.Exit(1)
	}
	problems := lock.Verify(os.DirFS(*dir))
	for _, p := range problems {
		fmt.Fprintf(os.Stderr, "verify-inventory: %s/%s\n", *dir, p)
	}
	if len(problems) > 0 {
		fmt.Fprintf(os.Stderr, "verify-inventory: %d problems; refresh with ./library-sync.sh --from <openshift/library clone> --commit %s\n", len(problems), lock.Commit)
		os.Exit(1)
	}
	fmt.Printf("%s: %d files, %s at %s (%s)\n", *dir, len(lock.Files), lock.Library, lock.Commit, lock.Date)
}
