package halhub

import (
	"math"
	"sync"
	"time"
)

// outQueue is one connection's bounded queue of encoded messages waiting to
// be written (spec §8, slow consumers).
//
// A client that reads slowly must never slow the Hub: push never blocks.
// hal/value messages are coalesced per device once slack of them wait: the
// oldest waiting value of that device goes, the newest joins the back, so
// that the order of events is kept (the seq shows the gap). The slack
// absorbs a writer that is a moment late — a scheduling hiccup must not
// cost a healthy client a value — while a client that stopped reading
// holds at most slack values per device.
//
// The queue is bounded in bytes as well as in messages: it counts every
// byte it was given — answers, notifications and values — until the
// writer reports it written (done), so that a batch stuck in a write to a
// client that does not read still counts. A message that would pass
// maxBytes first makes room by coalescing values further (older values
// of a device go while its newest stays); a value that still does not
// fit, and any other message that does not, is an overflow: the session
// closes the connection rather than drop it. Past limit waiting
// notifications (other than values and answers) is an overflow too.
type outQueue struct {
	mu       sync.Mutex
	head     *qnode
	tail     *qnode
	values   map[string]valueRun // waiting hal/value messages per device
	slack    int                 // values of one device that may wait
	others   int                 // waiting notifications that are not values
	limit    int
	bytes    int // waiting, plus taken and not yet written
	taken    int // taken by the writer and not yet written
	maxBytes int
	maxTake  int // bytes of one taken batch, at most; 0: no bound (takeLimit)
	// takenAt is when the batch being written was taken (zero when none):
	// how long the client has not read it, by now.
	takenAt time.Time
	// writing is set from take (or claim) until done: one batch is written
	// at a time, by the writer or by the reader (claim), so that messages
	// go out in the order they were queued.
	writing bool
	now     func() time.Time
	budget  *queueBudget // the Hub's, counting every queue's bytes; may be nil
	free    *qnode
	ready   chan struct{} // has a token when something waits
	closed  bool
	// fan, when set, is told instead of the writer that notifications
	// wait (the Hub's fan-out writes them: fanout.go); the writer is
	// still woken for an answer, for the rest of a batch the socket did
	// not take, and for a batch the fan-out may not write. It is called
	// with mu held.
	fan     func()
	answers int // waiting answers (messages with onWritten)
}

// valueRun is the waiting values of one device, oldest first, linked by
// qnode.nextValue.
type valueRun struct {
	first, last *qnode
	n           int
}

type qnode struct {
	msg        []byte
	device     string // set for a hal/value
	prev, next *qnode
	nextValue  *qnode // the next waiting value of the same device
	onWritten  func() // called after the message is written (a request's answer)
	rest       bool   // what a write left of a batch (handOver): in no count
}

// valueSlack is how many values of one device may wait for a connection
// before they coalesce: a quarter of a second of a 1 kHz value. What it
// absorbs is the Hub stopped while values keep coming, and the burst
// after: on the project's VM the machine stops for 50-150 ms every two
// minutes or so, a writer that kept its pace catches up with the writes
// it owes, and the values of ~100 ms reach every watcher's queue within
// a few milliseconds, before the fan-out's pass comes to most of them.
// With 64, every watcher lost ~20 values in about one halbench fan-out
// run in ten. A client that stopped reading holds at most this many
// values a device, within hub.limits.queueBytes (takeLimit keeps room to
// coalesce them).
const valueSlack = 256

// queueLimits bound one queue: waiting notifications, values of one
// device before they coalesce, bytes, and the bytes of one taken batch
// (0: none; see takeLimit).
type queueLimits struct {
	messages, slack, bytes, take int
}

// newOutQueue returns a queue within l, counted in budget (nil: none),
// telling the time by now (nil: the system clock).
func newOutQueue(l queueLimits, budget *queueBudget, now func() time.Time) *outQueue {
	if now == nil {
		now = time.Now
	}
	return &outQueue{values: map[string]valueRun{}, slack: l.slack, limit: l.messages, maxBytes: l.bytes, maxTake: l.take,
		budget: budget, now: now, ready: make(chan struct{}, 1)}
}

// pushValue queues a hal/value for device; past the slack, the oldest
// value of that device still waiting is dropped. It returns false when
// the value does not fit in the bytes left even after coalescing: the
// caller must close the connection.
func (q *outQueue) pushValue(device string, msg []byte) bool {
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.closed {
		return true
	}
	if q.values[device].n >= q.slack {
		q.dropOldestValue(device)
	}
	if !q.makeRoom(len(msg), device) {
		return false
	}
	n := q.node()
	n.msg, n.device = msg, device
	run := q.values[device]
	if run.last != nil {
		run.last.nextValue = n
	} else {
		run.first = n
	}
	run.last = n
	run.n++
	q.values[device] = run
	q.append(n)
	return true
}

