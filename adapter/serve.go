package adapter

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/openhal/gateway/adapterproto"
	"github.com/openhal/gateway/jsonrpc"
)

// initialize answers the handshake. stop is set when it cannot go on: no
// protocol in common, params that cannot be read, or OnInitialize
// refusing; the daemon has then been answered with an error.
func (c *Conn) initialize(m jsonrpc.Message) (stop bool, err error) {
	var p adapterproto.InitializeParams
	if err := unmarshalParams(m.Params, &p); err != nil {
		c.replyError(m.ID, &Error{Code: jsonrpc.CodeInvalidParams, Message: "initialize: " + err.Error()})
		return true, fmt.Errorf("initialize: %w", err)
	}
	protocol := 0
	for _, v := range p.Protocols {
		if v == adapterproto.Protocol && v > protocol {
			protocol = v
		}
	}
	if protocol == 0 {
		c.replyError(m.ID, &Error{
			Code: adapterproto.CodeUnsupportedProtocol, Message: "unsupported protocol",
			Data: adapterproto.UnsupportedProtocolData{Supported: []int{adapterproto.Protocol}, Code: adapterproto.EAdapterProtocol},
		})
		return true, fmt.Errorf("initialize: daemon offers %v, adapter speaks [%d]: %w", p.Protocols, adapterproto.Protocol, ErrIncompatible)
	}
	def := adapterproto.DefaultLimits()
	if p.Limits.MaxLine <= 0 {
		p.Limits.MaxLine = def.MaxLine
	}
	if p.Limits.EventQueue <= 0 {
		p.Limits.EventQueue = def.EventQueue
	}
	c.params = p
	c.out.setMaxLine(p.Limits.MaxLine)
	if c.a.OnInitialize != nil {
		if err := c.a.OnInitialize(c.ctx, c); err != nil {
			c.replyError(m.ID, errorOf(err))
			return true, fmt.Errorf("initialize: %w", err)
		}
	}
	if c.a.OnEvent != nil {
		c.events = make(chan Event, p.Limits.EventQueue)
		c.eventsWG.Add(1)
		go c.deliver()
	}
	res := adapterproto.InitializeResult{Protocol: protocol, Name: c.a.Name, Version: c.a.Version}
	frame, err := jsonrpc.AppendResult(nil, m.ID, res)
	if err == nil {
		err = c.out.writeReady(frame)
	}
	if err != nil {
		return true, fmt.Errorf("initialize: answer: %w", err)
	}
	return false, nil
}

// deliver hands events to OnEvent one at a time, in order.
func (c *Conn) deliver() {
	defer c.eventsWG.Done()
	for e := range c.events {
		c.a.OnEvent(c.ctx, c, e)
	}
}

// deviceRequest serves device.read or device.write on a goroutine of its
// own, so that a slow device holds up neither pings nor other devices.
// Whoever removes the request from inFlight answers it: the handler when
// it returns, or cancel (with -32024) before that.
func (c *Conn) deviceRequest(m jsonrpc.Message) {
	write := m.Method == adapterproto.MethodDeviceWrite
	var p struct {
		Device string          `json:"device"`
		Value  json.RawMessage `json:"value"`
	}
	err := unmarshalParams(m.Params, &p)
	switch {
	case err != nil:
	case p.Device == "":
		err = errors.New("device is required")
	case write && p.Value == nil:
		err = errors.New("value is required")
	}
	if err != nil {
		c.replyError(m.ID, &Error{Code: jsonrpc.CodeInvalidParams, Message: m.Method + ": " + err.Error()})
		return
	}
	if (write && c.a.OnWrite == nil) || (!write && c.a.OnRead == nil) {
		c.replyError(m.ID, &Error{Code: jsonrpc.CodeMethodNotFound, Message: "method not found: " + m.Method})
		return
	}
	id, _ := jsonrpc.ParseUint64ID(m.ID) // DecodeAdapter has checked it
	ctx, cancel := context.WithCancel(c.ctx)
	c.mu.Lock()
	if _, dup := c.inFlight[id]; dup {
		c.mu.Unlock()
		cancel()
		c.log.Warn("request id already in flight; ignored", "id", id, "method", m.Method)
		return
	}
	c.inFlight[id] = cancel
	c.mu.Unlock()
	c.handlers.Add(1)
	go func() {
		defer c.handlers.Done()
		defer cancel()
		var r Reading
		var err error
		if write {
			r, err = c.a.OnWrite(ctx, c, p.Device, p.Value)
		} else {
			r, err = c.a.OnRead(ctx, c, p.Device)
		}
		c.mu.Lock()
		_, mine := c.inFlight[id]
		delete(c.inFlight, id)
		c.mu.Unlock()
		switch {
		case !mine: // cancelled and answered already
		case err != nil:
			c.replyError(m.ID, errorOf(err))
		default:
			c.reply(m.ID, r.wire(write))
		}
	}()
}

// wire is a Reading as the protocol writes it: {value, ts?} for a read,
// {value?, ts?} for a write.
func (r Reading) wire(write bool) any {
	ts := ""
	if !r.TS.IsZero() {
		ts = r.TS.UTC().Format(time.RFC3339Nano)
	}
	if write {
		return struct {
			Value any    `json:"value,omitempty"`
			TS    string `json:"ts,omitempty"`
		}{r.Value, ts}
	}
	return struct {
		Value any    `json:"value"`
		TS    string `json:"ts,omitempty"`
	}{r.Value, ts}
}

// errorOf turns a callback's error into the answer's: an *Error as it
// is, anything else as CodeFailed with its text.
func errorOf(err error) *Error {
	var e *Error
	if errors.As(err, &e) {
		return e
	}
	return &Error{Code: CodeFailed, Message: err.Error()}
}

// reply answers request id with result. A result too long for
// limits.max_line is answered with an error instead, so that the daemon
// is not left waiting.
func (c *Conn) reply(id json.RawMessage, result any) error {
	frame, err := jsonrpc.AppendResult(nil, id, result)
	if err == nil {
		err = c.out.write(frame, false)
		if !errors.Is(err, ErrTooLong) {
			return c.logged(err)
		}
	}
	c.log.Warn("answer not sent", "err", err)
	return c.replyError(id, &Error{Code: CodeFailed, Message: "the adapter could not send its answer: " + err.Error()})
}

// replyError answers request id with an error.
func (c *Conn) replyError(id json.RawMessage, e *Error) error {
	err := c.out.write(jsonrpc.AppendError(nil, id, e), false)
	if errors.Is(err, ErrTooLong) && e.Data != nil {
		e2 := *e
		e2.Data = nil // the data made it too long; the code and message still fit
		err = c.out.write(jsonrpc.AppendError(nil, id, &e2), false)
	}
	return c.logged(err)
}

func (c *Conn) logged(err error) error {
	if err != nil {
		c.log.Warn("answer not sent", "err", err)
	}
	return err
}

// answered hands a response to the call waiting for it. An answer to a
// call given up (its ctx ended) finds nobody and is dropped.
func (c *Conn) answered(m jsonrpc.Message) {
	id, _ := jsonrpc.ParseUint64ID(m.ID)
	c.mu.Lock()
	ch, ok := c.calls[id]
	delete(c.calls, id)
	c.mu.Unlock()
	if !ok {
		c.log.Debug("answer to no waiting call dropped", "id", id)
		return
	}
	ch <- m // buffered: one answer per call
}
