package halhub

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"time"

	"github.com/openhal/gateway/internal/halhub/token"
	"github.com/openhal/gateway/jsonrpc"
	"github.com/openhal/gateway/openhal"
)

// transport is one client connection, whatever carries it.
type transport interface {
	// read returns the next message, which may be valid only until the
	// next read. It returns errTooLarge for a message over the limit,
	// after which the connection ends.
	read(ctx context.Context) ([]byte, error)
	// write writes messages in order.
	write(ctx context.Context, msgs [][]byte) error
	// close ends the connection; a blocked read or write returns.
	close() error
	// shutdown ends the connection the clean way of its protocol, once
	// every answer is written.
	shutdown() error
	// remote is the peer's address, without port where it has one: the key
	// of the UNAUTHORIZED rate limit.
	remote() string
}

var errTooLarge = errors.New("message too large")

// quickState is what the reader keeps from one cached read to the next
// (quickRead): the device id last read and the answer's room.
type quickState struct {
	device string
	result openhal.ValueResult
	entry  token.Entry // the session's token, as handleRequest found it for this request
}

// tryWriter is a transport on which the goroutine that made an answer may
// write it itself without ever waiting for the client (replyNow). It is
// called only under the queue's claim, one call at a time.
type tryWriter interface {
	// tryWrite writes msgs, each framed, in order, with one system call,
	// as far as the transport takes them at once. all reports them
	// written whole; otherwise rest is what is left, as one message that
	// write completes, framing and all — or nil when the transport keeps
	// what is left itself and sends it first at its next write
	// (WebSocket: cork.go). scratch is the caller's buffer for the
	// batch, kept between calls; nil: the transport's own.
	tryWrite(msgs [][]byte, scratch *[]byte) (rest []byte, all bool, err error)
	// fits reports whether tryWrite may be given size bytes of messages:
	// false when it could not write them without waiting.
	fits(size int) bool
}

// Session phases (seed 3.1.1).
const (
	phaseNew         = iota // waiting for hal/initialize
	phaseInitialized        // answered hal/initialize; no notifications yet
	phaseReady              // got hal/initialized; notifications flow
)

// session is one client connection.
type session struct {
	hub         *Hub
	tr          transport
	bearer      string // token from the transport (WebSocket header)
	q           *outQueue
	inflight    atomic.Int32
	inBytes     atomic.Int64  // bytes of the requests in flight, until answered (requestCost)
	pageTurn    chan struct{} // a token while a page is built for this connection (buildPage)
	idle        chan struct{} // a token when inflight dropped to zero (Shutdown waits on it)
	maxMsgBytes int           // the largest message now (smaller before hal/initialize); reader only
	local       *Local        // set for an in-process principal (an adapter)
	tw          tryWriter     // the transport, when an answer's goroutine may write to it (replyNow); nil: never
	fanned      atomic.Bool   // in the fan-out's next pass (fanout.mark)
	claimed     claimBuf      // replyNow's batch for tw, under the queue's claim
	released    func()        // s.release, made once: a method value allocates
	// Counted here, and into the Hub's stats when the connection ends
	// (Hub.forget): one counter shared by every connection would be a
	// cache line the cores pass to each other on every request.
	messagesIn, requests atomic.Uint64
	scratch              []byte     // the reader's buffer for the answers it writes itself; reader only
	quick                quickState // quickRead's; reader only

	// Admission (admission.go): a ticket among the connections not yet
	// authenticated (nil: none), then a slot from hal/initialize on.
	ticket  *ticket
	slotted bool // under hub.mu

	// ctx ends when the connection does: it cancels reads in flight, never
	// writes (a disconnect changes no device, seed 3.1.4).
	ctx    context.Context
	cancel context.CancelFunc
	done   chan struct{} // closed by close

	mu        sync.Mutex
	phase     int
	failures  int
	token     string
	entry     token.Entry
	principal openhal.Principal
	closeOnce sync.Once
}

func newSession(h *Hub, tr transport, bearer string) *session {
	ctx, cancel := context.WithCancel(context.Background())
	s := &session{
		hub: h, tr: tr, bearer: bearer,
		q:   newOutQueue(queueLimits{messages: h.opt.Limits.QueueLength, slack: valueSlack, bytes: h.opt.Limits.QueueBytes, take: h.opt.Limits.QueueBytes / 4}, h.queues, h.clk.Now),
		ctx: ctx, cancel: cancel, done: make(chan struct{}), idle: make(chan struct{}, 1),
		maxMsgBytes: h.opt.Limits.InitMessageBytes,
		pageTurn:    make(chan struct{}, 1),
	}
	s.released = s.release
	return s
}

// useTryWriter lets the goroutine that made an answer write it (replyNow)
// and the Hub's fan-out write the notifications (fanout.go), on tw. It is
// called before the session is registered.
func (s *session) useTryWriter(tw tryWriter) {
	s.tw = tw
	s.q.fan = func() { s.hub.fan.mark(s) }
}

