package stderrlog

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/openhal/gateway/internal/clock/clocktest"
)

var epoch = time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC)

const stamp = "2026-11-29T12:00:00.000000Z "

func newLog(t *testing.T, o Options) (*Log, string) {
	t.Helper()
	dir := t.TempDir()
	if o.Clock == nil {
		o.Clock = clocktest.NewFake(epoch)
	}
	l, err := New(dir, "ad", o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	return l, dir
}

func readLines(t *testing.T, path string) []string {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if len(data) == 0 {
		return nil
	}
	if data[len(data)-1] != '\n' {
		t.Fatalf("%s does not end in a newline", path)
	}
	return strings.Split(string(data[:len(data)-1]), "\n")
}

func TestCopyLines(t *testing.T) {
	const max = 8 << 10
	x := func(n int) string { return strings.Repeat("x", n) }
	tests := []struct {
		name    string
		in      string
		want    []string
		cut     uint64
		cutSize uint64
	}{
		{"empty", "", nil, 0, 0},
		{"two lines", "a\nb\n", []string{"a", "b"}, 0, 0},
		{"empty line", "\n", []string{""}, 0, 0},
		{"partial last line", "a\nb", []string{"a", "b"}, 0, 0},
		{"exactly MaxLine", x(max) + "\n", []string{x(max)}, 0, 0},
		{"one byte over", x(max+1) + "\nz\n", []string{x(max) + " [cut: 1 bytes]", "z"}, 1, 1},
		{"over, no newline", x(max + 5), []string{x(max) + " [cut: 5 bytes]"}, 1, 5},
		{"far over", x(100000) + "\n", []string{x(max) + " [cut: 91808 bytes]"}, 1, 91808},
		// "é" is two bytes; a cut through it backs off to keep whole characters.
		{"cut in a character", x(max-1) + "éé\n", []string{x(max-1) + " [cut: 4 bytes]"}, 1, 4},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			l, dir := newLog(t, Options{})
			if err := l.Copy(strings.NewReader(tt.in)); err != nil {
				t.Fatal(err)
			}
			got := readLines(t, filepath.Join(dir, "ad.log"))
			if len(got) != len(tt.want) {
				t.Fatalf("got %d lines, want %d", len(got), len(tt.want))
			}
			for i := range got {
				if got[i] != stamp+tt.want[i] {
					t.Errorf("line %d = %.60q… (len %d), want %.60q… (len %d)", i, got[i], len(got[i]), stamp+tt.want[i], len(stamp+tt.want[i]))
				}
			}
			st := l.Stats()
			if st.Lines != uint64(len(tt.want)) || st.Cut != tt.cut || st.CutBytes != tt.cutSize {
				t.Errorf("stats %+v, want %d lines, %d cut, %d cut bytes", st, len(tt.want), tt.cut, tt.cutSize)
			}
		})
	}
}

func TestFileMode(t *testing.T) {
	l, dir := newLog(t, Options{FileBytes: 100, Files: 3})
	if err := l.Copy(strings.NewReader(strings.Repeat("0123456789012345678901234567890123456789\n", 10))); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{"ad.log", "ad.log.1", "ad.log.2"} {
		fi, err := os.Stat(filepath.Join(dir, p))
		if err != nil {
			t.Fatal(err)
		}
		if fi.Mode().Perm() != 0o600 {
			t.Errorf("%s mode %v, want 0600", p, fi.Mode().Perm())
		}
	}
}

// genReader yields n bytes of 'x' then a newline, without holding them.
type genReader struct{ n int64 }

func (g *genReader) Read(p []byte) (int, error) {
	if g.n < 0 {
		return 0, io.EOF
	}
	i := 0
	for ; i < len(p) && g.n > 0; i++ {
		p[i] = 'x'
		g.n--
	}
	if i < len(p) && g.n == 0 {
		p[i] = '\n'
		i++
		g.n = -1
	}
	return i, nil
}

