//go:build unix

package main

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"time"
)

// step is one step of --script, decoded from an object with exactly one
// action key (send, send_bytes_b64, long_line, call, notify, sleep, exit,
// stderr, flood, reuse_id). Checking the whole script at start means a
// mistyped step fails the adapter before the handshake, not halfway
// through a test.
type step struct {
	kind   string          // the action key
	bytes  []byte          // send (with its '\n'), send_bytes_b64
	n      int             // long_line, exit, repeat, flood
	method string          // call, notify, flood
	params json.RawMessage // call, notify, flood; nil when absent
	nowait bool            // call
	sleep  time.Duration   // sleep
	text   string          // stderr
	id     uint64          // reuse_id
}

// rawStep is a step as written. Pointers tell an absent key from a zero.
type rawStep struct {
	Send         *string         `json:"send"`
	SendBytesB64 *string         `json:"send_bytes_b64"`
	LongLine     *int            `json:"long_line"`
	Call         *string         `json:"call"`
	Notify       *string         `json:"notify"`
	Sleep        *string         `json:"sleep"`
	Exit         *int            `json:"exit"`
	Stderr       *string         `json:"stderr"`
	Flood        *int            `json:"flood"`
	ReuseID      *uint64         `json:"reuse_id"`
	Params       json.RawMessage `json:"params"`
	NoWait       bool            `json:"nowait"`
	Repeat       *int            `json:"repeat"`
	Method       string          `json:"method"`
}

// parseScript decodes and checks a --script value.
func parseScript(b []byte) ([]step, error) {
	var raws []json.RawMessage
	if err := json.Unmarshal(b, &raws); err != nil {
		return nil, fmt.Errorf("script is not a JSON array: %w", err)
	}
	steps := make([]step, 0, len(raws))
	for i, raw := range raws {
		s, err := parseStep(raw)
		if err != nil {
			return nil, fmt.Errorf("script step %d %s: %w", i, raw, err)
		}
		steps = append(steps, s)
	}
	return steps, nil
}

func parseStep(raw json.RawMessage) (step, error) {
	var r rawStep
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&r); err != nil {
		return step{}, err
	}
	if len(r.Params) > 0 && r.Params[0] != '{' {
		return step{}, errors.New("params must be an object")
	}
	var found []step
	add := func(present bool, s step) {
		if present {
			found = append(found, s)
		}
	}
	add(r.Send != nil, step{kind: "send", bytes: []byte(deref(r.Send) + "\n")})
	add(r.LongLine != nil, step{kind: "long_line", n: derefInt(r.LongLine)})
	add(r.Call != nil, step{kind: "call", method: deref(r.Call), params: r.Params, nowait: r.NoWait})
	add(r.Notify != nil, step{kind: "notify", method: deref(r.Notify), params: r.Params})
	add(r.Exit != nil, step{kind: "exit", n: derefInt(r.Exit)})
	add(r.Stderr != nil, step{kind: "stderr", text: deref(r.Stderr), n: 1})
	add(r.Flood != nil, step{kind: "flood", n: derefInt(r.Flood), method: "value.publish", params: r.Params})
	add(r.ReuseID != nil, step{kind: "reuse_id", id: derefUint(r.ReuseID)})
	if r.SendBytesB64 != nil {
		b, err := base64.StdEncoding.DecodeString(*r.SendBytesB64)
		if err != nil {
			return step{}, fmt.Errorf("send_bytes_b64: %w", err)
		}
		found = append(found, step{kind: "send_bytes_b64", bytes: b})
	}
	if r.Sleep != nil {
		d, err := time.ParseDuration(*r.Sleep)
		if err != nil {
			return step{}, fmt.Errorf("sleep: %w", err)
		}
		found = append(found, step{kind: "sleep", sleep: d})
	}
	if len(found) != 1 {
		return step{}, fmt.Errorf("want exactly one action key, found %d", len(found))
	}
	s := found[0]
	if r.Repeat != nil && s.kind == "stderr" {
		s.n = *r.Repeat
	}
	if r.Method != "" && s.kind == "flood" {
		s.method = r.Method
	}
	if s.n < 0 {
		return step{}, errors.New("negative count")
	}
	return s, nil
}

func deref(p *string) string {
	if p == nil {
		return ""
	}
	return *p
}

func derefInt(p *int) int {
	if p == nil {
		return 0
	}
	return *p
}

func derefUint(p *uint64) uint64 {
	if p == nil {
		return 0
	}
	return *p
}
