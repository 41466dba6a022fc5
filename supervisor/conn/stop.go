package conn

import (
	"context"
	"time"

	"gateway/adapterproto"
	"gateway/jsonrpc"
)

// pumpEvents moves events from the run's queue to the writer, one at a
// time, each written before the next is taken: the queue, not the writer,
// is where events wait, so its limit and dropped count stay true.
func (c *Conn) pumpEvents() {
	defer close(c.pumpDone)
	for {
		ev, dropped, err := c.cfg.Events.Pop(c.ctx)
		if err != nil {
			return // closed and drained, or the connection ended
		}
		frame, err := jsonrpc.AppendNotification(nil, adapterproto.MethodEvent,
			adapterproto.EventParams{Seq: ev.Seq, Type: ev.Type, Data: ev.Data, Dropped: dropped})
		if err != nil {
			c.log.Error("encode event", "adapter", c.cfg.Record.Name, "type", ev.Type, "err", err)
			continue
		}
		written := make(chan struct{})
		if !c.out.send(frame, written) {
			return
		}
		select {
		case <-written:
		case <-c.done:
			return
		}
	}
}

// Shutdown is the protocol's part of a stop before T0 (section 8): the
// queued events are written first, and then shutdown, all within budget
// (the spec's 1 s) on the connection's clock. It returns once shutdown is
// written, or the budget is spent, with a channel closed when the reply
// arrives; nil when shutdown could not be sent at all.
func (c *Conn) Shutdown(budget time.Duration) <-chan struct{} {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	t := c.clk.AfterFunc(budget, cancel)
	defer t.Stop()
	if q := c.cfg.Events; q != nil && c.cfg.Kind == adapterproto.KindService {
		if err := q.Drain(ctx, time.Time{}); err == nil {
			select { // the last event popped is written before shutdown
			case <-c.pumpDone:
			case <-ctx.Done():
			case <-c.done:
			}
		}
	}
	id, cl, err := c.register()
	if err != nil {
		return nil
	}
	frame, err := jsonrpc.AppendRequest(nil, rpcID(id), adapterproto.MethodShutdown, adapterproto.Empty{})
	if err != nil {
		c.forget(id)
		return nil
	}
	written := make(chan struct{})
	if !c.out.send(frame, written) {
		return nil
	}
	select {
	case <-written:
	case <-ctx.Done():
	case <-c.done:
	}
	return cl.done
}
