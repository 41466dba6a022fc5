package audit

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/openhal/gateway/internal/filelock"
)

// ListOptions bound one List.
type ListOptions struct {
	// Limit is the most entries returned; <= 0: no limit.
	Limit int
	// MaxBytes is the most bytes of entries returned, counting a comma
	// between each (as they sit in a JSON array); <= 0: no limit. A page
	// holds at least one entry, whatever its size.
	MaxBytes int
	// Keep, when set, chooses the entries returned; the others are
	// passed over and do not count against Limit nor MaxBytes.
	Keep func(e *Entry) bool
}

// Page is one answer of List.
type Page struct {
	// Entries are the lines, each as it is on disk, except a line written
	// before entries were bounded and longer than EntryLimit, which is
	// returned cut as Append would cut it now.
	Entries []json.RawMessage
	// Skipped counts the lines that do not parse, or whose seq is out of
	// order in their file set.
	Skipped int
	// Next, when not 0, says that more entries remain: pass it as since
	// to List the next page. It is 0 at the end of the log.
	Next uint64
}

// List returns the entries with seq > since, in seq order, across both
// file sets and their rotated files, up to opt's bounds. A line that
// starts with a seq <= since is passed over unchecked. A last line still
// being written is left for later.
//
// List needs neither the writer nor the exclusive lock: it opens the files
// under a shared lock, noting the size of each current file then, and
// reads them after releasing it, no further than those sizes: a seq
// written to one set while the other is being read is left for the next
// List, not returned out of order.
func (l *Log) List(since uint64, opt ListOptions) (Page, error) {
	sets, err := l.openForList(since)
	if err != nil {
		return Page{}, fmt.Errorf("list audit log: %w", err)
	}
	var pg Page
	defer func() {
		for _, r := range sets {
			r.close()
		}
		l.skipped.Add(uint64(pg.Skipped))
	}()
	size := 0
	for {
		seq, line, err := nextOf(sets[:], &pg.Skipped)
		if err != nil {
			return Page{}, fmt.Errorf("list audit log: %w", err)
		}
		if line == nil {
			return pg, nil
		}
		if len(line) > EntryLimit {
			if line = rebound(line); line == nil {
				pg.Skipped++
				continue
			}
		}
		if opt.Keep != nil && !keep(line, opt.Keep) {
			continue
		}
		n := len(pg.Entries)
		if n > 0 && ((opt.Limit > 0 && n >= opt.Limit) || (opt.MaxBytes > 0 && size+1+len(line) > opt.MaxBytes)) {
			pg.Next = seq - 1
			return pg, nil
		}
		if n > 0 {
			size++
		}
		size += len(line)
		pg.Entries = append(pg.Entries, json.RawMessage(line))
	}
}

// nextOf takes the entry with the lowest seq from the sets' readers, or a
// nil line at the end of both. The same seq in both sets (a damaged log)
// is returned once, the other counted in skipped.
func nextOf(sets []*setReader, skipped *int) (uint64, []byte, error) {
	var best *setReader
	for _, r := range sets {
		if err := r.fill(skipped); err != nil {
			return 0, nil, err
		}
		switch {
		case r.head == nil:
		case best == nil || r.headSeq < best.headSeq:
			best = r
		case r.headSeq == best.headSeq:
			r.head = nil
			*skipped++
		}
	}
	if best == nil {
		return 0, nil, nil
	}
	line := best.head
	best.head = nil
	return best.headSeq, line, nil
}

// keep decodes line for the caller's choice; a line that does not decode
// as an entry is not kept.
func keep(line []byte, choose func(*Entry) bool) bool {
	var e Entry
	if json.Unmarshal(line, &e) != nil {
		return false
	}
	return choose(&e)
}

// rebound cuts an entry written before entries were bounded as Append cuts
// one now; nil when it does not decode as an entry.
func rebound(line []byte) []byte {
	var e Entry
	if json.Unmarshal(line, &e) != nil || e.bound() != nil {
		return nil
	}
	b, err := json.Marshal(&e)
	if err != nil || len(b) > EntryLimit {
		return nil
	}
	return b
}

// setReader reads one file set's files in order, entry by entry.
type setReader struct {
	files   []*os.File
	sizes   []int64 // how much of each file to read
	current string  // the set's current file's name
	since   uint64
	top     uint64 // the highest seq taken
	i       int    // the file being read
	lr      *lineReader
	head    []byte // the next entry, a copy; nil when not read yet
	headSeq uint64
}

func (r *setReader) close() {
	for _, f := range r.files {
		f.Close()
	}
}

// fill reads the next entry after since into head, unless one is there.
// At the end, head stays nil.
func (r *setReader) fill(skipped *int) error {
	for r.head == nil && r.i < len(r.files) {
		f := r.files[r.i]
		if r.lr == nil {
			r.lr = newLineReader(io.NewSectionReader(f, 0, r.sizes[r.i]))
		}
		line, complete, err := r.lr.next()
		if err == io.EOF || (!complete && err == nil && r.isCurrent()) {
			r.i, r.lr = r.i+1, nil
			continue
		}
		if err != nil {
			return fmt.Errorf("read %s: %w", f.Name(), err)
		}
		if seq, ok := leadingSeq(line); ok && seq <= r.since {
			continue // before the range: no need to check the rest
		}
		seq, ok := parseLine(line)
		switch {
		case !ok || !complete:
			*skipped++
		case seq <= r.since:
		case seq <= r.top:
			*skipped++
		default:
			r.top = seq
			r.head, r.headSeq = append([]byte(nil), line...), seq
		}
	}
	return nil
}

// isCurrent reports whether the file being read is the set's current
// file, whose last line may still be being written.
func (r *setReader) isCurrent() bool {
	return r.i == len(r.files)-1 && filepath.Base(r.files[r.i].Name()) == r.current
}

// openForList opens, for each set and oldest first, the rotated files
// that may hold seqs after since, and the current file, noting each
// file's size under the shared lock.
func (l *Log) openForList(since uint64) (sets [numClasses]*setReader, err error) {
	lockf, err := os.OpenFile(filepath.Join(l.dir, lockName), os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return sets, err
	}
	defer lockf.Close() // releases the lock
	if err := filelock.Lock(lockf, filelock.Shared); err != nil {
		return sets, fmt.Errorf("lock %s: %w", lockf.Name(), err)
	}
	defer func() {
		if err != nil {
			for _, r := range sets {
				if r != nil {
					r.close()
				}
			}
		}
	}()
	for c, set := range fileSets {
		sets[c] = &setReader{current: set.current, since: since}
		if err := sets[c].open(l.dir, set, since); err != nil {
			return sets, err
		}
	}
	return sets, nil
}

// open opens the set's files that may hold seqs after since.
func (r *setReader) open(dir string, set fileSet, since uint64) error {
	rot, err := set.listRotated(dir)
	if err != nil {
		return err
	}
	// Every seq in rot[i] is below rot[i+1].seq.
	start := 0
	for i := range len(rot) - 1 {
		if rot[i+1].seq <= since+1 {
			start = i + 1
		}
	}
	names := make([]string, 0, len(rot)-start+1)
	for _, f := range rot[start:] {
		names = append(names, f.name)
	}
	for i, name := range append(names, set.current) {
		f, err := os.Open(filepath.Join(dir, name))
		if errors.Is(err, fs.ErrNotExist) && i == len(names) {
			return nil // no current file yet
		}
		if err != nil {
			return err
		}
		fi, err := f.Stat()
		if err != nil {
			f.Close()
			return err
		}
		r.files, r.sizes = append(r.files, f), append(r.sizes, fi.Size())
	}
	return nil
}
