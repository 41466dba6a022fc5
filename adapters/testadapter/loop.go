//go:build unix

package main

import (
	"errors"
	"fmt"
	"io"

	"github.com/openhal/gateway/adapterproto"
	"github.com/openhal/gateway/jsonrpc"
)

// maxLine is the longest line read from the daemon. It is generous: the
// test adapter records what it is sent and does not police its size.
const maxLine = 4 << 20

// errShutdown ends serve after shutdown was answered.
var errShutdown = errors.New("shutdown")

// serve reads the daemon's lines until stdin ends (io.EOF) or a shutdown
// ends the program (errShutdown). Any other error is fatal.
func (a *adapter) serve(stdin io.Reader) error {
	lr := jsonrpc.NewLineReader(stdin, maxLine)
	for {
		line, err := lr.Next()
		if errors.Is(err, jsonrpc.ErrLineTooLong) {
			a.log.Warn("line too long, not recorded", "max", maxLine)
			continue
		}
		if err != nil {
			if errors.Is(err, io.EOF) {
				return io.EOF
			}
			return fmt.Errorf("read stdin: %w", err)
		}
		if err := a.rec.received(line); err != nil {
			return err
		}
		if err := a.handle(line); err != nil {
			return err
		}
	}
}

// handle acts on one recorded line. Until initialize arrives the adapter
// is silent: everything else is only recorded.
func (a *adapter) handle(line []byte) error {
	msg, err := jsonrpc.DecodeAdapter(line)
	if err != nil {
		a.log.Warn("not a frame", "err", err)
		return nil
	}
	a.mu.Lock()
	started := a.initialize
	a.mu.Unlock()
	if !started && msg.Method != adapterproto.MethodInitialize {
		a.log.Warn("ignored before initialize", "method", msg.Method)
		return nil
	}
	switch {
	case msg.IsResponse():
		return a.response(msg, line)
	case msg.IsRequest():
		return a.request(msg)
	}
	return a.notification(msg)
}

// request answers one of the daemon's requests.
func (a *adapter) request(msg jsonrpc.Message) error {
	switch msg.Method {
	case adapterproto.MethodInitialize:
		return a.handshake(msg)
	case adapterproto.MethodPing:
		return a.ping(msg)
	case adapterproto.MethodShutdown:
		return a.shutdown(msg)
	case adapterproto.MethodDeviceRead:
		return a.deviceRead(msg)
	case adapterproto.MethodDeviceWrite:
		return a.deviceWrite(msg)
	}
	return a.sendError(msg.ID, jsonrpc.CodeMethodNotFound, "method not found: "+msg.Method, nil)
}

// notification acts on initialized and cancel and ignores the rest, as
// the protocol asks.
func (a *adapter) notification(msg jsonrpc.Message) error {
	switch msg.Method {
	case adapterproto.MethodInitialized:
		a.mu.Lock()
		first := !a.initialized
		a.initialized = true
		a.mu.Unlock()
		if first {
			go a.afterInitialized()
		}
	case adapterproto.MethodCancel:
		return a.cancel(msg)
	default:
		a.log.Info("notification ignored", "method", msg.Method)
	}
	return nil
}

// sendResult writes a successful response.
func (a *adapter) sendResult(id []byte, result any) error {
	b, err := jsonrpc.AppendResult(nil, id, result)
	if err != nil {
		return fmt.Errorf("encode result: %w", err)
	}
	return a.send(b)
}

// sendError writes an error response.
func (a *adapter) sendError(id []byte, code int64, message string, data any) error {
	return a.send(jsonrpc.AppendError(nil, id, &jsonrpc.Error{Code: code, Message: message, Data: data}))
}

// send writes one frame as a line.
func (a *adapter) send(frame []byte) error {
	if err := a.out.line(frame); err != nil {
		return fmt.Errorf("write stdout: %w", err)
	}
	return nil
}
