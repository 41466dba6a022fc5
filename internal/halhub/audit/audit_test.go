package audit

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/openhal/gateway/openhal"
)

// waitLimit bounds every wait for an event in these tests.
const waitLimit = 30 * time.Second

var agent = openhal.Principal{Kind: openhal.KindAgent, Name: "bench-agent", Scope: openhal.ScopeControlLow}

// writes is the file set of write entries, the one set of older logs.
var (
	writes   = fileSets[classWrites]
	fileName = writes.current
)

func quiet() *slog.Logger { return slog.New(slog.DiscardHandler) }

func openLog(t testing.TB, dir string, opt Options) *Log {
	t.Helper()
	if opt.Logger == nil {
		opt.Logger = quiet()
	}
	l, err := Open(dir, opt)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	return l
}

func mustAppend(t testing.TB, l *Log, entries ...Entry) []uint64 {
	t.Helper()
	seqs, err := l.Append(context.Background(), entries...)
	if err != nil {
		t.Fatal(err)
	}
	return seqs
}

// listAll returns every entry's line and seq, failing on lines that do not
// decode into an Entry.
func listAll(t testing.TB, l *Log) (lines []json.RawMessage, seqs []uint64, skipped int) {
	t.Helper()
	pg, err := l.List(0, ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	lines, skipped = pg.Entries, pg.Skipped
	for _, line := range lines {
		var e Entry
		if err := json.Unmarshal(line, &e); err != nil {
			t.Fatalf("line %s: %v", line, err)
		}
		seqs = append(seqs, e.Seq)
	}
	return lines, seqs, skipped
}

// seqRange is first..last.
func seqRange(first, last uint64) []uint64 {
	var s []uint64
	for q := first; q <= last; q++ {
		s = append(s, q)
	}
	return s
}

func write(action string) Entry {
	return Entry{Principal: agent, Action: action, Device: "bench.heater", Value: true, Outcome: "applied"}
}

// wait receives from ch within waitLimit.
func wait[T any](t testing.TB, ch <-chan T, what string) T {
	t.Helper()
	select {
	case v := <-ch:
		return v
	case <-time.After(waitLimit):
		t.Fatalf("timed out waiting for %s", what)
		panic("unreachable")
	}
}

func TestAppendEncodesEntries(t *testing.T) {
	now := time.Date(2026, 3, 1, 12, 0, 0, 123456789, time.FixedZone("CET", 3600))
	given := time.Date(2025, 12, 31, 23, 59, 59, 5, time.FixedZone("X", -7200))
	tests := []struct {
		name    string
		entry   Entry
		want    []string // fragments of the line
		notWant []string
	}{
		{"false value kept", Entry{Action: "write", Value: false, Outcome: "applied"},
			[]string{`"value":false`, `"ts":"2026-03-01T11:00:00.123456789Z"`}, nil},
		{"zero value kept", Entry{Action: "write", Value: 0, Outcome: "applied"}, []string{`"value":0`}, nil},
		{"empty string kept", Entry{Action: "write", Value: "", Outcome: "applied"}, []string{`"value":""`}, nil},
		{"nil value left out", Entry{Action: "stop", Outcome: "stopped"}, []string{`"action":"stop"`},
			[]string{`"value"`, `"device"`, `"rule"`, `"error"`, `"count"`}},
		{"given ts kept, in UTC", Entry{TS: given, Action: "resume", Outcome: "resumed"},
			[]string{`"ts":"2026-01-01T01:59:59.000000005Z"`}, nil},
		{"refused", Entry{Principal: agent, Action: "write", Device: "bench.heater", Value: 150, Outcome: "blocked",
			Rule: "maximum", Error: &ErrorInfo{Code: -32005, Message: "blocked"}},
			[]string{`"principal":{"kind":"agent","name":"bench-agent","scope":"control_low"}`, `"rule":"maximum"`,
				`"error":{"code":-32005,"message":"blocked"}`}, nil},
		{"folded unauthorized", Entry{Action: "initialize", Outcome: "unauthorized", Count: 17}, []string{`"count":17`}, nil},
		{"caller's seq ignored", Entry{Seq: 999, Action: "write", Outcome: "applied"}, nil, []string{`999`}},
	}
	l := openLog(t, t.TempDir(), Options{Now: func() time.Time { return now }})
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			seqs := mustAppend(t, l, tt.entry)
			if want := []uint64{uint64(i + 1)}; !slices.Equal(seqs, want) {
				t.Fatalf("seqs %v, want %v", seqs, want)
			}
			pg, err := l.List(uint64(i), ListOptions{Limit: 1})
			if err != nil || pg.Skipped != 0 || len(pg.Entries) != 1 {
				t.Fatalf("List: %d lines, %d skipped, %v", len(pg.Entries), pg.Skipped, err)
			}
			line := string(pg.Entries[0])
			if want := `{"seq":` + itoa(i+1) + `,`; !strings.HasPrefix(line, want) {
				t.Errorf("line %s does not start %s", line, want)
			}
			for _, w := range tt.want {
				if !strings.Contains(line, w) {
					t.Errorf("line %s lacks %s", line, w)
				}
			}
			for _, w := range tt.notWant {
				if strings.Contains(line, w) {
					t.Errorf("line %s has %s", line, w)
				}
			}
		})
	}
}

