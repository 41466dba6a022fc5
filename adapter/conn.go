package adapter

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"sync"
	"sync/atomic"

	"github.com/openhal/gateway/adapterproto"
	"github.com/openhal/gateway/jsonrpc"
)

// readMax bounds a line from the daemon. The daemon's limits.max_line
// bounds what it reads, not what it writes, and it arrives only inside
// initialize, after the reader exists; 1 MiB is four times the default and
// keeps an adapter's buffer small on a Pi. A longer line is discarded and
// logged.
const readMax = 1 << 20

// Conn is one run of an adapter's connection to the daemon: what the
// callbacks are given to learn what initialize said and to call the
// daemon. Its methods are safe for concurrent use.
type Conn struct {
	a   Adapter
	log *slog.Logger
	out *writer

	params adapterproto.InitializeParams // set before the answer to initialize

	nextID  atomic.Uint64 // the adapter's last request id
	closing chan struct{} // closed when Run starts to end
	endOnce sync.Once

	mu       sync.Mutex
	calls    map[uint64]chan jsonrpc.Message // the adapter's requests waiting for their answer
	inFlight map[uint64]context.CancelFunc   // the daemon's requests not answered yet

	handlers sync.WaitGroup // device requests being served
	events   chan Event     // to the OnEvent goroutine; nil until initialize
	dropped  uint64         // events dropped since the last one queued (main loop only)
	eventsWG sync.WaitGroup
	ctx      context.Context // the connection's: ends when Run does
}

// ErrNotReady is the error of a call or notification made before
// initialize is answered: until then the adapter must stay silent.
var ErrNotReady = errors.New("the adapter may not send before initialize is answered")

// ErrClosed is the error of a call made, or still waiting, when Run is
// over.
var ErrClosed = errors.New("the connection to the daemon is closed")

func newConn(a Adapter, w io.Writer) *Conn {
	return &Conn{
		a: a, log: a.Logger, out: newWriter(w),
		closing:  make(chan struct{}),
		calls:    map[uint64]chan jsonrpc.Message{},
		inFlight: map[uint64]context.CancelFunc{},
	}
}

// Params returns initialize's params: the adapter's kind, grant, state
// directory (Paths.State, also its HOME) and limits. They are set before
// OnInitialize is called.
func (c *Conn) Params() adapterproto.InitializeParams { return c.params }

// inbound is one line read: a message, or why there is none. A fatal
// error ends Run; any other is a frame to discard.
type inbound struct {
	msg   jsonrpc.Message
	err   error
	fatal bool
}

// read turns lines into messages until r ends or Run is over; decoding
// here keeps the main loop free to watch ctx.
func (c *Conn) read(r io.Reader, to chan<- inbound) {
	defer close(to)
	lines := jsonrpc.NewLineReader(r, readMax)
	for {
		line, err := lines.Next()
		var in inbound
		switch {
		case errors.Is(err, jsonrpc.ErrLineTooLong):
			in.err = err
		case err != nil:
			if !errors.Is(err, io.EOF) {
				select {
				case to <- inbound{err: fmt.Errorf("read from daemon: %w", err), fatal: true}:
				case <-c.closing:
				}
			}
			return
		default:
			in.msg, in.err = jsonrpc.DecodeAdapter(line)
		}
		select {
		case to <- in:
		case <-c.closing:
			return
		}
	}
}

// run is Run's loop: one message at a time, in order, so that the
// handshake, cancels and events keep the order the daemon sent them in.
func (c *Conn) run(parent context.Context, r io.Reader) error {
	ctx, cancel := context.WithCancel(parent)
	c.ctx = ctx
	lines := make(chan inbound)
	go c.read(r, lines)
	defer func() {
		c.finish()
		cancel()
	}()
	for {
		var in inbound
		var ok bool
		select {
		case <-parent.Done():
			return parent.Err()
		case <-c.out.broken:
			return c.out.failure()
		case in, ok = <-lines:
		}
		switch {
		case !ok: // end of input: the daemon is gone or stops us
			return c.out.failure()
		case errors.Is(in.err, jsonrpc.ErrEmptyLine):
			continue
		case in.fatal:
			return in.err
		case in.err != nil:
			c.log.Warn("frame from daemon discarded", "err", in.err)
			continue
		}
		stop, err := c.dispatch(in.msg)
		if stop || err != nil {
			return err
		}
	}
}

