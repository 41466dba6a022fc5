//go:build unix

package statedir

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"
)

// LockName is the lock file in the state directory.
const LockName = "gateway.lock"

// InUseError is the refusal of a second gateway on a state directory.
type InUseError struct {
	Dir string
	PID int // 0 when the lock file did not say
}

func (e *InUseError) Error() string {
	if e.PID == 0 {
		return fmt.Sprintf("state directory %s is in use by another gateway", e.Dir)
	}
	return fmt.Sprintf("state directory %s is in use by gateway pid %d", e.Dir, e.PID)
}

// Lock is the lock of one gateway on its state directory, held until
// Close (or the process's end).
type Lock struct {
	dir   string
	f     *os.File
	fi    os.FileInfo // f's, to tell whether it is still the file at its path
	dirfi os.FileInfo // the directory's when it was locked
}

// Take locks dir for this process and writes its pid in the lock file.
// A directory another live process has locked gives an *InUseError.
func Take(dir string) (*Lock, error) {
	l := &Lock{dir: dir}
	if err := l.take(); err != nil {
		return nil, err
	}
	return l, nil
}

// take locks the lock file at the path and notes it and its directory.
func (l *Lock) take() error {
	f, err := lockFile(l.dir)
	if err != nil {
		return err
	}
	fi, err := f.Stat()
	if err == nil {
		l.dirfi, err = os.Stat(l.dir)
	}
	if err != nil {
		f.Close()
		return fmt.Errorf("lock state directory: %w", err)
	}
	if l.f != nil {
		l.f.Close()
	}
	l.f, l.fi = f, fi
	return nil
}

// lockFile opens dir's lock file, locks it without waiting, and writes
// this process's pid in it.
func lockFile(dir string) (*os.File, error) {
	path := filepath.Join(dir, LockName)
	// O_CLOEXEC (os sets it): no adapter inherits the lock.
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return nil, fmt.Errorf("lock state directory: %w", err)
	}
	if err := flock(f, unix.LOCK_EX|unix.LOCK_NB); err != nil {
		f.Close()
		if errors.Is(err, unix.EWOULDBLOCK) {
			return nil, &InUseError{Dir: dir, PID: readPID(path)}
		}
		return nil, fmt.Errorf("lock %s: %w", path, err)
	}
	pid := []byte(strconv.Itoa(os.Getpid()) + "\n")
	if err := f.Truncate(0); err == nil {
		_, err = f.WriteAt(pid, 0)
	}
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("write pid to %s: %w", path, err)
	}
	return f, nil
}

// readPID is the pid in a lock file, 0 when it holds none (its owner has
// not written it yet).
func readPID(path string) int {
	b, err := os.ReadFile(path)
	if err != nil {
		return 0
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil || pid <= 0 {
		return 0
	}
	return pid
}

// Held returns nil while the lock file at its path is the one this Lock
// holds: the directory was not removed, moved away or replaced, nor the
// lock file removed. Otherwise it says what it found.
func (l *Lock) Held() error {
	st, err := os.Stat(filepath.Join(l.dir, LockName))
	switch {
	case errors.Is(err, fs.ErrNotExist):
		if _, derr := os.Stat(l.dir); errors.Is(derr, fs.ErrNotExist) {
			return fmt.Errorf("state directory %s was removed", l.dir)
		}
		return fmt.Errorf("state directory %s lost its %s (removed or emptied)", l.dir, LockName)
	case err != nil:
		return fmt.Errorf("state directory %s: %w", l.dir, err)
	case !os.SameFile(st, l.fi):
		return fmt.Errorf("state directory %s was replaced (removed or moved, and made again)", l.dir)
	}
	return nil
}

// Retake locks the directory again when it was made again (removed or
// moved away, and a new one made at its path): the directory is this
// gateway's again, or an *InUseError says whose it became. In the
// directory it locked at first it does nothing: a lock file removed from
// there (or a directory emptied, or being removed, which a new lock file
// would keep from being removed) stays lost until a restart.
func (l *Lock) Retake() error {
	st, err := os.Stat(l.dir)
	if err != nil {
		return fmt.Errorf("state directory %s: %w", l.dir, err)
	}
	if os.SameFile(st, l.dirfi) {
		return errors.New("restart the gateway to lock it again")
	}
	return l.take()
}

// Dir is the locked directory.
func (l *Lock) Dir() string { return l.dir }

// Close releases the lock. The pid stays in the file: it is read only
// while the file is locked.
func (l *Lock) Close() error { return l.f.Close() }

func flock(f *os.File, how int) error {
	raw, err := f.SyscallConn()
	if err != nil {
		return err
	}
	var ferr error
	err = raw.Control(func(fd uintptr) {
		for {
			if ferr = unix.Flock(int(fd), how); ferr != unix.EINTR {
				return
			}
		}
	})
	if err != nil {
		return err
	}
	return ferr
}
