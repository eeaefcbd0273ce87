// Command mutation runs `make mutation` and `make mutation-changed`: github.com/go-gremlins/gremlins,
// pinned by this module's go.mod, with every mutator it has, over each package of
// two lists (or the packages named as arguments) and the package's own tests, then
// prints one table row per package. The packages are those of hack/pure-packages and of
// hack/mutation-packages, the controllers whose unit tests run on fake clientsets.
//
// Every mutant that lived or that no test covers must be listed in hack/mutation-exceptions, keyed
// by the text of the line it mutates, so that the list follows its code when lines move. A listed
// mutant whose reason reads "fails by hand: TestA TestB" is made here by hand, and the named tests
// must fail on it: gremlins never runs a mutant its coverage profile does not see (a switch case's
// expression, a constant), and the claim is checked rather than trusted. An unlisted survivor, a
// listed mutant that is killed now or no longer exists, and a claim that does not hold make the
// command exit 1.
//
// With -changed, a package is mutated only on the lines changed since the commit at which its whole
// run last passed (hack/mutation-baseline); that is what CI runs. -record writes HEAD into the
// baseline for each package whose whole run passed.
//
// Usage (from the repository root): mutation [-changed|-record] GREMLINS [package...]
package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"go/ast"
	"go/parser"
	"go/scanner"
	"go/token"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
)

const (
	exceptionsFile = "hack/mutation-exceptions"
	pureFile       = "hack/pure-packages"
	packagesFile   = "hack/mutation-packages" // the packages mutated besides the pure ones
	baselineFile   = "hack/mutation-baseline"
	byHandPrefix   = "fails by hand:"
)

// allMutators turns on the mutators gremlins leaves off by default; the default ones stay on.
var allMutators = []string{
	"--invert-assignments", "--invert-bitwise", "--invert-bwassign", "--invert-logical",
	"--invert-loopctrl", "--remove-self-assignments",
}

// report is the part of gremlins' JSON output (-o) read here.
type report struct {
	Files []struct {
		Name      string   `json:"file_name"`
		Mutations []mutant `json:"mutations"`
	} `json:"files"`
}

type mutant struct {
	Type   string `json:"type"`
	Status string `json:"status"`
	Line   int    `json:"line"`
	Column int    `json:"column"`
}

// exception is one entry of hack/mutation-exceptions.
type exception struct {
	key    string
	reason string
	byHand []string // the tests a hand-made copy of the mutant must fail
}

func main() {
	changed := flag.Bool("changed", false, "mutate only the lines changed since each package's baseline commit")
	record := flag.Bool("record", false, "write HEAD as the baseline of each package whose whole run passed")
	flag.Parse()
	if flag.NArg() < 1 || (*changed && *record) {
		fatal(fmt.Errorf("usage: %s [-changed|-record] GREMLINS [package...]", os.Args[0]))
	}
	gremlins, err := filepath.Abs(flag.Arg(0))
	fatal(err)
	packages := flag.Args()[1:]
	if len(packages) == 0 {
		packages, err = lines(pureFile)
		fatal(err)
		more, err := lines(packagesFile)
		fatal(err)
		packages = append(packages, more...)
	}
	exceptions, err := readExceptions(exceptionsFile)
	fatal(err)
	baselines, err := readBaselines(baselineFile)
	fatal(err)
	work, err := os.MkdirTemp("", "mutation-")
	fatal(err)
	m := &runner{gremlins: gremlins, work: work, tree: filepath.Join(work, "src"), exceptions: exceptions}
	passed, problems := m.run(packages, baselines, *changed)
	os.RemoveAll(work)
	for _, p := range problems {
		fmt.Println(p)
	}
	if *record && len(passed) > 0 {
		fatal(recordBaselines(baselines, passed))
	}
	if len(problems) > 0 {
		os.Exit(1)
	}
}

type runner struct {
	gremlins, work, tree string
	exceptions           map[string][]exception
}

