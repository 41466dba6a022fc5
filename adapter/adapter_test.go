package adapter

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/openhal/gateway/adapterproto"
	"github.com/openhal/gateway/adapterproto/reference"
	"github.com/openhal/gateway/device"
	"github.com/openhal/gateway/jsonrpc"
)

func TestReferenceFrames(t *testing.T) {
	p := start(t, Adapter{})
	p.handshake()
	p.send(string(reference.Bytes("ping")))
	p.expect(string(reference.Bytes("ping_result")))
	p.send(`{"jsonrpc":"2.0","id":3,"method":"shutdown","params":{}}`)
	p.expect(`{"jsonrpc":"2.0","id":3,"result":{}}`)
	if err := p.result(); err != nil {
		t.Fatalf("Run after shutdown: %v", err)
	}
}

// The adapter speaks only once initialize has arrived: what comes before
// is not answered, so the first frame out is initialize's answer.
func TestSilentUntilInitialize(t *testing.T) {
	read := make(chan string, 1)
	p := start(t, Adapter{
		OnRead: func(ctx context.Context, c *Conn, d string) (Reading, error) {
			read <- d
			return Reading{Value: 1.0}, nil
		},
	})
	p.send(`{"jsonrpc":"2.0","id":5,"method":"ping","params":{}}`)
	p.send(`{"jsonrpc":"2.0","id":6,"method":"device.read","params":{"device":"x"}}`)
	p.send(`{"jsonrpc":"2.0","method":"event","params":{"seq":1,"type":"value","data":{}}}`)
	p.send(`{"jsonrpc":"2.0","method":"initialized","params":{}}`)
	p.handshake()
	p.send(string(reference.Bytes("ping")))
	p.expect(string(reference.Bytes("ping_result")))
	select {
	case d := <-read:
		t.Fatalf("device.read %q served before initialize", d)
	default:
	}
}

func TestNegotiation(t *testing.T) {
	ok := `{"jsonrpc":"2.0","id":1,"result":{"protocol":1,"name":"notifier","version":"0.1.0"}}`
	for _, tc := range []struct {
		protocols string
		want      string
		err       error
	}{
		{"[1]", ok, nil},
		{"[3,1,2]", ok, nil},
		{"[2]", string(reference.Bytes("initialize_unsupported")), ErrIncompatible},
		{"[]", string(reference.Bytes("initialize_unsupported")), ErrIncompatible},
	} {
		t.Run(tc.protocols, func(t *testing.T) {
			p := start(t, Adapter{})
			p.send(initFrame(tc.protocols, 262144))
			p.expect(tc.want)
			if tc.err == nil {
				p.send(`{"jsonrpc":"2.0","id":2,"method":"shutdown"}`)
				p.expect(`{"jsonrpc":"2.0","id":2,"result":{}}`)
			}
			if err := p.result(); !errors.Is(err, tc.err) {
				t.Fatalf("Run: %v, want %v", err, tc.err)
			}
		})
	}
}

func TestInitializeParams(t *testing.T) {
	var got adapterproto.InitializeParams
	var callErr, notifyErr error
	p := start(t, Adapter{OnInitialize: func(ctx context.Context, c *Conn) error {
		got = c.Params()
		_, callErr = c.DevicesList(ctx)
		notifyErr = c.Publish("x", 1)
		return nil
	}})
	p.handshake()
	want := adapterproto.InitializeParams{
		Protocols: []int{1}, Host: adapterproto.Host{Name: "oxidepmd", Version: "0.4.0"},
		Adapter: adapterproto.Info{Name: "notifier", Version: "0.1.0"}, Kind: "service",
		Grant:  adapterproto.Grant{Level: "read", Scope: adapterproto.ScopeList{All: true}},
		Paths:  adapterproto.Paths{State: "/home/u/.oxidepm/adapters/state/notifier"},
		Limits: adapterproto.Limits{MaxLine: 262144, MaxInFlight: 32, EventQueue: 1024},
	}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("params:\n got %+v\nwant %+v", got, want)
	}
	if !errors.Is(callErr, ErrNotReady) || !errors.Is(notifyErr, ErrNotReady) {
		t.Errorf("sending before the answer: call %v, notify %v; want ErrNotReady", callErr, notifyErr)
	}
}

