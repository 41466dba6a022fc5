//go:build unix

package manifest

import (
	"crypto/sha256"
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

	"golang.org/x/sys/unix"
)

// copyTree copies the regular files and directories of the folder src into
// dst, which exists, and returns the Hash of what it wrote, computed from
// the bytes as they were written rather than read back.
//
// No symlink below src is followed, whenever it appears: each directory is
// opened relative to its parent's descriptor and each entry with
// O_NOFOLLOW, so that an entry swapped for a symlink between being listed
// and being opened (to a file the installer may read and the folder's
// owner may not, such as a token) fails its open instead of being copied,
// and so does a parent directory swapped for one. Each opened entry must
// be the one listed: the same device and inode, of the same kind, and a
// file no larger than listed; what is copied is its size when opened, and
// a file that shrinks or grows while copied is refused. src itself is
// opened as named, symlinks in its path followed: that is the installer's
// choice. Files are copied in Hash's order (bytewise by relative path),
// which is why the hash can be streamed.
//
// A folder over MaxFolderBytes, MaxFolderEntries or MaxFolderDepth is
// refused with ErrTooLarge as soon as the listing shows it.
func copyTree(src, dst string) (string, error) {
	fd, err := unix.Open(src, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return "", &fs.PathError{Op: "open", Path: src, Err: err}
	}
	c := &treeCopy{h: sha256.New()}
	io.WriteString(c.h, hashHeader)
	if err := c.dir(fd, dst, "", 0); err != nil {
		return "", err
	}
	return hex.EncodeToString(c.h.Sum(nil)), nil
}

// treeCopy is one copyTree: its hash and what it has listed so far.
type treeCopy struct {
	h       hash.Hash
	bytes   int64 // the listed sizes of the files
	entries int
}

// entry is one listed entry of a directory.
type entry struct {
	name string
	st   unix.Stat_t
}

func (e entry) isDir() bool { return e.st.Mode&unix.S_IFMT == unix.S_IFDIR }

// sortKey orders a directory's entries so that a depth-first walk meets
// files in bytewise order of their relative paths: a directory's name
// compares with its "/", as its files' paths do ("a.txt" < "a/b" < "a0").
func (e entry) sortKey() string {
	if e.isDir() {
		return e.name + "/"
	}
	return e.name
}