func TestHugeLineNotBuffered(t *testing.T) {
	const size = 64 << 20
	l, dir := newLog(t, Options{})
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	if err := l.Copy(&genReader{n: size}); err != nil {
		t.Fatal(err)
	}
	runtime.ReadMemStats(&after)
	// TotalAlloc only grows, so it bounds the heap Copy ever used.
	grew := after.TotalAlloc - before.TotalAlloc
	t.Logf("Copy of a %d-byte line allocated %d bytes", size, grew)
	if grew > 4<<20 {
		t.Errorf("Copy of a %d-byte line allocated %d bytes", size, grew)
	}
	got := readLines(t, filepath.Join(dir, "ad.log"))
	want := stamp + strings.Repeat("x", 8<<10) + fmt.Sprintf(" [cut: %d bytes]", size-8<<10)
	if len(got) != 1 || got[0] != want {
		t.Errorf("got %d lines, first of len %d; want one of len %d", len(got), len(got[0]), len(want))
	}
}

// lineReader yields count lines of size bytes (newline included), calling
// each before line i.
type lineReader struct {
	line  []byte
	count int
	i     int
	off   int
	each  func(i int)
}

func (r *lineReader) Read(p []byte) (int, error) {
	n := 0
	for n < len(p) {
		if r.off == 0 {
			if r.i == r.count {
				break
			}
			if r.each != nil {
				r.each(r.i)
			}
		}
		c := copy(p[n:], r.line[r.off:])
		n += c
		r.off += c
		if r.off == len(r.line) {
			r.off = 0
			r.i++
			if r.each != nil {
				break // one line per Read, so each runs between lines
			}
		}
	}
	if n == 0 {
		return 0, io.EOF
	}
	return n, nil
}

func newLineReader(size, count int) *lineReader {
	b := []byte(strings.Repeat("y", size-1) + "\n")
	return &lineReader{line: b, count: count}
}

func TestRateLimit(t *testing.T) {
	const line = 1 << 10 // bytes per line, newline included
	tests := []struct {
		name        string
		lines       int           // lines of 1 KiB in the first second
		after       time.Duration // then this much later, one more line
		wantKept    int           // adapter lines kept of the burst
		wantDropped int
	}{
		{"under the limit", 512, time.Second, 512, 0},
		{"exactly the limit", 1024, time.Second, 1024, 0},
		{"3 MiB in a second", 3072, time.Second, 1024, 2048},
		{"half a second refills half", 3072, 500 * time.Millisecond, 1024, 2048},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			clk := clocktest.NewFake(epoch)
			l, dir := newLog(t, Options{Clock: clk, FileBytes: 64 << 20})
			if err := l.Copy(newLineReader(line, tt.lines)); err != nil {
				t.Fatal(err)
			}
			st := l.Stats()
			if st.Lines != uint64(tt.wantKept) || st.DroppedLines != uint64(tt.wantDropped) || st.DroppedBytes != uint64(tt.wantDropped*line) {
				t.Fatalf("stats %+v, want %d kept and %d dropped", st, tt.wantKept, tt.wantDropped)
			}
			clk.Advance(tt.after)
			if err := l.Copy(strings.NewReader("resumed\n")); err != nil {
				t.Fatal(err)
			}
			got := readLines(t, filepath.Join(dir, "ad.log"))
			// The notice at the end of the first Copy, if any, and the
			// line after the pause.
			notice := 0
			if tt.wantDropped > 0 {
				notice = 1
			}
			if len(got) != tt.wantKept+notice+1 {
				t.Fatalf("file has %d lines, want %d", len(got), tt.wantKept+notice+1)
			}
			if notice == 1 {
				want := fmt.Sprintf("[stderrlog] dropped %d lines (%d bytes) over the rate limit", tt.wantDropped, tt.wantDropped*line)
				if n := got[tt.wantKept]; !strings.HasSuffix(n, want) {
					t.Errorf("notice %q, want suffix %q", n, want)
				}
			}
			if last := got[len(got)-1]; !strings.HasSuffix(last, " resumed") {
				t.Errorf("last line %q", last)
			}
		})
	}
}

