package mcpbridge

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"os"
	"strconv"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/openhal/gateway/openhal"
)

// The emergency stop's own lane on stdio. The SDK reads a client's
// messages one at a time and starts each call in turn, each a little
// work (decoding, the input's schema): an emergency_stop sent behind a
// thousand calls waits until the SDK has read them all. The lane reads
// standard input ahead of the SDK, into a bounded queue that the SDK
// reads from, and engages the stop the moment it sees an emergency_stop
// call. It marks the call (its params' _meta, laneKey) so that the tool,
// when the SDK runs it, answers with that stop's outcome rather than
// stopping a second time.

const (
	// laneKey is the _meta key that ties a call to the stop its lane
	// engaged.
	laneKey = "openhal.org/stopLane"
	// aheadBytes bounds what the lane reads ahead of the SDK; past it,
	// it waits for the SDK (one line is always taken).
	aheadBytes = 4 << 20
	// laneKept bounds the stops kept for their calls: a call the SDK
	// refuses before its tool runs (a bad session) never claims its own.
	laneKept = 64
)

// StdioTransport is the SDK's stdio transport with the stop's lane, for
// `gateway mcp`.
func (b *Bridge) StdioTransport() mcp.Transport {
	return b.LaneTransport(os.Stdin, nopWriteCloser{os.Stdout})
}

// LaneTransport is StdioTransport over in and out: newline-delimited
// JSON-RPC, as the SDK's IOTransport.
func (b *Bridge) LaneTransport(in io.ReadCloser, out io.WriteCloser) mcp.Transport {
	r := newAheadReader(in)
	go r.scan(b.laneLine)
	return &mcp.IOTransport{Reader: r, Writer: out}
}

type nopWriteCloser struct{ io.Writer }

func (nopWriteCloser) Close() error { return nil }

// aheadReader reads lines from in as they come, hands each to look (which
// may rewrite it), and keeps them for Read, at most aheadBytes.
type aheadReader struct {
	in   io.ReadCloser
	mu   sync.Mutex
	cond *sync.Cond
	// lines wait for Read, cur is what is left of the one being read.
	lines  [][]byte
	size   int
	cur    []byte
	err    error // in's, once the lines before it are read
	closed bool
}

func newAheadReader(in io.ReadCloser) *aheadReader {
	r := &aheadReader{in: in}
	r.cond = sync.NewCond(&r.mu)
	return r
}

// scan reads in until it fails. A line too long for the reader's buffer
// (a large call, never a stop) passes in pieces, unlooked at.
func (r *aheadReader) scan(look func([]byte) []byte) {
	br := bufio.NewReaderSize(r.in, 64<<10)
	long := false
	for {
		line, err := br.ReadSlice('\n')
		piece := bytes.Clone(line)
		if len(piece) > 0 {
			if !long && err == nil {
				piece = look(piece)
			}
			if !r.push(piece) {
				return
			}
		}
		long = errors.Is(err, bufio.ErrBufferFull)
		if err != nil && !long {
			r.fail(err)
			return
		}
	}
}

// push queues p, waiting while the queue is full; false once closed.
func (r *aheadReader) push(p []byte) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	for r.size >= aheadBytes && !r.closed {
		r.cond.Wait()
	}
	if r.closed {
		return false
	}
	r.lines = append(r.lines, p)
	r.size += len(p)
	r.cond.Broadcast()
	return true
}

func (r *aheadReader) fail(err error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.err = err
	r.cond.Broadcast()
}

func (r *aheadReader) Read(p []byte) (int, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for len(r.cur) == 0 && len(r.lines) == 0 && r.err == nil && !r.closed {
		r.cond.Wait()
	}
	if len(r.cur) == 0 && len(r.lines) > 0 {
		r.cur, r.lines = r.lines[0], r.lines[1:]
		r.size -= len(r.cur)
		r.cond.Broadcast()
	}
	if len(r.cur) > 0 {
		n := copy(p, r.cur)
		r.cur = r.cur[n:]
		return n, nil
	}
	if r.closed {
		return 0, os.ErrClosed
	}
	return 0, r.err
}