// run prints the table and returns the packages that passed and what is wrong.
func (m *runner) run(packages []string, baselines map[string]string, changedOnly bool) ([]string, []string) {
	if err := copyTree(m.tree); err != nil {
		return nil, []string{err.Error()}
	}
	fmt.Println("| package | mutated | killed | lived | not covered | efficacy | mutator coverage | with the mutants made by hand | listed | checked by hand |")
	fmt.Println("|---|---|---|---|---|---|---|---|---|---|")
	var problems, passed []string
	for _, pkg := range packages {
		since := ""
		if changedOnly {
			since = baselines[pkg]
			if since == "" {
				fmt.Printf("| %s | never passed whole: not checked | | | | | | | | |\n", pkg)
				continue
			}
			if err := exec.Command("git", "cat-file", "-e", since+"^{commit}").Run(); err != nil {
				// A shallow clone may not hold it; the whole run is `make mutation`.
				fmt.Printf("| %s | baseline %.12s not in this clone: not checked | | | | | | | | |\n", pkg, since)
				continue
			}
			// gremlins mutates only the changed lines that hold a token a mutator changes, and
			// runs the package's coverage first: a change without one (tests alone, a comment, a
			// call, a new field) leaves nothing to mutate and is not worth that run.
			if mutable, err := changedMutableTokens(pkg, since); err == nil && mutable == 0 {
				fmt.Printf("| %s | no mutable token changed since %.12s | | | | | | | | |\n", pkg, since)
				continue
			}
		}
		found := m.mutatePackage(pkg, since)
		problems = append(problems, found...)
		if len(found) == 0 && since == "" {
			passed = append(passed, pkg)
		}
	}
	sort.Strings(problems)
	return passed, problems
}

// mutatePackage runs gremlins on one package (on the lines changed since the commit since, when it
// is set) and checks its survivors against the list.
func (m *runner) mutatePackage(pkg, since string) []string {
	dir := filepath.Join(m.tree, "pkg", pkg)
	var gremlinsArgs []string
	if since != "" {
		if err := m.stageBaseline(dir, pkg, since); err != nil {
			return []string{fmt.Sprintf("%s: %v", pkg, err)}
		}
		gremlinsArgs = []string{"--diff", "HEAD"}
	}
	mutants, err := m.unleash(pkg, dir, filepath.Join(m.work, strings.ReplaceAll(pkg, "/", "-")+".json"), gremlinsArgs)
	if err != nil {
		return []string{fmt.Sprintf("%s: %v", pkg, err)}
	}
	counts := map[string]int{}
	mutated := map[string]bool{} // the keys of the mutants this run tried
	// the mutants of each key that lived or went uncovered, in the order of their places: a key is
	// a line's text, and several lines can read the same ("continue")
	survivors := map[string][]*keyedMutant{}
	existing := map[string]bool{} // every key the package has, tried or not
	for i := range mutants {
		mu := &mutants[i]
		existing[mu.key] = true
		counts[mu.Status]++
		if mu.Status == "SKIPPED" {
			continue
		}
		mutated[mu.key] = true
		if mu.Status == "LIVED" || mu.Status == "NOT COVERED" {
			survivors[mu.key] = append(survivors[mu.key], mu)
		}
	}
	for _, lived := range survivors {
		sort.Slice(lived, func(a, b int) bool {
			if lived[a].file != lived[b].file {
				return lived[a].file < lived[b].file
			}
			return lived[a].offset < lived[b].offset
		})
	}
	var problems []string
	listed, byHand := 0, 0
	for key, lived := range survivors {
		known := m.exceptions[key]
		if len(known) < len(lived) {
			var places []string
			for _, mu := range lived {
				places = append(places, fmt.Sprintf("%s:%d (%s)", mu.file, mu.Line, strings.ToLower(mu.Status)))
			}
			problems = append(problems, fmt.Sprintf("%s: %d mutant(s) not killed and not listed in %s, at %s", key, len(lived)-len(known), exceptionsFile, strings.Join(places, ", ")))
		}
		listed += min(len(lived), len(known))
	}
	// uncovered mutants that the runner made by hand and that failed their tests: the tests reach
	// them, though gremlins' coverage profile does not see them
	reachedByHand := 0
	for key, entries := range m.exceptions {
		if !strings.HasPrefix(key, pkg+" ") {
			continue
		}
		switch {
		case !existing[key]:
			problems = append(problems, key+": listed in "+exceptionsFile+" but no such mutant exists now: remove it")
		case mutated[key] && len(survivors[key]) < len(entries):
			problems = append(problems, key+": listed in "+exceptionsFile+" but killed now: remove it")
		}
		if !mutated[key] {
			continue
		}
		// The entries of a key go with its survivors in the order of their places in the source.
		for i, e := range entries {
			if len(e.byHand) == 0 || i >= len(survivors[key]) {
				continue
			}
			byHand++
			target := survivors[key][i]
			if p := m.checkByHand(pkg, e, target); p != "" {
				problems = append(problems, p)
			} else if target.Status == "NOT COVERED" {
				reachedByHand++
			}
		}
	}
	killed, lived, uncovered := counts["KILLED"]+counts["TIMED OUT"], counts["LIVED"], counts["NOT COVERED"]
	scope := "whole"
	if since != "" {
		scope = fmt.Sprintf("changed since %.12s", since)
	}
	fmt.Printf("| %s | %s | %d | %d | %d | %s | %s | %s | %d | %d |\n", pkg, scope, killed, lived, uncovered,
		percent(killed, killed+lived), percent(killed+lived, killed+lived+uncovered),
		percent(killed+lived+reachedByHand, killed+lived+uncovered), listed, byHand)
	return problems
}

