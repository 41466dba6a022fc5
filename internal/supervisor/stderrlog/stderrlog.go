// Package stderrlog keeps an adapter's standard error in the adapter's own
// rotated log file.
//
// Protocol 1 makes standard error the adapter's log and bounds what it may
// cost the gateway: lines are cut at 8 KiB, at most 1 MiB per second is
// kept (the excess is dropped and a line says how much), and the file is
// rotated at 1 MiB keeping 5 files. None of it goes to the daemon's own log,
// so a chatty or broken adapter can fill neither the gateway's log nor its
// disk, nor its memory: a line is never buffered whole, however long.
package stderrlog

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/openhal/gateway/internal/clock"
)

// Defaults from protocol 1, used for zero fields of Options.
const (
	DefaultMaxLine   = 8 << 10
	DefaultRateBytes = 1 << 20
	DefaultFileBytes = 1 << 20
	DefaultFiles     = 5
)

// stampLayout is RFC 3339 in UTC with a fixed number of fraction digits, so
// that stamped lines align and sort as text.
const stampLayout = "2006-01-02T15:04:05.000000Z07:00"

// Options bound what a Log keeps. A zero field takes the protocol default.
type Options struct {
	// MaxLine is the most bytes of one line that are kept; the rest of the
	// line is discarded as it arrives and the cut is marked.
	MaxLine int
	// RateBytes is how many bytes of lines per second are kept, as a token
	// bucket holding at most one second's worth, so a burst after a quiet
	// second is kept whole. A line costs its kept bytes and newline: the
	// limit is on what the adapter says, not on the stamps added to it, and
	// the dropped-lines notice is not charged, so it is never itself dropped.
	RateBytes int64
	// FileBytes is the size at which the file is rotated: a record that
	// would take the current file past it starts a new one.
	FileBytes int64
	// Files is how many files are kept in all, the current one included.
	Files int
	// Clock stamps lines and drives the rate limit; nil means clock.Real.
	Clock clock.Clock
}

func (o Options) withDefaults() Options {
	if o.MaxLine <= 0 {
		o.MaxLine = DefaultMaxLine
	}
	if o.RateBytes <= 0 {
		o.RateBytes = DefaultRateBytes
	}
	if o.FileBytes <= 0 {
		o.FileBytes = DefaultFileBytes
	}
	if o.Files <= 0 {
		o.Files = DefaultFiles
	}
	if o.Clock == nil {
		o.Clock = clock.Real()
	}
	return o
}

// Stats counts what a Log has done since New.
type Stats struct {
	Lines        uint64 `json:"lines"`        // adapter lines written
	Cut          uint64 `json:"cut"`          // of those, lines cut at MaxLine
	CutBytes     uint64 `json:"cutBytes"`     // bytes discarded by cuts
	DroppedLines uint64 `json:"droppedLines"` // lines dropped over the rate limit
	DroppedBytes uint64 `json:"droppedBytes"` // their bytes as the adapter wrote them, newline included
	Rotations    uint64 `json:"rotations"`    // files rotated
}

// Log is one adapter's log file set. Its methods are safe for concurrent
// use; lines of concurrent Copy calls interleave whole.
type Log struct {
	dir, name string
	opt       Options

	mu        sync.Mutex
	f         *os.File
	w         *bufio.Writer
	size      int64 // of the current file, buffered bytes included
	tokens    float64
	refilled  time.Time
	pendLines uint64 // dropped since the last line written
	pendBytes uint64
	stats     Stats
	closed    bool
}

// New opens (creating or appending to) <dir>/<name>.log. The directory is
// created if missing, mode 0700, since adapter logs may hold anything the
// adapter prints.
func New(dir, name string, opts Options) (*Log, error) {
	if name == "" || name == "." || name == ".." || strings.ContainsAny(name, "/\x00") {
		return nil, fmt.Errorf("stderrlog: invalid log name %q", name)
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("stderrlog: creating log directory: %w", err)
	}
	o := opts.withDefaults()
	l := &Log{
		dir:      dir,
		name:     name,
		opt:      o,
		tokens:   float64(o.RateBytes),
		refilled: o.Clock.Now(),
	}
	if err := l.open(); err != nil {
		return nil, err
	}
	return l, nil
}

