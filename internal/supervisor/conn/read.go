package conn

import (
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/openhal/gateway/adapterproto"
	"github.com/openhal/gateway/internal/supervisor/strikes"
	"github.com/openhal/gateway/jsonrpc"
)

// readLoop reads the adapter's standard output until it ends. Every line
// is judged by the framing rules (jsonrpc.DecodeAdapter); what breaks them
// is a violation. The first frame goes to the handshake, and nothing more
// is read until the handshake is judged, so that a request the adapter
// sends right after its reply is served only by a ready connection.
func (c *Conn) readLoop() {
	handshaking := true
	for {
		line, err := c.lines.Next()
		var frame jsonrpc.Message
		var bad error
		switch {
		case errors.Is(err, jsonrpc.ErrLineTooLong):
			bad = &jsonrpc.Violation{Reason: "line_too_long", Detail: fmt.Sprintf("a line over max_line (%d bytes), discarded", c.cfg.Limits.MaxLine)}
		case errors.Is(err, io.EOF):
			c.end(&EndError{Reason: "eof", Detail: "the adapter closed its standard output"})
			return
		case err != nil:
			c.end(&EndError{Reason: "read_error", Detail: err.Error()})
			return
		default:
			frame, bad = jsonrpc.DecodeAdapter(line)
			if errors.Is(bad, jsonrpc.ErrEmptyLine) {
				continue // harmless, costs nothing (section 6)
			}
		}
		if handshaking {
			handshaking = false
			c.handshake <- firstFrame{msg: frame, err: bad}
			select {
			case <-c.hsDecided:
			case <-c.done:
				return
			}
			if !c.ready.Load() {
				return
			}
			continue
		}
		if bad != nil {
			var v *jsonrpc.Violation
			if errors.As(bad, &v) {
				c.violation(v.Reason, v.Detail)
			} else {
				c.violation("bad_frame", bad.Error())
			}
			continue
		}
		c.route(frame)
	}
}

// route hands a well-formed frame on.
func (c *Conn) route(m jsonrpc.Message) {
	switch {
	case m.IsResponse():
		c.onResponse(m)
	case m.IsRequest():
		c.onRequest(m)
	default:
		if c.cfg.Handler != nil {
			c.cfg.Handler.Notify(m.Method, m.Params)
		}
	}
}

// onRequest serves one adapter request on a goroutine of its own. At most
// max_in_flight are served at once; beyond that the reader waits, so that
// an adapter that asks without reading its answers cannot make the daemon
// queue answers without bound.
func (c *Conn) onRequest(m jsonrpc.Message) {
	id, _ := jsonrpc.ParseUint64ID(m.ID)
	if !c.seen.add(id) {
		c.violation("reused_id", fmt.Sprintf("request id %d was used before", id))
		return
	}
	select {
	case c.served <- struct{}{}:
	case <-c.done:
		return
	}
	c.stats.adapterReq.Add(1)
	go func() {
		defer func() { <-c.served }()
		var res any
		var rerr *jsonrpc.Error
		if c.cfg.Handler == nil {
			rerr = &jsonrpc.Error{Code: jsonrpc.CodeMethodNotFound, Message: "method not found: " + m.Method}
		} else {
			res, rerr = c.cfg.Handler.Request(c.ctx, m.Method, m.Params)
		}
		var frame []byte
		if rerr != nil {
			frame = jsonrpc.AppendError(nil, m.ID, rerr)
		} else {
			var err error
			if frame, err = jsonrpc.AppendResult(nil, m.ID, res); err != nil {
				frame = jsonrpc.AppendError(nil, m.ID, &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: err.Error()})
			}
		}
		written := make(chan struct{})
		if c.out.send(frame, written) {
			select {
			case <-written:
			case <-c.done:
			}
		}
	}()
}

// violation records a broken rule after the handshake as a strike; the
// strike that makes Limit within the window ends the connection for a kill
// (section 6; the recorded reason is E_ADAPTER_PROTOCOL).
func (c *Conn) violation(reason, detail string) {
	c.stats.violations.Add(1)
	kill := c.cfg.Strikes.Strike(reason)
	c.log.Warn("adapter protocol violation", "adapter", c.cfg.Record.Name, "reason", reason, "detail", detail, "strikes", c.cfg.Strikes.Count())
	if kill {
		c.end(&EndError{Reason: "strikes", Kill: true,
			Detail: fmt.Sprintf("%s: %d protocol violations within %v, the last %s", adapterproto.EAdapterProtocol, c.cfg.Strikes.Count(), c.strikeWindow(), reason)})
	}
}

// strikeWindow is the window the strikes are counted in.
func (c *Conn) strikeWindow() time.Duration {
	if c.cfg.Strikes.Window > 0 {
		return c.cfg.Strikes.Window
	}
	return strikes.DefaultWindow
}

// idWindow remembers an adapter's last requestIDWindow request ids
// (section 6: an id "seen among the adapter's last 1,024 request ids, or
// below the lowest of them" is reused). Below-the-lowest applies once the
// window is full: until then every id ever seen is still in it.
type idWindow struct {
	ring []uint64
	next int
	set  map[uint64]struct{}
	low  uint64
}

const requestIDWindow = 1024

// add records id and reports whether it is new.
func (w *idWindow) add(id uint64) bool {
	if w.set == nil {
		w.set = make(map[uint64]struct{}, requestIDWindow)
	}
	if _, dup := w.set[id]; dup {
		return false
	}
	full := len(w.ring) == requestIDWindow
	if full && id < w.low {
		return false
	}
	w.set[id] = struct{}{}
	switch {
	case len(w.ring) == 0:
		w.ring, w.low = append(w.ring, id), id
	case !full:
		w.ring, w.low = append(w.ring, id), min(w.low, id)
	default:
		old := w.ring[w.next]
		delete(w.set, old)
		w.ring[w.next] = id
		w.next = (w.next + 1) % requestIDWindow
		if old == w.low {
			w.low = w.lowest() // the scan runs only when the lowest leaves
		} else {
			w.low = min(w.low, id)
		}
	}
	return true
}

func (w *idWindow) lowest() uint64 {
	low := w.ring[0]
	for _, id := range w.ring[1:] {
		low = min(low, id)
	}
	return low
}