func itoa(i int) string { b, _ := json.Marshal(i); return string(b) }

func TestSeqContinuesAfterReopen(t *testing.T) {
	dir := t.TempDir()
	l := openLog(t, dir, Options{})
	if got := mustAppend(t, l, write("a"), write("b"), write("c")); !slices.Equal(got, []uint64{1, 2, 3}) {
		t.Fatalf("first Append: seqs %v", got)
	}
	if got := mustAppend(t, l, write("d")); !slices.Equal(got, []uint64{4}) {
		t.Fatalf("second Append: seqs %v", got)
	}
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	l = openLog(t, dir, Options{})
	if got := l.Stats().LastSeq; got != 4 {
		t.Errorf("LastSeq after reopen = %d, want 4", got)
	}
	if got := mustAppend(t, l, write("e")); !slices.Equal(got, []uint64{5}) {
		t.Fatalf("after reopen: seqs %v, want [5]", got)
	}
	_, seqs, skipped := listAll(t, l)
	if !slices.Equal(seqs, seqRange(1, 5)) || skipped != 0 {
		t.Errorf("List: seqs %v, skipped %d", seqs, skipped)
	}
}

func TestAppendRefusesWhatCannotBeRead(t *testing.T) {
	l := openLog(t, t.TempDir(), Options{})
	tests := []struct {
		name  string
		entry Entry
	}{
		{"not JSON", Entry{Action: "write", Value: make(chan int)}},
		{"not JSON in an object", Entry{Action: "write", Value: map[string]any{"x": make(chan int)}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if seqs, err := l.Append(context.Background(), write("ok"), tt.entry); err == nil {
				t.Fatalf("Append succeeded: seqs %v", seqs)
			}
		})
	}
	// Nothing was written, and no seq was used.
	if got := mustAppend(t, l, write("ok")); !slices.Equal(got, []uint64{1}) {
		t.Errorf("seqs %v, want [1]", got)
	}
}

func TestFileModes(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "state", "audit")
	l := openLog(t, dir, Options{})
	mustAppend(t, l, write("a"))
	for _, c := range []struct {
		path string
		mode fs.FileMode
	}{
		{dir, fs.ModeDir | 0o700},
		{filepath.Join(dir, fileName), 0o600},
		{filepath.Join(dir, fileSets[classKept].current), 0o600},
		{filepath.Join(dir, lockName), 0o600},
	} {
		fi, err := os.Stat(c.path)
		if err != nil {
			t.Fatal(err)
		}
		if fi.Mode() != c.mode {
			t.Errorf("%s: mode %v, want %v", c.path, fi.Mode(), c.mode)
		}
	}
}

// gatedSync returns a sync hook whose first call signals entered and then
// waits for gate to close.
func gatedSync() (sync func(*os.File) error, entered chan struct{}, gate chan struct{}) {
	entered, gate = make(chan struct{}), make(chan struct{})
	var first atomic.Bool
	return func(f *os.File) error {
		if first.CompareAndSwap(false, true) {
			close(entered)
			<-gate
		}
		return f.Sync()
	}, entered, gate
}