// dir copies the directory open as fd, which it closes, into to, which
// exists; rel is its path in the folder ("" for the folder) and depth the
// number of directories above it below the folder.
func (c *treeCopy) dir(fd int, to, rel string, depth int) error {
	d := os.NewFile(uintptr(fd), rel) // owns fd: closed with d
	defer d.Close()
	list, err := c.list(d, fd, rel)
	if err != nil {
		return err
	}
	for _, e := range list {
		erel := path.Join(rel, e.name)
		eto := filepath.Join(to, e.name)
		if e.isDir() {
			err = c.subdir(fd, e, eto, erel, depth+1)
		} else {
			err = c.file(fd, e, eto, erel)
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// list reads a directory's entries without following any, counts them
// against the limits and sorts them for the walk. Anything but a regular
// file or a directory is refused here.
func (c *treeCopy) list(d *os.File, fd int, rel string) ([]entry, error) {
	var list []entry
	for {
		names, err := d.Readdirnames(256)
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("list %q: %w", slashRel(rel), err)
		}
		if c.entries += len(names); c.entries > MaxFolderEntries {
			return nil, fmt.Errorf("%w: more than %d files and directories (the limit)", ErrTooLarge, MaxFolderEntries)
		}
		for _, name := range names {
			e := entry{name: name}
			erel := path.Join(rel, name)
			if err := unix.Fstatat(fd, name, &e.st, unix.AT_SYMLINK_NOFOLLOW); err != nil {
				return nil, fmt.Errorf("%q: %w: %w", erel, ErrChanged, err)
			}
			switch e.st.Mode & unix.S_IFMT {
			case unix.S_IFDIR:
			case unix.S_IFREG:
				if c.bytes += e.st.Size; c.bytes > MaxFolderBytes {
					return nil, fmt.Errorf("%w: its files hold more than %d MiB (the limit)", ErrTooLarge, MaxFolderBytes>>20)
				}
			case unix.S_IFLNK:
				return nil, fmt.Errorf("%q is a symlink: %w", erel, ErrNotRegular)
			default:
				return nil, fmt.Errorf("%q is a special file: %w", erel, ErrNotRegular)
			}
			list = append(list, e)
		}
	}
	sort.Slice(list, func(i, j int) bool { return list[i].sortKey() < list[j].sortKey() })
	return list, nil
}

// subdir opens the listed directory e of the directory fd, checks that it
// is still the one listed, and copies it into to, which it creates.
func (c *treeCopy) subdir(fd int, e entry, to, rel string, depth int) error {
	if depth > MaxFolderDepth {
		return fmt.Errorf("%w: %q is more than %d directories deep (the limit)", ErrTooLarge, rel, MaxFolderDepth)
	}
	cfd, err := unix.Openat(fd, e.name, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	if err != nil {
		return openError(rel, err)
	}
	var st unix.Stat_t
	if err := unix.Fstat(cfd, &st); err != nil || st.Dev != e.st.Dev || st.Ino != e.st.Ino {
		unix.Close(cfd)
		return fmt.Errorf("%q: %w: another directory was opened than the one listed", rel, ErrChanged)
	}
	if err := os.Mkdir(to, 0o755); err != nil {
		unix.Close(cfd)
		return err
	}
	// The umask may have narrowed the mode; the adapter's user must read it.
	if err := os.Chmod(to, 0o755); err != nil {
		unix.Close(cfd)
		return err
	}
	return c.dir(cfd, to, rel, depth)
}

// file copies the listed regular file e of the directory fd to to, and
// feeds it to the hash. The open does not follow a symlink nor wait on a
// FIFO, and the opened file must be the one listed, no larger.
func (c *treeCopy) file(fd int, e entry, to, rel string) (err error) {
	ffd, err := unix.Openat(fd, e.name, unix.O_RDONLY|unix.O_NOFOLLOW|unix.O_NONBLOCK|unix.O_NOCTTY|unix.O_CLOEXEC, 0)
	if err != nil {
		return openError(rel, err)
	}
	in := os.NewFile(uintptr(ffd), rel) // owns ffd
	defer in.Close()
	var st unix.Stat_t
	if err := unix.Fstat(ffd, &st); err != nil {
		return fmt.Errorf("stat %q: %w", rel, err)
	}
	if st.Mode&unix.S_IFMT != unix.S_IFREG || st.Dev != e.st.Dev || st.Ino != e.st.Ino || st.Size > e.st.Size {
		return fmt.Errorf("%q: %w: the file opened is not the regular file listed", rel, ErrChanged)
	}
	mode := installedMode(fs.FileMode(st.Mode & 0o777))
	out, err := os.OpenFile(to, os.O_WRONLY|os.O_CREATE|os.O_EXCL, mode)
	if err != nil {
		return err
	}
	defer func() {
		if cerr := out.Close(); err == nil {
			err = cerr
		}
	}()
	// The umask may have narrowed the mode; the copy must have it exactly.
	if err := out.Chmod(mode); err != nil {
		return err
	}
	hashFileHeader(c.h, rel, mode, st.Size)
	if _, err := io.CopyN(io.MultiWriter(out, c.h), in, st.Size); err != nil {
		return fmt.Errorf("%q: %w: %w", rel, ErrChanged, err)
	}
	var b [1]byte
	if n, _ := in.Read(b[:]); n != 0 {
		return fmt.Errorf("%q: %w: it grew while copied", rel, ErrChanged)
	}
	return out.Sync()
}

// openError says why an entry listed a moment ago could not be opened: a
// symlink or another kind of entry now stands in its place, or it is gone.
func openError(rel string, err error) error {
	switch {
	case errors.Is(err, unix.ELOOP), errors.Is(err, unix.ENOTDIR):
		return fmt.Errorf("%q was replaced (by a symlink or another kind of entry) while the folder was copied: %w", rel, ErrNotRegular)
	case errors.Is(err, unix.ENOENT):
		return fmt.Errorf("%q: %w: it is gone", rel, ErrChanged)
	}
	return fmt.Errorf("open %q: %w", rel, err)
}

func slashRel(rel string) string {
	if rel == "" {
		return "."
	}
	return rel
}
