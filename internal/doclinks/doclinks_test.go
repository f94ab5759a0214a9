// Package doclinks checks that what the repository's Markdown pages point a
// reader to exists: every relative link names a file or directory, every #anchor
// a heading (or an explicit <a id>) of the page it points to, slugged the way
// GitHub renders it, and every `make` target named in code is in the Makefile;
// and that the patterns of docs/design-patterns.md and the code's Pattern:
// comments name each other (patterns_test.go).
package doclinks

import (
	"bufio"
	"fmt"
	"io/fs"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"unicode"
)

// repoRoot is the module root relative to this package's directory.
const repoRoot = "../.."

var (
	// inlineLink matches [text](target) and ![alt](target), target without spaces;
	// an optional "title" after the target is allowed.
	inlineLink = regexp.MustCompile(`\]\(\s*<?([^)\s>]+)>?(?:\s+"[^"]*")?\s*\)`)
	// refDef matches a reference definition: [label]: target
	refDef = regexp.MustCompile(`^\s{0,3}\[[^\]]+\]:\s*<?(\S+?)>?(?:\s+.*)?$`)
	// htmlAnchor matches an explicit anchor target: <a id="x"> or <a name="x">.
	htmlAnchor = regexp.MustCompile(`<a\s+(?:id|name)="([^"]+)"`)
	// heading matches an ATX heading.
	heading = regexp.MustCompile(`^\s{0,3}(#{1,6})\s+(.*?)\s*#*\s*$`)
	// codeSpan matches an inline code span, whose brackets are not links.
	codeSpan = regexp.MustCompile("`+[^`]*`+")
	// htmlTag matches an inline HTML tag, dropped from heading text.
	htmlTag = regexp.MustCompile(`<[^>]+>`)
	// mdLinkText keeps the text of a link inside a heading.
	mdLinkText = regexp.MustCompile(`\[([^\]]*)\]\([^)]*\)`)
	// makeCall matches a make invocation in code: `make run`, `… && make test`.
	makeCall = regexp.MustCompile(`(?:^|[\s;&|(])make ([a-z][a-z0-9_-]*)`)
	// makeRule matches a rule's target in the Makefile.
	makeRule = regexp.MustCompile(`(?m)^([a-zA-Z0-9_-]+):`)
)

// page is one Markdown file as far as links are concerned.
type page struct {
	links   []link
	anchors map[string]bool
	makes   []link // make targets named in code blocks and code spans
}

type link struct {
	line   int
	target string
}

// skipDir names directories that hold no documentation of ours.
func skipDir(name string) bool {
	return name != "." && name != ".." && strings.HasPrefix(name, ".") ||
		name == "bin" || name == "node_modules" || name == "testdata" || name == "vendor"
}

// walkFiles calls visit with every file under root whose name ends in
// suffix, outside the directories skipDir names.
func walkFiles(root, suffix string, visit func(path string) error) error {
	return filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if path != root && skipDir(d.Name()) {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(d.Name(), suffix) {
			return nil
		}
		return visit(path)
	})
}

// loadPages reads every Markdown file of the repository, by slash path
// relative to its root.
func loadPages(t *testing.T) map[string]*page {
	t.Helper()
	pages := map[string]*page{}
	err := walkFiles(repoRoot, ".md", func(path string) error {
		rel, err := filepath.Rel(repoRoot, path)
		if err != nil {
			return err
		}
		p, err := readPage(path)
		if err != nil {
			return err
		}
		pages[filepath.ToSlash(rel)] = p
		return nil
	})
	if err != nil {
		t.Fatalf("walk %s: %v", repoRoot, err)
	}
	if len(pages) < 10 {
		t.Fatalf("found %d Markdown files under %s, want the repository's docs", len(pages), repoRoot)
	}
	return pages
}

func TestMarkdownLinksResolve(t *testing.T) {
	pages := loadPages(t)
	checked := 0
	for name, p := range pages {
		for _, l := range p.links {
			if problem := resolve(name, l.target, pages); problem != "" {
				t.Errorf("%s:%d: link %q: %s", name, l.line, l.target, problem)
			}
			checked++
		}
	}
	t.Logf("%d links checked in %d Markdown files", checked, len(pages))
}

func TestMakeTargetsNamedInDocsExist(t *testing.T) {
	makefile, err := os.ReadFile(filepath.Join(repoRoot, "Makefile"))
	if err != nil {
		t.Fatalf("read Makefile: %v", err)
	}
	targets := map[string]bool{}
	for _, m := range makeRule.FindAllStringSubmatch(string(makefile), -1) {
		targets[m[1]] = true
	}
	checked := 0
	for name, p := range loadPages(t) {
		for _, m := range p.makes {
			if !targets[m.target] {
				t.Errorf("%s:%d: make %s: the Makefile has no such target", name, m.line, m.target)
			}
			checked++
		}
	}
	if checked == 0 {
		t.Fatal("no make target named in any Markdown file: the scan is broken")
	}
	t.Logf("%d make invocations checked", checked)
}

