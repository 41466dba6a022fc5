//go:build unix

package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/openhal/gateway/adapterproto"
	"github.com/openhal/gateway/jsonrpc"
)

// chunk is about how many bytes a flood puts in one write: whole lines,
// many at a time, so that a flood is as fast as the pipe allows.
const chunk = 64 << 10

// afterInitialized runs once the daemon sent initialized: the fork, whose
// pids are recorded first, then the chaos timer and the script. Any
// failure ends the program.
func (a *adapter) afterInitialized() {
	for _, mode := range a.cfg.fork {
		if err := a.forkSleeper(mode); err != nil {
			a.fatal("fork", err)
			return
		}
	}
	if a.cfg.chaos > 0 {
		go a.chaos(a.cfg.chaos, a.cfg.chaosMode)
	}
	for i, s := range a.cfg.script {
		if err := a.play(s); err != nil {
			a.fatal(fmt.Sprintf("script step %d (%s)", i, s.kind), err)
			return
		}
	}
	a.log.Info("script done", "steps", len(a.cfg.script))
}

// play runs one step.
func (a *adapter) play(s step) error {
	switch s.kind {
	case "send", "send_bytes_b64":
		return a.write(s.bytes)
	case "long_line":
		return a.write(longLine(s.n))
	case "call":
		return a.ask(a.nextCallID(), s.method, s.params, s.nowait)
	case "reuse_id":
		return a.ask(s.id, adapterproto.MethodDevicesList, nil, true)
	case "notify":
		b, err := jsonrpc.AppendNotification(nil, s.method, paramsAny(s.params))
		if err != nil {
			return fmt.Errorf("encode notification %s: %w", s.method, err)
		}
		return a.send(b)
	case "flood":
		b, err := jsonrpc.AppendNotification(nil, s.method, paramsAny(s.params))
		if err != nil {
			return fmt.Errorf("encode notification %s: %w", s.method, err)
		}
		return repeatLines(append(b, '\n'), s.n, a.write)
	case "stderr":
		return repeatLines([]byte(s.text+"\n"), s.n, func(b []byte) error {
			_, err := a.stderr.Write(b)
			return err
		})
	case "sleep":
		time.Sleep(s.sleep)
		return nil
	case "exit":
		a.log.Info("exit step", "code", s.n)
		a.exit(s.n)
		return nil
	}
	return fmt.Errorf("unknown step kind %q", s.kind)
}

// write writes bytes on stdout as given.
func (a *adapter) write(b []byte) error {
	if err := a.out.raw(b); err != nil {
		return fmt.Errorf("write stdout: %w", err)
	}
	return nil
}

// longLine is one line of exactly n bytes before its '\n': a notification
// padded to length when n allows, else n bytes of 'a'.
func longLine(n int) []byte {
	const head, tail = `{"jsonrpc":"2.0","method":"x","params":{"pad":"`, `"}}`
	pad := n - len(head) - len(tail)
	if pad < 0 {
		return []byte(strings.Repeat("a", n) + "\n")
	}
	return []byte(head + strings.Repeat("a", pad) + tail + "\n")
}

// repeatLines calls write with n copies of line in total, as many whole
// copies per call as fit in about chunk bytes (at least one).
func repeatLines(line []byte, n int, write func([]byte) error) error {
	per := max(1, chunk/len(line))
	batch := bytes.Repeat(line, min(per, n))
	for n > 0 {
		k := min(per, n)
		if err := write(batch[:k*len(line)]); err != nil {
			return err
		}
		n -= k
	}
	return nil
}

// paramsAny gives AppendNotification nil, not an empty RawMessage in an
// interface, when a step has no params.
func paramsAny(p json.RawMessage) any {
	if len(p) == 0 {
		return nil
	}
	return p
}
