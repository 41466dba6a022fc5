package manifest

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"hash"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"sort"
)

// ErrNotRegular is wrapped by the error for a folder entry that is neither
// a regular file nor a directory.
//
// Symlinks are refused, at install and when hashing: a link's target may
// lie outside the folder, where the hash cannot follow it, and hashing
// only the link's text would let the target change unseen. An author
// copies the file into the folder instead. Devices, sockets and pipes are
// refused for the same reason: their content is not a file's.
var ErrNotRegular = errors.New("not a regular file or directory")

// files lists the regular files under dir by their slash-separated
// relative paths, sorted bytewise (not in walk order, which sorts per
// directory: "a/b" must come after "a.txt" everywhere). Any other kind of
// entry is an error naming it.
func files(dir string) ([]string, error) {
	var list []string
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			return nil
		}
		rel, err := filepath.Rel(dir, p)
		if err != nil {
			return err
		}
		rel = filepath.ToSlash(rel)
		if !d.Type().IsRegular() {
			what := "special file"
			if d.Type()&fs.ModeSymlink != 0 {
				what = "symlink"
			}
			return fmt.Errorf("%q is a %s: %w", rel, what, ErrNotRegular)
		}
		list = append(list, rel)
		return nil
	})
	if err != nil {
		return nil, err
	}
	sort.Strings(list)
	return list, nil
}

// checkTree reports the entries of an adapter folder that cannot be
// installed, but exec, whose faults checkExec has reported.
func checkTree(dir, exec string) Errors {
	var errs Errors
	filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		rel, _ := filepath.Rel(dir, p)
		rel = filepath.ToSlash(rel)
		switch {
		case localExec(exec) && rel == path.Clean(exec):
		case err != nil:
			errs.Add("", "%v", err)
		case d.Type()&fs.ModeSymlink != 0:
			errs.Add("", "%q is a symlink: symlinks are refused, copy the file into the folder", rel)
		case !d.IsDir() && !d.Type().IsRegular():
			errs.Add("", "%q is not a regular file or directory", rel)
		}
		return nil
	})
	return errs
}

// Hash is one SHA-256 over the folder dir, as lowercase hex: for every
// regular file, in bytewise order of its slash-separated relative path,
// the path, whether it is executable, and the content. Each is framed by
// its length, so that no two different folders give the same stream.
// Directories themselves (their modes, empty ones) are not hashed: only
// what can run or be read is. Of a file's mode only "executable by
// anyone" counts: a chmod -x is a change, a chmod g+w is not (the rest of
// the mode is umask noise between machines). A symlink or other special
// entry is an error wrapping ErrNotRegular.
//
// Stream: "adapter-folder-v1\n", then per file:
//
//	uint64 len(path) | path | byte exec (0 or 1) | uint64 len(content) | content
//
// with big-endian lengths.
func Hash(dir string) (string, error) {
	list, err := files(dir)
	if err != nil {
		return "", fmt.Errorf("hash adapter folder %s: %w", dir, err)
	}
	h := sha256.New()
	io.WriteString(h, hashHeader)
	for _, rel := range list {
		if err := hashFile(h, dir, rel); err != nil {
			return "", fmt.Errorf("hash adapter folder %s: %w", dir, err)
		}
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

func hashFile(h hash.Hash, dir, rel string) error {
	f, err := os.Open(filepath.Join(dir, filepath.FromSlash(rel)))
	if err != nil {
		return err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return err
	}
	if !fi.Mode().IsRegular() {
		return fmt.Errorf("%q: %w", rel, ErrNotRegular)
	}
	size := fi.Size()
	hashFileHeader(h, rel, fi.Mode(), size)
	if _, err := io.CopyN(h, f, size); err != nil {
		return fmt.Errorf("%q changed while hashed: %w", rel, err)
	}
	// A file that grew after Stat would make the framing lie.
	var b [1]byte
	if m, _ := f.Read(b[:]); m != 0 {
		return fmt.Errorf("%q changed while hashed", rel)
	}
	return nil
}

// hashHeader begins Hash's stream.
const hashHeader = "adapter-folder-v1\n"

// hashFileHeader writes a file's framing to Hash's stream: its path,
// whether mode is executable by anyone, and the length of the content
// that must follow.
func hashFileHeader(h hash.Hash, rel string, mode fs.FileMode, size int64) {
	var n [8]byte
	binary.BigEndian.PutUint64(n[:], uint64(len(rel)))
	h.Write(n[:])
	io.WriteString(h, rel)
	exec := byte(0)
	if mode.Perm()&0o111 != 0 {
		exec = 1
	}
	h.Write([]byte{exec})
	binary.BigEndian.PutUint64(n[:], uint64(size))
	h.Write(n[:])
}