// keyedMutant is a mutant of gremlins' report with its place in the source and its list key.
type keyedMutant struct {
	mutant
	file   string
	offset int // of the mutated token in the file
	token  string
	key    string
}

// unleash mutates the package in dir and returns its mutants, keyed.
func (m *runner) unleash(pkg, dir, out string, extra []string) ([]keyedMutant, error) {
	// The timeout of each mutant's test run is the package's coverage run times the coefficient:
	// -count=1 keeps that run from coming out of the test cache in no time, and 10 (not 3) keeps a
	// loaded machine from passing a slow run off as a timed-out mutant.
	// -E /: the package's own files only, not those of a package below it (configspectest, a
	// fixture for other packages' tests).
	args := append([]string{"unleash", "--silent", "--timeout-coefficient", "10", "-E", "/", "-o", out}, allMutators...)
	args = append(append(args, extra...), dir)
	cmd := exec.Command(m.gremlins, args...)
	// gremlins takes the changed lines from `git diff` run where it runs, and names files from the
	// package's directory: the package's own repository (stageBaseline) makes the two agree.
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GOFLAGS="+strings.TrimSpace(os.Getenv("GOFLAGS")+" -count=1"))
	if msg, err := cmd.CombinedOutput(); err != nil {
		return nil, fmt.Errorf("%v\n%s", err, msg)
	}
	raw, err := os.ReadFile(out)
	if os.IsNotExist(err) {
		return nil, nil // gremlins writes no report for a package without mutants
	}
	if err != nil {
		return nil, err
	}
	var r report
	if err := json.Unmarshal(raw, &r); err != nil {
		return nil, err
	}
	var mutants []keyedMutant
	for _, f := range r.Files {
		src, err := os.ReadFile(filepath.Join(dir, f.Name))
		if err != nil {
			return nil, err
		}
		for _, mu := range f.Mutations {
			k, err := keyOf(pkg, f.Name, src, mu)
			if err != nil {
				return nil, err
			}
			mutants = append(mutants, k)
		}
	}
	return mutants, nil
}

// keyOf names a mutant by its package, file, mutator and the text of its line, the mutated token
// in ⟦⟧: "desired nodepull.go CONDITIONALS_BOUNDARY: for step := 0; step ⟦<⟧ n; step++".
func keyOf(pkg, file string, src []byte, mu mutant) (keyedMutant, error) {
	lineStart := 0
	for line := 1; line < mu.Line; line++ {
		i := bytes.IndexByte(src[lineStart:], '\n')
		if i < 0 {
			return keyedMutant{}, fmt.Errorf("%s/%s has no line %d", pkg, file, mu.Line)
		}
		lineStart += i + 1
	}
	lineEnd := len(src)
	if i := bytes.IndexByte(src[lineStart:], '\n'); i >= 0 {
		lineEnd = lineStart + i
	}
	line := string(src[lineStart:lineEnd])
	at := mu.Column - 1
	tok := tokenAt(src, lineStart+at)
	if tok == "" {
		return keyedMutant{}, fmt.Errorf("%s/%s:%d:%d: no token at the mutant's column", pkg, file, mu.Line, mu.Column)
	}
	code := strings.TrimLeft(line[:at], " \t") + "⟦" + tok + "⟧" + strings.TrimRight(line[at+len(tok):], " \t")
	return keyedMutant{
		mutant: mu, file: file, offset: lineStart + at, token: tok,
		key: fmt.Sprintf("%s %s %s: %s", pkg, file, mu.Type, code),
	}, nil
}

