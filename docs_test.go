package hone_test

import (
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// repoFiles returns the repository's files whose names end in one of
// exts, skipping hidden directories and experiment results.
func repoFiles(t *testing.T, exts ...string) []string {
	t.Helper()
	var out []string
	err := filepath.WalkDir(".", func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && p != "." && (strings.HasPrefix(d.Name(), ".") || d.Name() == "hone_results" || d.Name() == "out") {
			return filepath.SkipDir
		}
		for _, e := range exts {
			if !d.IsDir() && strings.HasSuffix(p, e) {
				out = append(out, p)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// TestDocsCiteExistingDocuments checks that every document the code and
// the documentation cite by path (docs/*.md, bench/*.md, a markdown link)
// is in the repository.
func TestDocsCiteExistingDocuments(t *testing.T) {
	byPath := regexp.MustCompile(`\b((?:docs|bench)/[A-Za-z0-9_./-]*[A-Za-z0-9_]\.md)\b`)
	link := regexp.MustCompile(`\]\(([^)#\s:]+\.md)(?:#[^)]*)?\)`)
	// A document named alone (SEMANTICS.md §3) is one of docs/, bench/,
	// the repository's root or the citing file's directory.
	bare := regexp.MustCompile(`(?:^|[^/A-Za-z0-9_.-])([A-Z][A-Z_]*\.md)\b`)
	for _, f := range repoFiles(t, ".go", ".md", ".yaml", ".sh", ".py") {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range byPath.FindAllStringSubmatch(string(data), -1) {
			if strings.HasPrefix(m[1], "bench/out/") {
				continue // what a benchmark writes, not a document
			}
			if _, err := os.Stat(m[1]); err != nil {
				t.Errorf("%s cites %s, which is not in the repository", f, m[1])
			}
		}
		for _, m := range bare.FindAllStringSubmatch(string(data), -1) {
			found := false
			for _, dir := range []string{"docs", "bench", ".", filepath.Dir(f)} {
				if _, err := os.Stat(filepath.Join(dir, m[1])); err == nil {
					found = true
				}
			}
			if !found {
				t.Errorf("%s cites %s, which is not in the repository", f, m[1])
			}
		}
		if strings.HasSuffix(f, ".md") {
			for _, m := range link.FindAllStringSubmatch(string(data), -1) {
				if _, err := os.Stat(filepath.Join(filepath.Dir(f), m[1])); err != nil {
					t.Errorf("%s links to %s, which is not in the repository", f, m[1])
				}
			}
		}
	}
}

// TestSemanticsCitesItsTests checks that docs/SEMANTICS.md names every
// scenario script of the controller and the schedulers beside the rule it
// pins, and that every test it names exists.
func TestSemanticsCitesItsTests(t *testing.T) {
	data, err := os.ReadFile(filepath.Join("docs", "SEMANTICS.md"))
	if err != nil {
		t.Fatal(err)
	}
	doc := string(data)
	var scripts []string
	for _, glob := range []string{"controller/testdata/*.txt", "scheduler/*/testdata/*.txt"} {
		m, err := filepath.Glob(glob)
		if err != nil {
			t.Fatal(err)
		}
		scripts = append(scripts, m...)
	}
	if len(scripts) < 20 {
		t.Fatalf("found %d scenario scripts; the globs are wrong", len(scripts))
	}
	for _, s := range scripts {
		if !strings.Contains(doc, filepath.Base(s)) {
			t.Errorf("docs/SEMANTICS.md does not cite %s beside the rule it pins", s)
		}
	}
	funcs := map[string]bool{}
	decl := regexp.MustCompile(`(?m)^func (Test[A-Za-z0-9_]+)\(`)
	for _, f := range repoFiles(t, "_test.go") {
		src, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range decl.FindAllStringSubmatch(string(src), -1) {
			funcs[m[1]] = true
		}
	}
	for _, m := range regexp.MustCompile("`(Test[A-Za-z0-9_]+)`").FindAllStringSubmatch(doc, -1) {
		if !funcs[m[1]] {
			t.Errorf("docs/SEMANTICS.md names %s, which is no test", m[1])
		}
	}
}