// serve runs a connection to its end. The caller has registered it.
func (s *session) serve() {
	h := s.hub
	defer h.forget(s)
	if h.opt.OnSessions != nil {
		h.opt.OnSessions()
	}
	h.stats.connections.Add(1)
	writerDone := make(chan struct{})
	go func() { defer close(writerDone); s.writeLoop() }()
	initTimer := time.AfterFunc(h.opt.Limits.InitTimeout, func() {
		if s.phaseIs(phaseNew) {
			s.close("hal/initialize not completed in time")
		}
	})
	defer initTimer.Stop()
	s.readLoop()
	s.close("connection ended")
	<-writerDone
}

func (s *session) readLoop() {
	for {
		msg, err := s.tr.read(s.ctx)
		if errors.Is(err, errTooLarge) {
			e := errorf(jsonrpc.CodeInvalidRequest, "too_large", "message larger than %d bytes", s.maxMsgBytes)
			s.sendThenClose(jsonrpc.AppendError(nil, nil, e), "message too large")
			<-s.done // serve's close would drop the answer before it is written
			return
		}
		if err != nil {
			return
		}
		s.messagesIn.Add(1)
		s.handle(msg)
	}
}

// writeLoop writes whatever waits in the queue, in batches, until the
// connection closes.
func (s *session) writeLoop() {
	var batch [][]byte
	var written []func()
	for {
		select {
		case <-s.done:
			return
		case <-s.q.ready:
		}
		batch, written = s.q.take(batch[:0], written[:0])
		if len(batch) == 0 {
			continue
		}
		if err := s.tr.write(s.ctx, batch); err != nil {
			s.close("write failed")
			return
		}
		s.q.done()
		for _, f := range written {
			f()
		}
		clear(batch) // let the messages be collected
	}
}

// close ends the connection once; reads in flight are cancelled.
func (s *session) close(reason string) {
	s.closeOnce.Do(func() {
		s.hub.log.Debug("connection closed", "remote", s.tr.remote(), "principal", s.principalName(), "reason", reason)
		s.cancel()
		s.q.close() // before done: whoever waits on done finds its bytes given back
		close(s.done)
		s.tr.close()
	})
}

// sendThenClose writes one last message and closes. A client that does not
// read gets closed anyway after a second.
func (s *session) sendThenClose(msg []byte, reason string) {
	t := time.AfterFunc(time.Second, func() { s.close(reason) })
	if !s.q.push(msg, func() { t.Stop(); s.close(reason) }) {
		s.close(reason)
	}
}

// reply queues a request's answer; the request stops being in flight once
// it is written. An answer that does not fit in the queue closes the
// connection (spec §8: a message is never dropped).
func (s *session) reply(msg []byte) {
	if !s.q.push(msg, s.released) {
		s.overflow("answer")
	}
}

// replyNow sends a request's answer, from whichever goroutine made it (the
// reader for a cached read, the request's own goroutine for the others).
// When nothing is being written, that goroutine writes it itself (claim,
// tryWrite), after what waits on the connection, as far as the socket
// takes it at once, as an echo server would, instead of waking the
// writer: one hand-off between goroutines less per request, and an
// answer that waits neither behind the writers of other connections for
// a core nor, on a connection that also watches values, for the
// fan-out's next pass over 250 others. Otherwise it queues like any
// answer, behind what waits; and what the socket did not take at once
// goes to the writer (handOver), so that no goroutine waits on a client
// that does not read: that client's next requests are still read, and
// answered BUSY past the limit (spec §2). written reports msg written
// whole: the caller may reuse it.
func (s *session) replyNow(msg []byte) (written bool) {
	if s.tw == nil || !s.q.claim(msg, &s.claimed, s.tw.fits) {
		s.reply(msg)
		return false
	}
	b := &s.claimed
	rest, all, err := s.tw.tryWrite(b.batch, nil)
	onWritten := s.released
	if len(b.done) > 0 { // answers that waited: theirs first
		onWritten = afterAll(append(b.done, s.released))
	}
	// The next claim may come as soon as settle ends this one.
	b.clear()
	return s.settle(rest, all, err, onWritten)
}

// settle ends a batch the caller took from the queue (take, claim) and
// gave to tryWrite: written whole, the queue is done with it and
// onWritten runs; in part, what is left goes to the writer first in line,
// onWritten to run once it is written; on an error the connection closes.
// It reports the batch written whole.
func (s *session) settle(rest []byte, all bool, err error, onWritten func()) bool {
	switch {
	case err != nil:
		s.close("write failed")
	case all:
		s.q.done()
		if onWritten != nil {
			onWritten()
		}
		return true
	default:
		s.q.handOver(rest, onWritten)
	}
	return false
}

