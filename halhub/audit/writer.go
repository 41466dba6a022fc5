package audit

import (
	"errors"
	"fmt"
	"gateway/atomicfile"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"

	"golang.org/x/sys/unix"
)

// writer holds the current file. Only the writer goroutine uses it (and
// Open, before that goroutine starts); every change to the files happens
// under the exclusive lock on audit.lock.
type writer struct {
	l      *Log
	lockf  *os.File
	f      *os.File    // the current file, opened O_APPEND
	fi     os.FileInfo // f as this writer's last write left it; nil: look again
	last   uint64      // the highest seq in the files
	needNL bool        // the file ends in a line cut short: end it before writing
	opened bool        // the first look (at Open) is done
}

var errNotWritten = errors.New("audit: entry not written")

// open takes the first look at the files: the last seq, and a line cut
// short by a crash, which it ends with a newline.
func (w *writer) open() error {
	unlock, err := w.lock()
	if err != nil {
		return err
	}
	defer unlock()
	if err := w.refresh(); err != nil {
		return err
	}
	w.opened = true
	if w.needNL {
		return w.flush([]byte{'\n'}, nil)
	}
	return nil
}

// commit writes the entries of reqs and releases every request, probes
// included.
func (w *writer) commit(reqs []*request) {
	var err error
	for _, r := range reqs {
		if len(r.lines) > 0 {
			if err = w.write(reqs); err != nil {
				w.l.errs.Add(1)
				w.l.log.Error("audit log write failed", "err", err)
			}
			break
		}
	}
	w.l.lastSeq.Store(w.last)
	for _, r := range reqs {
		switch {
		case len(r.lines) == 0: // a probe
		case !r.ok && err != nil:
			r.seqs, r.err = nil, err
		case !r.ok:
			r.seqs, r.err = nil, errNotWritten
		}
		close(r.done)
	}
}

// write assigns seqs and writes the lines of reqs under the lock, in as
// few writes as rotation allows; each request's lines stay in one file.
func (w *writer) write(reqs []*request) error {
	unlock, err := w.lock()
	if err != nil {
		return err
	}
	defer unlock()
	if err := w.refresh(); err != nil {
		return err
	}
	var buf []byte
	if w.needNL {
		buf = append(buf, '\n')
	}
	var inBuf []*request
	for _, r := range reqs {
		if len(r.lines) == 0 {
			continue
		}
		start := len(buf)
		r.seqs = make([]uint64, len(r.lines))
		for i, rest := range r.lines {
			r.seqs[i] = w.last + 1 + uint64(i)
			buf = append(buf, `{"seq":`...)
			buf = strconv.AppendUint(buf, r.seqs[i], 10)
			buf = append(buf, rest...)
			buf = append(buf, '\n')
		}
		if size := w.fi.Size(); size+int64(len(buf)) > w.l.opt.MaxFileBytes && size+int64(start) > 0 {
			// r would take the file past its limit: what came before r
			// ends the current file.
			if err := w.flush(buf[:start], inBuf); err != nil {
				return err
			}
			if err := w.rotate(); err != nil {
				return err
			}
			buf = buf[:copy(buf, buf[start:])]
			inBuf = inBuf[:0]
		}
		w.last += uint64(len(r.lines))
		inBuf = append(inBuf, r)
	}
	return w.flush(buf, inBuf)
}

// flush writes b with one write and syncs the file; then the lines of
// reqs are on disk.
func (w *writer) flush(b []byte, reqs []*request) error {
	if len(b) == 0 {
		return nil
	}
	if _, err := w.f.Write(b); err != nil {
		w.fi = nil
		return fmt.Errorf("write %s: %w", w.f.Name(), err)
	}
	w.l.writes.Add(1)
	if err := w.l.opt.SyncFile(w.f); err != nil {
		w.fi = nil
		return fmt.Errorf("sync %s: %w", w.f.Name(), err)
	}
	w.l.syncs.Add(1)
	for _, r := range reqs {
		r.ok = true
		w.l.entries.Add(uint64(len(r.lines)))
	}
	if w.needNL {
		w.needNL = false
		w.l.repairs.Add(1)
		w.l.log.Warn("audit log: ended a line cut short", "file", w.f.Name())
	}
	fi, err := w.f.Stat()
	if err != nil {
		// The lines are on disk; the next batch looks at the file again.
		w.fi = nil
		w.l.log.Warn("audit log: stat after write", "err", err)
		return nil
	}
	w.fi = fi
	return nil
}

