//go:build unix

package main

import (
	"encoding/json"
	"fmt"
	"slices"
	"time"

	"github.com/openhal/gateway/adapterproto"
	"github.com/openhal/gateway/adapterproto/reference"
	"github.com/openhal/gateway/jsonrpc"
)

// Errors of the correct paths (device.read of an unknown device) and of
// the scripted ones (--handshake-error, --write-error).
const (
	codeNoSuchDevice   = -32000
	codeHandshakeError = -32000
	codeWriteError     = -32010
)

// handshake answers initialize as the flags say. Each case is one kind of
// handshake the supervisor must judge.
func (a *adapter) handshake(msg jsonrpc.Message) error {
	a.mu.Lock()
	a.initialize = true
	a.mu.Unlock()
	for _, l := range a.cfg.beforeHandshake {
		if err := a.out.line([]byte(l)); err != nil {
			return fmt.Errorf("write stdout: %w", err)
		}
	}
	time.Sleep(a.cfg.handshakeDelay)
	switch {
	case a.cfg.unsupported:
		return a.send(reference.Bytes("initialize_unsupported"))
	case a.cfg.handshakeError:
		return a.sendError(msg.ID, codeHandshakeError, "boom", nil)
	}
	var p struct {
		Protocols []int             `json:"protocols"`
		Adapter   adapterproto.Info `json:"adapter"`
	}
	if len(msg.Params) > 0 {
		if err := json.Unmarshal(msg.Params, &p); err != nil {
			return a.sendError(msg.ID, jsonrpc.CodeInvalidParams, "bad initialize params: "+err.Error(), nil)
		}
	}
	res := adapterproto.InitializeResult{Protocol: adapterproto.Protocol, Name: p.Adapter.Name, Version: p.Adapter.Version}
	switch {
	case a.cfg.protocol != nil:
		res.Protocol = *a.cfg.protocol
	case !slices.Contains(p.Protocols, adapterproto.Protocol):
		return a.sendError(msg.ID, adapterproto.CodeUnsupportedProtocol, "unsupported protocol",
			adapterproto.UnsupportedProtocolData{Supported: []int{adapterproto.Protocol}, Code: adapterproto.EAdapterProtocol})
	}
	if a.cfg.name != "" {
		res.Name = a.cfg.name
	}
	if a.cfg.version != "" {
		res.Version = a.cfg.version
	}
	return a.sendResult(msg.ID, res)
}

func (a *adapter) ping(msg jsonrpc.Message) error {
	if a.cfg.noPong {
		return nil
	}
	return a.later(msg.ID, a.cfg.pongDelay, func() error { return a.sendResult(msg.ID, adapterproto.Empty{}) })
}

// shutdown answers and ends serve, unless the flags say to stay.
func (a *adapter) shutdown(msg jsonrpc.Message) error {
	if a.cfg.noShutdownReply {
		return nil
	}
	if err := a.sendResult(msg.ID, adapterproto.Empty{}); err != nil {
		return err
	}
	if a.cfg.ignoreSIGTERM {
		return nil
	}
	return errShutdown
}

// deviceParams are the params of device.read and device.write.
type deviceParams struct {
	Device string          `json:"device"`
	Value  json.RawMessage `json:"value"`
}

// valueResult is the result of device.read and device.write.
type valueResult struct {
	Value json.RawMessage `json:"value"`
}

func (a *adapter) deviceRead(msg jsonrpc.Message) error {
	var p deviceParams
	if err := json.Unmarshal(paramsOf(msg), &p); err != nil || p.Device == "" {
		return a.sendError(msg.ID, jsonrpc.CodeInvalidParams, "device.read needs {device}", nil)
	}
	return a.later(msg.ID, a.cfg.readDelay, func() error {
		a.mu.Lock()
		v, ok := a.values[p.Device]
		a.mu.Unlock()
		if !ok {
			return a.sendError(msg.ID, codeNoSuchDevice, "no such device: "+p.Device, nil)
		}
		return a.sendResult(msg.ID, valueResult{v})
	})
}

func (a *adapter) deviceWrite(msg jsonrpc.Message) error {
	var p deviceParams
	if err := json.Unmarshal(paramsOf(msg), &p); err != nil || p.Device == "" || len(p.Value) == 0 {
		return a.sendError(msg.ID, jsonrpc.CodeInvalidParams, "device.write needs {device, value}", nil)
	}
	return a.later(msg.ID, a.cfg.readDelay, func() error {
		if a.cfg.writeError {
			return a.sendError(msg.ID, codeWriteError, "relay stuck", map[string]int{"relay": 1})
		}
		a.mu.Lock()
		a.values[p.Device] = p.Value
		a.mu.Unlock()
		return a.sendResult(msg.ID, valueResult{p.Value})
	})
}

// cancel answers a request still waiting for its delay with -32024 at
// once, when --obey-cancel says to; its delayed answer is then not sent.
func (a *adapter) cancel(msg jsonrpc.Message) error {
	var p adapterproto.CancelParams
	if err := json.Unmarshal(paramsOf(msg), &p); err != nil {
		a.log.Warn("bad cancel params", "err", err)
		return nil
	}
	if !a.cfg.obeyCancel || !a.claim(p.ID) {
		a.log.Info("cancel ignored", "id", p.ID, "obey", a.cfg.obeyCancel)
		return nil
	}
	return a.sendError(jsonrpc.IntID(p.ID), adapterproto.CodeCancelled, "cancelled", nil)
}

// later runs answer after d. A delayed request stays open until then, so
// that a cancel can answer it first.
func (a *adapter) later(id json.RawMessage, d time.Duration, answer func() error) error {
	if d <= 0 {
		return answer()
	}
	n, _ := jsonrpc.ParseUint64ID(id) // a request's id has been checked by the decoder
	a.mu.Lock()
	a.open[n] = true
	a.mu.Unlock()
	time.AfterFunc(d, func() {
		if !a.claim(n) {
			return
		}
		if err := answer(); err != nil {
			a.fatal("delayed answer", err)
		}
	})
	return nil
}

// claim takes an open request for answering; false if it was answered.
func (a *adapter) claim(id uint64) bool {
	a.mu.Lock()
	defer a.mu.Unlock()
	if !a.open[id] {
		return false
	}
	delete(a.open, id)
	return true
}

// paramsOf returns a message's params, {} when absent.
func paramsOf(msg jsonrpc.Message) json.RawMessage {
	if len(msg.Params) == 0 {
		return json.RawMessage("{}")
	}
	return msg.Params
}
