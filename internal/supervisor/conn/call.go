package conn

import (
	"context"
	"encoding/json"
	"errors"
	"sync"
	"time"

	"github.com/openhal/gateway/adapterproto"
	"github.com/openhal/gateway/jsonrpc"
)

// maxCancelled bounds the remembered ids of cancelled requests. An adapter
// that never answers would otherwise grow the set by one id per deadline;
// a reply to an id forgotten this way counts as a second response.
const maxCancelled = 4096

// call is one daemon request waiting for its reply.
type call struct {
	done   chan struct{}
	once   sync.Once
	result json.RawMessage
	err    error
}

func (cl *call) finish(res json.RawMessage, err error) {
	cl.once.Do(func() {
		cl.result, cl.err = res, err
		close(cl.done)
	})
}

// AdapterError is an adapter's error answer, kept whole: the HAL client
// gets it in data.error.
type AdapterError struct{ Err *jsonrpc.Error }

func (e *AdapterError) Error() string { return "the adapter answered: " + e.Err.Error() }

// Call sends a request and waits for its reply, at most timeout (0: the
// configured Timing.Request) from now, waiting for a free slot included
// (section 4: requests beyond max_in_flight "wait in order, bounded by their
// own deadlines"). On the deadline, or when ctx ends, the request is
// forgotten and cancelled, and its id remembered so that a late reply is
// dropped and counted rather than struck.
//
// The error is *AdapterError for an error answer, ErrTimeout, ctx's error,
// or ErrCrashed when the connection ends first.
func (c *Conn) Call(ctx context.Context, method string, params any, timeout time.Duration) (json.RawMessage, error) {
	if timeout <= 0 {
		timeout = c.cfg.Timing.Request
	}
	expired := make(chan struct{})
	t := c.clk.AfterFunc(timeout, func() { close(expired) })
	defer t.Stop()
	if err := c.slots.acquire(ctx, expired, c.done); err != nil {
		return nil, c.waitError(ctx, expired)
	}
	defer c.slots.release()
	return c.roundTrip(ctx, method, params, expired)
}

// waitError says why a wait ended without a reply.
func (c *Conn) waitError(ctx context.Context, expired <-chan struct{}) error {
	select {
	case <-c.done:
		return ErrCrashed
	case <-expired:
		return ErrTimeout
	default:
		return ctx.Err()
	}
}

// roundTrip sends one request, outside the in-flight slots (pings use it
// directly), and waits for its reply until expired or ctx.
func (c *Conn) roundTrip(ctx context.Context, method string, params any, expired <-chan struct{}) (json.RawMessage, error) {
	id, cl, err := c.register()
	if err != nil {
		return nil, err
	}
	frame, err := jsonrpc.AppendRequest(nil, rpcID(id), method, params)
	if err != nil {
		c.forget(id)
		return nil, err
	}
	c.stats.requests.Add(1)
	c.out.send(frame, nil)
	select {
	case <-cl.done:
		return cl.result, cl.err
	case <-expired:
	case <-ctx.Done():
	}
	if !c.abandon(id) {
		<-cl.done // answered (or crashed) as the wait ended
		return cl.result, cl.err
	}
	return nil, c.waitError(ctx, expired)
}

// register numbers a request and records it as pending.
func (c *Conn) register() (uint64, *call, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if !c.alive() {
		return 0, nil, ErrCrashed
	}
	id := c.nextID
	c.nextID++
	cl := &call{done: make(chan struct{})}
	c.pending[id] = cl
	return id, cl, nil
}

func (c *Conn) forget(id uint64) {
	c.mu.Lock()
	delete(c.pending, id)
	c.mu.Unlock()
}

// abandon gives up a pending request: it is forgotten at once, its id
// remembered, and cancel {id} sent. It reports false when the request was
// no longer pending (its reply won the race).
func (c *Conn) abandon(id uint64) bool {
	c.mu.Lock()
	if _, ok := c.pending[id]; !ok {
		c.mu.Unlock()
		return false
	}
	delete(c.pending, id)
	c.cancelled[id] = struct{}{}
	c.cancelLog = append(c.cancelLog, id)
	if len(c.cancelLog) > maxCancelled {
		delete(c.cancelled, c.cancelLog[0])
		c.cancelLog = c.cancelLog[1:]
	}
	c.mu.Unlock()
	if frame, err := jsonrpc.AppendNotification(nil, adapterproto.MethodCancel, adapterproto.CancelParams{ID: id}); err == nil {
		c.out.send(frame, nil)
	}
	return true
}

// onResponse routes a reply: to its waiting request; dropped and counted
// when its request was cancelled; a strike when its id was never issued
// or already answered.
func (c *Conn) onResponse(m jsonrpc.Message) {
	id, _ := jsonrpc.ParseUint64ID(m.ID) // DecodeAdapter checked it
	c.mu.Lock()
	if cl, ok := c.pending[id]; ok {
		delete(c.pending, id)
		c.mu.Unlock()
		if m.Error != nil {
			cl.finish(nil, &AdapterError{Err: m.Error})
		} else {
			cl.finish(m.Result, nil)
		}
		return
	}
	if _, ok := c.cancelled[id]; ok {
		delete(c.cancelled, id)
		c.mu.Unlock()
		c.stats.late.Add(1)
		return
	}
	issued := id >= 1 && id < c.nextID
	c.mu.Unlock()
	if issued {
		c.violation("second_response", "a second reply to id "+string(m.ID))
	} else {
		c.violation("unknown_id", "a reply to id "+string(m.ID)+", which was never issued")
	}
}

// fifoSem is a counting semaphore whose waiters are served in arrival
// order, each bounded by its own deadline.
type fifoSem struct {
	mu      sync.Mutex
	free    int
	waiters []chan struct{}
}

var errNoSlot = errors.New("no slot")

// acquire takes a slot, waiting in order until one frees, or returns
// errNoSlot when ctx, expired or done ends the wait first.
func (s *fifoSem) acquire(ctx context.Context, expired, done <-chan struct{}) error {
	s.mu.Lock()
	if s.free > 0 && len(s.waiters) == 0 {
		s.free--
		s.mu.Unlock()
		return nil
	}
	ch := make(chan struct{})
	s.waiters = append(s.waiters, ch)
	s.mu.Unlock()
	select {
	case <-ch:
		return nil
	case <-ctx.Done():
	case <-expired:
	case <-done:
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	for i, w := range s.waiters {
		if w == ch {
			s.waiters = append(s.waiters[:i], s.waiters[i+1:]...)
			return errNoSlot
		}
	}
	// The slot was handed over as the wait ended: pass it on.
	s.releaseLocked()
	return errNoSlot
}

func (s *fifoSem) release() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.releaseLocked()
}

func (s *fifoSem) releaseLocked() {
	if len(s.waiters) > 0 {
		close(s.waiters[0])
		s.waiters = s.waiters[1:]
		return
	}
	s.free++
}