// TestGroupCommit holds the writer in its first sync while the other
// appenders queue up: they must all go in the second write and sync.
func TestGroupCommit(t *testing.T) {
	const n = 50
	syncHook, entered, gate := gatedSync()
	queued := make(chan int, 2*n)
	l := openLog(t, t.TempDir(), Options{SyncFile: syncHook, enqueued: func(q int) { queued <- q }})
	errs := make(chan error, n)
	appendOne := func() {
		_, err := l.Append(context.Background(), write("w"))
		errs <- err
	}
	go appendOne()
	wait(t, entered, "the first sync")
	for range n - 1 {
		go appendOne()
	}
	for q := 0; q < n-1; {
		q = wait(t, queued, "the appenders to queue")
	}
	select {
	case err := <-errs:
		t.Fatalf("an Append returned (%v) while its sync was held", err)
	default:
	}
	close(gate)
	for range n {
		if err := wait(t, errs, "Append"); err != nil {
			t.Fatal(err)
		}
	}
	st := l.Stats()
	if st.Entries != n || st.Writes != 2 || st.Syncs != 2 {
		t.Errorf("Stats %+v, want %d entries in 2 writes and 2 syncs", st, n)
	}
}

// syncedSeqs is a sync hook that records which seqs were on disk at each
// sync, so that an Append can check that its entries were synced before it
// returned.
type syncedSeqs struct {
	mu     sync.Mutex
	seqs   map[uint64]bool
	offset int64
}

func (s *syncedSeqs) sync(f *os.File) error {
	if err := f.Sync(); err != nil {
		return err
	}
	fi, err := f.Stat()
	if err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	b := make([]byte, fi.Size()-s.offset)
	if _, err := f.ReadAt(b, s.offset); err != nil {
		return err
	}
	end := bytes.LastIndexByte(b, '\n') + 1
	for line := range bytes.Lines(b[:end]) {
		if seq, ok := parseLine(bytes.TrimSuffix(line, []byte{'\n'})); ok {
			s.seqs[seq] = true
		}
	}
	s.offset += int64(end)
	return nil
}

func (s *syncedSeqs) has(seqs []uint64) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, q := range seqs {
		if !s.seqs[q] {
			return false
		}
	}
	return true
}

