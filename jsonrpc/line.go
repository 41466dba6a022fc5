package jsonrpc

import (
	"bufio"
	"bytes"
	"errors"
	"io"
)

// ErrLineTooLong reports a line longer than a LineReader's maximum. The
// line has been discarded; the reader goes on with the next one.
var ErrLineTooLong = errors.New("jsonrpc: line too long")

// LineReader reads '\n'-ended lines of at most a given length, for the
// TCP and Unix transports of the HAL and for the adapters' standard
// output. It never holds more than about max bytes: a longer line is
// discarded as it streams in, so a peer cannot make it buffer a line
// whole.
type LineReader struct {
	r   *bufio.Reader
	max int
	err error // sticky: once set, every Next returns it

	src io.Reader // what r reads, for SetMax
}

// NewLineReader returns a LineReader reading from r lines of at most max
// bytes, not counting the '\n'. It panics if max < 1.
func NewLineReader(r io.Reader, max int) *LineReader {
	if max < 1 {
		panic("jsonrpc: NewLineReader with max < 1")
	}
	return &LineReader{r: bufio.NewReaderSize(r, max+1), max: max, src: r}
}

// Next returns the next line without its '\n'; the slice is valid until
// the next call. A line longer than max bytes is discarded as it streams
// and reported as ErrLineTooLong once its end is reached (or at EOF); the
// reader then goes on with the next line. A final line without '\n' at EOF
// is returned, then io.EOF. A "\r\n" ending is not stripped: the adapter
// protocol ends lines with '\n' alone. A read error other than io.EOF is
// returned once the line in progress is given up, and from then on.
func (l *LineReader) Next() ([]byte, error) {
	return l.next(false)
}

// next reads one line; a line too long is discarded to its end, or with
// strict ends the stream at once.
func (l *LineReader) next(strict bool) ([]byte, error) {
	if l.err != nil {
		return nil, l.err
	}
	line, err := l.r.ReadSlice('\n')
	switch err {
	case nil:
		line = line[:len(line)-1]
	case bufio.ErrBufferFull:
		if strict {
			l.err = ErrLineTooLong
			return nil, l.err
		}
		return nil, l.discard()
	default:
		l.err = err
		if err != io.EOF || len(line) == 0 {
			return nil, err
		}
	}
	if len(line) > l.max { // bufio's buffer is at least 16 bytes
		if strict {
			l.err = ErrLineTooLong
		}
		return nil, ErrLineTooLong
	}
	return line, nil
}

// NextStrict is Next for a stream that ends at a line too long: as soon
// as more than max bytes have come without a '\n', it returns
// ErrLineTooLong, without waiting for the line's end (a peer may never
// send it), and the reader is spent: every later call returns
// ErrLineTooLong. The HAL's line transports answer and close then; the
// adapter protocol, which goes on after such a line, uses Next.
func (l *LineReader) NextStrict() ([]byte, error) {
	return l.next(true)
}

// discard drops the rest of a line too long, one buffer at a time.
func (l *LineReader) discard() error {
	for {
		_, err := l.r.ReadSlice('\n')
		switch err {
		case nil:
			return ErrLineTooLong
		case bufio.ErrBufferFull:
		default:
			l.err = err
			return ErrLineTooLong
		}
	}
}

// SetMax changes the longest line accepted, from the next call of Next
// on; what is already buffered is kept. The HAL raises it once a peer has
// authenticated, so that a peer without a token holds a small buffer. It
// panics if max < 1, and must not be called concurrently with Next.
func (l *LineReader) SetMax(max int) {
	if max < 1 {
		panic("jsonrpc: LineReader.SetMax with max < 1")
	}
	src := l.src
	if n := l.r.Buffered(); n > 0 {
		buffered, _ := l.r.Peek(n)
		src = io.MultiReader(bytes.NewReader(append([]byte(nil), buffered...)), l.src)
	}
	l.r = bufio.NewReaderSize(src, max+1)
	l.max = max
}
