// Command verify-docs checks the project's Markdown documentation against the repository, so that
// a newcomer following it never meets a dead end. For README.md, every Markdown file under docs/
// and test/integration/README.md it checks that:
//
//   - every relative link names a file or directory that exists, and a link with an #anchor into a
//     Markdown file names a heading of that file (the anchor GitHub makes from the heading);
//   - every `make <target>` written in a code span or a fenced code block names a target the
//     Makefile has (variables given after the target, `make test OPENSHIFT_BIN_DIR=...`, are
//     left aside);
//   - every repository path written in a code span (one that begins with pkg/, cmd/, test/, hack/,
//     manifests/, assets/, docs/ or bundle/) exists: a file, a directory (`pkg/...` counts as
//     pkg/), a glob that matches something, or a Go name qualified by its package directory
//     (`test/controlplane.ApplyDir`).
//
// And it holds docs/design.md's controller table to the controllers pkg/operator runs, and its
// package map to the packages under pkg/ and hack/pure-packages (design.go).
//
// Each problem is printed as file:line: message, and the command exits 1 when there is any.
// It is part of `make verify` and uses the standard library only.
package main

import (
	"flag"
	"fmt"
	"io/fs"
	"net/url"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"unicode"
)

func main() {
	rootFlag := flag.String("root", "", "the repository root (default: the nearest directory holding go.mod, from the working directory up)")
	flag.Parse()
	root, err := findRoot(*rootFlag)
	if err != nil {
		fmt.Fprintln(os.Stderr, "verify-docs:", err)
		os.Exit(2)
	}
	problems, err := verify(root)
	if err != nil {
		fmt.Fprintln(os.Stderr, "verify-docs:", err)
		os.Exit(2)
	}
	for _, p := range problems {
		fmt.Println(p)
	}
	if len(problems) > 0 {
		fmt.Fprintf(os.Stderr, "verify-docs: %d problems in the documentation\n", len(problems))
		os.Exit(1)
	}
}

// findRoot returns dir, or when it is empty the nearest directory holding go.mod from the
// working directory up.
func findRoot(dir string) (string, error) {
	if dir != "" {
		return filepath.Abs(dir)
	}
	wd, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for d := wd; ; d = filepath.Dir(d) {
		if _, err := os.Stat(filepath.Join(d, "go.mod")); err == nil {
			return d, nil
		}
		if filepath.Dir(d) == d {
			return "", fmt.Errorf("no go.mod in %s or above it: pass -root", wd)
		}
	}
}

// Problem is one finding, at a line of a documentation file (relative to the root).
type Problem struct {
	File    string
	Line    int
	Message string
}

func (p Problem) String() string { return fmt.Sprintf("%s:%d: %s", p.File, p.Line, p.Message) }

// docFiles are the files checked, relative to root: README.md, the Markdown files under docs/
// and test/integration/README.md, those that exist.
func docFiles(root string) ([]string, error) {
	var files []string
	for _, f := range []string{"README.md", "test/integration/README.md"} {
		if _, err := os.Stat(filepath.Join(root, filepath.FromSlash(f))); err == nil {
			files = append(files, f)
		}
	}
	docs := filepath.Join(root, "docs")
	if _, err := os.Stat(docs); err == nil {
		err := filepath.WalkDir(docs, func(p string, d fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			if !d.IsDir() && isMarkdown(p) {
				rel, err := filepath.Rel(root, p)
				if err != nil {
					return err
				}
				files = append(files, filepath.ToSlash(rel))
			}
			return nil
		})
		if err != nil {
			return nil, err
		}
	}
	sort.Strings(files)
	return files, nil
}