// dropOldestValue removes the first waiting value of device, if any.
func (q *outQueue) dropOldestValue(device string) bool {
	run, ok := q.values[device]
	if !ok {
		return false
	}
	n := run.first
	q.leaveRun(n)
	q.unlink(n)
	q.release(n)
	return true
}

// makeRoom coalesces values until size more bytes fit: first the oldest
// value of device (a newer one is coming), then the oldest value of any
// device that has a newer one waiting. It reports whether they fit.
func (q *outQueue) makeRoom(size int, device string) bool {
	for q.bytes+size > q.maxBytes {
		if device != "" && q.dropOldestValue(device) {
			continue
		}
		if !q.dropSupersededValue() {
			return false
		}
	}
	return true
}

// dropSupersededValue drops the oldest value of a device that has a newer
// one waiting, so that every device keeps its newest.
func (q *outQueue) dropSupersededValue() bool {
	for device, run := range q.values {
		if run.n > 1 {
			return q.dropOldestValue(device)
		}
	}
	return false
}

// push queues any other message: a notification, or a request's answer
// (onWritten set). It returns false when the message does not fit — more
// than limit notifications, or more than maxBytes even with values
// coalesced: the caller must close the connection.
func (q *outQueue) push(msg []byte, onWritten func()) bool {
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.closed {
		return true
	}
	if q.others >= q.limit && onWritten == nil {
		return false
	}
	if !q.makeRoom(len(msg), "") {
		return false
	}
	n := q.node()
	n.msg, n.onWritten = msg, onWritten
	if onWritten == nil {
		q.others++ // answers are bounded by maxInFlight, not by limit
	}
	q.append(n)
	return true
}

// take moves every waiting message into batch (reused by the caller) and
// returns it with the callbacks to run once the batch is written. Its
// bytes still count until done is called. While another batch is being
// written (claim), it takes nothing: done wakes the writer again.
func (q *outQueue) take(batch [][]byte, done []func()) ([][]byte, []func()) {
	q.mu.Lock()
	defer q.mu.Unlock()
	return q.takeLocked(batch, done)
}

func (q *outQueue) takeLocked(batch [][]byte, done []func()) ([][]byte, []func()) {
	if q.writing {
		return batch, done
	}
	limit, took := q.takeLimit(), 0
	n := q.head
	for n != nil && (took == 0 || took+len(n.msg) <= limit) {
		next := n.next
		batch = append(batch, n.msg)
		took += len(n.msg)
		if n.onWritten != nil {
			done = append(done, n.onWritten)
		}
		q.forget(n)
		n.msg = nil // the batch holds it now; the count stays in bytes
		q.release(n)
		n = next
	}
	q.taken += took
	if q.head = n; n != nil {
		n.prev = nil
	} else {
		q.tail = nil
	}
	if len(batch) > 0 {
		q.takenAt, q.writing = q.now(), true
	}
	return batch, done
}

// takeLimit bounds the bytes of one taken batch (at least one message is
// taken, whatever its size): a batch being written cannot be coalesced,
// so what waits behind it must keep room to coalesce in — a client that
// stops reading has its values coalesced, not its connection closed,
// however many values of a device may wait (valueSlack). A session's
// queue takes at most a quarter of its bytes at once.
func (q *outQueue) takeLimit() int {
	if q.maxTake <= 0 {
		return math.MaxInt
	}
	return q.maxTake
}

// forget takes a node at the head out of the counts it is in, as it is
// taken: a value out of its device's run (whose oldest it is), an answer
// or another notification out of theirs; a handed-over rest is in none.
func (q *outQueue) forget(n *qnode) {
	switch {
	case n.device != "":
		q.leaveRun(n)
	case n.rest:
	case n.onWritten != nil:
		q.answers--
	default:
		q.others--
	}
}

// leaveRun takes n, the oldest waiting value of its device, out of the
// device's run.
func (q *outQueue) leaveRun(n *qnode) {
	run := q.values[n.device]
	if run.first = n.nextValue; run.first == nil {
		delete(q.values, n.device)
	} else {
		run.n--
		q.values[n.device] = run
	}
}

// takeIf is take for the fan-out: it takes the waiting messages only
// when fits reports that the transport may be given them, size bytes,
// now (tryWriter.fits), and wakes the writer otherwise, whose write may
// wait.
func (q *outQueue) takeIf(batch [][]byte, done []func(), fits func(size int) bool) ([][]byte, []func()) {
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.writing || q.head == nil {
		return batch, done
	}
	if !fits(q.bytes) {
		q.signal()
		return batch, done
	}
	return q.takeLocked(batch, done)
}

