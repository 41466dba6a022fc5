//go:build unix

package main

import (
	"encoding/json"
	"fmt"

	"github.com/openhal/gateway/jsonrpc"
)

// ask sends one of the script's requests with the given id and, unless
// nowait, waits until its response is recorded. An id already waiting
// (reuse_id) keeps its first record.
func (a *adapter) ask(id uint64, method string, params json.RawMessage, nowait bool) error {
	c := &call{method: method, params: params}
	if !nowait {
		c.done = make(chan struct{})
	}
	a.mu.Lock()
	if _, dup := a.calls[id]; !dup {
		a.calls[id] = c
	}
	a.mu.Unlock()
	b, err := jsonrpc.AppendRequest(nil, jsonrpc.IntID(id), method, paramsAny(params))
	if err != nil {
		return fmt.Errorf("encode request %s: %w", method, err)
	}
	if err := a.send(b); err != nil {
		return err
	}
	if c.done != nil {
		<-c.done
	}
	return nil
}

// nextCallID returns the script's next request id: 1, 2, 3...
func (a *adapter) nextCallID() uint64 {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.nextID++
	return a.nextID
}

// response records the daemon's answer to one of the script's requests,
// as the raw line, then lets a waiting step go on.
func (a *adapter) response(msg jsonrpc.Message, line []byte) error {
	id, _ := jsonrpc.ParseUint64ID(msg.ID)
	a.mu.Lock()
	c, ok := a.calls[id]
	delete(a.calls, id)
	a.mu.Unlock()
	if !ok {
		a.log.Warn("response to no request of ours", "id", string(msg.ID))
		return nil
	}
	if err := a.rec.call(c.method, c.params, line); err != nil {
		return err
	}
	if c.done != nil {
		close(c.done)
	}
	return nil
}
