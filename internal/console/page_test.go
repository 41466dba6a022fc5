package console

import (
	"io/fs"
	"path"
	"regexp"
	"strings"
	"testing"
)

// The page runs under default-src 'self' with no inline code: every
// script and style is a file, and every file the page names is there.
func TestPageUnderCSP(t *testing.T) {
	files := Files()
	refs := regexp.MustCompile(`(?:src|href)="([^"]+)"|from "(\./[^"]+)"`)
	inline := regexp.MustCompile(`(?i)<script(?:\s[^>]*)?>\s*[^<\s]|<style|\sstyle=|\son[a-z]+=|javascript:`)
	for _, name := range pageFiles(t, files) {
		b, err := fs.ReadFile(files, name)
		if err != nil {
			t.Fatal(err)
		}
		if name == "index.html" {
			if m := inline.Find(b); m != nil {
				t.Errorf("index.html: inline code or style %q is refused by the CSP", m)
			}
		}
		for _, m := range refs.FindAllSubmatch(b, -1) {
			ref := string(m[1]) + string(m[2])
			target := path.Join(path.Dir(name), ref)
			if strings.Contains(ref, "://") || strings.HasPrefix(ref, "/") {
				t.Errorf("%s names %s: the console loads only its own files, by relative path", name, ref)
			} else if _, err := fs.Stat(files, target); err != nil {
				t.Errorf("%s names %s: %v", name, ref, err)
			}
		}
	}
}

// pageFiles are index.html and the page's own modules (not the vendored
// files): every one of them names only files that are there.
func pageFiles(t *testing.T, files fs.FS) []string {
	t.Helper()
	names, err := fs.Glob(files, "*.js")
	if err != nil {
		t.Fatal(err)
	}
	return append([]string{"index.html"}, names...)
}