func TestDroppedNoticeWhenOutputResumes(t *testing.T) {
	clk := clocktest.NewFake(epoch)
	l, dir := newLog(t, Options{Clock: clk, RateBytes: 10})
	r := &lineReader{line: []byte("abcd\n"), count: 6}
	r.each = func(i int) {
		if i == 5 {
			clk.Advance(time.Second)
		}
	}
	if err := l.Copy(r); err != nil {
		t.Fatal(err)
	}
	got := readLines(t, filepath.Join(dir, "ad.log"))
	want := []string{
		stamp + "abcd",
		stamp + "abcd",
		"2026-11-29T12:00:01.000000Z [stderrlog] dropped 3 lines (15 bytes) over the rate limit",
		"2026-11-29T12:00:01.000000Z abcd",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("got\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

func TestRotation(t *testing.T) {
	const fileBytes = 1 << 20
	tests := []struct {
		name  string
		files int
		line  int
		count int
	}{
		{"defaults, 8 MiB of 1 KiB lines", 5, 1 << 10, 8 << 10},
		{"defaults, 7 MiB of 8 KiB lines", 5, 8 << 10, 7 << 7},
		{"two files", 2, 1000, 5000},
		{"one file", 1, 1000, 3000},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			l, dir := newLog(t, Options{RateBytes: 1 << 40, Files: tt.files})
			if err := l.Copy(newLineReader(tt.line, tt.count)); err != nil {
				t.Fatal(err)
			}
			ents, err := os.ReadDir(dir)
			if err != nil {
				t.Fatal(err)
			}
			if len(ents) != tt.files {
				t.Errorf("%d files, want %d", len(ents), tt.files)
			}
			var total int64
			recordMax := int64(len(stamp) + tt.line)
			for i := 0; i < tt.files; i++ {
				fi, err := os.Stat(l.path(i))
				if err != nil {
					t.Fatal(err)
				}
				if fi.Size() > fileBytes {
					t.Errorf("%s is %d bytes, over %d", fi.Name(), fi.Size(), fileBytes)
				}
				if i > 0 && fi.Size() < fileBytes-recordMax {
					t.Errorf("rotated %s is only %d bytes", fi.Name(), fi.Size())
				}
				total += fi.Size()
			}
			if total > int64(tt.files)*fileBytes+recordMax {
				t.Errorf("files total %d bytes", total)
			}
			if st := l.Stats(); st.Rotations == 0 || st.Lines != uint64(tt.count) {
				t.Errorf("stats %+v", st)
			}
		})
	}
}

func TestTail(t *testing.T) {
	clk := clocktest.NewFake(epoch)
	// Each record is 28 bytes of stamp, "line NN" and a newline: 36 bytes,
	// so a 100-byte file holds 2 lines and 4 files hold the last 8.
	l, _ := newLog(t, Options{Clock: clk, FileBytes: 100, Files: 4})
	var in strings.Builder
	for i := 0; i < 20; i++ {
		fmt.Fprintf(&in, "line %02d\n", i)
	}
	if err := l.Copy(strings.NewReader(in.String())); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		n     int
		first int // number of the first line returned
		count int
	}{
		{0, 0, 0},
		{1, 19, 1},
		{2, 18, 2},
		{3, 17, 3},
		{7, 13, 7},
		{8, 12, 8},
		{50, 12, 8},
	}
	for _, tt := range tests {
		t.Run(fmt.Sprint(tt.n), func(t *testing.T) {
			got, err := l.Tail(tt.n)
			if err != nil {
				t.Fatal(err)
			}
			if len(got) != tt.count {
				t.Fatalf("got %d lines %q, want %d", len(got), got, tt.count)
			}
			for i, s := range got {
				if want := fmt.Sprintf("%sline %02d", stamp, tt.first+i); s != want {
					t.Errorf("line %d = %q, want %q", i, s, want)
				}
			}
		})
	}
}