// verify checks every documentation file of the repository at root.
func verify(root string) ([]Problem, error) {
	makefile, err := os.ReadFile(filepath.Join(root, "Makefile"))
	if err != nil {
		return nil, err
	}
	targets := MakeTargets(string(makefile))
	files, err := docFiles(root)
	if err != nil {
		return nil, err
	}
	c := &checker{root: root, targets: targets, docs: map[string]*Doc{}}
	var problems []Problem
	for _, f := range files {
		d, err := c.doc(f)
		if err != nil {
			return nil, err
		}
		problems = append(problems, c.check(f, d)...)
	}
	if _, err := os.Stat(filepath.Join(root, filepath.FromSlash(designDoc))); err == nil {
		design, err := checkDesign(root)
		if err != nil {
			return nil, err
		}
		problems = append(problems, design...)
	}
	return problems, nil
}

// checker checks documents of one repository, parsing each Markdown file once.
type checker struct {
	root    string
	targets map[string]bool
	docs    map[string]*Doc // by path relative to root, slash-separated
}

func (c *checker) doc(rel string) (*Doc, error) {
	if d, ok := c.docs[rel]; ok {
		return d, nil
	}
	data, err := os.ReadFile(filepath.Join(c.root, filepath.FromSlash(rel)))
	if err != nil {
		return nil, err
	}
	d := ParseDoc(string(data))
	c.docs[rel] = d
	return d, nil
}

// check returns the problems of the document d, found at rel.
func (c *checker) check(rel string, d *Doc) []Problem {
	var out []Problem
	add := func(line int, format string, a ...any) {
		out = append(out, Problem{File: rel, Line: line, Message: fmt.Sprintf(format, a...)})
	}
	for _, l := range d.Links {
		if msg := c.checkLink(rel, d, l.Text); msg != "" {
			add(l.Line, "%s", msg)
		}
	}
	for _, code := range d.Code {
		for _, target := range MakeInvocations(code.Text) {
			if !c.targets[target] {
				add(code.Line, "`make %s`: the Makefile has no target %q", target, target)
			}
		}
	}
	for _, span := range d.Spans {
		for _, p := range RepoPaths(span.Text) {
			if !PathExists(c.root, p) {
				add(span.Line, "`%s`: no such file or directory in the repository", p)
			}
		}
	}
	return out
}

var scheme = regexp.MustCompile(`^[A-Za-z][A-Za-z0-9+.-]*:`)

// checkLink says what is wrong with a link to target written in the document d at rel, "" when
// nothing is.
func (c *checker) checkLink(rel string, d *Doc, target string) string {
	if target == "" || scheme.MatchString(target) || strings.HasPrefix(target, "//") {
		return "" // empty, or absolute: not this repository's to check
	}
	file, anchor, _ := strings.Cut(target, "#")
	file, _, _ = strings.Cut(file, "?")
	if unescaped, err := url.PathUnescape(file); err == nil {
		file = unescaped
	}
	if unescaped, err := url.PathUnescape(anchor); err == nil {
		anchor = unescaped
	}
	var dest string // relative to root, slash-separated
	switch {
	case file == "":
		dest = rel
	case strings.HasPrefix(file, "/"):
		dest = path.Clean(strings.TrimPrefix(file, "/"))
	default:
		dest = path.Join(path.Dir(rel), file)
	}
	if dest == ".." || strings.HasPrefix(dest, "../") {
		return fmt.Sprintf("link %q points outside the repository", target)
	}
	info, err := os.Stat(filepath.Join(c.root, filepath.FromSlash(dest)))
	if err != nil {
		return fmt.Sprintf("link %q: %s does not exist", target, dest)
	}
	if anchor == "" || info.IsDir() || !isMarkdown(dest) {
		return ""
	}
	td := d
	if dest != rel {
		if td, err = c.doc(dest); err != nil {
			return fmt.Sprintf("link %q: %v", target, err)
		}
	}
	if !td.Anchors[anchor] {
		return fmt.Sprintf("link %q: %s has no heading with the anchor #%s", target, dest, anchor)
	}
	return ""
}