// path returns the name of file i: 0 is the current file, i>0 rotated ones.
func (l *Log) path(i int) string { return logPath(l.dir, l.name, i) }

func logPath(dir, name string, i int) string {
	p := filepath.Join(dir, name+".log")
	if i > 0 {
		p += "." + strconv.Itoa(i)
	}
	return p
}

func (l *Log) open() error {
	f, err := os.OpenFile(l.path(0), os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o600)
	if err != nil {
		return fmt.Errorf("stderrlog: opening log: %w", err)
	}
	// A file left by an older gateway may have wider permissions.
	if err := f.Chmod(0o600); err != nil {
		f.Close()
		return fmt.Errorf("stderrlog: setting log mode: %w", err)
	}
	st, err := f.Stat()
	if err != nil {
		f.Close()
		return fmt.Errorf("stderrlog: reading log size: %w", err)
	}
	l.f = f
	l.size = st.Size()
	if l.w == nil {
		l.w = bufio.NewWriterSize(f, copyBuffer)
	} else {
		l.w.Reset(f)
	}
	return nil
}

// rotate shifts <name>.log.i to .i+1, dropping the oldest, and starts an
// empty current file. Called with mu held.
func (l *Log) rotate() error {
	if err := l.w.Flush(); err != nil {
		return fmt.Errorf("stderrlog: flushing before rotation: %w", err)
	}
	if err := l.f.Close(); err != nil {
		return fmt.Errorf("stderrlog: closing before rotation: %w", err)
	}
	l.f = nil
	last := l.opt.Files - 1
	if last == 0 {
		if err := os.Remove(l.path(0)); err != nil && !errors.Is(err, os.ErrNotExist) {
			return fmt.Errorf("stderrlog: removing full log: %w", err)
		}
	} else {
		if err := os.Remove(l.path(last)); err != nil && !errors.Is(err, os.ErrNotExist) {
			return fmt.Errorf("stderrlog: removing oldest log: %w", err)
		}
		for i := last - 1; i >= 0; i-- {
			if err := os.Rename(l.path(i), l.path(i+1)); err != nil && !errors.Is(err, os.ErrNotExist) {
				return fmt.Errorf("stderrlog: rotating log: %w", err)
			}
		}
	}
	l.stats.Rotations++
	return l.open()
}

// writeRecord stamps line and appends it. Called with mu held.
func (l *Log) writeRecord(now time.Time, line []byte, cut int) error {
	if l.f == nil {
		// A failed rotation left no file; try again rather than lose
		// everything until restart.
		if err := l.open(); err != nil {
			return err
		}
	}
	var suffix string
	if cut > 0 {
		suffix = " [cut: " + strconv.Itoa(cut) + " bytes]"
	}
	stamp := now.UTC().Format(stampLayout)
	n := int64(len(stamp) + 1 + len(line) + len(suffix) + 1)
	if l.size > 0 && l.size+n > l.opt.FileBytes {
		if err := l.rotate(); err != nil {
			return err
		}
	}
	l.w.WriteString(stamp)
	l.w.WriteByte(' ')
	l.w.Write(line)
	l.w.WriteString(suffix)
	if err := l.w.WriteByte('\n'); err != nil {
		return fmt.Errorf("stderrlog: writing log: %w", err)
	}
	l.size += n
	return nil
}

// writeDropped writes the notice for lines dropped since the last one
// written. Called with mu held.
func (l *Log) writeDropped(now time.Time) error {
	if l.pendLines == 0 {
		return nil
	}
	msg := fmt.Sprintf("[stderrlog] dropped %d lines (%d bytes) over the rate limit", l.pendLines, l.pendBytes)
	l.pendLines, l.pendBytes = 0, 0
	return l.writeRecord(now, []byte(msg), 0)
}