// finish ends what the connection started, once: calls to the daemon
// fail from now on (nobody reads their answers any more), every device
// request is cancelled and waited for (what its handler answers is still
// sent: each request gets its answer before shutdown's), and the events
// already queued are delivered, so that no callback runs after Run.
func (c *Conn) finish() {
	c.endOnce.Do(func() {
		close(c.closing)
		c.mu.Lock()
		for _, cancel := range c.inFlight {
			cancel()
		}
		c.mu.Unlock()
		c.handlers.Wait()
		if c.events != nil {
			close(c.events)
			c.eventsWG.Wait()
		}
	})
}

// dispatch handles one message. stop ends Run: shutdown, or a handshake
// that cannot go on.
func (c *Conn) dispatch(m jsonrpc.Message) (stop bool, err error) {
	if m.IsResponse() {
		c.answered(m)
		return false, nil
	}
	if !c.out.isReady() {
		if m.Method == adapterproto.MethodInitialize && m.IsRequest() {
			return c.initialize(m)
		}
		c.log.Warn("message before initialize ignored", "method", m.Method)
		return false, nil
	}
	if m.IsNotification() {
		c.notification(m)
		return false, nil
	}
	switch m.Method {
	case adapterproto.MethodPing:
		c.reply(m.ID, adapterproto.Empty{})
	case adapterproto.MethodShutdown:
		c.finish()
		c.reply(m.ID, adapterproto.Empty{})
		return true, c.out.failure()
	case adapterproto.MethodDeviceRead, adapterproto.MethodDeviceWrite:
		c.deviceRequest(m)
	default:
		c.replyError(m.ID, &Error{Code: jsonrpc.CodeMethodNotFound, Message: "method not found: " + m.Method})
	}
	return false, nil
}

// notification handles the daemon's notifications; unknown ones are
// ignored, as the seed asks.
func (c *Conn) notification(m jsonrpc.Message) {
	switch m.Method {
	case adapterproto.MethodInitialized:
		if c.a.OnInitialized == nil {
			return
		}
		c.handlers.Add(1)
		go func() {
			defer c.handlers.Done()
			c.a.OnInitialized(c.ctx, c)
		}()
	case adapterproto.MethodEvent:
		if c.a.OnEvent == nil {
			return
		}
		var e Event
		if err := unmarshalParams(m.Params, &e); err != nil {
			c.log.Warn("event discarded", "err", err)
			return
		}
		e.Dropped += c.dropped
		select {
		case c.events <- e:
			c.dropped = 0
		default:
			c.dropped = e.Dropped + 1
		}
	case adapterproto.MethodCancel:
		var p adapterproto.CancelParams
		if err := unmarshalParams(m.Params, &p); err != nil {
			c.log.Warn("cancel discarded", "err", err)
			return
		}
		c.cancel(p.ID)
	}
}

// cancel cancels the daemon's request id and answers it with -32024 if
// its handler has not answered yet; the handler's own answer is then
// dropped. A cancel for a request already answered does nothing.
func (c *Conn) cancel(id uint64) {
	c.mu.Lock()
	stop, ok := c.inFlight[id]
	delete(c.inFlight, id)
	c.mu.Unlock()
	if !ok {
		return
	}
	stop()
	c.replyError(jsonrpc.IntID(id), &Error{Code: adapterproto.CodeCancelled, Message: "cancelled"})
}

func unmarshalParams(raw json.RawMessage, v any) error {
	if len(raw) == 0 {
		raw = json.RawMessage("{}")
	}
	if err := json.Unmarshal(raw, v); err != nil {
		return fmt.Errorf("decode params: %w", err)
	}
	return nil
}
