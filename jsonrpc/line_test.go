package jsonrpc

import (
	"errors"
	"io"
	"runtime"
	"slices"
	"strings"
	"testing"
	"testing/iotest"
	"time"
)

// result is one Next call's outcome, for comparing.
type result struct {
	line string
	err  error
}

func readAll(l *LineReader, n int) []result {
	var out []result
	for range n {
		line, err := l.Next()
		out = append(out, result{string(line), err})
		if err != nil && err != ErrLineTooLong {
			break
		}
	}
	return out
}

func TestLineReader(t *testing.T) {
	long := strings.Repeat("x", 100)
	for _, tc := range []struct {
		name, in string
		max      int
		want     []result
	}{
		{"lines", "a\nbb\n\nccc\n", 10,
			[]result{{"a", nil}, {"bb", nil}, {"", nil}, {"ccc", nil}, {"", io.EOF}}},
		{"final line without newline", "a\nlast", 10,
			[]result{{"a", nil}, {"last", nil}, {"", io.EOF}}},
		{"empty input", "", 10, []result{{"", io.EOF}}},
		{"CRLF kept", "a\r\nb\r\n", 10, []result{{"a\r", nil}, {"b\r", nil}, {"", io.EOF}}},
		{"exactly max, then max+1", strings.Repeat("y", 32) + "\n" + strings.Repeat("z", 33) + "\nok\n", 32,
			[]result{{strings.Repeat("y", 32), nil}, {"", ErrLineTooLong}, {"ok", nil}, {"", io.EOF}}},
		{"small max below bufio's minimum buffer", "abcd\nabcde\nx\n", 4,
			[]result{{"abcd", nil}, {"", ErrLineTooLong}, {"x", nil}, {"", io.EOF}}},
		{"long lines, then more", long + "\n" + long + long + "\nafter\n", 32,
			[]result{{"", ErrLineTooLong}, {"", ErrLineTooLong}, {"after", nil}, {"", io.EOF}}},
		{"long final line without newline", "a\n" + long, 32,
			[]result{{"a", nil}, {"", ErrLineTooLong}, {"", io.EOF}}},
		{"max+1 final line without newline", "a\n" + strings.Repeat("q", 33), 32,
			[]result{{"a", nil}, {"", ErrLineTooLong}, {"", io.EOF}}},
		{"small max, final line too long", "abcdefgh", 4,
			[]result{{"", ErrLineTooLong}, {"", io.EOF}}},
	} {
		for _, wrap := range []struct {
			name string
			r    func(io.Reader) io.Reader
		}{
			{"", func(r io.Reader) io.Reader { return r }},
			{"/one byte", iotest.OneByteReader},
			{"/data with EOF", iotest.DataErrReader},
		} {
			t.Run(tc.name+wrap.name, func(t *testing.T) {
				l := NewLineReader(wrap.r(strings.NewReader(tc.in)), tc.max)
				got := readAll(l, len(tc.want)+2)
				if len(got) != len(tc.want) {
					t.Fatalf("got %v, want %v", got, tc.want)
				}
				for i := range got {
					if got[i] != tc.want[i] {
						t.Errorf("Next #%d = %v, want %v", i+1, got[i], tc.want[i])
					}
				}
				// EOF stays.
				if _, err := l.Next(); err != io.EOF {
					t.Errorf("Next after EOF = %v", err)
				}
			})
		}
	}
}

func TestLineReaderReadError(t *testing.T) {
	boom := errors.New("boom")
	r := io.MultiReader(strings.NewReader("ok\npartial"), iotest.ErrReader(boom))
	l := NewLineReader(r, 64)
	want := []result{{"ok", nil}, {"", boom}}
	if got := readAll(l, 3); len(got) != 2 || got[0] != want[0] || got[1] != want[1] {
		t.Errorf("got %v, want %v", got, want)
	}
	if _, err := l.Next(); err != boom {
		t.Errorf("Next after an error = %v, want it again", err)
	}
	// A read error while discarding a line too long: the line is reported,
	// then the error.
	r = io.MultiReader(strings.NewReader(strings.Repeat("x", 100)), iotest.ErrReader(boom))
	l = NewLineReader(r, 16)
	if got := readAll(l, 3); len(got) != 2 || got[0].err != ErrLineTooLong || got[1].err != boom {
		t.Errorf("got %v, want too long then boom", got)
	}
}

func TestNewLineReaderPanics(t *testing.T) {
	defer func() {
		if recover() == nil {
			t.Error("NewLineReader(r, 0) did not panic")
		}
	}()
	NewLineReader(strings.NewReader(""), 0)
}

// endless streams a line of n bytes, then tail, and records the largest
// buffer it was asked to fill.
type endless struct {
	n        int
	tail     *strings.Reader
	largestP int
}

func (e *endless) Read(p []byte) (int, error) {
	e.largestP = max(e.largestP, len(p))
	if e.n == 0 {
		return e.tail.Read(p)
	}
	k := min(len(p), e.n)
	for i := range p[:k] {
		p[i] = 'a'
	}
	e.n -= k
	return k, nil
}

// TestLineReaderStreams shows that a line far longer than max is discarded
// as it streams: 64 MiB go through a LineReader of 1 KiB that is never
// asked to hold more than max+1 bytes, and the lines after it are read.
func TestLineReaderStreams(t *testing.T) {
	const maxLine = 1024
	src := &endless{n: 64 << 20, tail: strings.NewReader("\n{\"next\":1}\n")}
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	l := NewLineReader(src, maxLine)
	if _, err := l.Next(); err != ErrLineTooLong {
		t.Fatalf("Next = %v, want ErrLineTooLong", err)
	}
	runtime.ReadMemStats(&after)
	if line, err := l.Next(); err != nil || string(line) != `{"next":1}` {
		t.Fatalf("Next after the long line = %q, %v", line, err)
	}
	if src.largestP > maxLine+1 {
		t.Errorf("the LineReader read into a buffer of %d bytes, want at most %d", src.largestP, maxLine+1)
	}
	if grew := after.TotalAlloc - before.TotalAlloc; grew > 1<<20 {
		t.Errorf("reading a 64 MiB line allocated %d bytes", grew)
	}
}