func (r *aheadReader) Close() error {
	r.mu.Lock()
	r.closed = true
	r.cond.Broadcast()
	r.mu.Unlock()
	return r.in.Close()
}

// laneLine engages the stop for an emergency_stop call the SDK will run,
// and returns the line marked with the stop's key; any other line is
// returned as it is. Only a call whose arguments are exactly a non-empty
// reason takes the lane, from a token that may stop: the tool's own
// schema accepts that call, so that its tool runs and claims the stop.
func (b *Bridge) laneLine(line []byte) []byte {
	if !bytes.Contains(line, []byte(`"`+toolStop+`"`)) || !b.Principal().Scope.AtLeast(openhal.ScopeControlLow) {
		return line
	}
	var msg map[string]json.RawMessage
	var params map[string]json.RawMessage
	var call struct {
		Name      string                     `json:"name"`
		Arguments map[string]json.RawMessage `json:"arguments"`
	}
	var method, reason string
	if json.Unmarshal(line, &msg) != nil || len(msg["id"]) == 0 || json.Unmarshal(msg["method"], &method) != nil || method != "tools/call" ||
		json.Unmarshal(msg["params"], &params) != nil || json.Unmarshal(msg["params"], &call) != nil || call.Name != toolStop ||
		len(call.Arguments) != 1 || json.Unmarshal(call.Arguments["reason"], &reason) != nil || reason == "" {
		return line
	}
	meta := map[string]any{}
	if raw, ok := params["_meta"]; ok && json.Unmarshal(raw, &meta) != nil {
		return line
	}
	meta[laneKey] = b.lane.engage(b, reason)
	params["_meta"], _ = json.Marshal(meta)
	msg["params"], _ = json.Marshal(params)
	out, err := json.Marshal(msg)
	if err != nil {
		return line
	}
	return append(out, '\n')
}

// stopLane holds the stops the lane engaged until their calls claim them.
type stopLane struct {
	mu    sync.Mutex
	next  uint64
	stops map[string]*laneStop
	order []string
}

// laneStop is one stop the lane engaged: done is closed once its answer
// is in.
type laneStop struct {
	done chan struct{}
	res  openhal.StopResult
	err  error
}

// engage starts a stop with reason and returns its key.
func (l *stopLane) engage(b *Bridge, reason string) string {
	s := &laneStop{done: make(chan struct{})}
	l.mu.Lock()
	l.next++
	key := strconv.FormatUint(l.next, 10)
	if l.stops == nil {
		l.stops = map[string]*laneStop{}
	}
	l.stops[key] = s
	l.order = append(l.order, key)
	for len(l.order) > laneKept {
		delete(l.stops, l.order[0])
		l.order = l.order[1:]
	}
	l.mu.Unlock()
	go func() {
		defer close(s.done)
		c, err := b.hub()
		if err != nil {
			s.err = err
			return
		}
		s.res, s.err = c.Stop(b.ctx, reason)
		if s.err != nil {
			b.log.Error("mcp: the emergency stop asked on stdio was NOT engaged", "err", s.err)
		}
	}()
	return key
}

// wait returns the stop's answer once it is in, or ctx's error.
func (s *laneStop) wait(ctx context.Context) (openhal.StopResult, error) {
	select {
	case <-s.done:
		return s.res, s.err
	case <-ctx.Done():
		return openhal.StopResult{}, ctx.Err()
	}
}

// metaOf is a tool call's _meta.
func metaOf(req *mcp.CallToolRequest) mcp.Meta {
	if req == nil || req.Params == nil {
		return nil
	}
	return req.Params.Meta
}

// claim returns the stop the lane engaged for a call with meta, and
// forgets it; nil when the call did not take the lane.
func (l *stopLane) claim(meta mcp.Meta) *laneStop {
	key, _ := meta[laneKey].(string)
	if key == "" {
		return nil
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	s := l.stops[key]
	delete(l.stops, key)
	return s
}
