package audit

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"

	"golang.org/x/sys/unix"
)

// List returns up to limit entries (all when limit <= 0) with seq > since,
// in seq order, across the rotated files, each as the line is on disk.
// Lines that do not parse, or whose seq is out of order, are skipped and
// counted in skipped; a line that starts with a seq <= since is passed
// over unchecked. A last line still being written is left for later.
//
// List needs neither the writer nor the exclusive lock: it opens the files
// under a shared lock, so that no rotation happens between listing them and
// opening them, and reads them after releasing it.
func (l *Log) List(since uint64, limit int) (entries []json.RawMessage, skipped int, err error) {
	files, err := l.openForList(since)
	if err != nil {
		return nil, 0, fmt.Errorf("list audit log: %w", err)
	}
	defer func() {
		for _, f := range files {
			f.Close()
		}
		l.skipped.Add(uint64(skipped))
	}()
	top := since // the highest seq returned
	for i, f := range files {
		current := i == len(files)-1 && filepath.Base(f.Name()) == fileName
		lr := newLineReader(f)
		for limit <= 0 || len(entries) < limit {
			line, complete, err := lr.next()
			if err == io.EOF {
				break
			}
			if err != nil {
				return nil, skipped, fmt.Errorf("list audit log: read %s: %w", f.Name(), err)
			}
			if !complete && current {
				break
			}
			if seq, ok := leadingSeq(line); ok && seq <= since {
				continue // before the range: no need to check the rest
			}
			seq, ok := parseLine(line)
			switch {
			case !ok || !complete:
				skipped++
			case seq <= since:
			case seq <= top:
				skipped++
			default:
				top = seq
				entries = append(entries, json.RawMessage(append([]byte(nil), line...)))
			}
		}
	}
	return entries, skipped, nil
}

// openForList opens, oldest first, the rotated files that may hold seqs
// after since, and the current file.
func (l *Log) openForList(since uint64) (files []*os.File, err error) {
	lockf, err := os.OpenFile(filepath.Join(l.dir, lockName), os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, err
	}
	defer lockf.Close() // releases the lock
	if err := flock(lockf, unix.LOCK_SH); err != nil {
		return nil, fmt.Errorf("lock %s: %w", lockf.Name(), err)
	}
	rot, err := listRotated(l.dir)
	if err != nil {
		return nil, err
	}
	// Every seq in rot[i] is below rot[i+1].seq.
	start := 0
	for i := range len(rot) - 1 {
		if rot[i+1].seq <= since+1 {
			start = i + 1
		}
	}
	defer func() {
		if err != nil {
			for _, f := range files {
				f.Close()
			}
			files = nil
		}
	}()
	for _, r := range rot[start:] {
		f, err := os.Open(filepath.Join(l.dir, r.name))
		if err != nil {
			return files, err
		}
		files = append(files, f)
	}
	f, err := os.Open(filepath.Join(l.dir, fileName))
	if errors.Is(err, fs.ErrNotExist) {
		return files, nil
	}
	if err != nil {
		return files, err
	}
	return append(files, f), nil
}
