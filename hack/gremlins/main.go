// Command gremlins runs `make mutation`: github.com/go-gremlins/gremlins, pinned by this module's
// go.mod, over each package of hack/pure-packages (or the packages named as arguments) with its
// default mutators and the package's own tests, then prints one table row per package. Every
// mutant that lived or that no test covers must be listed in hack/mutation-exceptions with the
// reason it is equivalent or unreachable; an unlisted one, or a listed one that no longer lives,
// makes the command exit 1, so the list stays true to the code.
//
// Usage (from the repository root): gremlins-binary-path [package...]
package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
)

// report is the part of gremlins' JSON output (-o) read here.
type report struct {
	Files []struct {
		Name      string `json:"file_name"`
		Mutations []struct {
			Type   string `json:"type"`
			Status string `json:"status"`
			Line   int    `json:"line"`
			Column int    `json:"column"`
		} `json:"mutations"`
	} `json:"files"`
}

func main() {
	if len(os.Args) < 2 {
		fatal(fmt.Errorf("usage: %s GREMLINS [package...]", os.Args[0]))
	}
	gremlins, err := filepath.Abs(os.Args[1])
	fatal(err)
	packages := os.Args[2:]
	if len(packages) == 0 {
		packages, err = lines("hack/pure-packages")
		fatal(err)
	}
	exceptions, err := readExceptions("hack/mutation-exceptions")
	fatal(err)
	work, err := os.MkdirTemp("", "mutation-")
	fatal(err)
	problems := run(gremlins, work, packages, exceptions)
	os.RemoveAll(work)
	for _, p := range problems {
		fmt.Println(p)
	}
	if len(problems) > 0 {
		os.Exit(1)
	}
}

// run prints the table and returns what is wrong: the mutants neither killed nor listed, and the
// listed ones that are.
func run(gremlins, work string, packages []string, exceptions map[string]bool) []string {
	tree := filepath.Join(work, "src")
	if err := copyTree(tree); err != nil {
		return []string{err.Error()}
	}

	fmt.Println("| package | killed | lived | not covered | efficacy | mutator coverage | listed |")
	fmt.Println("|---|---|---|---|---|---|---|")
	var problems []string
	for _, pkg := range packages {
		counts, survivors, err := unleash(gremlins, tree, filepath.Join(work, pkg+".json"), pkg)
		if err != nil {
			problems = append(problems, fmt.Sprintf("%s: %v", pkg, err))
			continue
		}
		listed := 0
		for _, s := range survivors {
			if exceptions[s] {
				listed++
				delete(exceptions, s)
			} else {
				problems = append(problems, s+": not killed and not listed in hack/mutation-exceptions")
			}
		}
		killed, lived, uncovered := counts["KILLED"]+counts["TIMED OUT"], counts["LIVED"], counts["NOT COVERED"]
		fmt.Printf("| %s | %d | %d | %d | %s | %s | %d |\n", pkg, killed, lived, uncovered,
			percent(killed, killed+lived), percent(killed+lived, killed+lived+uncovered), listed)
	}
	ran := map[string]bool{}
	for _, pkg := range packages {
		ran[pkg] = true
	}
	for s := range exceptions {
		if ran[strings.Fields(s)[0]] {
			problems = append(problems, s+": listed in hack/mutation-exceptions but killed now (or gone): remove it")
		}
	}
	sort.Strings(problems)
	return problems
}

// unleash mutates one package in tree and returns the number of mutants of each status and, for
// each that lived or that no test covers, its key as hack/mutation-exceptions writes it.
func unleash(gremlins, tree, out, pkg string) (map[string]int, []string, error) {
	// The timeout of each mutant's test run is the package's coverage run times the coefficient:
	// -count=1 keeps that run from coming out of the test cache in no time, and 10 (not 3) keeps a
	// loaded machine from passing a slow run off as a timed-out mutant.
	// -E /: the package's own files only, not those of a package below it (configspectest, a
	// fixture for other packages' tests).
	cmd := exec.Command(gremlins, "unleash", "--silent", "--timeout-coefficient", "10", "-E", "/", "-o", out, "./pkg/"+pkg)
	cmd.Dir = tree
	cmd.Env = append(os.Environ(), "GOFLAGS="+strings.TrimSpace(os.Getenv("GOFLAGS")+" -count=1"))
	if msg, err := cmd.CombinedOutput(); err != nil {
		return nil, nil, fmt.Errorf("%v\n%s", err, msg)
	}
	raw, err := os.ReadFile(out)
	if os.IsNotExist(err) {
		return nil, nil, nil // gremlins writes no report for a package without mutants
	}
	if err != nil {
		return nil, nil, err
	}
	var r report
	if err := json.Unmarshal(raw, &r); err != nil {
		return nil, nil, err
	}
	counts := map[string]int{}
	var survivors []string
	for _, f := range r.Files {
		for _, m := range f.Mutations {
			counts[m.Status]++
			if m.Status == "LIVED" || m.Status == "NOT COVERED" {
				survivors = append(survivors, fmt.Sprintf("%s %s:%d:%d %s", pkg, f.Name, m.Line, m.Column, m.Type))
			}
		}
	}
	return counts, survivors, nil
}

// readExceptions reads the list's lines "package file:line:column MUTATOR reason..." into a set of
// their first three fields.
func readExceptions(path string) (map[string]bool, error) {
	ls, err := lines(path)
	if err != nil {
		return nil, err
	}
	set := map[string]bool{}
	for _, l := range ls {
		f := strings.Fields(l)
		if len(f) < 4 {
			return nil, fmt.Errorf("%s: %q: want package file:line:column MUTATOR reason", path, l)
		}
		set[strings.Join(f[:3], " ")] = true
	}
	return set, nil
}

// lines returns a file's lines that are neither blank nor comments (#).
func lines(path string) ([]string, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var out []string
	s := bufio.NewScanner(f)
	for s.Scan() {
		if l := strings.TrimSpace(s.Text()); l != "" && !strings.HasPrefix(l, "#") {
			out = append(out, l)
		}
	}
	return out, s.Err()
}

// copyTree copies the module's files (tracked, and new ones git does not ignore) to tree: gremlins copies the whole module once per worker, and _output's binaries would make
// that hundreds of megabytes; the copy also keeps edits made meanwhile out of the run.
func copyTree(tree string) error {
	list, err := exec.Command("git", "ls-files", "-z", "--cached", "--others", "--exclude-standard").Output()
	if err != nil {
		return fmt.Errorf("git ls-files: %w", err)
	}
	for _, name := range strings.Split(strings.TrimRight(string(list), "\x00"), "\x00") {
		raw, err := os.ReadFile(name)
		if os.IsNotExist(err) {
			continue // deleted in the work tree
		}
		if err == nil {
			err = os.MkdirAll(filepath.Join(tree, filepath.Dir(name)), 0o755)
		}
		if err == nil {
			err = os.WriteFile(filepath.Join(tree, name), raw, 0o644)
		}
		if err != nil {
			return err
		}
	}
	return nil
}

func percent(n, of int) string {
	if of == 0 {
		return "-"
	}
	return fmt.Sprintf("%.1f %%", 100*float64(n)/float64(of))
}

func fatal(err error) {
	if err != nil {
		fmt.Fprintln(os.Stderr, "mutation:", err)
		os.Exit(2)
	}
}
