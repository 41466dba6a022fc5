// Package audit is the gateway's audit log (OpenHAL spec §10): one JSON
// object per line, each with its own seq, on disk (synced) before the
// answer it records is sent.
//
// One writer goroutine per Log commits entries in groups: it takes every
// entry waiting, writes them with one write and syncs once, so that many
// concurrent requests share one fsync. Several processes may append to the
// same log (the gateway and its CLI): every batch is written under an
// exclusive flock on audit.lock, and a writer that finds a file changed
// since its own last write reads the tail again, so seqs stay unique and
// increasing. The log is rotated by size by renaming the file; no byte once
// written is rewritten.
//
// No client can erase the history (spec §10). Three things see to it:
//
//   - Every entry is bounded (see CutText, CutName, EntryLimit): a long
//     reason, value or message is cut, its full length and SHA-256 kept in
//     the entry's "cut", so a flood of large requests writes small lines.
//   - The entries that matter after an incident — stops, resumes,
//     approvals, rejections, token changes, blocked writes (see Kept) — are
//     kept apart, in a second file set (kept.log and its rotated
//     kept-<seq>.log) beside the writes' (audit.log, audit-<seq>.log). Each
//     set rotates on its own, so no volume of writes rotates a kept entry
//     away. Both sets share one seq space, under the one lock, and List
//     merges them by seq. Retention by age was the other choice; it was not
//     taken because it leaves the disk unbounded under a flood, where two
//     sets bound it at 2 × (KeepFiles+1) × MaxFileBytes.
//   - The callers count what a client may repeat without limit (refused
//     requests, and even stops and blocked writes past a lower rate) into
//     count entries (see Counter) instead of one line each; the Hub does
//     that, with its clock.
//
// A log written before the kept set existed is the writes set as it was:
// it is read whole, and its entries stay where they are.
package audit

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"github.com/openhal/gateway/internal/atomicfile"
	"log/slog"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"time"

	"github.com/openhal/gateway/openhal"
)

// Entry is one audit line.
type Entry struct {
	// Seq is assigned by Append; it grows with every entry, across
	// restarts and processes, and is never reused. It must stay the first
	// field: Append encodes entries before their seq is known and the
	// writer splices it in (see seqPrefix).
	Seq       uint64            `json:"seq"`
	TS        time.Time         `json:"ts"` // wall clock, UTC; Append sets it when zero
	Principal openhal.Principal `json:"principal"`
	// Action: "write", "confirm", "approve", "reject", "cancel",
	// "expire", "supersede", "stop", "resume", "token.add",
	// "token.revoke", "initialize".
	Action string `json:"action"`
	Device string `json:"device,omitempty"`
	// Value is kept when it is false or 0: omitempty drops only a nil
	// interface.
	Value any `json:"value,omitempty"`
	// Outcome: "applied", "blocked", "pending", "approved", "rejected",
	// "cancelled", "expired", "superseded", "failed", "refused",
	// "stopped", "resumed", "unauthorized", "created", "revoked".
	Outcome      string     `json:"outcome"`
	Rule         string     `json:"rule,omitempty"`
	Confirmation string     `json:"confirmation,omitempty"`
	Reason       string     `json:"reason,omitempty"`
	Error        *ErrorInfo `json:"error,omitempty"` // of a refused or failed request

	// A count entry (action "count") stands for Count requests that were
	// not recorded one by one (see Tally): the first was at From, the
	// last at To, and By says what they were. The rate-limited
	// UNAUTHORIZED answers of one address are folded the same way.
	Count int       `json:"count,omitempty"`
	From  time.Time `json:"from,omitzero"`
	To    time.Time `json:"to,omitzero"`
	By    []Tally   `json:"by,omitempty"`

	// Cut names the fields Append cut to their bound, each with the
	// full length and hash of what was there (see Cut).
	Cut map[string]Cut `json:"cut,omitempty"`
}

// ErrorInfo is the error a refused or failed request was answered with.
type ErrorInfo struct {
	Code    int64  `json:"code"`
	Message string `json:"message"`
	Reason  string `json:"reason,omitempty"`
}

// Options tune a Log. The zero value is usable.
type Options struct {
	MaxFileBytes int64 // rotate when the current file would pass this (default 8 MiB)
	KeepFiles    int   // rotated files kept besides the current one (default 8)
	Now          func() time.Time
	Logger       *slog.Logger

	// SyncFile makes a written file durable; nil means (*os.File).Sync.
	// It is a fault-injection hook for tests (a disk that stalls or
	// fails inside its sync); the gateway leaves it nil. Every file the
	// log writes to is synced through it.
	SyncFile func(f *os.File) error

	// Test hook: enqueued sees the queue's length after each request is
	// queued.
	enqueued func(queued int)
}

// Defaults.
const (
	DefaultMaxFileBytes = 8 << 20
	DefaultKeepFiles    = 8
)