// allow takes cost bytes from the token bucket, refilled for the time since
// it was last refilled. Called with mu held.
func (l *Log) allow(now time.Time, cost int64) bool {
	rate := float64(l.opt.RateBytes)
	if d := now.Sub(l.refilled); d > 0 {
		l.tokens += d.Seconds() * rate
		if l.tokens > rate {
			l.tokens = rate
		}
		l.refilled = now
	}
	// A line bigger than the whole bucket (possible only with a MaxLine
	// above RateBytes) passes when the bucket is full, not never.
	c := float64(cost)
	if c > rate {
		c = rate
	}
	if l.tokens < c {
		return false
	}
	l.tokens -= c
	return true
}

// line takes one complete adapter line: kept is what is left after the cut,
// cut the bytes discarded, raw the length the adapter wrote (newline
// included if there was one).
func (l *Log) line(kept []byte, cut int, raw int) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.closed {
		return errors.New("stderrlog: log is closed")
	}
	now := l.opt.Clock.Now()
	if !l.allow(now, int64(len(kept)+1)) {
		l.pendLines++
		l.pendBytes += uint64(raw)
		l.stats.DroppedLines++
		l.stats.DroppedBytes += uint64(raw)
		return nil
	}
	if err := l.writeDropped(now); err != nil {
		return err
	}
	if err := l.writeRecord(now, kept, cut); err != nil {
		return err
	}
	l.stats.Lines++
	if cut > 0 {
		l.stats.Cut++
		l.stats.CutBytes += uint64(cut)
	}
	return nil
}

// flush writes out buffered records and, at the end of a stream, the notice
// of lines dropped at its end, which no later line would otherwise report.
func (l *Log) flush(final bool) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.closed || l.f == nil {
		return nil
	}
	if final {
		if err := l.writeDropped(l.opt.Clock.Now()); err != nil {
			return err
		}
	}
	if err := l.w.Flush(); err != nil {
		return fmt.Errorf("stderrlog: writing log: %w", err)
	}
	return nil
}

// copyBuffer is the size of Copy's read buffer and of the log file's write
// buffer. Every adapter has both for its whole life, and most write a few
// lines an hour: a line longer than the read buffer is gathered in pieces,
// and a burst is flushed every copyBuffer bytes instead of at its end.
const copyBuffer = 4 << 10

// Copy reads an adapter's standard error until EOF and logs it line by line.
// A last line without a newline is logged at EOF.
//
// Copy keeps reading after a write error, discarding, and returns that error
// at EOF: an adapter whose stderr pipe stopped being read would block in its
// next write, so a full disk must not stall the adapter.
func (l *Log) Copy(r io.Reader) error {
	br := bufio.NewReaderSize(r, copyBuffer)
	max := l.opt.MaxLine
	var buf []byte // grows to the longest line, up to max
	cut, raw := 0, 0
	var werr error
	note := func(err error) {
		if werr == nil && err != nil {
			werr = err
		}
	}
	for {
		// Flush before a read that may block, so the file is current
		// while the adapter is quiet, without a write per line in bursts.
		if br.Buffered() == 0 {
			note(l.flush(false))
		}
		frag, err := br.ReadSlice('\n')
		raw += len(frag)
		end := len(frag) > 0 && frag[len(frag)-1] == '\n'
		if end {
			frag = frag[:len(frag)-1]
		}
		if room := max - len(buf); len(frag) > room {
			cut += len(frag) - room
			frag = frag[:room]
		}
		buf = append(buf, frag...)
		if end || (err != nil && err != bufio.ErrBufferFull && raw > 0) {
			kept, extra := trimRune(buf, cut)
			note(l.line(kept, cut+extra, raw))
			buf, cut, raw = buf[:0], 0, 0
		}
		switch {
		case err == nil, err == bufio.ErrBufferFull:
		case err == io.EOF:
			note(l.flush(true))
			return werr
		default:
			note(l.flush(true))
			if werr != nil {
				return errors.Join(fmt.Errorf("stderrlog: reading stderr: %w", err), werr)
			}
			return fmt.Errorf("stderrlog: reading stderr: %w", err)
		}
	}
}

