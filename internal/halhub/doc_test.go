package halhub

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// The package doc's map from the spec to the files, and the lock order,
// are checked against the code, so that they stay true as it changes.

// packageDoc returns the package comment of doc.go.
func packageDoc(t *testing.T) string {
	t.Helper()
	f, err := parser.ParseFile(token.NewFileSet(), "doc.go", nil, parser.ParseComments|parser.PackageClauseOnly)
	if err != nil {
		t.Fatal(err)
	}
	if f.Doc == nil {
		t.Fatal("doc.go has no package comment")
	}
	return f.Doc.Text()
}

// sourceFiles returns the package's files that are not tests, in dir.
func sourceFiles(t *testing.T, dir string) []string {
	t.Helper()
	all, err := filepath.Glob(filepath.Join(dir, "*.go"))
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, f := range all {
		if !strings.HasSuffix(f, "_test.go") {
			out = append(out, f)
		}
	}
	return out
}

// Every file and directory the package doc names exists, every section
// of the spec is there, and every file of the package is named: a
// newcomer finds the code of any section from it.
func TestDocMapsTheSpecToFiles(t *testing.T) {
	doc := packageDoc(t)
	named := map[string]bool{}
	for _, m := range regexp.MustCompile(`\b[a-z0-9_]+\.(go|txt)\b`).FindAllString(doc, -1) {
		named[m] = true
		if _, err := os.Stat(m); err != nil {
			t.Errorf("the package doc names %s: %v", m, err)
		}
	}
	for _, m := range regexp.MustCompile(`(?m)(?:^|\s)([a-z]+)/(?:[\s:,;.]|$)`).FindAllStringSubmatch(doc, -1) {
		if st, err := os.Stat(m[1]); err != nil || !st.IsDir() {
			t.Errorf("the package doc names the directory %s/: %v", m[1], err)
		}
	}
	for n := 1; n <= 10; n++ {
		if !regexp.MustCompile(fmt.Sprintf(`§%d\b`, n)).MatchString(doc) {
			t.Errorf("the package doc has no §%d", n)
		}
	}
	for _, f := range sourceFiles(t, ".") {
		if f != "doc.go" && !named[f] {
			t.Errorf("the package doc does not say what %s implements", f)
		}
	}
}

// Every mutex of the package (a field of type sync.Mutex or
// sync.RWMutex) is named in locksordering.txt, as Type.field, and every
// lock that file lists is one.
func TestLockOrderNamesEveryMutex(t *testing.T) {
	b, err := os.ReadFile("locksordering.txt")
	if err != nil {
		t.Fatal(err)
	}
	order := string(b)
	var mutexes []string
	for _, dir := range []string{".", "audit", "token"} {
		for _, path := range sourceFiles(t, dir) {
			f, err := parser.ParseFile(token.NewFileSet(), path, nil, 0)
			if err != nil {
				t.Fatal(err)
			}
			ast.Inspect(f, func(n ast.Node) bool {
				ts, ok := n.(*ast.TypeSpec)
				if !ok {
					return true
				}
				st, ok := ts.Type.(*ast.StructType)
				if !ok {
					return false
				}
				for _, fl := range st.Fields.List {
					sel, ok := fl.Type.(*ast.SelectorExpr)
					if !ok || fmt.Sprint(sel.X) != "sync" || (sel.Sel.Name != "Mutex" && sel.Sel.Name != "RWMutex") {
						continue
					}
					names := []string{sel.Sel.Name} // embedded
					if len(fl.Names) > 0 {
						names = names[:0]
						for _, id := range fl.Names {
							names = append(names, id.Name)
						}
					}
					for _, name := range names {
						m := ts.Name.Name + "." + name
						mutexes = append(mutexes, m)
						if !regexp.MustCompile(`\b` + regexp.QuoteMeta(m) + `\b`).MatchString(order) {
							t.Errorf("%s (%s) is not in locksordering.txt", m, path)
						}
					}
				}
				return false
			})
		}
	}
	_, locks, _ := strings.Cut(order, "\nThe locks\n")
	locks, _, _ = strings.Cut(locks, "\nNot mutexes")
	for _, m := range regexp.MustCompile(`(?m)^  (\w+\.\w+) `).FindAllStringSubmatch(locks, -1) {
		if !slices.Contains(mutexes, m[1]) {
			t.Errorf("locksordering.txt lists %s, which is no mutex of the package", m[1])
		}
	}
	if len(mutexes) < 10 {
		t.Fatalf("found only %d mutexes: %v", len(mutexes), mutexes)
	}
}