// changedMutableTokens counts the tokens that some mutator changes (replacements) on the lines of
// the package's own non-test Go files that differ from the commit since, as `git diff` shows them.
func changedMutableTokens(pkg, since string) (int, error) {
	out, err := exec.Command("git", "diff", "-U0", "--no-color", "--no-ext-diff", since, "--",
		":(glob)pkg/"+pkg+"/*.go", ":(glob,exclude)pkg/"+pkg+"/*_test.go").Output()
	if err != nil {
		return 0, err
	}
	changed := map[string]map[int]bool{} // file -> new-side line numbers
	var file string
	for _, l := range strings.Split(string(out), "\n") {
		switch {
		case strings.HasPrefix(l, "+++ "):
			file = strings.TrimPrefix(strings.TrimPrefix(l, "+++ "), "b/")
		case strings.HasPrefix(l, "@@ "):
			start, count, err := newSideRange(l)
			if err != nil {
				return 0, err
			}
			if changed[file] == nil {
				changed[file] = map[int]bool{}
			}
			for n := start; n < start+count; n++ {
				changed[file][n] = true
			}
		}
	}
	mutable := 0
	for f, lines := range changed {
		if f == "/dev/null" {
			continue // a deleted file has no line left to mutate
		}
		src, err := os.ReadFile(f)
		if err != nil {
			return 0, err
		}
		fset := token.NewFileSet()
		parsed, err := parser.ParseFile(fset, f, src, parser.SkipObjectResolution)
		if err != nil {
			return 0, err
		}
		// gremlins mutates the operators of expressions and statements, as the AST has them: the
		// star of a pointer type is not a product.
		ast.Inspect(parsed, func(n ast.Node) bool {
			var at token.Pos
			var op token.Token
			switch n := n.(type) {
			case *ast.BinaryExpr:
				at, op = n.OpPos, n.Op
			case *ast.UnaryExpr:
				at, op = n.OpPos, n.Op
			case *ast.IncDecStmt:
				at, op = n.TokPos, n.Tok
			case *ast.AssignStmt:
				at, op = n.TokPos, n.Tok
			case *ast.BranchStmt:
				at, op = n.TokPos, n.Tok
			default:
				return true
			}
			if lines[fset.Position(at).Line] && mutableTokens[op.String()] {
				mutable++
			}
			return true
		})
	}
	return mutable, nil
}

// newSideRange reads the new side of a unified diff's hunk header, "@@ -a,b +c,d @@": lines c to
// c+d-1 (d is 1 when left out, 0 for a hunk that only deletes).
func newSideRange(header string) (start, count int, err error) {
	fields := strings.Fields(header)
	if len(fields) < 3 || !strings.HasPrefix(fields[2], "+") {
		return 0, 0, fmt.Errorf("not a hunk header: %q", header)
	}
	from, n, found := strings.Cut(strings.TrimPrefix(fields[2], "+"), ",")
	if start, err = strconv.Atoi(from); err != nil {
		return 0, 0, fmt.Errorf("hunk header %q: %w", header, err)
	}
	count = 1
	if found {
		if count, err = strconv.Atoi(n); err != nil {
			return 0, 0, fmt.Errorf("hunk header %q: %w", header, err)
		}
	}
	return start, count, nil
}

// mutableTokens are the tokens some mutator changes: the keys of replacements.
var mutableTokens = func() map[string]bool {
	all := map[string]bool{}
	for _, byToken := range replacements {
		for tok := range byToken {
			all[tok] = true
		}
	}
	return all
}()

// tokenAt returns the operator or keyword that starts at byte offset at of a Go file. The whole
// file is scanned, not the mutant's line alone: a line that begins inside a raw string (the
// "` + name + `" of a long help text) reads as the start of one when scanned on its own.
func tokenAt(src []byte, at int) string {
	var s scanner.Scanner
	fset := token.NewFileSet()
	f := fset.AddFile("", fset.Base(), len(src))
	s.Init(f, src, func(token.Position, string) {}, 0)
	for {
		pos, tok, lit := s.Scan()
		if tok == token.EOF {
			return ""
		}
		if off := f.Offset(pos); off == at {
			if lit != "" {
				return lit
			}
			return tok.String()
		} else if off > at {
			return ""
		}
	}
}

