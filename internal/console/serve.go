package console

import (
	"io"
	"io/fs"
	"net/http"
	"path"
	"strings"
)

// handler serves the files of one fs.FS: "/" is index.html, any other
// path a file by its name. Folders, hidden names and names that are not
// files are 404: nothing is listed.
type handler struct {
	files fs.FS
	etags map[string]string // by file name; nil when served from disk
}

// ServeHTTP serves one file, with the security headers on every answer.
// The mux mounts it for GET (and so HEAD) only.
func (h *handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	setSecurityHeaders(w.Header(), r.Host)
	name, ok := fileName(r.URL.Path)
	if !ok {
		http.NotFound(w, r)
		return
	}
	f, err := h.files.Open(name)
	if err != nil {
		http.NotFound(w, r)
		return
	}
	defer f.Close()
	st, err := f.Stat()
	rs, seekable := f.(io.ReadSeeker)
	if err != nil || !st.Mode().IsRegular() || !seekable {
		http.NotFound(w, r)
		return
	}
	w.Header().Set("Content-Type", contentType(name))
	// Always revalidate: by ETag for the embedded files, by modification
	// time for those on disk (which may change under the page).
	w.Header().Set("Cache-Control", "no-cache")
	if etag := h.etags[name]; etag != "" {
		w.Header().Set("ETag", etag)
	}
	http.ServeContent(w, r, name, st.ModTime(), rs)
}

// fileName turns a URL path into the name of a file of the console's
// fs.FS, or reports false for a path that names none: a folder (ending in
// "/"), a name with "." or ".." or empty elements, a hidden name.
func fileName(urlPath string) (string, bool) {
	if urlPath == "/" {
		return "index.html", true
	}
	name, ok := strings.CutPrefix(urlPath, "/")
	if !ok || !fs.ValidPath(name) || name == "." {
		return "", false
	}
	for _, elem := range strings.Split(name, "/") {
		if strings.HasPrefix(elem, ".") {
			return "", false
		}
	}
	return name, true
}

// contentType is the Content-Type of a console file, from its extension.
// It does not ask the system's MIME tables, which differ between
// machines; an ES module served as anything but JavaScript does not run.
func contentType(name string) string {
	switch path.Ext(name) {
	case ".html":
		return "text/html; charset=utf-8"
	case ".js", ".mjs":
		return "text/javascript; charset=utf-8"
	case ".css":
		return "text/css; charset=utf-8"
	case ".json":
		return "application/json"
	case ".svg":
		return "image/svg+xml"
	case ".png":
		return "image/png"
	case ".ico":
		return "image/x-icon"
	case ".md", ".txt", "":
		return "text/plain; charset=utf-8" // LICENSE, VENDOR.md
	}
	return "application/octet-stream"
}
