package conn

import (
	"context"
	"fmt"

	"github.com/openhal/gateway/adapterproto"
)

// pingLoop keeps a service honest (section 4): the first ping
// PingInterval after initialized, then one PingInterval after the previous
// was sent, each answered within PingTimeout or missed (and cancelled; a
// late answer does not undo the miss). PingMisses misses in a row end the
// connection for a kill. Pings take no in-flight slot: an adapter busy with
// max_in_flight requests is still asked whether it lives.
func (c *Conn) pingLoop() {
	tick := make(chan struct{}, 1)
	arm := func() {
		c.clk.AfterFunc(c.cfg.Timing.PingInterval, func() {
			select {
			case tick <- struct{}{}:
			default:
			}
		})
	}
	arm()
	for {
		select {
		case <-c.done:
			return
		case <-tick:
		}
		arm() // the next ping is due an interval after this one is sent
		go c.ping()
	}
}

// ping sends one ping and judges the answer.
func (c *Conn) ping() {
	expired := make(chan struct{})
	t := c.clk.AfterFunc(c.cfg.Timing.PingTimeout, func() { close(expired) })
	defer t.Stop()
	_, err := c.roundTrip(context.Background(), adapterproto.MethodPing, adapterproto.Empty{}, expired)
	switch {
	case err == nil:
		c.stats.pingMisses.Store(0)
	case err == ErrCrashed:
	default:
		// An error answer to ping is no answer either.
		misses := c.stats.pingMisses.Add(1)
		c.log.Warn("adapter missed a ping", "adapter", c.cfg.Record.Name, "misses", misses, "err", err)
		if int(misses) >= c.cfg.Timing.PingMisses {
			c.end(&EndError{Reason: "pings", Kill: true, Detail: fmt.Sprintf("%d pings in a row not answered within %v", misses, c.cfg.Timing.PingTimeout)})
		}
	}
}
