package audit

import (
	"bufio"
	"bytes"
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
)

// Files in the log's directory: two file sets (see fileSet) and the lock
// every writer takes.
const lockName = "audit.lock"

// A fileSet is one series of files: the current one, which the writer
// appends to, and those rotated from it. A rotated file is named after the
// first seq it holds, <prefix><seq, 20 digits>.log, so that names sort by
// seq and List can skip the files before since without opening them.
// Should that name be taken (a file with no readable seq was named after
// the next one), "-<n>" is added before ".log".
type fileSet struct {
	current string // the file being written
	prefix  string // of the rotated files' names
}

// Classes of entries, each in its own file set (see Kept).
const (
	classWrites = iota // the high-volume entries: writes, refusals, counts of them
	classKept          // stops, resumes, approvals, rejections, token changes, blocked writes
	numClasses
)

// The two sets, by class. The writes set is the one file set of logs
// written before the kept set existed: an upgraded log is read as it was.
var fileSets = [numClasses]fileSet{
	classWrites: {current: "audit.log", prefix: "audit-"},
	classKept:   {current: "kept.log", prefix: "kept-"},
}

const rotatedEnd = ".log"

// rotated is a rotated file; they sort by (seq, n).
type rotated struct {
	name string
	seq  uint64
	n    int
}

func (set fileSet) parseRotated(name string) (rotated, bool) {
	s, ok := strings.CutPrefix(name, set.prefix)
	if !ok {
		return rotated{}, false
	}
	if s, ok = strings.CutSuffix(s, rotatedEnd); !ok {
		return rotated{}, false
	}
	num, suffix, hasSuffix := strings.Cut(s, "-")
	if len(num) != 20 {
		return rotated{}, false
	}
	seq, err := strconv.ParseUint(num, 10, 64)
	if err != nil {
		return rotated{}, false
	}
	r := rotated{name: name, seq: seq}
	if hasSuffix {
		if r.n, err = strconv.Atoi(suffix); err != nil || r.n < 1 {
			return rotated{}, false
		}
	}
	return r, true
}

// listRotated returns the set's rotated files in dir, oldest first.
func (set fileSet) listRotated(dir string) ([]rotated, error) {
	des, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	var rot []rotated
	for _, de := range des {
		if r, ok := set.parseRotated(de.Name()); ok && de.Type().IsRegular() {
			rot = append(rot, r)
		}
	}
	slices.SortFunc(rot, func(a, b rotated) int {
		return cmp.Or(cmp.Compare(a.seq, b.seq), cmp.Compare(a.n, b.n))
	})
	return rot, nil
}

// rotatedName returns a path, not yet taken, for a rotated file of the
// set whose first seq is first.
func (set fileSet) rotatedName(dir string, first uint64) (string, error) {
	for n := 0; ; n++ {
		name := fmt.Sprintf("%s%020d%s", set.prefix, first, rotatedEnd)
		if n > 0 {
			name = fmt.Sprintf("%s%020d-%d%s", set.prefix, first, n, rotatedEnd)
		}
		p := filepath.Join(dir, name)
		_, err := os.Lstat(p)
		if errors.Is(err, fs.ErrNotExist) {
			return p, nil
		}
		if err != nil {
			return "", err
		}
	}
}

// lastRotatedSeq is the last seq in the set's newest rotated file that
// has one, or 0.
func (set fileSet) lastRotatedSeq(dir string) (uint64, error) {
	rot, err := set.listRotated(dir)
	if err != nil {
		return 0, err
	}
	for _, r := range slices.Backward(rot) {
		seq, found, err := lastSeqIn(filepath.Join(dir, r.name))
		if err != nil {
			return 0, err
		}
		if found {
			return seq, nil
		}
	}
	return 0, nil
}

func lastSeqIn(path string) (uint64, bool, error) {
	f, err := os.Open(path)
	if err != nil {
		return 0, false, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return 0, false, err
	}
	return lastSeqOf(f, fi.Size())
}

