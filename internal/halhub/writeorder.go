package halhub

import (
	"context"
	"sync"
)

// writeOrder keeps the writes to each device in the order the Hub received
// them (spec §1), across connections. A write takes its turn on the
// connection's reader, in arrival order, and waits for it on its own
// goroutine; a mutex alone would let goroutines overtake each other.
type writeOrder struct {
	mu    sync.Mutex
	lines map[string][]*turn // per device; the head holds the device
}

type turn struct {
	o      *writeOrder
	device string
	ready  chan struct{}
	ahead  bool // entered with enterAhead
}

func newWriteOrder() *writeOrder { return &writeOrder{lines: map[string][]*turn{}} }

// enter queues a turn on device.
func (o *writeOrder) enter(device string) *turn {
	t := &turn{o: o, device: device, ready: make(chan struct{})}
	o.mu.Lock()
	defer o.mu.Unlock()
	o.lines[device] = append(o.lines[device], t)
	if len(o.lines[device]) == 1 {
		close(t.ready)
	}
	return t
}

// enterAhead queues a turn on device right behind the turn that holds
// it (a write that may be at the hardware, which finishes first) and the
// turns entered ahead before this one: the emergency stop's safe values,
// which must not wait for the writes queued for the device. Those writes,
// once their turn comes, find the stop engaged and are refused.
func (o *writeOrder) enterAhead(device string) *turn {
	t := &turn{o: o, device: device, ready: make(chan struct{}), ahead: true}
	o.mu.Lock()
	defer o.mu.Unlock()
	line := o.lines[device]
	if len(line) == 0 {
		close(t.ready)
		o.lines[device] = []*turn{t}
		return t
	}
	i := 1
	for i < len(line) && line[i].ahead {
		i++
	}
	o.lines[device] = append(line[:i], append([]*turn{t}, line[i:]...)...)
	return t
}

// wait returns when the turn holds the device, or with ctx's error; then
// the turn has left the line.
func (t *turn) wait(ctx context.Context) error {
	select {
	case <-t.ready:
		return nil
	case <-ctx.Done():
		t.leave()
		return ctx.Err()
	}
}

// leave gives the device to the next turn. A turn that is not at the head
// (it gave up waiting) just leaves the line.
func (t *turn) leave() {
	o := t.o
	o.mu.Lock()
	defer o.mu.Unlock()
	line := o.lines[t.device]
	for i, u := range line {
		if u != t {
			continue
		}
		line = append(line[:i], line[i+1:]...)
		if i == 0 && len(line) > 0 {
			close(line[0].ready)
		}
		break
	}
	if len(line) == 0 {
		delete(o.lines, t.device)
		return
	}
	o.lines[t.device] = line
}
