// Package console serves the operator console: the files of a browser
// page that is an ordinary OpenHAL client of the Hub. The page speaks to
// GET /hal over a WebSocket with the token the operator pastes, so the
// Hub's scopes, device limits, rules, stop, confirmations and audit apply
// to it as to any agent; nothing this package serves needs a token, and
// none of it is secret.
//
// The files are embedded in the binary (no internet needed: no CDN, no
// outside fonts), or read from a folder on disk for development, so that
// an edit shows on the next reload with no rebuild.
package console

import (
	"embed"
	"errors"
	"fmt"
	"io/fs"
	"net/http"
	"os"
)

// embedded holds web/: index.html, the scripts, style.css and the npm
// files in vendor/ with their licences. The vendoring's own manifest and
// notes (vendor/vendor.json, VENDOR.md) stay in the source tree: the
// browser never asks for them, and the binary's size is budgeted
// (docs/size.md).
//
//go:embed web/*.html web/*.js web/*.css web/*.svg web/vendor/*/*
var embedded embed.FS

// Options choose where the console's files come from.
type Options struct {
	// Dir, when set, is a folder whose files are served instead of the
	// embedded ones, read at each request (development: `gateway run
	// --console-dir internal/console/web`). It must hold index.html.
	Dir string
}

// Files returns the embedded files, rooted at the console's folder
// (index.html at the top).
func Files() fs.FS {
	sub, err := fs.Sub(embedded, "web")
	if err != nil {
		panic(err) // "web" is a valid path: fs.Sub cannot fail on it
	}
	return sub
}

// New returns the handler that serves the console's files, to be mounted
// at GET / beside the Hub's own routes (halhub.HTTPOptions.Console).
func New(opt Options) (http.Handler, error) {
	if opt.Dir == "" {
		files := Files()
		etags, err := hashFiles(files)
		if err != nil {
			return nil, fmt.Errorf("console: hash the embedded files: %w", err)
		}
		return &handler{files: files, etags: etags}, nil
	}
	st, err := os.Stat(opt.Dir)
	if err != nil {
		return nil, fmt.Errorf("console folder %s: %w", opt.Dir, err)
	}
	if !st.IsDir() {
		return nil, fmt.Errorf("console folder %s: not a folder", opt.Dir)
	}
	files := os.DirFS(opt.Dir)
	if _, err := fs.Stat(files, "index.html"); err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, fmt.Errorf("console folder %s: no index.html (want the folder that holds it, such as internal/console/web)", opt.Dir)
		}
		return nil, fmt.Errorf("console folder %s: %w", opt.Dir, err)
	}
	return &handler{files: files}, nil
}