// OnInitialized runs once initialized arrives, and may call the daemon
// at once: its first request is id 1.
func TestOnInitialized(t *testing.T) {
	got := make(chan error, 1)
	p := start(t, Adapter{OnInitialized: func(ctx context.Context, c *Conn) {
		_, err := c.DevicesList(ctx)
		got <- err
	}})
	p.handshake()
	p.expect(`{"jsonrpc":"2.0","id":1,"method":"devices.list","params":{}}`)
	p.send(`{"jsonrpc":"2.0","id":1,"result":{"devices":[]}}`)
	select {
	case err := <-got:
		if err != nil {
			t.Fatalf("devices.list from OnInitialized: %v", err)
		}
	case <-time.After(wait):
		t.Fatal("OnInitialized's call did not return")
	}
}

func TestInitializeRefused(t *testing.T) {
	for _, tc := range []struct {
		name string
		err  error
		want string
	}{
		{"typed", &Error{Code: -32010, Message: "no state", Data: map[string]string{"code": "E_X"}},
			`{"jsonrpc":"2.0","id":1,"error":{"code":-32010,"message":"no state","data":{"code":"E_X"}}}`},
		{"plain", errors.New("open state: denied"),
			`{"jsonrpc":"2.0","id":1,"error":{"code":-32000,"message":"open state: denied"}}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := start(t, Adapter{OnInitialize: func(context.Context, *Conn) error { return tc.err }})
			p.send(string(reference.Bytes("initialize")))
			p.expect(tc.want)
			if err := p.result(); !errors.Is(err, tc.err) {
				t.Fatalf("Run: %v, want %v", err, tc.err)
			}
		})
	}
}

func TestEnd(t *testing.T) {
	for _, tc := range []struct {
		name      string
		handshake bool
		shutdown  bool
	}{
		{"shutdown", true, true},
		{"eof", true, false},
		{"eof before initialize", false, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := start(t, Adapter{})
			if tc.handshake {
				p.handshake()
			}
			if tc.shutdown {
				p.send(`{"jsonrpc":"2.0","id":2,"method":"shutdown","params":{}}`)
				p.expect(`{"jsonrpc":"2.0","id":2,"result":{}}`)
			} else {
				p.in.Close()
			}
			if err := p.result(); err != nil {
				t.Fatalf("Run: %v", err)
			}
			if line, ok := <-p.out; ok {
				t.Fatalf("frame after the end: %s", line)
			}
		})
	}
}

func TestRequests(t *testing.T) {
	ts := time.Date(2026, 1, 2, 3, 4, 5, 123456789, time.FixedZone("x", 3600))
	read := func(ctx context.Context, c *Conn, d string) (Reading, error) {
		switch d {
		case "temp":
			return Reading{Value: 21.5, TS: ts}, nil
		case "typed":
			return Reading{}, fmt.Errorf("read typed: %w", &Error{Code: -32010, Message: "unplugged", Data: map[string]string{"code": "E_X"}})
		}
		return Reading{}, errors.New("no such device: " + d)
	}
	write := func(ctx context.Context, c *Conn, d string, v json.RawMessage) (Reading, error) {
		if d == "echo" {
			return Reading{Value: v}, nil
		}
		return Reading{}, nil
	}
	full := Adapter{OnRead: read, OnWrite: write}
	for _, tc := range []struct {
		name string
		a    Adapter
		in   string
		want string
	}{
		{"unknown request", full, `{"jsonrpc":"2.0","id":7,"method":"frobnicate","params":{}}`,
			`{"jsonrpc":"2.0","id":7,"error":{"code":-32601,"message":"method not found: frobnicate"}}`},
		{"read", full, `{"jsonrpc":"2.0","id":7,"method":"device.read","params":{"device":"temp"}}`,
			`{"jsonrpc":"2.0","id":7,"result":{"value":21.5,"ts":"2026-01-02T02:04:05.123456789Z"}}`},
		{"read typed error", full, `{"jsonrpc":"2.0","id":7,"method":"device.read","params":{"device":"typed"}}`,
			`{"jsonrpc":"2.0","id":7,"error":{"code":-32010,"message":"unplugged","data":{"code":"E_X"}}}`},
		{"read plain error", full, `{"jsonrpc":"2.0","id":7,"method":"device.read","params":{"device":"gone"}}`,
			`{"jsonrpc":"2.0","id":7,"error":{"code":-32000,"message":"no such device: gone"}}`},
		{"read without device", full, `{"jsonrpc":"2.0","id":7,"method":"device.read","params":{}}`,
			`{"jsonrpc":"2.0","id":7,"error":{"code":-32602,"message":"device.read: device is required"}}`},
		{"read not served", Adapter{}, `{"jsonrpc":"2.0","id":7,"method":"device.read","params":{"device":"temp"}}`,
			`{"jsonrpc":"2.0","id":7,"error":{"code":-32601,"message":"method not found: device.read"}}`},
		{"write", full, `{"jsonrpc":"2.0","id":8,"method":"device.write","params":{"device":"echo","value":{"on":true}}}`,
			`{"jsonrpc":"2.0","id":8,"result":{"value":{"on":true}}}`},
		{"write without answer value", full, `{"jsonrpc":"2.0","id":8,"method":"device.write","params":{"device":"led","value":false}}`,
			`{"jsonrpc":"2.0","id":8,"result":{}}`},
		{"write without value", full, `{"jsonrpc":"2.0","id":8,"method":"device.write","params":{"device":"led"}}`,
			`{"jsonrpc":"2.0","id":8,"error":{"code":-32602,"message":"device.write: value is required"}}`},
		{"write not served", Adapter{OnRead: read}, `{"jsonrpc":"2.0","id":8,"method":"device.write","params":{"device":"led","value":1}}`,
			`{"jsonrpc":"2.0","id":8,"error":{"code":-32601,"message":"method not found: device.write"}}`},
		{"unknown notification", full, `{"jsonrpc":"2.0","method":"frobnicated","params":{}}`, ""},
		{"cancel of nothing", full, `{"jsonrpc":"2.0","method":"cancel","params":{"id":99}}`, ""},
		{"not json", full, `{"jsonrpc":"2.0",`, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := start(t, tc.a)
			p.handshake()
			p.send(tc.in)
			if tc.want != "" {
				p.expect(tc.want)
			}
			// Nothing else was written: the next frame is the ping's answer.
			p.send(string(reference.Bytes("ping")))
			p.expect(string(reference.Bytes("ping_result")))
		})
	}
}

// Events reach OnEvent in order, one at a time, and those queued when
// shutdown arrives are still delivered before Run returns.
func TestEvents(t *testing.T) {
	const n = 200
	var mu sync.Mutex
	var got []Event
	var running, overlap atomic.Int32
	p := start(t, Adapter{OnEvent: func(ctx context.Context, c *Conn, e Event) {
		if running.Add(1) > 1 {
			overlap.Add(1)
		}
		defer running.Add(-1)
		mu.Lock()
		got = append(got, e)
		mu.Unlock()
	}})
	p.handshake()
	for i := 1; i <= n; i++ {
		dropped := ""
		if i%50 == 0 {
			dropped = `,"dropped":3`
		}
		p.send(fmt.Sprintf(`{"jsonrpc":"2.0","method":"event","params":{"seq":%d,"type":"value","data":{"device":"sim.t","value":%d}%s}}`, i, i, dropped))
	}
	p.send(`{"jsonrpc":"2.0","id":2,"method":"shutdown","params":{}}`)
	p.expect(`{"jsonrpc":"2.0","id":2,"result":{}}`)
	if err := p.result(); err != nil {
		t.Fatalf("Run: %v", err)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(got) != n {
		t.Fatalf("%d events delivered, want %d", len(got), n)
	}
	for i, e := range got {
		seq := uint64(i + 1)
		wantDropped := uint64(0)
		if seq%50 == 0 {
			wantDropped = 3
		}
		wantData := fmt.Sprintf(`{"device":"sim.t","value":%d}`, seq)
		if e.Seq != seq || e.Type != "value" || string(e.Data) != wantData || e.Dropped != wantDropped {
			t.Fatalf("event %d: %+v (data %s)", i, e, e.Data)
		}
	}
	if overlap.Load() != 0 {
		t.Fatalf("OnEvent ran concurrently %d times", overlap.Load())
	}
}

// Each device request runs on its own goroutine: a read that waits for a
// later one does not block it.
func TestDeviceRequestsConcurrent(t *testing.T) {
	second := make(chan struct{})
	p := start(t, Adapter{OnRead: func(ctx context.Context, c *Conn, d string) (Reading, error) {
		if d == "first" {
			select {
			case <-second:
			case <-ctx.Done():
				return Reading{}, ctx.Err()
			}
		} else {
			close(second)
		}
		return Reading{Value: d}, nil
	}})
	p.handshake()
	p.send(`{"jsonrpc":"2.0","id":2,"method":"device.read","params":{"device":"first"}}`)
	p.send(`{"jsonrpc":"2.0","id":3,"method":"device.read","params":{"device":"second"}}`)
	got := map[string]bool{p.recv(): true, p.recv(): true}
	for _, want := range []string{
		`{"jsonrpc":"2.0","id":2,"result":{"value":"first"}}`,
		`{"jsonrpc":"2.0","id":3,"result":{"value":"second"}}`,
	} {
		if !got[want] {
			t.Fatalf("answers %v, want %s among them", got, want)
		}
	}
}

func TestCancel(t *testing.T) {
	started := make(chan struct{})
	var ctxErr atomic.Value
	p := start(t, Adapter{OnRead: func(ctx context.Context, c *Conn, d string) (Reading, error) {
		close(started)
		<-ctx.Done()
		ctxErr.Store(ctx.Err())
		return Reading{Value: "late"}, nil // dropped: already answered
	}})
	p.handshake()
	p.send(`{"jsonrpc":"2.0","id":9,"method":"device.read","params":{"device":"slow"}}`)
	select {
	case <-started:
	case <-time.After(wait):
		t.Fatal("handler not started")
	}
	p.send(`{"jsonrpc":"2.0","method":"cancel","params":{"id":9}}`)
	p.expect(`{"jsonrpc":"2.0","id":9,"error":{"code":-32024,"message":"cancelled"}}`)
	p.send(`{"jsonrpc":"2.0","method":"cancel","params":{"id":9}}`) // twice: nothing more
	// Shutdown waits for every handler: a late answer would come first.
	p.send(`{"jsonrpc":"2.0","id":10,"method":"shutdown","params":{}}`)
	p.expect(`{"jsonrpc":"2.0","id":10,"result":{}}`)
	if err := p.result(); err != nil {
		t.Fatalf("Run: %v", err)
	}
	if err, _ := ctxErr.Load().(error); !errors.Is(err, context.Canceled) {
		t.Fatalf("handler's ctx: %v, want canceled", err)
	}
}

// startConn runs the handshake and returns the Conn the callbacks see.
func startConn(t *testing.T, a Adapter) (*pipeRun, *Conn) {
	t.Helper()
	conns := make(chan *Conn, 1)
	a.OnInitialize = func(ctx context.Context, c *Conn) error { conns <- c; return nil }
	p := start(t, a)
	p.handshake()
	return p, <-conns
}

func TestCalls(t *testing.T) {
	p, c := startConn(t, Adapter{})
	ctx := context.Background()
	descriptor := `{"id":"t","kind":"sensor","source":"","access":"r","risk":"low","schema":{"type":"number","unit":"C"},"state":""}`
	for i, tc := range []struct {
		method string
		call   func() (any, error)
		params string
		answer string // result or error member
		want   string // the helper's result as %v, or its error
	}{
		{"devices.list", func() (any, error) { ds, err := c.DevicesList(ctx); return ids(ds), err },
			`{}`, `"result":{"devices":[{"id":"sim.led","kind":"gpio.output","access":"w","risk":"low","schema":{"type":"boolean"},"state":"ok","source":"sim"}]}`,
			`[sim.led]`},
		{"device.read", func() (any, error) {
			v, err := c.DeviceRead(ctx, "sim.temp")
			return fmt.Sprintf("%s %s %s %d", v.Device, v.Value, v.TS.Format(time.RFC3339Nano), v.Seq), err
		},
			`{"device":"sim.temp"}`, `"result":{"device":"sim.temp","value":21.5,"ts":"2026-01-02T03:04:05.5Z","seq":7}`,
			`sim.temp 21.5 2026-01-02T03:04:05.5Z 7`},
		{"device.write", func() (any, error) { r, err := c.DeviceWrite(ctx, "sim.led", true, "test"); return r.Status, err },
			`{"device":"sim.led","value":true,"reason":"test"}`, `"result":{"status":"pending","confirmation":{"id":"c-1"}}`,
			`pending`},
		{"devices.add", func() (any, error) {
			return c.DevicesAdd(ctx, mustDescriptor(t, descriptor))
		}, `{"device":` + descriptor + `}`, `"result":{"id":"notifier.t"}`, `notifier.t`},
		{"devices.remove", func() (any, error) { return nil, c.DevicesRemove(ctx, "t") },
			`{"device":"t"}`, `"result":{}`, `<nil>`},
		{"devices.list", func() (any, error) { return c.DevicesList(ctx) },
			`{}`, `"error":{"code":-32003,"message":"outside the grant","data":{"code":"E_ADAPTER_DENIED"}}`,
			`error -32003 outside the grant {"code":"E_ADAPTER_DENIED"}`},
	} {
		t.Run(tc.method, func(t *testing.T) {
			id := i + 1 // ids count from 1, one per call
			type out struct {
				v   any
				err error
			}
			done := make(chan out, 1)
			go func() { v, err := tc.call(); done <- out{v, err} }()
			p.expect(fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":%q,"params":%s}`, id, tc.method, tc.params))
			p.send(fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,%s}`, id, tc.answer))
			var o out
			select {
			case o = <-done:
			case <-time.After(wait):
				t.Fatal("call did not return")
			}
			got := fmt.Sprint(o.v)
			if o.err != nil {
				var e *Error
				if !errors.As(o.err, &e) {
					t.Fatalf("error %v is not an *Error", o.err)
				}
				got = fmt.Sprintf("error %d %s %s", e.Code, e.Message, e.Data)
			}
			if got != tc.want {
				t.Fatalf("got  %s\nwant %s", got, tc.want)
			}
		})
	}
}

func mustDescriptor(t *testing.T, s string) (d device.Descriptor) {
	t.Helper()
	if err := json.Unmarshal([]byte(s), &d); err != nil {
		t.Fatal(err)
	}
	return d
}

// A call given up by its ctx returns at once; the late answer is dropped
// and the next call takes the next id.
func TestCallCancelled(t *testing.T) {
	p, c := startConn(t, Adapter{})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { _, err := c.DevicesList(ctx); done <- err }()
	p.expect(`{"jsonrpc":"2.0","id":1,"method":"devices.list","params":{}}`)
	cancel()
	select {
	case err := <-done:
		if !errors.Is(err, context.Canceled) {
			t.Fatalf("call: %v, want canceled", err)
		}
	case <-time.After(wait):
		t.Fatal("call did not return")
	}
	p.send(`{"jsonrpc":"2.0","id":1,"result":{"devices":[]}}`) // late: dropped
	go func() { done <- c.DevicesRemove(context.Background(), "t") }()
	p.expect(`{"jsonrpc":"2.0","id":2,"method":"devices.remove","params":{"device":"t"}}`)
	p.send(`{"jsonrpc":"2.0","id":2,"result":{}}`)
	if err := <-done; err != nil {
		t.Fatalf("second call: %v", err)
	}
	p.send(`{"jsonrpc":"2.0","id":3,"method":"shutdown","params":{}}`)
	p.expect(`{"jsonrpc":"2.0","id":3,"result":{}}`)
	if err := p.result(); err != nil {
		t.Fatalf("Run: %v", err)
	}
	if _, err := c.DevicesList(context.Background()); !errors.Is(err, ErrClosed) {
		t.Fatalf("call after Run: %v, want ErrClosed", err)
	}
}

func TestPublish(t *testing.T) {
	p, c := startConn(t, Adapter{})
	if err := c.Publish("temp", 21.5); err != nil {
		t.Fatal(err)
	}
	p.expect(`{"jsonrpc":"2.0","method":"value.publish","params":{"device":"temp","value":21.5}}`)
	if err := c.Notify("x.custom", nil); err != nil {
		t.Fatal(err)
	}
	p.expect(`{"jsonrpc":"2.0","method":"x.custom"}`)
}

// Frames longer than limits.max_line are never written: a notification
// fails, an answer becomes an error that fits.
func TestMaxLine(t *testing.T) {
	big := strings.Repeat("x", 400)
	conns := make(chan *Conn, 1)
	p := start(t, Adapter{
		OnInitialize: func(ctx context.Context, c *Conn) error { conns <- c; return nil },
		OnRead:       func(context.Context, *Conn, string) (Reading, error) { return Reading{Value: big}, nil },
	})
	p.send(initFrame("[1]", 300))
	p.expect(string(reference.Bytes("initialize_result")))
	c := <-conns
	if err := c.Publish("t", big); !errors.Is(err, ErrTooLong) {
		t.Fatalf("publish of %d bytes: %v, want ErrTooLong", len(big), err)
	}
	p.send(`{"jsonrpc":"2.0","id":2,"method":"device.read","params":{"device":"t"}}`)
	m, err := jsonrpc.DecodeAdapter([]byte(p.recv()))
	if err != nil || m.Error == nil || m.Error.Code != CodeFailed || !strings.Contains(m.Error.Message, "max_line") {
		t.Fatalf("answer too long: %+v %v; want error %d about max_line", m, err, CodeFailed)
	}
	p.send(`{"jsonrpc":"2.0","id":3,"method":"ping","params":{}}`)
	p.expect(`{"jsonrpc":"2.0","id":3,"result":{}}`)
}

// Concurrent writers never interleave: every line is one whole frame.
func TestWritesWhole(t *testing.T) {
	const writers, each = 16, 50
	p, c := startConn(t, Adapter{})
	var wg sync.WaitGroup
	for w := range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range each {
				if err := c.Publish(fmt.Sprintf("d%d", w), strings.Repeat("v", 100+i)); err != nil {
					t.Error(err)
					return
				}
			}
		}()
	}
	for range writers * each {
		if _, err := jsonrpc.DecodeAdapter([]byte(p.recv())); err != nil {
			t.Fatal(err)
		}
	}
	wg.Wait()
}

func TestMainExit(t *testing.T) {
	seed := string(reference.Bytes("initialize")) + "\n"
	shutdown := `{"jsonrpc":"2.0","id":2,"method":"shutdown","params":{}}` + "\n"
	for _, tc := range []struct {
		name    string
		env     bool
		in      string
		code    int
		out     string
		errText string
	}{
		{"not started by a daemon", false, seed + shutdown, 2, "", "OXIDEPM_ADAPTER_PROTOCOLS is not set"},
		{"shutdown", true, seed + shutdown, 0,
			string(reference.Bytes("initialize_result")) + "\n" + `{"jsonrpc":"2.0","id":2,"result":{}}` + "\n", ""},
		{"incompatible", true, initFrame("[2]", 262144) + "\n", 1,
			string(reference.Bytes("initialize_unsupported")) + "\n", "no protocol in common"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			lookup := func(k string) (string, bool) {
				return "1", tc.env && k == adapterproto.EnvProtocols
			}
			var out, errOut bytes.Buffer
			a := Adapter{Name: "notifier", Version: "0.1.0", Logger: discard()}
			code := a.main(context.Background(), lookup, strings.NewReader(tc.in), &out, &errOut)
			if code != tc.code || out.String() != tc.out || !strings.Contains(errOut.String(), tc.errText) {
				t.Fatalf("code %d, out %q, stderr %q; want %d, %q, stderr with %q", code, out.String(), errOut.String(), tc.code, tc.out, tc.errText)
			}
		})
	}
}

func ids(ds []device.Descriptor) []string {
	var out []string
	for _, d := range ds {
		out = append(out, d.ID)
	}
	return out
}

// A full event queue drops the newest events and counts them in the next
// one delivered, without holding up the daemon's other messages.
func TestEventQueueFull(t *testing.T) {
	release := make(chan struct{})
	got := make(chan Event, 16)
	p := start(t, Adapter{OnEvent: func(ctx context.Context, c *Conn, e Event) {
		if e.Seq == 1 {
			<-release
		}
		got <- e
	}})
	p.send(strings.Replace(initFrame("[1]", 262144), `"event_queue":1024`, `"event_queue":2`, 1))
	p.expect(string(reference.Bytes("initialize_result")))
	event := func(seq int) {
		p.send(fmt.Sprintf(`{"jsonrpc":"2.0","method":"event","params":{"seq":%d,"type":"value","data":{}}}`, seq))
	}
	event(1)
	// Wait until OnEvent holds event 1, so that the queue is empty.
	p.send(string(reference.Bytes("ping")))
	p.expect(string(reference.Bytes("ping_result")))
	for seq := 2; seq <= 5; seq++ { // 2 and 3 fit, 4 and 5 are dropped
		event(seq)
	}
	p.send(`{"jsonrpc":"2.0","id":3,"method":"ping","params":{}}`)
	p.expect(`{"jsonrpc":"2.0","id":3,"result":{}}`)
	close(release)
	for _, want := range []Event{{Seq: 1}, {Seq: 2}, {Seq: 3}, {Seq: 6, Dropped: 2}} {
		if want.Seq == 6 {
			event(6) // now that the queue is empty
		}
		select {
		case e := <-got:
			if e.Seq != want.Seq || e.Dropped != want.Dropped {
				t.Fatalf("event seq %d dropped %d, want seq %d dropped %d", e.Seq, e.Dropped, want.Seq, want.Dropped)
			}
		case <-time.After(wait):
			t.Fatalf("event %d not delivered", want.Seq)
		}
	}
}

// failAfter accepts n writes, then fails: the daemon has gone.
type failAfter struct{ n int }

func (w *failAfter) Write(b []byte) (int, error) {
	if w.n == 0 {
		return 0, errors.New("broken pipe")
	}
	w.n--
	return len(b), nil
}

// A standard output that breaks ends Run with an error.
func TestWriteFailure(t *testing.T) {
	seed := string(reference.Bytes("initialize")) + "\n"
	ping := string(reference.Bytes("ping")) + "\n"
	for _, tc := range []struct {
		name string
		ok   int // writes that succeed
		in   string
	}{
		{"initialize answer", 0, seed},
		{"ping answer", 1, seed + ping + ping},
	} {
		t.Run(tc.name, func(t *testing.T) {
			a := Adapter{Name: "notifier", Version: "0.1.0", Logger: discard()}
			err := a.Run(context.Background(), strings.NewReader(tc.in), &failAfter{n: tc.ok})
			if err == nil || !strings.Contains(err.Error(), "broken pipe") {
				t.Fatalf("Run: %v, want the write error", err)
			}
		})
	}
}

// A request in flight at shutdown has its ctx cancelled, and its answer
// goes out before shutdown's.
func TestShutdownInFlight(t *testing.T) {
	started := make(chan struct{})
	p := start(t, Adapter{OnRead: func(ctx context.Context, c *Conn, d string) (Reading, error) {
		close(started)
		<-ctx.Done()
		return Reading{}, ctx.Err()
	}})
	p.handshake()
	p.send(`{"jsonrpc":"2.0","id":2,"method":"device.read","params":{"device":"slow"}}`)
	select {
	case <-started:
	case <-time.After(wait):
		t.Fatal("handler not started")
	}
	p.send(`{"jsonrpc":"2.0","id":3,"method":"shutdown","params":{}}`)
	p.expect(`{"jsonrpc":"2.0","id":2,"error":{"code":-32000,"message":"context canceled"}}`)
	p.expect(`{"jsonrpc":"2.0","id":3,"result":{}}`)
	if err := p.result(); err != nil {
		t.Fatalf("Run: %v", err)
	}
}

// Run ends with ctx, after its callbacks.
func TestContextEnds(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	inR, inW := io.Pipe()
	defer inW.Close()
	go func() {
		done <- Adapter{Name: "n", Version: "1", Logger: discard()}.Run(ctx, inR, io.Discard)
	}()
	cancel()
	select {
	case err := <-done:
		if !errors.Is(err, context.Canceled) {
			t.Fatalf("Run: %v, want canceled", err)
		}
	case <-time.After(wait):
		t.Fatal("Run did not return")
	}
}
