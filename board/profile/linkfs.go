package profile

import (
	"io/fs"
	"os"
	"path/filepath"
)

// ReadLinkFS is a file system that can read symbolic links, which is all
// FindByController needs beyond fs.FS. It is the part of Go 1.25's
// io/fs.ReadLinkFS that we use, declared here so the module builds with
// Go 1.24 (the Go of Debian 13 and Raspberry Pi OS); any fs.ReadLinkFS
// (os.DirFS and fstest.MapFS from Go 1.25) satisfies it.
type ReadLinkFS interface {
	fs.FS
	// ReadLink returns the destination of the named symbolic link, as
	// fs.ReadLinkFS.ReadLink does.
	ReadLink(name string) (string, error)
}

// DirFS returns the tree rooted at dir as os.DirFS does, with ReadLink,
// which os.DirFS has only from Go 1.25. Like os.DirFS it is a view for
// reading a trusted tree (/sys, /proc), not a sandbox.
func DirFS(dir string) ReadLinkFS {
	return dirFS{FS: os.DirFS(dir), dir: dir}
}

type dirFS struct {
	fs.FS
	dir string
}

// ReadLink reads the link name (slash-separated, relative to the root)
// with os.Readlink, reporting errors with name as os.DirFS does.
func (d dirFS) ReadLink(name string) (string, error) {
	if !fs.ValidPath(name) {
		return "", &fs.PathError{Op: "readlink", Path: name, Err: fs.ErrInvalid}
	}
	target, err := os.Readlink(filepath.Join(d.dir, filepath.FromSlash(name)))
	if err != nil {
		if pe, ok := err.(*fs.PathError); ok {
			pe.Path = name
		}
		return "", err
	}
	return target, nil
}
