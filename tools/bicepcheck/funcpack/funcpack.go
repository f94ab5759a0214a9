// Package funcpack computes the files `func azure functionapp publish` puts into the package
// of a custom-handler app, exactly as Azure Functions Core Tools 4.x does, so a test can assert
// that the package holds what the host runs and nothing else.
//
// Core Tools does not read .funcignore with git's rules (Azure/azure-functions-core-tools,
// src/Cli/func/Common/GitIgnoreParser.cs, a port of codemix/gitignore-parser, and
// FileSystemHelpers.GetLocalFiles):
//
//   - every pattern is anchored at the start of the path relative to the app root (a leading
//     "/" is dropped), and must end at a word boundary (`\b`);
//   - `*` matches within one path segment (`[^/]+`), `**` across segments (`.+`);
//   - a path is packaged when any "!" pattern matches it or no other pattern does: a "!" line
//     re-admits a path whatever its parent directories match;
//   - directories named .git or .vscode are never walked, and files named .funcignore,
//     .gitignore, local.settings.json or project.lock.json are never packaged, at any depth.
//
// So `*.go` excludes only Go files at the root, not cmd/handler/main.go.
package funcpack

import (
	"fmt"
	"io/fs"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
)

// Ignore is a parsed .funcignore.
type Ignore struct {
	deny, admit *regexp.Regexp // nil: no pattern of that kind
}

// ParseIgnore parses .funcignore content the way Core Tools' GitIgnoreParser does.
func ParseIgnore(content string) (*Ignore, error) {
	var deny, admit []string
	for _, line := range strings.Split(content, "\n") {
		line = strings.TrimSpace(line)
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		negative := strings.HasPrefix(line, "!")
		line = strings.TrimPrefix(strings.TrimPrefix(line, "!"), "/")
		if negative {
			admit = append(admit, patternRegexp(line))
		} else {
			deny = append(deny, patternRegexp(line))
		}
	}
	ig := &Ignore{}
	var err error
	if ig.deny, err = compile(deny); err != nil {
		return nil, err
	}
	if ig.admit, err = compile(admit); err != nil {
		return nil, err
	}
	return ig, nil
}

// regexpSpecial is the character class GitIgnoreParser.PrepareRegexPattern escapes; `*` is not
// in it, and "**" and "*" are rewritten after escaping.
var regexpSpecial = regexp.MustCompile(`[\-\[\]/{}()+?.\\^$|]`)

func patternRegexp(pattern string) string {
	escaped := regexpSpecial.ReplaceAllString(pattern, `\$0`)
	escaped = strings.ReplaceAll(escaped, "**", "(.+)")
	return strings.ReplaceAll(escaped, "*", `([^\/]+)`)
}

func compile(patterns []string) (*regexp.Regexp, error) {
	if len(patterns) == 0 {
		return nil, nil
	}
	re, err := regexp.Compile(`^((` + strings.Join(patterns, ")|(") + `))\b`)
	if err != nil {
		return nil, fmt.Errorf("funcignore: %w", err)
	}
	return re, nil
}

// Accepts reports whether Core Tools packages the file at path (slash-separated, relative to
// the app root).
func (ig *Ignore) Accepts(path string) bool {
	if ig == nil {
		return true
	}
	if ig.admit != nil && ig.admit.MatchString(path) {
		return true
	}
	return ig.deny == nil || !ig.deny.MatchString(path)
}

var (
	skippedDirs  = []string{".git", ".vscode"}
	skippedFiles = []string{".funcignore", ".gitignore", "local.settings.json", "project.lock.json"}
)

// Candidates lists the files Core Tools considers under root before .funcignore applies,
// slash-separated and relative to root, sorted.
func Candidates(root string) ([]string, error) {
	var files []string
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if path != root && containsFold(skippedDirs, d.Name()) {
				return filepath.SkipDir
			}
			return nil
		}
		if containsFold(skippedFiles, d.Name()) {
			return nil
		}
		rel, err := filepath.Rel(root, path)
		if err != nil {
			return err
		}
		files = append(files, filepath.ToSlash(rel))
		return nil
	})
	sort.Strings(files)
	return files, err
}

// Package returns the candidates the ignore file admits.
func Package(candidates []string, ig *Ignore) []string {
	var out []string
	for _, f := range candidates {
		if ig.Accepts(f) {
			out = append(out, f)
		}
	}
	return out
}

func containsFold(list []string, s string) bool {
	for _, v := range list {
		if strings.EqualFold(v, s) {
			return true
		}
	}
	return false
}
