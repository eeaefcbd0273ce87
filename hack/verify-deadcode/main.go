// Command verify-deadcode fails when the operator's binary links a call that makes the Go linker
// keep every exported method of every type that is ever stored in an interface.
//
// The linker drops methods nothing calls, unless a reachable function calls reflect's Method or
// MethodByName with a name it cannot see at compile time: then any method could be called, so
// all are kept. For this operator that is the Marshal, Unmarshal, String and SwaggerDoc methods of
// several thousand API types (with the swagger maps they build at start), about a third of the
// binary's code and half of its pc tables, and most of it ends up resident (docs/memory.md). One
// dependency bump can bring such a call in, as google.golang.org/protobuf before v1.36.12 did with
// Go 1.26, so `make verify` builds the binary with the linker's dependency dump and prints how
// each such call is reached.
package main

import (
	"bufio"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
)

func main() {
	pkg := flag.String("package", "./cmd/cluster-samples-operator", "the main package to link")
	flag.Parse()
	if err := run(*pkg); err != nil {
		fmt.Fprintln(os.Stderr, "verify-deadcode:", err)
		os.Exit(1)
	}
}

func run(pkg string) error {
	dir, err := os.MkdirTemp("", "verify-deadcode")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	// Built as `make build` and the image build it: static, stripped, trimmed paths.
	cmd := exec.Command("go", "build", "-trimpath", "-ldflags", "-s -w -dumpdep", "-o", filepath.Join(dir, "bin"), pkg)
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
	dump, err := os.Create(filepath.Join(dir, "dumpdep"))
	if err != nil {
		return err
	}
	defer dump.Close()
	cmd.Stderr = dump
	if err := cmd.Run(); err != nil {
		out, _ := os.ReadFile(dump.Name())
		return fmt.Errorf("go build %s: %v\n%s", pkg, err, lastLines(string(out), 20))
	}
	if _, err := dump.Seek(0, io.SeekStart); err != nil {
		return err
	}
	graph, err := parseDump(dump)
	if err != nil {
		return err
	}
	if chains := graph.reflectMethodChains(); len(chains) > 0 {
		var b strings.Builder
		fmt.Fprintf(&b, "%s links %d function(s) that call reflect's Method or MethodByName with a name the linker cannot see,\n"+
			"so it keeps every exported method of every type used in an interface:\n", pkg, len(chains))
		shortest := chains[0]
		for _, chain := range chains {
			fmt.Fprintf(&b, "  %s\n", chain[len(chain)-1])
			if len(chain) < len(shortest) {
				shortest = chain
			}
		}
		b.WriteString("The shortest way one is reached (a type: step is a method kept for an interface, or for a\n" +
			"MethodByName call with a constant name: `go build -ldflags=-v=2` lists those names):\n")
		for i, sym := range shortest {
			fmt.Fprintf(&b, "  %s%s\n", strings.Repeat("  ", i), sym)
		}
		return fmt.Errorf("%s", b.String())
	}
	fmt.Printf("%s: the linker prunes unused methods (no reflective method call is reachable)\n", pkg)
	return nil
}

// depGraph is the linker's -dumpdep output: who made each reachable symbol reachable.
type depGraph struct {
	reachedFrom   map[string][]string // symbol -> the symbols with an edge to it, in dump order
	reflectMethod map[string]bool     // symbols the linker marked <ReflectMethod>
	roots         map[string]bool     // symbols reached from the linker's own roots
}

const (
	reflectMethodMark = "<ReflectMethod>"
	usedInIfaceMark   = "<UsedInIface>"
)

// parseDump reads lines of the form "from -> to", where from is empty for the linker's roots
// and either side may carry markers such as <ReflectMethod>.
func parseDump(r io.Reader) (*depGraph, error) {
	g := &depGraph{reachedFrom: map[string][]string{}, reflectMethod: map[string]bool{}, roots: map[string]bool{}}
	s := bufio.NewScanner(r)
	s.Buffer(make([]byte, 1<<20), 1<<20)
	for s.Scan() {
		from, to, ok := strings.Cut(s.Text(), " -> ")
		if !ok {
			continue // the package name line, linker chatter
		}
		fromSym, to := g.symbol(from), g.symbol(to)
		if fromSym == "" {
			g.roots[to] = true
			continue
		}
		g.reachedFrom[to] = append(g.reachedFrom[to], fromSym)
	}
	return g, s.Err()
}

func (g *depGraph) symbol(field string) string {
	field = strings.TrimSpace(field)
	name := strings.TrimSpace(strings.NewReplacer(reflectMethodMark, "", usedInIfaceMark, "").Replace(field))
	if strings.Contains(field, reflectMethodMark) {
		g.reflectMethod[name] = true
	}
	return name
}

// reflectMethodChains returns, for each reachable <ReflectMethod> symbol, a shortest chain from
// a root of the linker to it (root first), sorted by the symbol's name.
func (g *depGraph) reflectMethodChains() [][]string {
	var targets []string
	for sym := range g.reflectMethod {
		targets = append(targets, sym)
	}
	sort.Strings(targets)
	var chains [][]string
	for _, target := range targets {
		chains = append(chains, g.chainTo(target))
	}
	return chains
}

// chainTo walks back from target to the nearest root, breadth first.
func (g *depGraph) chainTo(target string) []string {
	next := map[string]string{target: ""} // symbol -> the symbol it leads to, towards target
	queue := []string{target}
	for len(queue) > 0 {
		sym := queue[0]
		queue = queue[1:]
		if g.roots[sym] || len(g.reachedFrom[sym]) == 0 {
			var chain []string
			for s := sym; s != ""; s = next[s] {
				chain = append(chain, s)
			}
			return chain
		}
		for _, from := range g.reachedFrom[sym] {
			if _, seen := next[from]; !seen {
				next[from] = sym
				queue = append(queue, from)
			}
		}
	}
	return []string{target}
}

func lastLines(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}