// replyOnReader is replyNow for an answer the reader made in its scratch
// buffer (s.scratch): written whole, the buffer is kept for the next
// answer; queued or handed over, the queue owns it.
func (s *session) replyOnReader(msg []byte) {
	if s.replyNow(msg) {
		s.scratch = msg[:0]
	} else {
		s.scratch = nil
	}
}

// encodeResult is a result's answer; a result that cannot be encoded is
// answered with an internal error.
// It appends to dst.
func (s *session) encodeResult(dst, id []byte, result any) []byte {
	msg, err := jsonrpc.AppendResult(dst, id, result)
	if err != nil {
		s.hub.log.Error("encode result", "err", err)
		msg = jsonrpc.AppendError(dst, id, errInternal(err))
	}
	return msg
}

// encodeError is an error's answer, counted in the Hub's statistics,
// appended to dst.
func (s *session) encodeError(dst, id []byte, e *jsonrpc.Error) []byte {
	s.hub.stats.errors.Add(1)
	return jsonrpc.AppendError(dst, id, e)
}

func (s *session) replyResult(id []byte, result any) { s.reply(s.encodeResult(nil, id, result)) }

func (s *session) replyError(id []byte, e *jsonrpc.Error) { s.reply(s.encodeError(nil, id, e)) }

// notify queues a notification. A full queue closes the connection: a
// notification other than a value is never dropped (spec §8).
func (s *session) notify(msg []byte) {
	if !s.q.push(msg, nil) {
		s.overflow("notification")
	}
}

// overflow closes a connection whose queue cannot take a message. It is
// never called under the Hub's lock (eachAudience): closing may take it.
func (s *session) overflow(what string) {
	s.hub.stats.overflows.Add(1)
	s.close("queue full (client not reading): a " + what + " did not fit")
}

// requestCost is what a request holds while it is in flight: its
// message. (What serving it takes besides is bounded by MaxInFlight.)
func requestCost(raw []byte) int64 { return int64(len(raw)) }

// acquire takes a request in flight, or refuses it with BUSY: past
// MaxInFlight requests, or past MaxMessageBytes held by the messages of
// the requests in flight (one request alone is always taken), so that a
// connection's requests waiting at a device or for the audit log hold at
// most one message's worth of memory. hal/stop is never refused for the
// requests in flight (acquireStop).
func (s *session) acquire(method string, cost int64) *jsonrpc.Error {
	if method == openhal.MethodStop {
		return s.acquireStop(cost)
	}
	lim := s.hub.opt.Limits
	if s.inflight.Add(1) > int32(lim.MaxInFlight) {
		s.inflight.Add(-1)
		return errorf(openhal.CodeBusy, "too_many_in_flight", "more than %d requests in flight", lim.MaxInFlight)
	}
	if held := s.inBytes.Add(cost); held != cost && held > int64(lim.MaxMessageBytes) {
		s.inBytes.Add(-cost)
		s.inflight.Add(-1) // another request is in flight: never the last
		return errorf(openhal.CodeBusy, "too_many_in_flight",
			"the requests in flight hold more than %d bytes; wait for their answers", lim.MaxMessageBytes)
	}
	return nil
}

// acquireStop takes a hal/stop in flight beyond the limits that other
// requests fill: a connection that pipelines writes up to its limits can
// still stop everything at once. It is still bounded: one stop's room
// beyond them (MaxInFlight+1 requests, MaxMessageBytes and one message),
// which only a stop can take. So a stop is refused only while an earlier
// stop of this connection holds that room — and that one engages the
// stop.
func (s *session) acquireStop(cost int64) *jsonrpc.Error {
	lim := s.hub.opt.Limits
	if s.inflight.Add(1) > int32(lim.MaxInFlight)+1 {
		s.inflight.Add(-1)
		return errorf(openhal.CodeBusy, "stop_in_flight", "a stop sent earlier on this connection is still being engaged; wait for its answer")
	}
	if before := s.inBytes.Add(cost) - cost; before > int64(lim.MaxMessageBytes) {
		s.inBytes.Add(-cost)
		s.inflight.Add(-1)
		return errorf(openhal.CodeBusy, "stop_in_flight", "a stop sent earlier on this connection is still being engaged; wait for its answer")
	}
	return nil
}

// unhold gives back what a request held, as its answer is queued.
func (s *session) unhold(cost int64) { s.inBytes.Add(-cost) }

func (s *session) release() {
	if s.inflight.Add(-1) == 0 {
		select {
		case s.idle <- struct{}{}:
		default:
		}
	}
}

func (s *session) phaseIs(p int) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.phase == p
}

// tokenInUse returns the token the session authenticated with.
func (s *session) tokenInUse() (string, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.token, s.phase != phaseNew
}

func (s *session) principalName() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.principal.Name
}

// state returns the session's phase, principal and token entry, at once.
func (s *session) state() (int, openhal.Principal, token.Entry) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.phase, s.principal, s.entry
}

// who returns the session's principal and token entry (after initialize).
func (s *session) who() (openhal.Principal, token.Entry) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.principal, s.entry
}
