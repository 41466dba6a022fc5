package conn

import (
	"bytes"
	"io"
	"log/slog"
	"sync"
	"testing"
	"time"
)

// syncBuffer is an io.Writer the test can read while the writer writes.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// Frames queued before close are written, in order, and the writer then
// stops; nothing is queued after close. Closing before the writer has
// looked at its queue makes its stop and its wake-up ready at once, the
// moment where a cancel queued just before the end was lost: repeated, so
// that the old writer, which returned on stop, fails nearly surely.
func TestWriterDrainsOnClose(t *testing.T) {
	for i := 0; i < 50; i++ {
		var out syncBuffer
		w := newWriter(&out)
		if !w.send([]byte("ping"), nil) {
			t.Fatal("send refused before close")
		}
		written := make(chan struct{})
		if !w.send([]byte("cancel"), written) {
			t.Fatal("send refused before close")
		}
		w.close()
		if w.send([]byte("late"), nil) {
			t.Fatal("a frame was queued after close")
		}
		ran := make(chan struct{})
		c := &Conn{log: slog.New(slog.NewTextHandler(io.Discard, nil))}
		go func() { defer close(ran); w.run(c) }()
		select {
		case <-ran:
		case <-time.After(wait):
			t.Fatal("the writer did not stop after its queue was drained")
		}
		if got := out.String(); got != "ping\ncancel\n" {
			t.Fatalf("run %d wrote %q, want the two frames queued before close", i, got)
		}
		select {
		case <-written:
		default:
			t.Fatal("a drained frame's written channel was not closed")
		}
	}
}

// The writer's end-of-connection path: a write error ends the connection
// with write_error and the writer stops, frames left behind or not.
func TestWriterErrorEnds(t *testing.T) {
	f := newFixture(t, seedConfig())
	c := f.ready()
	f.peer.in.Close() // the adapter closed its standard input
	if !c.out.send([]byte(`{"jsonrpc":"2.0","method":"noop"}`), nil) {
		t.Fatal("send refused on a live connection")
	}
	if e := ended(t, c); e.Reason != "write_error" {
		t.Fatalf("end %+v, want write_error", e)
	}
}
