package arm64_test

import (
	"bufio"
	"encoding/json"
	"fmt"
	"net"
	"time"
)

// qmp is a minimal QEMU Machine Protocol client: one command at a time,
// events are skipped.
type qmp struct {
	c      net.Conn
	rd     *bufio.Reader
	events [][]byte // events read while waiting for an answer
}

func dialQMP(path string, timeout time.Duration) (*qmp, error) {
	var c net.Conn
	var err error
	deadline := time.Now().Add(timeout)
	for {
		c, err = net.Dial("unix", path)
		if err == nil || time.Now().After(deadline) {
			break
		}
		time.Sleep(50 * time.Millisecond) // QEMU creates the socket at start
	}
	if err != nil {
		return nil, fmt.Errorf("dial QMP %s: %w", path, err)
	}
	q := &qmp{c: c, rd: bufio.NewReader(c)}
	c.SetDeadline(time.Now().Add(10 * time.Second))
	if _, err := q.rd.ReadBytes('\n'); err != nil { // greeting
		c.Close()
		return nil, fmt.Errorf("QMP greeting: %w", err)
	}
	if err := q.run("qmp_capabilities", nil); err != nil {
		c.Close()
		return nil, err
	}
	return q, nil
}

// run executes a command and returns its error answer, if any.
func (q *qmp) run(cmd string, args any) error {
	q.c.SetDeadline(time.Now().Add(30 * time.Second))
	msg := map[string]any{"execute": cmd}
	if args != nil {
		msg["arguments"] = args
	}
	b, _ := json.Marshal(msg)
	if _, err := q.c.Write(append(b, '\n')); err != nil {
		return fmt.Errorf("QMP %s: %w", cmd, err)
	}
	for {
		line, err := q.rd.ReadBytes('\n')
		if err != nil {
			return fmt.Errorf("QMP %s: read: %w", cmd, err)
		}
		var r struct {
			Event  string          `json:"event"`
			Return json.RawMessage `json:"return"`
			Error  *struct {
				Class string `json:"class"`
				Desc  string `json:"desc"`
			} `json:"error"`
		}
		if err := json.Unmarshal(line, &r); err != nil {
			return fmt.Errorf("QMP %s: decode %q: %w", cmd, line, err)
		}
		switch {
		case r.Event != "":
			q.events = append(q.events, line)
			continue
		case r.Error != nil:
			return fmt.Errorf("QMP %s: %s: %s", cmd, r.Error.Class, r.Error.Desc)
		default:
			return nil
		}
	}
}

func (q *qmp) close() { q.c.Close() }

// waitEvent reads until the event named for device id arrives.
func (q *qmp) waitEvent(name, id string, within time.Duration) error {
	is := func(line []byte) bool {
		var e struct {
			Event string `json:"event"`
			Data  struct {
				Device string `json:"device"`
			} `json:"data"`
		}
		return json.Unmarshal(line, &e) == nil && e.Event == name && e.Data.Device == id
	}
	for _, line := range q.events {
		if is(line) {
			q.events = nil
			return nil
		}
	}
	q.events = nil
	q.c.SetDeadline(time.Now().Add(within))
	for {
		line, err := q.rd.ReadBytes('\n')
		if err != nil {
			return fmt.Errorf("QMP: waiting for %s of %s: %w", name, id, err)
		}
		if is(line) {
			return nil
		}
	}
}
