package audit

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"

	"github.com/openhal/gateway/internal/atomicfile"
	"github.com/openhal/gateway/internal/filelock"
)

// writer holds the current file of each set. Only the writer goroutine
// uses it (and Open, before that goroutine starts); every change to the
// files happens under the exclusive lock on audit.lock.
type writer struct {
	l      *Log
	lockf  *os.File
	lockfi os.FileInfo // lockf's, to tell whether it is still the file at its path
	files  [numClasses]setFile
	last   uint64 // the highest seq in the files of both sets
	opened bool   // the first look (at Open) is done
}

// setFile is the current file of one set.
type setFile struct {
	set    fileSet
	f      *os.File    // opened O_APPEND
	fi     os.FileInfo // f as this writer's last write left it; nil: look again
	needNL bool        // the file ends in a line cut short: end it before writing
}

var errNotWritten = errors.New("audit: entry not written")

// open takes the first look at the files: the last seq, and a line cut
// short by a crash, which it ends with a newline.
func (w *writer) open() error {
	for c := range w.files {
		w.files[c].set = fileSets[c]
	}
	unlock, err := w.lockSame()
	if err != nil {
		return err
	}
	defer unlock()
	if err := w.refresh(); err != nil {
		return err
	}
	w.opened = true
	for c := range w.files {
		if w.files[c].needNL {
			if err := w.flush(c, []byte{'\n'}, nil); err != nil {
				return err
			}
		}
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

// batch is what one write puts in each set's file.
type batch struct {
	buf [numClasses][]byte
	in  [numClasses][]*request // requests with lines in buf
}

// write assigns seqs, in order across both sets, and writes the lines of
// reqs under the lock: each set's lines with one write and one sync, in
// as few writes as rotation allows. A request's lines in one set stay in
// one file.
func (w *writer) write(reqs []*request) error {
	unlock, err := w.lockSame()
	if err != nil {
		return err
	}
	defer unlock()
	if err := w.refresh(); err != nil {
		return err
	}
	var b batch
	for c := range w.files {
		if w.files[c].needNL {
			b.buf[c] = append(b.buf[c], '\n')
		}
	}
	for _, r := range reqs {
		if len(r.lines) == 0 {
			continue
		}
		if err := w.add(&b, r); err != nil {
			return err
		}
	}
	for c := range w.files {
		if err := w.flush(c, b.buf[c], b.in[c]); err != nil {
			return err
		}
	}
	return nil
}

// add puts r's lines in b, with their seqs; a set whose file r would
// take past its limit is first flushed with what came before r, and
// rotated.
func (w *writer) add(b *batch, r *request) error {
	var start [numClasses]int
	for c := range start {
		start[c] = len(b.buf[c])
	}
	r.seqs = make([]uint64, len(r.lines))
	for i, rest := range r.lines {
		c := r.class[i]
		r.seqs[i] = w.last + 1 + uint64(i)
		b.buf[c] = append(b.buf[c], `{"seq":`...)
		b.buf[c] = strconv.AppendUint(b.buf[c], r.seqs[i], 10)
		b.buf[c] = append(b.buf[c], rest...)
		b.buf[c] = append(b.buf[c], '\n')
	}
	w.last += uint64(len(r.lines))
	for c := range w.files {
		if len(b.buf[c]) == start[c] {
			continue
		}
		r.parts++
		size := w.files[c].fi.Size()
		if size+int64(len(b.buf[c])) > w.l.opt.MaxFileBytes && size+int64(start[c]) > 0 {
			// r would take the file past its limit: what came before r
			// ends the current file.
			if err := w.flush(c, b.buf[c][:start[c]], b.in[c]); err != nil {
				return err
			}
			if err := w.rotate(c); err != nil {
				return err
			}
			b.buf[c] = b.buf[c][:copy(b.buf[c], b.buf[c][start[c]:])]
			b.in[c] = b.in[c][:0]
		}
		b.in[c] = append(b.in[c], r)
	}
	return nil
}

// flush writes p to set c's file with one write and syncs it; then the
// lines of reqs in that set are on disk, and a request whose every set is
// on disk is done.
func (w *writer) flush(c int, p []byte, reqs []*request) error {
	if len(p) == 0 {
		return nil
	}
	sf := &w.files[c]
	if _, err := sf.f.Write(p); err != nil {
		sf.fi = nil
		return fmt.Errorf("write %s: %w", sf.f.Name(), err)
	}
	w.l.writes.Add(1)
	if err := w.l.opt.SyncFile(sf.f); err != nil {
		sf.fi = nil
		return fmt.Errorf("sync %s: %w", sf.f.Name(), err)
	}
	w.l.syncs.Add(1)
	for _, r := range reqs {
		if r.parts--; r.parts == 0 {
			r.ok = true
			w.l.entries.Add(uint64(len(r.lines)))
		}
	}
	if sf.needNL {
		sf.needNL = false
		w.l.repairs.Add(1)
		w.l.log.Warn("audit log: ended a line cut short", "file", sf.f.Name())
	}
	fi, err := sf.f.Stat()
	if err != nil {
		// The lines are on disk; the next batch looks at the file again.
		sf.fi = nil
		w.l.log.Warn("audit log: stat after write", "err", err)
		return nil
	}
	sf.fi = fi
	return nil
}

// refresh makes sure each set's file is its current file and, when one is
// not as this writer's last write left it (another process wrote or
// rotated it, or a write failed), reads the last seq and the last byte
// again. Both sets are looked at: another process's entries in either
// take seqs.
func (w *writer) refresh() error {
	for c := range w.files {
		if err := w.refreshSet(c); err != nil {
			return err
		}
	}
	return nil
}

func (w *writer) refreshSet(c int) error {
	sf := &w.files[c]
	path := filepath.Join(w.l.dir, sf.set.current)
	st, err := os.Stat(path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		if err := w.create(c); err != nil {
			return err
		}
	case err != nil:
		return err
	case sf.f == nil || sf.fi == nil || !os.SameFile(st, sf.fi):
		f, err := os.OpenFile(path, os.O_RDWR|os.O_APPEND, 0)
		if err != nil {
			return err
		}
		sf.setFile(f)
	case st.Size() == sf.fi.Size() && st.ModTime().Equal(sf.fi.ModTime()):
		return nil
	}
	if w.opened {
		w.l.resyncs.Add(1)
	}
	return w.resync(c)
}

// resync reads set c's last seq (from its current file, or its newest
// rotated file that has one) and whether the file ends in a newline.
func (w *writer) resync(c int) error {
	sf := &w.files[c]
	fi, err := sf.f.Stat()
	if err != nil {
		return err
	}
	last, found, err := lastSeqOf(sf.f, fi.Size())
	if err != nil {
		return fmt.Errorf("read %s: %w", sf.f.Name(), err)
	}
	if !found {
		if last, err = sf.set.lastRotatedSeq(w.l.dir); err != nil {
			return err
		}
	}
	w.last = max(w.last, last)
	sf.needNL = false
	if fi.Size() > 0 {
		b := make([]byte, 1)
		if _, err := sf.f.ReadAt(b, fi.Size()-1); err != nil {
			return fmt.Errorf("read %s: %w", sf.f.Name(), err)
		}
		sf.needNL = b[0] != '\n'
	}
	sf.fi = fi
	w.l.lastSeq.Store(w.last)
	return nil
}

// create creates set c's current file and syncs the directory, which also
// makes a rename that came before it durable.
func (w *writer) create(c int) error {
	sf := &w.files[c]
	f, err := os.OpenFile(filepath.Join(w.l.dir, sf.set.current), os.O_RDWR|os.O_APPEND|os.O_CREATE, 0o600)
	if err != nil {
		return err
	}
	sf.setFile(f)
	return atomicfile.SyncDir(w.l.dir)
}

func (sf *setFile) setFile(f *os.File) {
	if sf.f != nil {
		sf.f.Close()
	}
	sf.f, sf.fi = f, nil
}

// rotate renames set c's current file after its first seq, starts a new
// one and deletes the set's oldest rotated files beyond KeepFiles. The
// other set is not touched: no volume of writes rotates a kept entry away.
func (w *writer) rotate(c int) error {
	sf := &w.files[c]
	first, found, err := firstSeqOf(sf.f)
	if err != nil {
		return fmt.Errorf("rotate: read %s: %w", sf.f.Name(), err)
	}
	if !found {
		// No line has a seq: name it after the next one.
		first = w.last + 1
	}
	name, err := sf.set.rotatedName(w.l.dir, first)
	if err != nil {
		return fmt.Errorf("rotate: %w", err)
	}
	sf.fi = nil
	if err := os.Rename(filepath.Join(w.l.dir, sf.set.current), name); err != nil {
		return fmt.Errorf("rotate: %w", err)
	}
	w.l.rotations.Add(1)
	if err := w.create(c); err != nil {
		return fmt.Errorf("rotate: %w", err)
	}
	fi, err := sf.f.Stat()
	if err != nil {
		return fmt.Errorf("rotate: %w", err)
	}
	sf.fi, sf.needNL = fi, false
	w.l.log.Info("audit log rotated", "file", filepath.Base(name), "firstSeq", first)
	w.prune(sf.set)
	return nil
}

// prune deletes the set's oldest rotated files beyond KeepFiles. A
// failure is logged, not returned: the entries are safe, the disk only
// fuller.
func (w *writer) prune(set fileSet) {
	rot, err := set.listRotated(w.l.dir)
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
	if err := filelock.Lock(w.lockf, filelock.Exclusive); err != nil {
		return nil, fmt.Errorf("lock %s: %w", w.lockf.Name(), err)
	}
	return func() {
		if err := filelock.Unlock(w.lockf); err != nil {
			w.l.log.Error("audit log: unlock", "err", err)
		}
	}, nil
}

func (w *writer) close() error {
	var errs []error
	for c := range w.files {
		if f := w.files[c].f; f != nil {
			errs = append(errs, f.Close())
		}
	}
	return errors.Join(append(errs, w.lockf.Close())...)
}

// lockSame takes the lock on the lock file at its path (see
// sameLockFile).
func (w *writer) lockSame() (unlock func(), err error) {
	if err := w.sameLockFile(); err != nil {
		return nil, err
	}
	return w.lock()
}

// sameLockFile makes sure lockf is the file at its path. When the log's
// directory was removed (with the state directory) and the state
// directory made again, a lock on the old, unlinked file would no longer
// exclude the CLI, which locks the new one: the directory is made again
// and the lock file opened anew. The state directory itself is never
// made here: while it is gone, the log fails (and says why), and it
// carries on, with its seqs, once an operator has made it again.
func (w *writer) sameLockFile() error {
	path := filepath.Join(w.l.dir, lockName)
	if w.lockfi == nil {
		fi, err := w.lockf.Stat()
		if err != nil {
			return fmt.Errorf("stat %s: %w", w.lockf.Name(), err)
		}
		w.lockfi = fi
	}
	st, err := os.Stat(path)
	switch {
	case err == nil && os.SameFile(st, w.lockfi):
		return nil
	case err != nil && !errors.Is(err, fs.ErrNotExist):
		return fmt.Errorf("audit log: %w", err)
	}
	if err := os.Mkdir(w.l.dir, 0o700); err == nil {
		w.l.log.Warn("audit log: its directory was removed; made it again", "dir", w.l.dir)
		if err := atomicfile.SyncDir(filepath.Dir(filepath.Clean(w.l.dir))); err != nil {
			return err
		}
	} else if !errors.Is(err, fs.ErrExist) {
		return fmt.Errorf("audit log directory removed: %w", err)
	}
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return fmt.Errorf("audit log: %w", err)
	}
	w.lockf.Close()
	w.lockf, w.lockfi = f, nil
	return nil
}
