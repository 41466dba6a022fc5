package mcpbridge

import (
	"bytes"
	"context"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/openhal/gateway/halclient"
	"github.com/openhal/gateway/internal/halhub"
	"github.com/openhal/gateway/internal/halhub/audit"
	"github.com/openhal/gateway/internal/halhub/hubtest"
)

// stopCall is an emergency_stop call as a line of stdio.
const stopCall = `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"emergency_stop","arguments":{"reason":"smoke"}}}` + "\n"

// The lane engages the stop as soon as it reads the call, ahead of the
// SDK: here no server reads the transport at all.
func TestStopLaneAheadOfSDK(t *testing.T) {
	bench, url := newBench(t)
	b := newBridge(t, url, bench.Agent, false)
	in, w := io.Pipe()
	b.LaneTransport(in, nopWriteCloser{io.Discard})
	if _, err := io.WriteString(w, stopCall); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(waitLong)
	for !bench.Hub().Stopped() {
		if time.Now().After(deadline) {
			t.Fatalf("the stop read on stdio did not engage within %s", waitLong)
		}
		time.Sleep(time.Millisecond)
	}
	w.Close()
}

// Over the lane the tool answers with the stop the lane engaged: one stop
// in the Hub's audit log, not two; a call with a bad reason takes no
// lane and is refused by the tool's schema as before, engaging nothing.
func TestStopLaneClaimed(t *testing.T) {
	log, err := audit.Open(t.TempDir(), audit.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { log.Close() })
	bench, url := newBench(t, hubtest.Configure(func(o *halhub.Options) { o.Audit = log }))
	b := newBridge(t, url, bench.Agent, false)
	serverIn, clientOut := io.Pipe()
	clientIn, serverOut := io.Pipe()
	ctx, cancel := context.WithTimeout(context.Background(), waitLong)
	defer cancel()
	ss, err := b.Server().Connect(ctx, b.LaneTransport(serverIn, serverOut), nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ss.Close() })
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "lane-test", Version: "1"}, nil).
		Connect(ctx, &mcp.IOTransport{Reader: clientIn, Writer: clientOut}, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cs.Close() })
	c := &client{ClientSession: cs}

	if _, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: toolStop, Arguments: map[string]any{"reason": ""}}); err == nil && bench.Hub().Stopped() {
		t.Fatal("a stop with an empty reason engaged the stop")
	}
	admin, err := halclient.Dial(ctx, url, halclient.Options{Token: bench.Admin})
	if err != nil {
		t.Fatal(err)
	}
	defer admin.Close()
	var out stopOut
	c.ok(t, toolStop, map[string]any{"reason": "smoke from the heater"}, &out)
	if !out.Stopped || len(out.SafeApplied) == 0 {
		t.Fatalf("emergency_stop: %+v", out)
	}
	// Every stop is in the audit log before its answer: the lane's, and
	// the tool's if it stopped a second time.
	page, err := admin.Audit(ctx, 0, 1000)
	if err != nil {
		t.Fatal(err)
	}
	stops := 0
	for _, e := range page.Entries {
		if bytes.Contains(e, []byte(`"action":"stop"`)) {
			stops++
		}
	}
	if stops != 1 {
		t.Errorf("%d stops in the audit log, want the lane's one", stops)
	}
}

// aheadReader passes every byte through as it came, in order: lines the
// lane does not touch, a line longer than its buffer in pieces (never
// looked at), and the last line without its newline.
func TestAheadReaderPassesThrough(t *testing.T) {
	long := `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"emergency_stop","x":"` + strings.Repeat("y", 200<<10) + `"}}` + "\n"
	input := `{"a":1}` + "\n" + long + `{"b":"emergency_stop"}` + "\n" + `{"c":3}`
	looked := 0
	r := newAheadReader(io.NopCloser(strings.NewReader(input)))
	go r.scan(func(line []byte) []byte {
		looked++
		return bytes.ToUpper(line)
	})
	got, err := io.ReadAll(r)
	if err != nil {
		t.Fatal(err)
	}
	want := `{"A":1}` + "\n" + long + `{"B":"EMERGENCY_STOP"}` + "\n" + `{"c":3}`
	if string(got) != want {
		t.Errorf("read %d bytes, want %d: the lines were not passed through as they came", len(got), len(want))
	}
	if looked != 2 {
		t.Errorf("looked at %d lines, want the 2 whole ones", looked)
	}
}