// lastSeqOf reads r (size bytes) backwards to the last line that has a
// seq. A line cut short counts when its seq is whole: that seq may not be
// given again.
func lastSeqOf(r io.ReaderAt, size int64) (uint64, bool, error) {
	const chunk = 64 << 10
	pos := size // data is r[pos:pos+len(data)]
	var data []byte
	long := false // the line at the start of data is too long to keep
	for {
		for {
			i := bytes.LastIndexByte(data, '\n')
			if i < 0 && pos > 0 {
				break // the line may start before pos
			}
			if line := data[i+1:]; !long && len(line) <= MaxEntryBytes {
				if seq, ok := lineSeq(line); ok {
					return seq, true, nil
				}
			}
			long = false
			if i < 0 {
				return 0, false, nil
			}
			data = data[:i]
		}
		if len(data) > MaxEntryBytes {
			data, long = nil, true
		}
		n := min(chunk, pos)
		pos -= n
		b := make([]byte, int(n)+len(data))
		if _, err := r.ReadAt(b[:n], pos); err != nil {
			return 0, false, err
		}
		copy(b[n:], data)
		data = b
	}
}

// firstSeqOf reads f from its start to the first line that has a seq.
func firstSeqOf(f *os.File) (uint64, bool, error) {
	lr := newLineReader(io.NewSectionReader(f, 0, 1<<62))
	for {
		line, _, err := lr.next()
		if err == io.EOF {
			return 0, false, nil
		}
		if err != nil {
			return 0, false, err
		}
		if seq, ok := lineSeq(line); ok {
			return seq, true, nil
		}
	}
}

// lineSeq reads the seq of a line that may be cut short: the writer's own
// prefix, {"seq":N, or else the seq of a whole JSON object.
func lineSeq(line []byte) (uint64, bool) {
	if seq, ok := leadingSeq(line); ok {
		return seq, true
	}
	return objectSeq(line)
}

// leadingSeq reads N from a line starting {"seq":N, as the writer writes
// them.
func leadingSeq(line []byte) (uint64, bool) {
	rest, ok := bytes.CutPrefix(line, []byte(`{"seq":`))
	if !ok {
		return 0, false
	}
	i := bytes.IndexByte(rest, ',')
	if i < 1 || i > 20 {
		return 0, false
	}
	seq, err := strconv.ParseUint(string(rest[:i]), 10, 64)
	if err != nil || seq == 0 {
		return 0, false
	}
	return seq, true
}

func objectSeq(line []byte) (uint64, bool) {
	var v struct {
		Seq uint64 `json:"seq"`
	}
	if json.Unmarshal(line, &v) != nil || v.Seq == 0 {
		return 0, false
	}
	return v.Seq, true
}

// parseLine reports whether line is a whole entry, and its seq.
func parseLine(line []byte) (uint64, bool) {
	if !json.Valid(line) {
		return 0, false
	}
	return lineSeq(line)
}

// lineReader reads lines forwards. A line longer than MaxEntryBytes is
// returned empty, so that it fails to parse, without being kept whole in
// memory.
type lineReader struct {
	r   *bufio.Reader
	buf []byte
}

func newLineReader(r io.Reader) *lineReader {
	return &lineReader{r: bufio.NewReaderSize(r, 64<<10)}
}

// next returns the next line without its '\n'; complete is false for a
// last line without one. The line is valid until the next call.
func (lr *lineReader) next() (line []byte, complete bool, err error) {
	lr.buf = lr.buf[:0]
	long := false
	for {
		frag, err := lr.r.ReadSlice('\n')
		if !long {
			lr.buf = append(lr.buf, frag...)
			if len(lr.buf) > MaxEntryBytes+1 {
				lr.buf, long = lr.buf[:0], true
			}
		}
		switch {
		case err == bufio.ErrBufferFull:
			continue
		case err == nil:
			return bytes.TrimSuffix(lr.buf, []byte{'\n'}), true, nil
		case err == io.EOF && (len(lr.buf) > 0 || long):
			return lr.buf, false, nil
		default:
			return nil, false, err
		}
	}
}