// trimRune backs a cut line off to a UTF-8 character boundary, so the cut
// does not leave half a character before the marker. It returns the kept
// bytes and how many more were cut.
func trimRune(b []byte, cut int) ([]byte, int) {
	if cut == 0 {
		return b, 0
	}
	for i := len(b) - 1; i >= 0 && i >= len(b)-utf8.UTFMax; i-- {
		if utf8.RuneStart(b[i]) {
			if utf8.FullRune(b[i:]) {
				return b, 0
			}
			return b[:i], len(b) - i
		}
	}
	return b, 0
}

// Tail returns the last n lines across the current and rotated files,
// oldest first, as stored (stamped).
func (l *Log) Tail(n int) ([]string, error) {
	if n <= 0 {
		return nil, nil
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if !l.closed && l.f != nil {
		if err := l.w.Flush(); err != nil {
			return nil, fmt.Errorf("stderrlog: writing log: %w", err)
		}
	}
	lines, _, err := readTail(l.dir, l.name, l.opt.Files, n)
	return lines, err
}

// ReadTail returns the last n lines of the log name in dir, across the
// current and rotated files, oldest first, as stored: what Tail returns,
// for a reader without the Log, such as `gateway adapter logs` in another
// process than the gateway's. It only reads. A log with no file at all is
// an error wrapping fs.ErrNotExist.
func ReadTail(dir, name string, n int) ([]string, error) {
	if name == "" || name == "." || name == ".." || strings.ContainsAny(name, "/\x00") {
		return nil, fmt.Errorf("stderrlog: invalid log name %q", name)
	}
	if n <= 0 {
		return nil, nil
	}
	lines, found, err := readTail(dir, name, DefaultFiles, n)
	if err == nil && !found {
		err = fmt.Errorf("stderrlog: no log %s: %w", logPath(dir, name, 0), fs.ErrNotExist)
	}
	return lines, err
}

// readTail reads the last n lines of the first files files of log name,
// newest file first, and reports whether any file was there.
func readTail(dir, name string, files, n int) (_ []string, found bool, _ error) {
	var chunks [][]string // newest file first
	got := 0
	for i := 0; i < files && got < n; i++ {
		data, err := os.ReadFile(logPath(dir, name, i))
		if errors.Is(err, os.ErrNotExist) {
			continue
		}
		if err != nil {
			return nil, found, fmt.Errorf("stderrlog: reading log for tail: %w", err)
		}
		found = true
		lines := strings.Split(string(bytes.TrimSuffix(data, []byte("\n"))), "\n")
		if len(data) == 0 {
			lines = nil
		}
		if len(lines) > n-got {
			lines = lines[len(lines)-(n-got):]
		}
		chunks = append(chunks, lines)
		got += len(lines)
	}
	out := make([]string, 0, got)
	for i := len(chunks) - 1; i >= 0; i-- {
		out = append(out, chunks[i]...)
	}
	return out, found, nil
}

// Stats returns the counts so far.
func (l *Log) Stats() Stats {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.stats
}

// Close flushes and closes the file. Lines dropped since the last one
// written are reported first.
func (l *Log) Close() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.closed {
		return nil
	}
	var err error
	if l.f != nil {
		err = l.writeDropped(l.opt.Clock.Now())
		if ferr := l.w.Flush(); err == nil && ferr != nil {
			err = fmt.Errorf("stderrlog: writing log: %w", ferr)
		}
		if cerr := l.f.Close(); err == nil && cerr != nil {
			err = fmt.Errorf("stderrlog: closing log: %w", cerr)
		}
		l.f = nil
	}
	l.closed = true
	return err
}