func isMarkdown(p string) bool {
	ext := strings.ToLower(path.Ext(filepath.ToSlash(p)))
	return ext == ".md" || ext == ".markdown"
}

// Doc is what the checks need of a Markdown document.
type Doc struct {
	// Anchors are the anchors GitHub gives the document's headings (and explicit HTML anchors).
	Anchors map[string]bool
	// Links are the targets of inline links, images and link reference definitions outside code.
	Links []Located
	// Spans are the contents of inline code spans.
	Spans []Located
	// Code are the inline code spans and the lines of fenced code blocks: where a make command
	// may be written.
	Code []Located
}

// Located is a piece of text and the (1-based) line it begins on.
type Located struct {
	Line int
	Text string
}

var (
	fenceOpen   = regexp.MustCompile("^[ \t]*(`{3,}|~{3,})(.*)$")
	atxHeading  = regexp.MustCompile(`^ {0,3}(#{1,6})(?:[ \t]+(.*?))?[ \t]*$`)
	atxClosing  = regexp.MustCompile(`(?:^|[ \t]+)#+$`)
	setextUnder = regexp.MustCompile(`^ {0,3}(?:=+|-+)[ \t]*$`)
	blockStart  = regexp.MustCompile(`^ {0,3}(?:[-+*][ \t]|\d+[.)][ \t]|>|\|)`)
	refDef      = regexp.MustCompile(`^ {0,3}\[([^\]]+)\]:[ \t]*<?([^\s>]*)>?`)
	inlineLink  = regexp.MustCompile(`!?\[[^\]]*\]\([ \t]*(?:<([^>\n]*)>|([^\s()]*))(?:[ \t]+(?:"[^"]*"|'[^']*'|\([^)]*\)))?[ \t]*\)`)
	htmlAnchor  = regexp.MustCompile(`<a\s+(?:[^>]*\s)?(?:name|id)="([^"]+)"`)
)

// ParseDoc reads a Markdown document: its fenced code blocks, headings, code spans and links.
func ParseDoc(content string) *Doc {
	d := &Doc{Anchors: map[string]bool{}}
	lines := strings.Split(strings.ReplaceAll(content, "\r\n", "\n"), "\n")
	slugs := map[string]int{}
	addHeading := func(text string) {
		slug := Slug(text)
		n := slugs[slug]
		slugs[slug] = n + 1
		if n > 0 {
			slug = fmt.Sprintf("%s-%d", slug, n)
		}
		d.Anchors[slug] = true
	}
	var block []Located // the lines of the paragraph-level block being read, outside code
	flush := func() {
		d.scanInline(block)
		block = nil
	}
	fence, prevText := "", false
	for i, line := range lines {
		n := i + 1
		if fence != "" {
			if strings.HasPrefix(strings.TrimLeft(line, " "), fence) && strings.Trim(strings.TrimLeft(line, " "), fence[:1]+" \t") == "" {
				fence = ""
			} else {
				d.Code = append(d.Code, Located{n, line})
			}
			continue
		}
		if m := fenceOpen.FindStringSubmatch(line); m != nil && !(m[1][0] == '`' && strings.Contains(m[2], "`")) {
			flush()
			fence, prevText = m[1], false
			continue
		}
		if strings.TrimSpace(line) == "" {
			flush()
			prevText = false
			continue
		}
		for _, m := range htmlAnchor.FindAllStringSubmatch(line, -1) {
			d.Anchors[m[1]] = true
		}
		if m := atxHeading.FindStringSubmatch(line); m != nil {
			flush()
			addHeading(atxClosing.ReplaceAllString(m[2], ""))
			block = append(block, Located{n, m[2]})
			flush()
			prevText = false
			continue
		}
		if prevText && setextUnder.MatchString(line) && len(block) > 0 {
			heading := make([]string, len(block))
			for j, l := range block {
				heading[j] = strings.TrimSpace(l.Text)
			}
			addHeading(strings.Join(heading, " "))
			flush()
			prevText = false
			continue
		}
		if m := refDef.FindStringSubmatch(line); m != nil {
			d.Links = append(d.Links, Located{n, m[2]})
			continue
		}
		block = append(block, Located{n, line})
		prevText = !blockStart.MatchString(line)
	}
	flush()
	return d
}

