package conn

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"

	"github.com/openhal/gateway/adapterproto"
	"github.com/openhal/gateway/internal/supervisor/restart"
	"github.com/openhal/gateway/jsonrpc"
)

// HandshakeError is a handshake that did not end with a good reply. The
// process must end in every case (the seed: "a silent or broken handshake
// ends the process"); Failure says whether the adapter is failed
// (tampered, incompatible) or the run crashed (restart.NoReason).
type HandshakeError struct {
	Failure restart.Reason
	Detail  string
}

func (e *HandshakeError) Error() string {
	what := "crashed"
	if e.Failure != restart.NoReason {
		what = "failed (" + e.Failure.String() + ")"
	}
	return "handshake " + what + ": " + e.Detail
}

func crash(format string, a ...any) *HandshakeError {
	return &HandshakeError{Detail: fmt.Sprintf(format, a...)}
}

// firstFrame is what the reader hands the handshake: the adapter's first
// frame, or the violation that broke it.
type firstFrame struct {
	msg jsonrpc.Message
	err error
}

// runHandshake sends initialize, judges the reply (section 4's order) and
// sends initialized.
func (c *Conn) runHandshake(ctx context.Context) error {
	defer close(c.hsDecided)
	params := adapterproto.InitializeParams{
		Protocols: []int{adapterproto.Protocol},
		Host:      c.cfg.Host,
		Adapter:   c.cfg.Record,
		Kind:      c.cfg.Kind,
		Grant:     c.cfg.Grant,
		Paths:     adapterproto.Paths{State: c.cfg.State},
		Limits:    c.cfg.Limits,
		Settings:  c.cfg.Settings,
	}
	c.mu.Lock()
	id := c.nextID
	c.nextID++
	c.mu.Unlock()
	frame, err := jsonrpc.AppendRequest(nil, rpcID(id), adapterproto.MethodInitialize, params)
	if err != nil {
		return crash("encode initialize: %v", err)
	}
	c.out.send(frame, nil)

	expired := make(chan struct{})
	t := c.clk.AfterFunc(c.cfg.Timing.Handshake, func() { close(expired) })
	defer t.Stop()
	var first firstFrame
	select {
	case first = <-c.handshake:
	case <-expired:
		return crash("no initialize reply within %v", c.cfg.Timing.Handshake)
	case <-c.done:
		return crash("%v before the initialize reply", c.endErr)
	case <-ctx.Done():
		return crash("start cancelled: %v", ctx.Err())
	}
	if first.err != nil {
		return crash("%v", first.err)
	}
	if err := c.judge(id, first.msg, params.Protocols); err != nil {
		return err
	}
	c.ready.Store(true)
	note, err := jsonrpc.AppendNotification(nil, adapterproto.MethodInitialized, adapterproto.Empty{})
	if err != nil {
		return crash("encode initialized: %v", err)
	}
	c.out.send(note, nil)
	return nil
}

// judge applies section 4's order: not a well-formed response to the
// initialize id → a crash; name or version differs from the record →
// tampered; a protocol not offered, or error -32022 → incompatible; any
// other error → a crash.
func (c *Conn) judge(id uint64, m jsonrpc.Message, offered []int) *HandshakeError {
	got, ok := jsonrpc.ParseUint64ID(m.ID)
	if !m.IsResponse() || !ok || got != id {
		return crash("the first frame was not the reply to initialize: %s", describe(m))
	}
	if m.Error != nil {
		if m.Error.Code == adapterproto.CodeUnsupportedProtocol {
			return &HandshakeError{Failure: restart.Incompatible, Detail: fmt.Sprintf("the adapter speaks none of protocols %v: %s", offered, m.Error.Message)}
		}
		return crash("initialize answered with error %d: %s", m.Error.Code, m.Error.Message)
	}
	var r struct {
		Protocol *int    `json:"protocol"`
		Name     *string `json:"name"`
		Version  *string `json:"version"`
	}
	if err := json.Unmarshal(m.Result, &r); err != nil || r.Protocol == nil || r.Name == nil || r.Version == nil {
		return crash("initialize result is not {protocol, name, version}: %s", clip(m.Result))
	}
	if *r.Name != c.cfg.Record.Name || *r.Version != c.cfg.Record.Version {
		return &HandshakeError{Failure: restart.Tampered, Detail: fmt.Sprintf("the adapter says it is %s %s; %s %s was installed",
			*r.Name, *r.Version, c.cfg.Record.Name, c.cfg.Record.Version)}
	}
	if !slices.Contains(offered, *r.Protocol) {
		return &HandshakeError{Failure: restart.Incompatible, Detail: fmt.Sprintf("the adapter chose protocol %d, which was not offered (%v)", *r.Protocol, offered)}
	}
	return nil
}

// describe names a frame for a log line.
func describe(m jsonrpc.Message) string {
	switch {
	case m.IsRequest():
		return "a request " + m.Method
	case m.IsNotification():
		return "a notification " + m.Method
	default:
		return "a response to id " + string(m.ID)
	}
}

// clip shortens raw JSON for a message.
func clip(b []byte) string {
	if len(b) > 200 {
		return string(b[:200]) + "..."
	}
	return string(b)
}