// resolve returns what is wrong with target as written in page from, or "".
func resolve(from, target string, pages map[string]*page) string {
	u, err := url.Parse(target)
	if err != nil {
		return fmt.Sprintf("not a URL: %v", err)
	}
	if u.Scheme != "" || u.Host != "" {
		return "" // external: not checked offline
	}
	file := from
	if u.Path != "" {
		if strings.HasPrefix(u.Path, "/") {
			return "absolute path: GitHub resolves it against the site, not the repository"
		}
		file = filepath.ToSlash(filepath.Join(filepath.Dir(from), u.Path))
		if strings.HasPrefix(file, "../") {
			return "points outside the repository"
		}
		if _, err := os.Stat(filepath.Join(repoRoot, filepath.FromSlash(file))); err != nil {
			return fmt.Sprintf("no such file or directory %s", file)
		}
	}
	if u.Fragment == "" {
		return ""
	}
	dest, ok := pages[file]
	if !ok {
		return "" // an anchor into a non-Markdown file (a line, say): not checked
	}
	if !dest.anchors[strings.ToLower(u.Fragment)] {
		return fmt.Sprintf("%s has no heading with anchor #%s", file, u.Fragment)
	}
	return ""
}

// readPage collects the links outside code and the anchors of the headings.
func readPage(path string) (*page, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	p := &page{anchors: map[string]bool{}}
	seen := map[string]int{}
	var fence string
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 0, 64*1024), 1024*1024)
	for n := 1; sc.Scan(); n++ {
		line := sc.Text()
		trimmed := strings.TrimLeft(line, " ")
		if fence != "" {
			if strings.HasPrefix(trimmed, fence) {
				fence = ""
			} else {
				p.makes = append(p.makes, makeCalls(n, line)...)
			}
			continue
		}
		if strings.HasPrefix(trimmed, "```") || strings.HasPrefix(trimmed, "~~~") {
			fence = trimmed[:3]
			continue
		}
		for _, m := range htmlAnchor.FindAllStringSubmatch(line, -1) {
			p.anchors[strings.ToLower(m[1])] = true
		}
		if m := heading.FindStringSubmatch(line); m != nil {
			s := slug(m[2])
			if k := seen[s]; k > 0 {
				p.anchors[fmt.Sprintf("%s-%d", s, k)] = true
			} else {
				p.anchors[s] = true
			}
			seen[s]++
		}
		if m := refDef.FindStringSubmatch(line); m != nil {
			p.links = append(p.links, link{n, m[1]})
			continue
		}
		for _, span := range codeSpan.FindAllString(line, -1) {
			p.makes = append(p.makes, makeCalls(n, strings.Trim(span, "`"))...)
		}
		for _, m := range inlineLink.FindAllStringSubmatch(codeSpan.ReplaceAllString(line, ""), -1) {
			p.links = append(p.links, link{n, m[1]})
		}
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("read %s: %w", path, err)
	}
	return p, nil
}

// makeCalls returns the make targets invoked in a line of code.
func makeCalls(line int, code string) []link {
	var calls []link
	for _, m := range makeCall.FindAllStringSubmatch(code, -1) {
		calls = append(calls, link{line, m[1]})
	}
	return calls
}

// slug is GitHub's heading anchor: the heading's text lower-cased, everything but
// letters, digits, marks, '_', '-' and spaces dropped, spaces turned into '-'.
func slug(text string) string {
	text = mdLinkText.ReplaceAllString(text, "$1")
	text = htmlTag.ReplaceAllString(text, "")
	var b strings.Builder
	for _, r := range strings.ToLower(text) {
		switch {
		case r == ' ':
			b.WriteRune('-')
		case r == '-' || r == '_' || unicode.IsLetter(r) || unicode.IsDigit(r) || unicode.IsMark(r):
			b.WriteRune(r)
		}
	}
	return b.String()
}

func TestSlug(t *testing.T) {
	for _, tc := range []struct{ heading, want string }{
		{"5. Outcomes", "5-outcomes"},
		{"7. Message types and `OrderStatusChanged`", "7-message-types-and-orderstatuschanged"},
		{"Try it locally", "try-it-locally"},
		{"A 409 storm (`idempotency-key-in-flight`)", "a-409-storm-idempotency-key-in-flight"},
		{"§13 — the HTTP API", "13--the-http-api"},
		{"[ordersctl](x.md) commands", "ordersctl-commands"},
	} {
		t.Run(tc.heading, func(t *testing.T) {
			if got := slug(tc.heading); got != tc.want {
				t.Errorf("slug(%q) = %q, want %q", tc.heading, got, tc.want)
			}
		})
	}
}