// scanInline finds the code spans and links of one block of lines.
func (d *Doc) scanInline(block []Located) {
	if len(block) == 0 {
		return
	}
	var text strings.Builder
	lineAt := make([]int, 0, 256) // the line of each byte of text
	for i, l := range block {
		if i > 0 {
			text.WriteByte('\n')
			lineAt = append(lineAt, l.Line)
		}
		text.WriteString(l.Text)
		for range len(l.Text) {
			lineAt = append(lineAt, l.Line)
		}
	}
	s := text.String()
	masked := []byte(s) // s with code spans blanked, for the link search
	for i := 0; i < len(s); {
		switch s[i] {
		case '\\':
			i += 2
			continue
		case '`':
		default:
			i++
			continue
		}
		j := i
		for j < len(s) && s[j] == '`' {
			j++
		}
		run := s[i:j]
		end := closingRun(s, j, len(run))
		if end < 0 {
			i = j // no closing run: literal backticks
			continue
		}
		content := strings.ReplaceAll(s[j:end], "\n", " ")
		if len(content) > 1 && content[0] == ' ' && content[len(content)-1] == ' ' && strings.Trim(content, " ") != "" {
			content = content[1 : len(content)-1]
		}
		span := Located{lineAt[i], content}
		d.Spans = append(d.Spans, span)
		d.Code = append(d.Code, span)
		for k := i; k < end+len(run); k++ {
			if masked[k] != '\n' {
				masked[k] = ' '
			}
		}
		i = end + len(run)
	}
	for _, m := range inlineLink.FindAllSubmatchIndex(masked, -1) {
		target := ""
		switch {
		case m[2] >= 0:
			target = string(masked[m[2]:m[3]])
		case m[4] >= 0:
			target = string(masked[m[4]:m[5]])
		}
		d.Links = append(d.Links, Located{lineAt[m[0]], target})
	}
}

// closingRun returns where the next run of exactly n backticks from index from begins, -1 if
// there is none.
func closingRun(s string, from, n int) int {
	for i := from; i < len(s); {
		if s[i] != '`' {
			i++
			continue
		}
		j := i
		for j < len(s) && s[j] == '`' {
			j++
		}
		if j-i == n {
			return i
		}
		i = j
	}
	return -1
}

var (
	inlineMarkup = regexp.MustCompile(`!?\[([^\]]*)\]\([^)]*\)`)
	htmlTag      = regexp.MustCompile(`<[^>]+>`)
)

// Slug is the anchor GitHub makes from a heading's text: the text as rendered (links, code and
// emphasis markers dropped), in lower case, with every character that is not a letter, a digit,
// a mark, '_', '-' or a space removed and each space made a '-'. Repeated headings get -1, -2 ...
// (ParseDoc adds those).
func Slug(heading string) string {
	text := inlineMarkup.ReplaceAllString(heading, "$1")
	text = htmlTag.ReplaceAllString(text, "")
	text = strings.NewReplacer("`", "", "*", "").Replace(text)
	var b strings.Builder
	for _, r := range strings.ToLower(strings.TrimSpace(text)) {
		switch {
		case r == ' ':
			b.WriteByte('-')
		case r == '-' || r == '_' || unicode.IsLetter(r) || unicode.IsDigit(r) || unicode.IsMark(r):
			b.WriteRune(r)
		}
	}
	return b.String()
}

