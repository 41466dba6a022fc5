package console

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// From a folder on disk, an edit shows on the next request, with no
// restart (development mode).
func TestServeDir(t *testing.T) {
	dir := t.TempDir()
	index := filepath.Join(dir, "index.html")
	if err := os.WriteFile(index, []byte("<p>one</p>"), 0o644); err != nil {
		t.Fatal(err)
	}
	h, err := New(Options{Dir: dir})
	if err != nil {
		t.Fatal(err)
	}
	w := get(t, h, "GET", "/")
	checkSecurityHeaders(t, "/", w)
	if w.Code != 200 || w.Body.String() != "<p>one</p>" || w.Header().Get("Cache-Control") != "no-cache" {
		t.Fatalf("GET /: %d %q, Cache-Control %q", w.Code, w.Body, w.Header().Get("Cache-Control"))
	}
	if err := os.WriteFile(index, []byte("<p>two</p>"), 0o644); err != nil {
		t.Fatal(err)
	}
	if w := get(t, h, "GET", "/"); w.Body.String() != "<p>two</p>" {
		t.Errorf("GET / after the edit: %q; want the new file", w.Body)
	}
	if err := os.WriteFile(filepath.Join(dir, ".secret"), []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	if w := get(t, h, "GET", "/.secret"); w.Code != 404 {
		t.Errorf("GET /.secret: %d; want 404", w.Code)
	}
}

func TestNewDirRefused(t *testing.T) {
	empty := t.TempDir()
	file := filepath.Join(empty, "index.html.txt")
	if err := os.WriteFile(file, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct{ dir, want string }{
		{filepath.Join(empty, "missing"), "no such file"},
		{file, "not a folder"},
		{empty, "no index.html"},
	} {
		h, err := New(Options{Dir: tc.dir})
		if err == nil || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), tc.dir) {
			t.Errorf("New(Dir: %s) = %v, %v; want an error naming the folder and %q", tc.dir, h, err, tc.want)
		}
	}
}