// MaxEntryBytes is the longest line, without its newline, that readers
// accept; Append refuses an entry that would be longer, since it could
// never be read back.
const MaxEntryBytes = 4 << 20

// ErrClosed is returned by Append and Probe after Close.
var ErrClosed = errors.New("audit log closed")

// Stats are a Log's counters, for /metrics.
type Stats struct {
	Entries   uint64 // entries this Log wrote and synced
	Writes    uint64 // batches written (one write system call each)
	Syncs     uint64 // syncs of the log file
	Rotations uint64 // files this Log rotated
	Repairs   uint64 // lines cut short by a crash that this Log ended with a newline
	Resyncs   uint64 // times another process had written since this Log's last write
	Skipped   uint64 // lines List skipped because they do not parse, summed over calls
	Errors    uint64 // batches that failed (their Appends got the error)
	LastSeq   uint64 // the highest seq this Log knows of
}

// Log is an audit log directory opened for appending and listing.
type Log struct {
	dir string
	opt Options
	log *slog.Logger

	mu     sync.Mutex
	queue  []*request
	closed bool
	hang   bool // HangForTest (hang_testhang.go): the writer blocks for good

	wake    chan struct{} // one token: the queue is not empty, or Close
	stopped chan struct{} // closed when the writer returns
	once    sync.Once

	w writer // owned by the writer goroutine (by Open before it starts)

	entries, writes, syncs, rotations, repairs, resyncs, skipped, errs, lastSeq atomic.Uint64
}

// request is one Append (or, without lines, one Probe) handed to the
// writer.
type request struct {
	lines [][]byte // each entry encoded without its seq: what follows seqPrefix0
	class []int    // each entry's file set (see Kept)
	seqs  []uint64 // set by the writer
	parts int      // set by the writer: the sets that hold lines of it, not yet synced
	ok    bool     // set by the writer: lines written and synced
	err   error
	done  chan struct{}
}

// Open opens the log in dir, creating dir (mode 0700) and the log (0600)
// when missing. A last line cut short by a crash is ended with a newline:
// the cut line then fails to parse and readers skip it. The last seq is
// read from the files, so seqs keep growing across restarts.
func Open(dir string, opt Options) (*Log, error) {
	if opt.MaxFileBytes <= 0 {
		opt.MaxFileBytes = DefaultMaxFileBytes
	}
	if opt.KeepFiles <= 0 {
		opt.KeepFiles = DefaultKeepFiles
	}
	if opt.Now == nil {
		opt.Now = time.Now
	}
	if opt.Logger == nil {
		opt.Logger = slog.Default()
	}
	if opt.SyncFile == nil {
		opt.SyncFile = (*os.File).Sync
	}
	if err := makeDir(dir); err != nil {
		return nil, fmt.Errorf("open audit log: %w", err)
	}
	lockf, err := os.OpenFile(filepath.Join(dir, lockName), os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, fmt.Errorf("open audit log: %w", err)
	}
	l := &Log{
		dir:     dir,
		opt:     opt,
		log:     opt.Logger.With("audit", dir),
		wake:    make(chan struct{}, 1),
		stopped: make(chan struct{}),
	}
	l.w = writer{l: l, lockf: lockf}
	if err := l.w.open(); err != nil {
		l.w.close()
		return nil, fmt.Errorf("open audit log %s: %w", dir, err)
	}
	go l.run()
	return l, nil
}

// makeDir creates dir (mode 0700) when it is missing, and syncs its parent
// so that the new directory, and the log in it, survive a power cut.
func makeDir(dir string) error {
	if _, err := os.Stat(dir); err == nil {
		return nil
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return err
	}
	return atomicfile.SyncDir(filepath.Dir(filepath.Clean(dir)))
}

// AppendOnce opens the log in dir, appends entries and closes it: for a
// short-lived process such as the CLI.
func AppendOnce(dir string, entries ...Entry) ([]uint64, error) {
	l, err := Open(dir, Options{})
	if err != nil {
		return nil, err
	}
	seqs, err := l.Append(context.Background(), entries...)
	if cerr := l.Close(); err == nil && cerr != nil {
		return nil, cerr
	}
	return seqs, err
}

// seqPrefix0 is how every encoded Entry starts before its seq is known.
var seqPrefix0 = []byte(`{"seq":0`)

// Append writes entries, assigning their Seq (and TS when zero), and
// returns their seqs once they are on disk. Each entry is first cut to its
// bounds (see CutText), so that its line is at most EntryLimit bytes, and
// goes to the kept file set or the writes one (see Kept). Entries are
// encoded here, in the caller's goroutine; the writer only splices the seq
// in. ctx bounds only the wait: entries handed over are written even if
// ctx ends first.
func (l *Log) Append(ctx context.Context, entries ...Entry) ([]uint64, error) {
	p, err := l.Hand(entries...)
	if err != nil {
		return nil, err
	}
	return p.Wait(ctx)
}

// Pending is entries handed to the log and not yet known to be on disk.
type Pending struct{ r *request }

