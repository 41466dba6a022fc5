package jsonrpc

import (
	"bufio"
	"errors"
	"io"
)

// ErrLineTooLong reports a line longer than a LineReader's maximum. The
// line has been discarded; the reader goes on with the next one.
var ErrLineTooLong = errors.New("jsonrpc: line too long")

// LineReader reads '\n'-ended lines of at most a given length, for the
// TCP and Unix transports of the HAL and for the adapters' standard
// output. It reads through a buffer of lineBuffer bytes; a line longer
// than that is gathered in a slice that grows with it, up to max bytes.
// The slice serves the long lines that follow and is let go at the first
// short one, so that a connection that sent one long line does not hold
// it for its whole life. A line longer than max is discarded as it
// streams in, so a peer cannot make it buffer a line whole.
type LineReader struct {
	r    *bufio.Reader
	max  int
	long []byte // a line longer than the buffer, as gathered so far
	err  error  // sticky: once set, every Next returns it
}

// lineBuffer is the size of a LineReader's read buffer.
const lineBuffer = 4 << 10

// NewLineReader returns a LineReader reading from r lines of at most max
// bytes, not counting the '\n'. It panics if max < 1.
func NewLineReader(r io.Reader, max int) *LineReader {
	if max < 1 {
		panic("jsonrpc: NewLineReader with max < 1")
	}
	return &LineReader{r: bufio.NewReaderSize(r, min(max+1, lineBuffer)), max: max}
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

// NextStrict is Next for a stream that ends at a line too long: as soon
// as more than max bytes have come without a '\n', it returns
// ErrLineTooLong, without waiting for the line's end (a peer may never
// send it), and the reader is spent: every later call returns
// ErrLineTooLong. The HAL's line transports answer and close then; the
// adapter protocol, which goes on after such a line, uses Next.
func (l *LineReader) NextStrict() ([]byte, error) {
	return l.next(true)
}

// next reads one line; a line too long is discarded to its end, or with
// strict ends the stream at once.
func (l *LineReader) next(strict bool) ([]byte, error) {
	if l.err != nil {
		return nil, l.err
	}
	l.long = l.long[:0] // the last line is no longer the caller's
	for {
		frag, err := l.r.ReadSlice('\n')
		switch err {
		case nil:
			frag = frag[:len(frag)-1]
		case bufio.ErrBufferFull:
			if len(l.long)+len(frag) > l.max {
				l.long = nil
				if strict {
					l.err = ErrLineTooLong
					return nil, l.err
				}
				return nil, l.discard()
			}
			l.gather(frag)
			continue
		default:
			l.err = err
			if err != io.EOF || len(l.long)+len(frag) == 0 {
				l.long = nil
				return nil, err
			}
		}
		if len(l.long)+len(frag) > l.max { // bufio's buffer is at least 16 bytes
			l.long = nil
			if strict {
				l.err = ErrLineTooLong
			}
			return nil, ErrLineTooLong
		}
		if len(l.long) == 0 {
			l.long = nil // a short line: let a long one's slice go
			return frag, nil
		}
		l.gather(frag)
		return l.long, nil
	}
}

// gather appends a piece of a long line, growing the slice at most to
// max: a line of max bytes never costs twice that.
func (l *LineReader) gather(frag []byte) {
	need := len(l.long) + len(frag)
	if need > cap(l.long) {
		b := make([]byte, len(l.long), min(max(2*cap(l.long), need, lineBuffer), l.max))
		copy(b, l.long)
		l.long = b
	}
	l.long = append(l.long, frag...)
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
// on; what is already buffered is kept (a long line is gathered beside
// the read buffer, whose size does not depend on max). The HAL raises it
// once a peer has authenticated, so that a peer without a token is held
// to a small limit. It panics if max < 1, and must not be called
// concurrently with Next.
func (l *LineReader) SetMax(max int) {
	if max < 1 {
		panic("jsonrpc: LineReader.SetMax with max < 1")
	}
	l.max = max
}