func TestTailSeesUnflushed(t *testing.T) {
	l, _ := newLog(t, Options{})
	pr, pw := io.Pipe()
	done := make(chan error, 1)
	go func() { done <- l.Copy(pr) }()
	if _, err := pw.Write([]byte("one\ntwo\n")); err != nil {
		t.Fatal(err)
	}
	// Write returns once Copy has the bytes; a second write returns once
	// Copy has handled the first and is reading again.
	if _, err := pw.Write([]byte("thr")); err != nil {
		t.Fatal(err)
	}
	got, err := l.Tail(5)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 || got[1] != stamp+"two" {
		t.Errorf("Tail = %q", got)
	}
	pw.Close()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	got, _ = l.Tail(1)
	if len(got) != 1 || got[0] != stamp+"thr" {
		t.Errorf("Tail after EOF = %q", got)
	}
}

func TestNewInvalidName(t *testing.T) {
	for _, name := range []string{"", ".", "..", "a/b"} {
		if _, err := New(t.TempDir(), name, Options{}); err == nil {
			t.Errorf("New(%q) succeeded", name)
		}
	}
}

func TestAppendsToExisting(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "ad.log"), []byte("old\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	l, err := New(dir, "ad", Options{Clock: clocktest.NewFake(epoch)})
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	if err := l.Copy(strings.NewReader("new\n")); err != nil {
		t.Fatal(err)
	}
	got, err := l.Tail(10)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 || got[0] != "old" || got[1] != stamp+"new" {
		t.Errorf("Tail = %q", got)
	}
	fi, _ := os.Stat(filepath.Join(dir, "ad.log"))
	if fi.Mode().Perm() != 0o600 {
		t.Errorf("mode %v, want 0600", fi.Mode().Perm())
	}
}

func TestCopyDrainsAfterWriteError(t *testing.T) {
	l, _ := newLog(t, Options{})
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	r := newLineReader(100, 1000)
	if err := l.Copy(r); err == nil {
		t.Error("Copy to a closed log succeeded")
	}
	if r.i != r.count {
		t.Errorf("Copy stopped reading after %d of %d lines", r.i, r.count)
	}
}

// ReadTail reads what Tail returns, from the files alone, for a process
// other than the one writing them.
func TestReadTail(t *testing.T) {
	clk := clocktest.NewFake(epoch)
	l, dir := newLog(t, Options{Clock: clk, FileBytes: 100})
	var in strings.Builder
	for i := 0; i < 20; i++ {
		fmt.Fprintf(&in, "line %02d\n", i)
	}
	if err := l.Copy(strings.NewReader(in.String())); err != nil {
		t.Fatal(err)
	}
	// 5 files of 2 lines: the last 10 lines are kept.
	for _, n := range []int{0, 1, 3, 10, 50} {
		want, err := l.Tail(n)
		if err != nil {
			t.Fatal(err)
		}
		got, err := ReadTail(dir, "ad", n)
		if err != nil {
			t.Fatalf("ReadTail(%d): %v", n, err)
		}
		if strings.Join(got, "\n") != strings.Join(want, "\n") {
			t.Errorf("ReadTail(%d) = %q, Tail = %q", n, got, want)
		}
		if n == 50 && (len(got) != 10 || got[9] != stamp+"line 19") {
			t.Errorf("ReadTail(50) = %q, want lines 10 to 19", got)
		}
	}
}

func TestReadTailMissing(t *testing.T) {
	dir := t.TempDir()
	if _, err := ReadTail(dir, "none", 5); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("ReadTail of no log: %v, want fs.ErrNotExist", err)
	}
	if err := os.WriteFile(filepath.Join(dir, "empty.log"), nil, 0o600); err != nil {
		t.Fatal(err)
	}
	if got, err := ReadTail(dir, "empty", 5); err != nil || len(got) != 0 {
		t.Errorf("ReadTail of an empty log = %q, %v", got, err)
	}
	for _, name := range []string{"", "..", "a/b"} {
		if _, err := ReadTail(dir, name, 5); err == nil || errors.Is(err, fs.ErrNotExist) {
			t.Errorf("ReadTail(%q): %v, want an invalid name", name, err)
		}
	}
}