// SetMax raises (or lowers) the longest line from the next line on,
// keeping what the reader had already buffered: the HAL reads a peer's
// first message under a small limit and the rest under the full one.
func TestLineReaderSetMax(t *testing.T) {
	long := strings.Repeat("b", 100)
	tests := []struct {
		name  string
		input string
		max   int // after the first line
		want  []string
	}{
		{"raised", "first\n" + long + "\nlast\n", 200, []string{"first", long, "last"}},
		{"lowered", "first\n" + long + "\nlast\n", 50, []string{"first", "too long", "last"}},
		{"nothing buffered", "first\n", 200, []string{"first"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			l := NewLineReader(strings.NewReader(tc.input), 64)
			var got []string
			for i := 0; ; i++ {
				line, err := l.Next()
				if err == io.EOF {
					break
				}
				switch {
				case err == ErrLineTooLong:
					got = append(got, "too long")
				case err != nil:
					t.Fatalf("line %d: %v", i, err)
				default:
					got = append(got, string(line))
				}
				if i == 0 {
					l.SetMax(tc.max)
				}
			}
			if !slices.Equal(got, tc.want) {
				t.Errorf("lines %q, want %q", got, tc.want)
			}
		})
	}
}

// TestNextStrict: NextStrict reports a line too long as soon as max+1
// bytes have come, from a peer that never sends the newline, and the
// reader stays spent; lines within the limit read as with Next.
func TestNextStrict(t *testing.T) {
	pr, pw := io.Pipe()
	defer pw.Close()
	go func() {
		io.WriteString(pw, "short\n")
		io.WriteString(pw, strings.Repeat("x", 2048)) // and nothing more, ever
	}()
	l := NewLineReader(pr, 1024)
	if line, err := l.NextStrict(); err != nil || string(line) != "short" {
		t.Fatalf("NextStrict = %q, %v; want short", line, err)
	}
	done := make(chan error, 1)
	go func() { _, err := l.NextStrict(); done <- err }()
	select {
	case err := <-done:
		if err != ErrLineTooLong {
			t.Fatalf("NextStrict = %v, want ErrLineTooLong", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("NextStrict waited for the end of a line too long")
	}
	pw.Close()
	if _, err := l.NextStrict(); err != ErrLineTooLong {
		t.Errorf("NextStrict after a line too long = %v, want ErrLineTooLong again", err)
	}
	// With a newline in time it reads as Next does, and still ends there.
	l = NewLineReader(strings.NewReader("ok\n"+strings.Repeat("y", 33)+"\nafter\n"), 32)
	var got []result
	for range 3 {
		line, err := l.NextStrict()
		got = append(got, result{string(line), err})
	}
	want := []result{{"ok", nil}, {"", ErrLineTooLong}, {"", ErrLineTooLong}}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("NextStrict %d = %v, want %v", i, got[i], want[i])
		}
	}
}

// Lines longer than the read buffer are gathered whole, up to max, through
// any reader; one past max is discarded and the next line read.
func TestLineReaderLongLines(t *testing.T) {
	const maxLine = 3*lineBuffer + 100
	long := strings.Repeat("L", maxLine)
	in := "short\n" + long + "\n" + long + "x\nafter\n" + long
	want := []result{{"short", nil}, {long, nil}, {"", ErrLineTooLong}, {"after", nil}, {long, nil}, {"", io.EOF}}
	for _, wrap := range []func(io.Reader) io.Reader{
		func(r io.Reader) io.Reader { return r }, iotest.OneByteReader, iotest.HalfReader, iotest.DataErrReader,
	} {
		got := readAll(NewLineReader(wrap(strings.NewReader(in)), maxLine), len(want)+1)
		if len(got) != len(want) {
			t.Fatalf("got %d results, want %d", len(got), len(want))
		}
		for i := range got {
			if got[i] != want[i] {
				t.Errorf("Next #%d = %.40q (%d bytes), %v; want %.40q (%d bytes), %v",
					i+1, got[i].line, len(got[i].line), got[i].err, want[i].line, len(want[i].line), want[i].err)
			}
		}
	}
}

// A LineReader costs its read buffer, not its maximum: a connection that
// may send lines of 4 MiB but sends short ones holds a few KiB. A long
// line's slice is let go at the next short line.
func TestLineReaderHoldsLittle(t *testing.T) {
	const readers = 100
	in := strings.Repeat("x", 64<<10) + "\nshort\n"
	ls := make([]*LineReader, readers)
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	for i := range ls {
		ls[i] = NewLineReader(strings.NewReader(in), 4<<20)
	}
	runtime.ReadMemStats(&after)
	if per := (after.TotalAlloc - before.TotalAlloc) / readers; per > 2*lineBuffer {
		t.Errorf("a LineReader of max 4 MiB allocated %d bytes, want at most %d", per, 2*lineBuffer)
	}
	l := ls[0]
	if line, err := l.Next(); err != nil || len(line) != 64<<10 || cap(l.long) > 64<<10 {
		t.Fatalf("long line: %d bytes, %v; gathered in %d", len(line), err, cap(l.long))
	}
	if line, err := l.Next(); err != nil || string(line) != "short" || l.long != nil {
		t.Fatalf("Next = %q, %v; the long line still held: %v", line, err, l.long != nil)
	}
}
