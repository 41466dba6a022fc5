//go:build linux

package token

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"log/slog"
	"os"

	"golang.org/x/sys/unix"
)

// watchMask covers every way the token file can change: replaced by a
// rename (how Store writes it), written in place, removed or renamed away;
// and the directory itself going away, which ends the watch.
const watchMask = unix.IN_MOVED_TO | unix.IN_CLOSE_WRITE | unix.IN_DELETE | unix.IN_MOVED_FROM |
	unix.IN_DELETE_SELF | unix.IN_MOVE_SELF | unix.IN_ONLYDIR

// Watch reloads the token file whenever it changes and hands each new
// Table to onChange. It watches the state directory with inotify rather
// than the file, since every update replaces the file by a rename, and
// it does not poll: a change is applied as soon as the kernel reports it.
//
// Once the watch is in place, Watch reloads once and calls onChange, so
// that a change made between the caller's Load and Watch is not missed.
// A file that does not decode is logged and skipped: the caller keeps
// its previous Table. Watch returns nil when ctx is done, or an error
// when it cannot watch (the directory is missing or was removed).
func (s *Store) Watch(ctx context.Context, log *slog.Logger, onChange func(*Table)) error {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	fd, err := unix.InotifyInit1(unix.IN_CLOEXEC | unix.IN_NONBLOCK)
	if err != nil {
		return fmt.Errorf("watch tokens: inotify: %w", err)
	}
	if _, err := unix.InotifyAddWatch(fd, s.dir, watchMask); err != nil {
		unix.Close(fd)
		return fmt.Errorf("watch %s: %w", s.dir, err)
	}
	// A non-blocking fd gives a File that the runtime poller serves, so
	// that closing it when ctx is done ends a pending Read.
	f := os.NewFile(uintptr(fd), "inotify:"+s.dir)
	defer f.Close()
	stop := context.AfterFunc(ctx, func() { f.Close() })
	defer stop()

	s.reload(log, onChange)
	buf := make([]byte, 64*1024)
	for {
		n, err := f.Read(buf)
		if ctx.Err() != nil {
			return nil
		}
		if err != nil {
			return fmt.Errorf("watch %s: %w", s.dir, err)
		}
		changed, err := scanEvents(buf[:n])
		if err != nil {
			return fmt.Errorf("watch %s: %w", s.dir, err)
		}
		if changed {
			s.reload(log, onChange)
		}
	}
}

// reload loads the file and hands it on, or logs why it could not.
func (s *Store) reload(log *slog.Logger, onChange func(*Table)) {
	t, err := s.Load()
	if err != nil {
		log.Error("token file rejected, keeping the previous tokens", "path", s.Path(), "err", err)
		return
	}
	log.Debug("tokens loaded", "path", s.Path(), "tokens", t.Len())
	onChange(t)
}

// errDirGone ends a watch whose directory was removed or moved.
var errDirGone = errors.New("state directory removed or moved")

// scanEvents reads a batch of inotify events and reports whether any of
// them touched the token file. Several events in one batch (a burst of
// adds) make one reload.
func scanEvents(b []byte) (changed bool, err error) {
	for len(b) >= unix.SizeofInotifyEvent {
		// struct inotify_event: wd, mask, cookie, len, then len bytes of
		// NUL-padded name.
		mask := binary.NativeEndian.Uint32(b[4:8])
		nameLen := int(binary.NativeEndian.Uint32(b[12:16]))
		end := unix.SizeofInotifyEvent + nameLen
		if end > len(b) {
			return changed, errors.New("short inotify event")
		}
		name := string(bytes.TrimRight(b[unix.SizeofInotifyEvent:end], "\x00"))
		b = b[end:]
		switch {
		case mask&(unix.IN_DELETE_SELF|unix.IN_MOVE_SELF|unix.IN_IGNORED) != 0:
			return changed, errDirGone
		case mask&unix.IN_Q_OVERFLOW != 0:
			// Events were lost; one of them may have been ours.
			changed = true
		case name == FileName:
			changed = true
		}
	}
	return changed, nil
}