var (
	makeRule   = regexp.MustCompile(`^([^\s:#=][^:=]*?)\s*::?(?:[^=]|$)`)
	makeAssign = regexp.MustCompile(`^([A-Za-z_][A-Za-z0-9_]*)\s*(?::=|::=|\?=|\+=|=)\s*(.*)$`)
	makeVarRef = regexp.MustCompile(`\$[({]([A-Za-z_][A-Za-z0-9_]*)[)}]`)
)

// MakeTargets returns the targets of a Makefile: the names its rules define and those .PHONY
// lists, with the simple variables of their names expanded ($(BIN)/kubectl is _output/bin/kubectl
// when BIN := _output/bin). Pattern rules and names that stay unexpanded are left out.
func MakeTargets(makefile string) map[string]bool {
	vars := map[string]string{}
	var rules []string
	var logical []string // lines with their backslash continuations joined
	var cur strings.Builder
	for _, line := range strings.Split(strings.ReplaceAll(makefile, "\r\n", "\n"), "\n") {
		if strings.HasSuffix(line, `\`) {
			cur.WriteString(strings.TrimSuffix(line, `\`))
			cur.WriteByte(' ')
			continue
		}
		cur.WriteString(line)
		logical = append(logical, cur.String())
		cur.Reset()
	}
	for _, line := range logical {
		if strings.HasPrefix(line, "\t") || strings.HasPrefix(strings.TrimSpace(line), "#") {
			continue // a recipe, or a comment
		}
		if m := makeAssign.FindStringSubmatch(line); m != nil {
			if _, set := vars[m[1]]; !set || !strings.Contains(line, "?=") {
				vars[m[1]] = strings.TrimSpace(m[2])
			}
			continue
		}
		if m := makeRule.FindStringSubmatch(line); m != nil {
			rules = append(rules, m[1])
			if strings.TrimSpace(m[1]) == ".PHONY" {
				_, prereqs, _ := strings.Cut(line, ":")
				rules = append(rules, prereqs)
			}
		}
	}
	expand := func(s string) string {
		for range 10 { // variables of variables, a few levels deep
			next := makeVarRef.ReplaceAllStringFunc(s, func(ref string) string {
				name := makeVarRef.FindStringSubmatch(ref)[1]
				if v, ok := vars[name]; ok {
					return v
				}
				return ref
			})
			if next == s {
				break
			}
			s = next
		}
		return s
	}
	targets := map[string]bool{}
	for _, names := range rules {
		for _, name := range strings.Fields(expand(names)) {
			if name == ".PHONY" || strings.ContainsAny(name, "%$") {
				continue
			}
			targets[name] = true
		}
	}
	return targets
}

// MakeInvocations returns the targets named by the make commands in a line of code (a code span
// or a line of a fenced block): make where a command begins (at the start, after a shell
// separator, a backtick or $( or a "$ " prompt; not after a bare parenthesis, which in prose
// opens an aside), with the words after it up to the end of that command. Variable
// assignments (VAR=value), options and words holding placeholders or expansions are left out; a
// make run on another Makefile (-C, -f) is left out altogether.
func MakeInvocations(code string) []string {
	var targets []string
	tokens := shellTokens(code)
	start := true
	for i := 0; i < len(tokens); i++ {
		tok := tokens[i]
		switch {
		case tok == "#":
			return targets
		case isSeparator(tok):
			start = true
			continue
		case start && (tok == "$" || tok == "then" || tok == "do" || tok == "else" || tok == "time" || tok == "env" || strings.Contains(tok, "=") && !strings.HasPrefix(tok, "-")):
			continue // still where a command begins
		case !start || tok != "make":
			start = false
			continue
		}
		start = false
		var named []string
		other := false
		for i++; i < len(tokens) && !isSeparator(tokens[i]) && tokens[i] != "#"; i++ {
			arg := tokens[i]
			switch {
			case arg == "-C" || arg == "-f" || strings.HasPrefix(arg, "--directory") || strings.HasPrefix(arg, "--file") || strings.HasPrefix(arg, "--makefile"):
				other = true
			case arg == `\` || strings.HasPrefix(arg, "-") || strings.Contains(arg, "="):
			case strings.ContainsAny(arg, "$<>{}*\"'"):
			default:
				named = append(named, arg)
			}
		}
		i-- // the separator, if any, starts the next command
		if !other {
			targets = append(targets, named...)
		}
	}
	return targets
}

func isSeparator(tok string) bool {
	switch tok {
	case ";", "&&", "||", "|", "&", ")", "`", "$(":
		return true
	}
	return false
}

// shellTokens splits a line of shell into words and the separators between commands; a '#' that
// begins a word begins a comment.
func shellTokens(code string) []string {
	var out []string
	var word strings.Builder
	emit := func() {
		if word.Len() > 0 {
			out = append(out, word.String())
			word.Reset()
		}
	}
	for i := 0; i < len(code); i++ {
		c := code[i]
		switch {
		case c == ' ' || c == '\t' || c == '\n':
			emit()
		case c == '#' && word.Len() == 0:
			out = append(out, "#")
			return out
		case c == '$' && i+1 < len(code) && code[i+1] == '(':
			emit()
			out = append(out, "$(")
			i++
		case c == ';' || c == '(' || c == ')' || c == '`':
			emit()
			out = append(out, string(c))
		case c == '&' || c == '|':
			emit()
			if i+1 < len(code) && code[i+1] == c {
				out = append(out, string([]byte{c, c}))
				i++
			} else {
				out = append(out, string(c))
			}
		default:
			word.WriteByte(c)
		}
	}
	emit()
	return out
}

// repoDirs are the top-level directories whose paths RepoPaths picks out of code.
var repoDirs = []string{"pkg/", "cmd/", "test/", "hack/", "manifests/", "assets/", "docs/", "bundle/"}

// RepoPaths returns the words of a code span that are written as repository paths: those that
// begin with one of the repository's top-level source directories. A path of another repository
// is written with that repository first (osa/pkg/image/..., k8s.io/apiserver/pkg/...), and a
// command's ./cmd/x is relative to wherever it runs: neither is taken for one of this repository.
func RepoPaths(span string) []string {
	var out []string
	for _, word := range strings.Fields(span) {
		word = strings.Trim(word, `"'(),;`)
		for _, dir := range repoDirs {
			if strings.HasPrefix(word, dir) {
				out = append(out, word)
				break
			}
		}
	}
	return out
}

var goName = regexp.MustCompile(`^[A-Z][A-Za-z0-9_]*(\.[A-Za-z_][A-Za-z0-9_]*)*$`)

// PathExists says whether a path written in the documentation names something in the repository
// at root: a file or directory (a trailing /... meaning the directory), a glob that matches
// something, a pattern with placeholders (<arch-dir>, {a,b}) whose fixed beginning exists, or a
// Go name qualified by its package's directory (test/controlplane.ApplyDir).
func PathExists(root, p string) bool {
	p = strings.TrimSuffix(p, "/...")
	p = strings.TrimSuffix(p, "/")
	exists := func(rel string) bool {
		_, err := os.Stat(filepath.Join(root, filepath.FromSlash(rel)))
		return err == nil
	}
	if i := strings.IndexAny(p, "<{"); i >= 0 {
		fixed := p[:i]
		if j := strings.LastIndex(fixed, "/"); j >= 0 {
			return exists(fixed[:j])
		}
		return false
	}
	if strings.ContainsAny(p, "*?[") {
		matches, err := filepath.Glob(filepath.Join(root, filepath.FromSlash(p)))
		return err == nil && len(matches) > 0
	}
	if exists(p) {
		return true
	}
	dir, last := path.Split(p)
	if pkg, name, ok := strings.Cut(last, "."); ok && goName.MatchString(name) {
		info, err := os.Stat(filepath.Join(root, filepath.FromSlash(dir+pkg)))
		return err == nil && info.IsDir()
	}
	return false
}
