// Package atomicfile replaces small state files so that a crash or a
// power cut leaves either the old content or the new, never a torn mix:
// the gateway's tokens, its latched emergency stop, its confirmation
// numbers and its certificate all live in such files.
package atomicfile

import (
	"fmt"
	"os"
	"path/filepath"
)

// Write replaces path with data. A temporary file in the same directory,
// created with mode perm from the start (never wider, even for an
// instant), is written and synced, renamed over path, and the directory is
// synced so that the rename itself survives.
func Write(path string, data []byte, perm os.FileMode) (err error) {
	dir := filepath.Dir(path)
	tmp, err := os.CreateTemp(dir, "."+filepath.Base(path)+".tmp*")
	if err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	defer func() {
		if err != nil {
			tmp.Close()
			os.Remove(tmp.Name())
			err = fmt.Errorf("write %s: %w", path, err)
		}
	}()
	// CreateTemp makes the file 0600; a wider perm is applied before any
	// byte is written, a narrower one too.
	if err := tmp.Chmod(perm); err != nil {
		return err
	}
	if _, err := tmp.Write(data); err != nil {
		return err
	}
	if err := tmp.Sync(); err != nil {
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		return err
	}
	return SyncDir(dir)
}

// SyncDir makes the entries of dir (files created, renamed or removed in
// it) durable.
func SyncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return fmt.Errorf("sync %s: %w", dir, err)
	}
	defer d.Close()
	if err := d.Sync(); err != nil {
		return fmt.Errorf("sync %s: %w", dir, err)
	}
	return nil
}
