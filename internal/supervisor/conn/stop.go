package conn

import (
	"context"
	"time"

	"github.com/openhal/gateway/adapterproto"
	"github.com/openhal/gateway/internal/supervisor/eventq"
	"github.com/openhal/gateway/jsonrpc"
)

// eventBatch bounds the events taken from the queue at once: they are
// written in one write, and wait in the writer rather than in the queue,
// so the batch is kept small beside the queue's limit.
const eventBatch = 64

// pumpEvents moves events from the run's queue to the writer, a batch at a
// time, each batch written before the next is taken: the queue, not the
// writer, is where events wait, so its limit and dropped count stay true.
func (c *Conn) pumpEvents() {
	defer close(c.pumpDone)
	var batch []eventq.Delivery
	for {
		var err error
		batch, err = c.cfg.Events.PopBatch(c.ctx, batch[:0], eventBatch)
		if err != nil {
			return // closed and drained, or the connection ended
		}
		var written chan struct{}
		for i, ev := range batch {
			frame, err := jsonrpc.AppendNotification(nil, adapterproto.MethodEvent,
				adapterproto.EventParams{Seq: ev.Seq, Type: ev.Type, Data: ev.Data, Dropped: ev.Dropped})
			if err != nil {
				c.log.Error("encode event", "adapter", c.cfg.Record.Name, "type", ev.Type, "err", err)
				continue
			}
			if i == len(batch)-1 {
				written = make(chan struct{})
			}
			if !c.out.send(frame, written) {
				return
			}
		}
		clear(batch) // let the events' data be collected
		if written == nil {
			continue
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
