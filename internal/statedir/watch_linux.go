package statedir

import (
	"bytes"
	"context"
	"encoding/binary"
	"fmt"
	"os"
	"path/filepath"

	"golang.org/x/sys/unix"
)

// Masks of the two inotify watches: the directory itself (removed, moved,
// its mode or owner changed; its lock file removed or moved away), and
// its parent, where a removed directory is made again.
const (
	dirMask    = unix.IN_DELETE_SELF | unix.IN_MOVE_SELF | unix.IN_ATTRIB | unix.IN_DELETE | unix.IN_MOVED_FROM | unix.IN_ONLYDIR
	parentMask = unix.IN_CREATE | unix.IN_MOVED_TO | unix.IN_ONLYDIR
)

// Watch puts the kernel's watches in place and returns the loop that
// checks the directory whenever the kernel says something that matters
// happened to it, until ctx ends; it does not poll. A parent that cannot
// be watched (it was removed too) leaves the checks to the probe. The
// loop returns nil when ctx ends, or an error when it cannot go on.
func (m *Monitor) Watch(ctx context.Context) (loop func() error, err error) {
	fd, err := unix.InotifyInit1(unix.IN_CLOEXEC | unix.IN_NONBLOCK)
	if err != nil {
		return nil, fmt.Errorf("watch state directory: inotify: %w", err)
	}
	// A non-blocking fd gives a File that the runtime poller serves:
	// closing it when ctx ends ends a pending Read.
	f := os.NewFile(uintptr(fd), "inotify:"+m.lock.Dir())
	dir := filepath.Clean(m.lock.Dir())
	w := &watches{fd: fd, dir: dir, dirWD: -1, parentWD: -1}
	if w.parentWD, err = unix.InotifyAddWatch(fd, filepath.Dir(dir), parentMask); err != nil {
		m.opt.Log.Warn("state directory: cannot watch its parent; a directory made again is seen at the next probe", "err", err)
	}
	if err := w.watchDir(); err != nil {
		f.Close()
		return nil, fmt.Errorf("watch state directory %s: %w", dir, err)
	}
	return func() error {
		defer f.Close()
		stop := context.AfterFunc(ctx, func() { f.Close() })
		defer stop()
		return m.follow(ctx, f, w)
	}, nil
}

// follow reads the events and checks on those that matter.
func (m *Monitor) follow(ctx context.Context, f *os.File, w *watches) error {
	buf := make([]byte, 64*1024)
	for {
		n, err := f.Read(buf)
		if ctx.Err() != nil {
			return nil
		}
		if err != nil {
			return fmt.Errorf("watch state directory %s: %w", w.dir, err)
		}
		if w.matters(buf[:n]) {
			m.Check(ctx)
		}
	}
}

// watches are the watch descriptors of the directory and of its parent.
type watches struct {
	fd              int
	dir             string
	dirWD, parentWD int
}

func (w *watches) watchDir() error {
	wd, err := unix.InotifyAddWatch(w.fd, w.dir, dirMask)
	if err == nil {
		w.dirWD = wd
	}
	return err
}

// matters reads a batch of events and reports whether one of them may
// change the verdict. Events on other files of the directory (the token
// file replaced, the latch written) do not: a failing write that makes
// and removes a temporary file must not set off a check that retries it.
func (w *watches) matters(b []byte) bool {
	matters := false
	for len(b) >= unix.SizeofInotifyEvent {
		wd := int(int32(binary.NativeEndian.Uint32(b[0:4])))
		mask := binary.NativeEndian.Uint32(b[4:8])
		nameLen := int(binary.NativeEndian.Uint32(b[12:16]))
		end := unix.SizeofInotifyEvent + nameLen
		if end > len(b) {
			return true // a short event: look anyway
		}
		name := string(bytes.TrimRight(b[unix.SizeofInotifyEvent:end], "\x00"))
		b = b[end:]
		switch {
		case mask&unix.IN_Q_OVERFLOW != 0:
			matters = true
		case wd == w.parentWD && w.parentWD >= 0:
			if name == filepath.Base(w.dir) {
				w.watchDir() // made again: watch the new one (fails if gone again)
				matters = true
			}
		case mask&(unix.IN_DELETE_SELF|unix.IN_MOVE_SELF|unix.IN_IGNORED) != 0:
			matters = true
		case name == "" && mask&unix.IN_ATTRIB != 0:
			matters = true
		case name == LockName:
			matters = true
		}
	}
	return matters
}