// TestAppendReturnsAfterSync runs many appenders at once: every Append
// returns only once a sync has covered its entries, and syncs are shared.
func TestAppendReturnsAfterSync(t *testing.T) {
	const goroutines, each = 32, 50
	synced := &syncedSeqs{seqs: make(map[uint64]bool)}
	l := openLog(t, t.TempDir(), Options{SyncFile: synced.sync})
	var wg sync.WaitGroup
	errs := make(chan error, goroutines)
	for g := range goroutines {
		wg.Go(func() {
			for i := range each {
				entries := []Entry{write("w")}
				if i%5 == 0 {
					entries = append(entries, write("w2"))
				}
				seqs, err := l.Append(context.Background(), entries...)
				if err != nil {
					errs <- err
					return
				}
				if len(seqs) != len(entries) || !synced.has(seqs) {
					errs <- fmt.Errorf("goroutine %d: Append returned seqs %v before they were synced", g, seqs)
					return
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	total := goroutines * (each + each/5)
	_, seqs, skipped := listAll(t, l)
	if !slices.Equal(seqs, seqRange(1, uint64(total))) || skipped != 0 {
		t.Errorf("List: %d entries (want %d), skipped %d", len(seqs), total, skipped)
	}
	st := l.Stats()
	t.Logf("%d entries, %d syncs", st.Entries, st.Syncs)
	if st.Entries != uint64(total) || st.Syncs*2 > st.Entries {
		t.Errorf("Stats %+v: want %d entries and at most one sync for two", st, total)
	}
}

func TestProbe(t *testing.T) {
	syncHook, entered, gate := gatedSync()
	l := openLog(t, t.TempDir(), Options{SyncFile: syncHook})
	ctx, cancel := context.WithTimeout(context.Background(), waitLimit)
	defer cancel()
	if err := l.Probe(ctx); err != nil {
		t.Fatalf("Probe of an idle writer: %v", err)
	}
	errs := make(chan error, 1)
	go func() {
		_, err := l.Append(context.Background(), write("w"))
		errs <- err
	}()
	wait(t, entered, "the first sync")
	short, cancelShort := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancelShort()
	if err := l.Probe(short); !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("Probe of a writer stuck in sync: %v, want DeadlineExceeded", err)
	}
	close(gate)
	if err := l.Probe(ctx); err != nil {
		t.Errorf("Probe after the sync: %v", err)
	}
	if err := wait(t, errs, "Append"); err != nil {
		t.Error(err)
	}
}

// TestAppendAfterCancel: ctx bounds only the wait; the entry is written.
func TestAppendAfterCancel(t *testing.T) {
	dir := t.TempDir()
	syncHook, entered, gate := gatedSync()
	l := openLog(t, dir, Options{SyncFile: syncHook})
	ctx, cancel := context.WithCancel(context.Background())
	go func() {
		<-entered
		cancel()
	}()
	if seqs, err := l.Append(ctx, write("w")); !errors.Is(err, context.Canceled) {
		t.Fatalf("Append: %v %v, want Canceled", seqs, err)
	}
	close(gate)
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	if _, seqs, _ := listAll(t, l); !slices.Equal(seqs, []uint64{1}) {
		t.Errorf("seqs on disk %v, want [1]", seqs)
	}
}

func TestClose(t *testing.T) {
	dir := t.TempDir()
	syncHook, entered, gate := gatedSync()
	queued := make(chan int, 4)
	l := openLog(t, dir, Options{SyncFile: syncHook, enqueued: func(q int) { queued <- q }})
	results := make(chan []uint64, 2)
	appendOne := func() {
		seqs, err := l.Append(context.Background(), write("w"))
		if err != nil {
			t.Error(err)
		}
		results <- seqs
	}
	go appendOne()
	wait(t, entered, "the first sync")
	wait(t, queued, "the first Append")
	go appendOne()
	wait(t, queued, "the second Append")
	closed := make(chan error)
	go func() { closed <- l.Close() }()
	close(gate)
	if err := wait(t, closed, "Close"); err != nil {
		t.Fatal(err)
	}
	// Close returned: both entries handed over before it are on disk.
	got := slices.Concat(wait(t, results, "Append"), wait(t, results, "Append"))
	slices.Sort(got)
	if !slices.Equal(got, []uint64{1, 2}) {
		t.Errorf("seqs %v, want [1 2]", got)
	}
	if _, seqs, _ := listAll(t, l); !slices.Equal(seqs, []uint64{1, 2}) {
		t.Errorf("seqs on disk %v", seqs)
	}
	if _, err := l.Append(context.Background(), write("late")); !errors.Is(err, ErrClosed) {
		t.Errorf("Append after Close: %v", err)
	}
	if err := l.Probe(context.Background()); !errors.Is(err, ErrClosed) {
		t.Errorf("Probe after Close: %v", err)
	}
	if err := l.Close(); err != nil {
		t.Errorf("second Close: %v", err)
	}
}

// TestAppendOnce stands in for the CLI appending while the gateway's Log
// is open: the open Log notices and goes on after the CLI's seq.
func TestAppendOnce(t *testing.T) {
	dir := t.TempDir()
	l := openLog(t, dir, Options{})
	mustAppend(t, l, write("a"))
	seqs, err := AppendOnce(dir, Entry{Principal: openhal.Principal{Kind: openhal.KindOperator, Name: "cli"}, Action: "token.add", Outcome: "created"})
	if err != nil || !slices.Equal(seqs, []uint64{2}) {
		t.Fatalf("AppendOnce: %v %v, want [2]", seqs, err)
	}
	if got := mustAppend(t, l, write("b")); !slices.Equal(got, []uint64{3}) {
		t.Errorf("after AppendOnce: seqs %v, want [3]", got)
	}
	if st := l.Stats(); st.Resyncs != 1 {
		t.Errorf("Resyncs = %d, want 1", st.Resyncs)
	}
}