// replacements says what each mutator turns a token into, as gremlins does.
var replacements = map[string]map[string]string{
	"ARITHMETIC_BASE":         {"+": "-", "-": "+", "*": "/", "/": "*", "%": "*"},
	"CONDITIONALS_BOUNDARY":   {"<": "<=", "<=": "<", ">": ">=", ">=": ">"},
	"CONDITIONALS_NEGATION":   {"==": "!=", "!=": "==", "<": ">=", "<=": ">", ">": "<=", ">=": "<"},
	"INCREMENT_DECREMENT":     {"++": "--", "--": "++"},
	"INVERT_NEGATIVES":        {"-": "+"},
	"INVERT_LOGICAL":          {"&&": "||", "||": "&&"},
	"INVERT_LOOPCTRL":         {"break": "continue", "continue": "break"},
	"INVERT_ASSIGNMENTS":      {"+=": "-=", "-=": "+=", "*=": "/=", "/=": "*="},
	"INVERT_BITWISE":          {"&": "|", "|": "&", "^": "&", "&^": "&", "<<": ">>", ">>": "<<"},
	"INVERT_BWASSIGN":         {"&=": "|=", "|=": "&=", "^=": "&=", "&^=": "&=", "<<=": ">>=", ">>=": "<<="},
	"REMOVE_SELF_ASSIGNMENTS": {"+=": "=", "-=": "=", "*=": "=", "/=": "=", "%=": "=", "&=": "=", "|=": "=", "^=": "=", "&^=": "=", "<<=": "=", ">>=": "="},
}

// checkByHand makes the listed mutant target in the tree, runs the tests its reason names, and says
// what is wrong unless one of them fails.
func (m *runner) checkByHand(pkg string, e exception, target *keyedMutant) string {
	to, ok := replacements[target.Type][target.token]
	if !ok {
		return fmt.Sprintf("%s: no hand-made replacement for %s %q", e.key, target.Type, target.token)
	}
	path := filepath.Join(m.tree, "pkg", pkg, target.file)
	orig, err := os.ReadFile(path)
	if err != nil {
		return fmt.Sprintf("%s: %v", e.key, err)
	}
	defer os.WriteFile(path, orig, 0o644)
	mutated := append(append(append([]byte{}, orig[:target.offset]...), to...), orig[target.offset+len(target.token):]...)
	if err := os.WriteFile(path, mutated, 0o644); err != nil {
		return fmt.Sprintf("%s: %v", e.key, err)
	}
	run := "^(" + strings.Join(e.byHand, "|") + ")$"
	cmd := exec.Command("go", "test", "-count=1", "-run", run, "./pkg/"+pkg)
	cmd.Dir = m.tree
	out, err := cmd.CombinedOutput()
	switch {
	case err == nil:
		return fmt.Sprintf("%s: made by hand, %s pass(es): the claim %q does not hold", e.key, strings.Join(e.byHand, ", "), e.reason)
	case !bytes.Contains(out, []byte("--- FAIL")):
		return fmt.Sprintf("%s: made by hand, the tests did not run (a mutant that does not compile is \"not viable\"):\n%s", e.key, out)
	}
	return ""
}

// stageBaseline makes the package's directory in the tree its own git repository whose one commit
// holds the package as it was at the commit since, so that `git diff HEAD` there shows what changed.
func (m *runner) stageBaseline(dir, pkg, since string) error {
	old := filepath.Join(m.work, "baseline-"+strings.ReplaceAll(pkg, "/", "-"))
	if err := os.MkdirAll(old, 0o755); err != nil {
		return err
	}
	archive := exec.Command("git", "archive", since, "pkg/"+pkg)
	extract := exec.Command("tar", "-x", "--strip-components=2", "-C", old)
	pipe, err := archive.StdoutPipe()
	if err != nil {
		return err
	}
	extract.Stdin = pipe
	if err := extract.Start(); err != nil {
		return err
	}
	if err := archive.Run(); err != nil {
		return fmt.Errorf("git archive %s pkg/%s: %w", since, pkg, err)
	}
	if err := extract.Wait(); err != nil {
		return err
	}
	git := func(args ...string) error {
		cmd := exec.Command("git", append([]string{"-c", "user.name=mutation", "-c", "user.email=mutation@localhost",
			"--git-dir", filepath.Join(dir, ".git"), "--work-tree", old}, args...)...)
		if out, err := cmd.CombinedOutput(); err != nil {
			return fmt.Errorf("git %v: %v\n%s", args, err, out)
		}
		return nil
	}
	if err := exec.Command("git", "init", "-q", dir).Run(); err != nil {
		return err
	}
	if err := git("add", "-A", "."); err != nil {
		return err
	}
	return git("commit", "-q", "--allow-empty", "-m", "baseline "+since)
}

