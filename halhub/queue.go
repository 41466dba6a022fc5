package halhub

import "sync"

// outQueue is one connection's bounded queue of encoded messages waiting to
// be written (spec §8, slow consumers).
//
// A client that reads slowly must never slow the Hub: push never blocks.
// hal/value messages are coalesced per device once slack of them wait: the
// oldest waiting value of that device goes, the newest joins the back, so
// that the order of events is kept (the seq shows the gap). The slack
// absorbs a writer that is a moment late — a scheduling hiccup must not
// cost a healthy client a value — while a client that stopped reading
// holds at most slack values per device. Every other message is kept;
// when more than limit of them wait, push reports overflow and the session
// closes the connection rather than drop one.
type outQueue struct {
	mu     sync.Mutex
	head   *qnode
	tail   *qnode
	values map[string]int // waiting hal/value messages per device
	slack  int            // values of one device that may wait
	others int            // waiting messages that are not values
	limit  int
	free   *qnode
	ready  chan struct{} // has a token when something waits
	closed bool
}

type qnode struct {
	msg        []byte
	device     string // set for a hal/value
	prev, next *qnode
	onWritten  func() // called after the message is written (a request's answer)
}

// valueSlack is how many values of one device may wait for a connection
// before they coalesce.
const valueSlack = 64

func newOutQueue(limit, slack int) *outQueue {
	return &outQueue{values: map[string]int{}, slack: slack, limit: limit, ready: make(chan struct{}, 1)}
}

// pushValue queues a hal/value for device; past the slack, the oldest
// value of that device still waiting is dropped.
func (q *outQueue) pushValue(device string, msg []byte) {
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.closed {
		return
	}
	if q.values[device] >= q.slack {
		q.dropOldestValue(device)
	}
	n := q.node()
	n.msg, n.device = msg, device
	q.values[device]++
	q.append(n)
}

// dropOldestValue removes the first waiting value of device. It walks the
// queue, which only happens for a client that is behind.
func (q *outQueue) dropOldestValue(device string) {
	for n := q.head; n != nil; n = n.next {
		if n.device == device {
			q.unlink(n)
			q.release(n)
			q.values[device]--
			return
		}
	}
}

// push queues any other message. It returns false when the queue is full:
// the caller must close the connection.
func (q *outQueue) push(msg []byte, onWritten func()) bool {
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.closed {
		return true
	}
	if q.others >= q.limit && onWritten == nil {
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
// returns it with the callbacks to run once the batch is written.
func (q *outQueue) take(batch [][]byte, done []func()) ([][]byte, []func()) {
	q.mu.Lock()
	defer q.mu.Unlock()
	for n := q.head; n != nil; {
		next := n.next
		batch = append(batch, n.msg)
		if n.onWritten != nil {
			done = append(done, n.onWritten)
		}
		q.release(n)
		n = next
	}
	q.head, q.tail = nil, nil
	clear(q.values)
	q.others = 0
	return batch, done
}

// close drops everything and refuses later pushes.
func (q *outQueue) close() {
	q.mu.Lock()
	defer q.mu.Unlock()
	q.closed = true
	q.head, q.tail, q.free = nil, nil, nil
	clear(q.values)
}

func (q *outQueue) append(n *qnode) {
	n.prev = q.tail
	if q.tail != nil {
		q.tail.next = n
	} else {
		q.head = n
	}
	q.tail = n
	select {
	case q.ready <- struct{}{}:
	default:
	}
}

func (q *outQueue) unlink(n *qnode) {
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
