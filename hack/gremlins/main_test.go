package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// A change that holds no operator a mutator changes costs CI no coverage run; one that does is
// mutated.
func TestOnlyAChangedOperatorIsWorthAMutationRun(t *testing.T) {
	repo := t.TempDir()
	git := func(args ...string) {
		t.Helper()
		cmd := exec.Command("git", append([]string{"-c", "user.name=t", "-c", "user.email=t@t", "-c", "commit.gpgsign=false"}, args...)...)
		cmd.Dir = repo
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	write := func(name, src string) {
		t.Helper()
		path := filepath.Join(repo, "pkg", "p", name)
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(src), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	const base = "package p\n\nfunc f(n int) bool {\n\treturn n > 0\n}\n"
	git("init", "-q")
	write("p.go", base)
	write("p_test.go", "package p\n")
	git("add", ".")
	git("commit", "-q", "-m", "base")
	cmd := exec.Command("git", "rev-parse", "HEAD")
	cmd.Dir = repo
	out, err := cmd.Output()
	if err != nil {
		t.Fatal(err)
	}
	since := string(out[:len(out)-1])
	t.Chdir(repo)

	for _, tc := range []struct {
		name, src, test string
		want            int
	}{
		{"nothing changed", base, "package p\n", 0},
		{"the tests alone", base, "package p\n\nvar x = 1 + 2\n", 0},
		{"a comment, a pointer type and a call", "package p\n\n// f says whether n counts.\nfunc f(n int) bool {\n\treturn n > 0\n}\n\nfunc g(p *int) { println(p) }\n", "package p\n", 0},
		{"a comparison", "package p\n\nfunc f(n int) bool {\n\treturn n >= 0\n}\n", "package p\n", 1},
		{"a new file with an increment and a loop's break", base, "package p\n", 2},
	} {
		write("p.go", tc.src)
		write("p_test.go", tc.test)
		os.Remove(filepath.Join(repo, "pkg", "p", "q.go"))
		if tc.want == 2 {
			write("q.go", "package p\n\nfunc h() {\n\tfor i := 0; ; i++ {\n\t\tbreak\n\t}\n}\n")
			git("add", "-N", "pkg/p/q.go")
		}
		got, err := changedMutableTokens("p", since)
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		if got != tc.want {
			t.Errorf("%s: %d mutable tokens changed, want %d", tc.name, got, tc.want)
		}
	}
}

// A mutant on a line that begins inside a raw string is keyed by its operator: the line is read
// in its file, where the backtick that opens it closes the string.
func TestAMutantAfterARawStringIsKeyed(t *testing.T) {
	src := []byte("package p\n\nconst name = \"n\"\n\nvar help = `first line\n` + name + `.\n`\n")
	k, err := keyOf("p", "p.go", src, mutant{Type: "ARITHMETIC_BASE", Line: 6, Column: 10})
	if err != nil {
		t.Fatal(err)
	}
	if want := "p p.go ARITHMETIC_BASE: ` + name ⟦+⟧ `."; k.key != want || k.token != "+" {
		t.Errorf("key %q token %q, want %q and +", k.key, k.token, want)
	}
}
