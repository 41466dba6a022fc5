package statedir

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"golang.org/x/sys/unix"
)

// Masks of the two inotify watches: the directory itself (removed,
// moved, its mode or owner changed) and the files in it (written,
// replaced by a rename, removed, moved away, their mode changed); and its
// parent, where a removed directory is made again.
const (
	dirMask = unix.IN_DELETE_SELF | unix.IN_MOVE_SELF | unix.IN_ATTRIB |
		unix.IN_CLOSE_WRITE | unix.IN_MOVED_TO | unix.IN_DELETE | unix.IN_MOVED_FROM | unix.IN_ONLYDIR
	parentMask = unix.IN_CREATE | unix.IN_MOVED_TO | unix.IN_ONLYDIR
)

// kernelWatch is the inotify instance and its two watch descriptors (-1:
// none), under Watcher.mu.
type kernelWatch struct {
	f               *os.File
	fd              int
	dirWD, parentWD int
}

func (w *Watcher) start() error {
	fd, err := unix.InotifyInit1(unix.IN_CLOEXEC | unix.IN_NONBLOCK)
	if err != nil {
		return fmt.Errorf("watch state directory: inotify: %w", err)
	}
	// A non-blocking fd gives a File that the runtime poller serves:
	// closing it when Run's ctx ends ends a pending Read.
	w.kw = kernelWatch{f: os.NewFile(uintptr(fd), "inotify:"+w.dir), fd: fd, dirWD: -1, parentWD: -1}
	dir := filepath.Clean(w.dir)
	if w.kw.parentWD, err = unix.InotifyAddWatch(fd, filepath.Dir(dir), parentMask); err != nil {
		w.kw.parentWD = -1
		w.log.Warn("state directory: cannot watch its parent; a directory made again is seen at the next probe", "err", err)
	}
	if _, err := w.watchDir(); err != nil {
		w.kw.f.Close()
		return fmt.Errorf("watch state directory %s: %w", dir, err)
	}
	return nil
}

// watchDir watches the directory at its path, and reports whether that
// is another one than was watched (made again).
func (w *Watcher) watchDir() (again bool, err error) {
	wd, err := unix.InotifyAddWatch(w.kw.fd, filepath.Clean(w.dir), dirMask)
	if err != nil {
		return false, err
	}
	again = wd != w.kw.dirWD
	w.kw.dirWD = wd
	return again, nil
}

// Rewatch watches the directory at its path again, when it is another
// one than is watched (made again where the parent's watch could not see
// it), and then tells every subscriber. The Monitor calls it once it has
// locked a directory made again.
func (w *Watcher) Rewatch() {
	w.mu.Lock()
	again, err := w.watchDir()
	w.mu.Unlock()
	if err == nil && again {
		w.tell(true)
	}
}

// Run reads the kernel's events and tells the subscribers, until ctx
// ends; it returns nil then, or an error when it cannot go on.
func (w *Watcher) Run(ctx context.Context) error {
	defer w.kw.f.Close()
	stop := context.AfterFunc(ctx, func() { w.kw.f.Close() })
	defer stop()
	buf := make([]byte, 64*1024)
	for {
		n, err := w.kw.f.Read(buf)
		if ctx.Err() != nil {
			return nil
		}
		if err != nil {
			return fmt.Errorf("watch state directory %s: %w", w.dir, err)
		}
		if err := w.events(buf[:n]); err != nil {
			return fmt.Errorf("watch state directory %s: %w", w.dir, err)
		}
	}
}

// events reads a batch of events and tells who they concern.
func (w *Watcher) events(b []byte) error {
	for len(b) >= unix.SizeofInotifyEvent {
		// struct inotify_event: wd, mask, cookie, len, then len bytes of
		// NUL-padded name.
		wd := int(int32(binary.NativeEndian.Uint32(b[0:4])))
		mask := binary.NativeEndian.Uint32(b[4:8])
		nameLen := int(binary.NativeEndian.Uint32(b[12:16]))
		end := unix.SizeofInotifyEvent + nameLen
		if end > len(b) {
			w.tell(true) // a short event: everyone looks
			return errors.New("short inotify event")
		}
		name := string(bytes.TrimRight(b[unix.SizeofInotifyEvent:end], "\x00"))
		b = b[end:]
		w.event(wd, mask, name)
	}
	return nil
}

// event tells who one event concerns.
func (w *Watcher) event(wd int, mask uint32, name string) {
	w.mu.Lock()
	dirWD, parentWD := w.kw.dirWD, w.kw.parentWD
	w.mu.Unlock()
	switch {
	case mask&unix.IN_Q_OVERFLOW != 0:
		w.tell(true) // events were lost: any of them may have been one's
	case wd == parentWD:
		if name == filepath.Base(filepath.Clean(w.dir)) {
			w.Rewatch() // made again: watch the new one (fails if gone again)
		}
	case wd != dirWD:
		// A directory watched before: moved away, or its last events.
	case mask&(unix.IN_DELETE_SELF|unix.IN_MOVE_SELF|unix.IN_IGNORED) != 0:
		if mask&unix.IN_MOVE_SELF != 0 {
			// What happens in it, wherever it went, is no more the
			// state directory's.
			unix.InotifyRmWatch(w.kw.fd, uint32(wd))
		}
		w.tell(false, "")
	case name == "":
		w.tell(false, "") // its mode or owner
	default:
		w.tell(false, name)
	}
}