// claim lets the caller write msg itself, with what waits before it, as
// one batch, when nothing is being written: the message then goes out in
// its order without waking the writer, which for an answer saves a
// hand-off between goroutines per request — and, on a connection that
// also watches values, a wait for the fan-out's next pass, since the
// notifications waiting go out with the answer, ahead of it. The batch
// is left in buf, msg last, with the callbacks of the answers that
// waited (msg's own is the caller's). buf is the queue's holder's alone:
// it is read and filled under the lock, once the previous holder is done
// with it. claim reports false when msg must be pushed instead: the
// queue is closed, a batch is being written, or messages wait that fits
// (tryWriter.fits) says the transport cannot take now. A claimed batch
// counts as a taken one until done — in the bytes held and in how long
// the client has left it unread — so that a client that stops reading
// while it is written is seen as it would be by the writer.
func (q *outQueue) claim(msg []byte, buf *claimBuf, fits func(size int) bool) bool {
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.closed || q.writing || (q.head != nil && (q.bytes+len(msg) > q.takeLimit() || !fits(q.bytes+len(msg)))) {
		return false
	}
	buf.batch, buf.done = q.takeLocked(buf.batch[:0], buf.done[:0])
	buf.batch = append(buf.batch, msg)
	q.addBytes(len(msg))
	q.taken += len(msg)
	q.takenAt, q.writing = q.now(), true
	return true
}

// claimBuf is the batch claim gives its holder, kept from one claim to
// the next so that an answer's write allocates nothing.
type claimBuf struct {
	batch [][]byte
	done  []func()
}

// clear drops the messages and callbacks, keeping the room.
func (b *claimBuf) clear() {
	clear(b.batch)
	clear(b.done)
}

// handOver gives the writer what is left of a claimed message that the
// socket did not take at once: it goes first, before what was queued
// meanwhile, and onWritten runs once it is written.
func (q *outQueue) handOver(rest []byte, onWritten func()) {
	q.mu.Lock()
	defer q.mu.Unlock()
	q.addBytes(-q.taken)
	q.taken, q.takenAt, q.writing = 0, time.Time{}, false
	if q.closed {
		return
	}
	n := q.node()
	n.msg, n.onWritten, n.rest = rest, onWritten, true
	q.addBytes(len(rest))
	if n.next = q.head; q.head != nil {
		q.head.prev = n
	} else {
		q.tail = n
	}
	q.head = n
	q.signal()
}

// done reports the batch last taken (or claimed) written: its bytes no
// longer count, and what was queued meanwhile wakes the writer.
func (q *outQueue) done() {
	q.mu.Lock()
	defer q.mu.Unlock()
	q.addBytes(-q.taken)
	q.taken, q.takenAt, q.writing = 0, time.Time{}, false
	if q.head != nil {
		q.wake()
	}
}

// close drops everything and refuses later pushes; what it held no longer
// counts.
func (q *outQueue) close() {
	q.mu.Lock()
	defer q.mu.Unlock()
	q.closed = true
	q.head, q.tail, q.free = nil, nil, nil
	clear(q.values)
	q.answers = 0
	q.addBytes(-q.bytes)
	q.taken = 0
}

// held returns the bytes the queue holds and since when the client has
// not read the batch being written (zero when none is).
func (q *outQueue) held() (bytes int, takenAt time.Time) {
	q.mu.Lock()
	defer q.mu.Unlock()
	return q.bytes, q.takenAt
}

func (q *outQueue) addBytes(n int) {
	q.bytes += n
	if q.budget != nil {
		q.budget.add(n)
	}
}

func (q *outQueue) append(n *qnode) {
	q.addBytes(len(n.msg))
	n.prev = q.tail
	if q.tail != nil {
		q.tail.next = n
	} else {
		q.head = n
	}
	q.tail = n
	if n.onWritten != nil {
		q.answers++
	}
	q.wake()
}

// wake has what waits written: by the fan-out when only notifications
// wait on a queue it serves, by the writer otherwise.
func (q *outQueue) wake() {
	if q.fan != nil && q.answers == 0 {
		q.fan()
		return
	}
	q.signal()
}

// signal wakes the writer, if it is not awake already.
func (q *outQueue) signal() {
	select {
	case q.ready <- struct{}{}:
	default:
	}
}

// unlink takes a waiting node out of the queue; its bytes no longer count.
func (q *outQueue) unlink(n *qnode) {
	q.addBytes(-len(n.msg))
	if n.prev != nil {
		n.prev.next = n.next
	} else {
		q.head = n.next
	}
	if n.next != nil {
		n.next.prev = n.prev
	} else {
		q.tail = n.prev
	}
}

// node takes a node from the free list, so that a busy connection does not
// allocate one per message.
func (q *outQueue) node() *qnode {
	if n := q.free; n != nil {
		q.free = n.next
		n.next = nil
		return n
	}
	return &qnode{}
}

func (q *outQueue) release(n *qnode) {
	*n = qnode{next: q.free}
	q.free = n
}
