package qemutest

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"os"
	"time"
)

// QMP is a QEMU Machine Protocol session on a Unix socket: one command at
// a time; events that arrive meanwhile are kept for WaitEvent.
type QMP struct {
	c      net.Conn
	rd     *bufio.Reader
	events []json.RawMessage
}

// DialQMP connects to QEMU's QMP socket, retrying until QEMU has made it
// or ctx ends, reads the greeting and leaves capabilities negotiation.
func DialQMP(ctx context.Context, path string) (*QMP, error) {
	var d net.Dialer
	for {
		c, err := d.DialContext(ctx, "unix", path)
		if err == nil {
			q := &QMP{c: c, rd: bufio.NewReader(c)}
			if err := q.handshake(ctx); err != nil {
				c.Close()
				return nil, err
			}
			return q, nil
		}
		select {
		case <-ctx.Done():
			return nil, fmt.Errorf("dial QMP %s: %w (last try: %v)", path, ctx.Err(), err)
		case <-time.After(50 * time.Millisecond): // QEMU makes the socket as it starts
		}
	}
}

func (q *QMP) handshake(ctx context.Context) error {
	defer q.bound(ctx)()
	if _, err := q.rd.ReadBytes('\n'); err != nil {
		return fmt.Errorf("QMP greeting: %w", err)
	}
	_, err := q.Run(ctx, "qmp_capabilities", nil)
	return err
}

// bound makes the connection's reads and writes end with ctx (its
// deadline, or its cancellation); call the returned function when done.
func (q *QMP) bound(ctx context.Context) (done func() bool) {
	dl, _ := ctx.Deadline() // the zero time: no deadline
	_ = q.c.SetDeadline(dl)
	return context.AfterFunc(ctx, func() { _ = q.c.SetDeadline(time.Unix(1, 0)) })
}

// Error is QMP's answer to a command that failed.
type Error struct {
	Command, Class, Desc string
}

func (e *Error) Error() string { return fmt.Sprintf("QMP %s: %s: %s", e.Command, e.Class, e.Desc) }

// Run executes command with args (nil for none) and returns its "return"
// value, or its "error" answer as an *Error.
func (q *QMP) Run(ctx context.Context, command string, args any) (json.RawMessage, error) {
	msg := map[string]any{"execute": command}
	if args != nil {
		msg["arguments"] = args
	}
	req, err := json.Marshal(msg)
	if err != nil {
		return nil, fmt.Errorf("QMP %s: encode arguments: %w", command, err)
	}
	defer q.bound(ctx)()
	if _, err := q.c.Write(append(req, '\n')); err != nil {
		return nil, fmt.Errorf("QMP %s: send: %w", command, err)
	}
	for {
		line, err := q.rd.ReadBytes('\n')
		if err != nil {
			return nil, fmt.Errorf("QMP %s: read: %w", command, withCause(ctx, err))
		}
		var ans struct {
			Event  string          `json:"event"`
			Return json.RawMessage `json:"return"`
			Error  *struct {
				Class string `json:"class"`
				Desc  string `json:"desc"`
			} `json:"error"`
		}
		if err := json.Unmarshal(line, &ans); err != nil {
			return nil, fmt.Errorf("QMP %s: decode %q: %w", command, line, err)
		}
		switch {
		case ans.Event != "":
			q.events = append(q.events, line)
		case ans.Error != nil:
			return nil, &Error{Command: command, Class: ans.Error.Class, Desc: ans.Error.Desc}
		case ans.Return != nil:
			return ans.Return, nil
		}
	}
}

// WaitEvent waits for the event name about device id (its data.device),
// looking first at the events that arrived during earlier commands. The
// events read before it are dropped.
func (q *QMP) WaitEvent(ctx context.Context, name, device string) error {
	is := func(line []byte) bool {
		var e struct {
			Event string `json:"event"`
			Data  struct {
				Device string `json:"device"`
			} `json:"data"`
		}
		return json.Unmarshal(line, &e) == nil && e.Event == name && e.Data.Device == device
	}
	for i, line := range q.events {
		if is(line) {
			q.events = q.events[i+1:]
			return nil
		}
	}
	q.events = nil
	defer q.bound(ctx)()
	for {
		line, err := q.rd.ReadBytes('\n')
		if err != nil {
			return fmt.Errorf("QMP: wait for %s of %s: %w", name, device, withCause(ctx, err))
		}
		if is(line) {
			return nil
		}
	}
}

// Close ends the session.
func (q *QMP) Close() error { return q.c.Close() }

// withCause adds ctx's error to err, a read or write that ended at a
// deadline: connection deadlines are set only from ctx (bound), so
// errors.Is(err, context.DeadlineExceeded) holds as it should.
func withCause(ctx context.Context, err error) error {
	if !errors.Is(err, os.ErrDeadlineExceeded) {
		return err
	}
	<-ctx.Done()
	return errors.Join(err, ctx.Err())
}