// readExceptions reads the list: a key line (no indentation) and its reason on the indented lines
// that follow it.
func readExceptions(path string) (map[string][]exception, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	byKey := map[string][]exception{}
	var last *exception
	flush := func() error {
		if last == nil {
			return nil
		}
		if last.reason == "" {
			return fmt.Errorf("%s: %q has no reason (an indented line under it)", path, last.key)
		}
		if _, rest, ok := strings.Cut(last.reason, byHandPrefix); ok {
			last.byHand = testNames.FindAllString(rest, -1)
			if len(last.byHand) == 0 {
				return fmt.Errorf("%s: %q: %q names no test", path, last.key, last.reason)
			}
		}
		byKey[last.key] = append(byKey[last.key], *last)
		last = nil
		return nil
	}
	s := bufio.NewScanner(f)
	for s.Scan() {
		text := s.Text()
		trimmed := strings.TrimSpace(text)
		switch {
		case trimmed == "" || strings.HasPrefix(text, "#"):
			continue
		case text[0] == ' ' || text[0] == '\t':
			if last == nil {
				return nil, fmt.Errorf("%s: %q: a reason with no key line above it", path, trimmed)
			}
			last.reason = strings.TrimSpace(last.reason + " " + trimmed)
		default:
			if err := flush(); err != nil {
				return nil, err
			}
			last = &exception{key: text}
		}
	}
	if err := flush(); err != nil {
		return nil, err
	}
	return byKey, s.Err()
}

var testNames = regexp.MustCompile(`\bTest\w+`)

// readBaselines reads "package commit" lines.
func readBaselines(path string) (map[string]string, error) {
	ls, err := lines(path)
	if err != nil {
		return nil, err
	}
	out := map[string]string{}
	for _, l := range ls {
		f := strings.Fields(l)
		if len(f) != 2 {
			return nil, fmt.Errorf("%s: %q: want package commit", path, l)
		}
		out[f[0]] = f[1]
	}
	return out, nil
}

func recordBaselines(baselines map[string]string, passed []string) error {
	head, err := exec.Command("git", "rev-parse", "HEAD").Output()
	if err != nil {
		return err
	}
	for _, pkg := range passed {
		if exec.Command("git", "diff", "--quiet", "HEAD", "--", "pkg/"+pkg).Run() != nil {
			fmt.Printf("%s: not recorded, it has changes not committed\n", pkg)
			continue
		}
		baselines[pkg] = strings.TrimSpace(string(head))
	}
	var b strings.Builder
	b.WriteString("# The commit at which each package's whole `make mutation` run last passed (written by\n")
	b.WriteString("# `make mutation-record`); `make mutation-changed`, in CI, mutates the lines changed since.\n")
	names := make([]string, 0, len(baselines))
	for pkg := range baselines {
		names = append(names, pkg)
	}
	sort.Strings(names)
	for _, pkg := range names {
		fmt.Fprintf(&b, "%s %s\n", pkg, baselines[pkg])
	}
	return os.WriteFile(baselineFile, []byte(b.String()), 0o644)
}

// lines returns a file's lines that are neither blank nor comments (#); a missing file has none.
func lines(path string) ([]string, error) {
	f, err := os.Open(path)
	if os.IsNotExist(err) {
		return nil, nil
	}
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

// copyTree copies the module's files (tracked, and new ones git does not ignore) to tree: gremlins
// copies the whole module once per worker, and _output's binaries would make that hundreds of
// megabytes; the copy also keeps edits made meanwhile out of the run.
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