// refresh makes sure w.f is the current file and, when the file is not as
// this writer's last write left it (another process wrote or rotated it,
// or a write failed), reads the last seq and the last byte again.
func (w *writer) refresh() error {
	path := filepath.Join(w.l.dir, fileName)
	st, err := os.Stat(path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		if err := w.create(); err != nil {
			return err
		}
	case err != nil:
		return err
	case w.f == nil || w.fi == nil || !os.SameFile(st, w.fi):
		f, err := os.OpenFile(path, os.O_RDWR|os.O_APPEND, 0)
		if err != nil {
			return err
		}
		w.setFile(f)
	case st.Size() == w.fi.Size() && st.ModTime().Equal(w.fi.ModTime()):
		return nil
	}
	if w.opened {
		w.l.resyncs.Add(1)
	}
	return w.resync()
}

// resync reads the last seq (from the current file, or the newest rotated
// file that has one) and whether the file ends in a newline.
func (w *writer) resync() error {
	fi, err := w.f.Stat()
	if err != nil {
		return err
	}
	last, found, err := lastSeqOf(w.f, fi.Size())
	if err != nil {
		return fmt.Errorf("read %s: %w", w.f.Name(), err)
	}
	if !found {
		if last, err = lastRotatedSeq(w.l.dir); err != nil {
			return err
		}
	}
	w.last = max(w.last, last)
	w.needNL = false
	if fi.Size() > 0 {
		b := make([]byte, 1)
		if _, err := w.f.ReadAt(b, fi.Size()-1); err != nil {
			return fmt.Errorf("read %s: %w", w.f.Name(), err)
		}
		w.needNL = b[0] != '\n'
	}
	w.fi = fi
	w.l.lastSeq.Store(w.last)
	return nil
}

// create creates the current file and syncs the directory, which also
// makes a rename that came before it durable.
func (w *writer) create() error {
	f, err := os.OpenFile(filepath.Join(w.l.dir, fileName), os.O_RDWR|os.O_APPEND|os.O_CREATE, 0o600)
	if err != nil {
		return err
	}
	w.setFile(f)
	return atomicfile.SyncDir(w.l.dir)
}

func (w *writer) setFile(f *os.File) {
	if w.f != nil {
		w.f.Close()
	}
	w.f, w.fi = f, nil
}

// rotate renames the current file after its first seq, starts a new one
// and deletes the oldest rotated files beyond KeepFiles.
func (w *writer) rotate() error {
	first, found, err := firstSeqOf(w.f)
	if err != nil {
		return fmt.Errorf("rotate: read %s: %w", w.f.Name(), err)
	}
	if !found {
		// No line has a seq: name it after the next one.
		first = w.last + 1
	}
	name, err := rotatedName(w.l.dir, first)
	if err != nil {
		return fmt.Errorf("rotate: %w", err)
	}
	w.fi = nil
	if err := os.Rename(filepath.Join(w.l.dir, fileName), name); err != nil {
		return fmt.Errorf("rotate: %w", err)
	}
	w.l.rotations.Add(1)
	if err := w.create(); err != nil {
		return fmt.Errorf("rotate: %w", err)
	}
	fi, err := w.f.Stat()
	if err != nil {
		return fmt.Errorf("rotate: %w", err)
	}
	w.fi, w.needNL = fi, false
	w.l.log.Info("audit log rotated", "file", filepath.Base(name), "firstSeq", first)
	w.prune()
	return nil
}

// prune deletes the oldest rotated files beyond KeepFiles. A failure is
// logged, not returned: the entries are safe, the disk only fuller.
func (w *writer) prune() {
	rot, err := listRotated(w.l.dir)
	if err != nil {
		w.l.log.Warn("audit log: list rotated files", "err", err)
		return
	}
	for _, r := range rot[:max(0, len(rot)-w.l.opt.KeepFiles)] {
		if err := os.Remove(filepath.Join(w.l.dir, r.name)); err != nil {
			w.l.log.Warn("audit log: delete old file", "err", err)
			continue
		}
		w.l.log.Info("audit log: deleted old file", "file", r.name)
	}
}

// lock takes the exclusive lock on audit.lock; unlock releases it.
func (w *writer) lock() (unlock func(), err error) {
	if err := flock(w.lockf, unix.LOCK_EX); err != nil {
		return nil, fmt.Errorf("lock %s: %w", w.lockf.Name(), err)
	}
	return func() {
		if err := flock(w.lockf, unix.LOCK_UN); err != nil {
			w.l.log.Error("audit log: unlock", "err", err)
		}
	}, nil
}

func (w *writer) close() error {
	var err error
	if w.f != nil {
		err = w.f.Close()
	}
	return errors.Join(err, w.lockf.Close())
}