// Hand gives entries to the log without waiting for the disk: their
// place in the log, after everything handed before, is taken now, and
// Wait returns once they are on disk. It is Append in two halves, so that
// a caller may let go of what it holds (a device's turn) while the disk
// syncs, and the syncs of many callers be shared. A nil Pending (no
// entries) waits for nothing.
func (l *Log) Hand(entries ...Entry) (*Pending, error) {
	if len(entries) == 0 {
		return nil, nil
	}
	r := &request{lines: make([][]byte, len(entries)), class: make([]int, len(entries)), done: make(chan struct{})}
	var now time.Time
	for i := range entries {
		e := entries[i]
		e.Seq = 0
		if e.TS.IsZero() {
			if now.IsZero() {
				now = l.opt.Now()
			}
			e.TS = now
		}
		e.TS = e.TS.UTC()
		b, err := encodeEntry(&e)
		if err != nil {
			return nil, err
		}
		r.lines[i] = b[len(seqPrefix0):]
		if Kept(&e) {
			r.class[i] = classKept
		}
	}
	if err := l.hand(r); err != nil {
		return nil, err
	}
	return &Pending{r: r}, nil
}

// Wait returns the entries' seqs once they are on disk, or why they could
// not be written. ctx bounds only the wait.
func (p *Pending) Wait(ctx context.Context) ([]uint64, error) {
	if p == nil {
		return nil, nil
	}
	r := p.r
	select {
	case <-r.done:
	case <-ctx.Done():
		select {
		case <-r.done:
		default:
			return nil, fmt.Errorf("audit: wait for the disk: %w", ctx.Err())
		}
	}
	if r.err != nil {
		return nil, r.err
	}
	return r.seqs, nil
}

// encodeEntry cuts e to its bounds and encodes it, with seq 0.
func encodeEntry(e *Entry) ([]byte, error) {
	if err := e.bound(); err != nil {
		return nil, fmt.Errorf("audit %.40q entry: %w", e.Action, err)
	}
	b, err := json.Marshal(e)
	if err != nil {
		return nil, fmt.Errorf("audit %.40q entry: %w", e.Action, err)
	}
	// With its seq the line may be up to 19 bytes longer. Cut to its
	// bounds, no entry comes near; this is the proof.
	if !bytes.HasPrefix(b, seqPrefix0) || len(b)+19 > EntryLimit {
		return nil, fmt.Errorf("audit %.40q entry: encoded as %d bytes starting %.20q", e.Action, len(b), b)
	}
	return b, nil
}

// hand queues r for the writer and wakes it.
func (l *Log) hand(r *request) error {
	l.mu.Lock()
	if l.closed {
		l.mu.Unlock()
		return ErrClosed
	}
	l.queue = append(l.queue, r)
	n := len(l.queue)
	l.mu.Unlock()
	if l.opt.enqueued != nil {
		l.opt.enqueued(n)
	}
	select {
	case l.wake <- struct{}{}:
	default: // the writer is already due to look
	}
	return nil
}

// Probe returns nil once the writer goroutine has come round to it, which
// shows that it is not stuck (in a write, a sync or the lock), or ctx's
// error. It writes nothing.
func (l *Log) Probe(ctx context.Context) error {
	r := &request{done: make(chan struct{})}
	if err := l.hand(r); err != nil {
		return err
	}
	select {
	case <-r.done:
		return nil
	case <-ctx.Done():
		return fmt.Errorf("audit writer: %w", ctx.Err())
	}
}

// Close writes what was handed over, stops the writer and closes the
// files. Append and Probe fail with ErrClosed afterwards; List still works.
func (l *Log) Close() error {
	var err error
	l.once.Do(func() {
		l.mu.Lock()
		l.closed = true
		l.mu.Unlock()
		select {
		case l.wake <- struct{}{}:
		default:
		}
		<-l.stopped
		err = l.w.close()
	})
	return err
}

// Stats returns the Log's counters.
func (l *Log) Stats() Stats {
	return Stats{
		Entries:   l.entries.Load(),
		Writes:    l.writes.Load(),
		Syncs:     l.syncs.Load(),
		Rotations: l.rotations.Load(),
		Repairs:   l.repairs.Load(),
		Resyncs:   l.resyncs.Load(),
		Skipped:   l.skipped.Load(),
		Errors:    l.errs.Load(),
		LastSeq:   l.lastSeq.Load(),
	}
}

// run is the writer goroutine: it takes every request waiting and commits
// them together, until Close.
func (l *Log) run() {
	defer close(l.stopped)
	var spare []*request
	for range l.wake {
		l.mu.Lock()
		reqs := l.queue
		l.queue = spare[:0]
		closed, hang := l.closed, l.hang
		l.mu.Unlock()
		if hang {
			select {} // wedged for good, as a writer stuck in the kernel
		}
		l.w.commit(reqs)
		clear(reqs)
		spare = reqs
		if closed {
			// Nothing is queued after closed is set.
			return
		}
	}
}
