package halhub

import (
	"context"
	"encoding/json"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"
	"github.com/openhal/gateway/device"
	"github.com/openhal/gateway/openhal"
)

// A method answered on the reader must never wait for the disk: none of
// them is audited.
func TestQuickMethodsNotAudited(t *testing.T) {
	for name, m := range methods() {
		if _, ok := audited[name]; ok && m.quick != nil {
			t.Errorf("%s is audited and answered on the reader (quick)", name)
		}
	}
}

// A hal/read that asks its device still runs on a goroutine of its own:
// while a sensor's measurement hangs, reads answered from the cache and
// pings on the same connection are answered; the hung read's answer
// follows once the device answers.
func TestQuickAnswersWhileReadWaits(t *testing.T) {
	th := newTestHub(t)
	slow := sensor("bench.slow")
	release := make(chan struct{})
	slow.readFn = func(ctx context.Context) (device.Reading, error) {
		select {
		case <-release:
			return device.Reading{Value: 1.0}, nil
		case <-ctx.Done():
			return device.Reading{}, ctx.Err()
		}
	}
	th.addDevice(t, slow)
	th.addDevice(t, output("bench.out", device.RiskLow))
	th.reg.Publish("bench.out", true, th.reg.Now())
	c := th.dialTCP(t)
	c.init(th.admin)

	c.sendRaw(`{"jsonrpc":"2.0","id":"slow","method":"hal/read","params":{"device":"bench.slow"}}`)
	tests := []struct {
		method string
		params any
		want   string
	}{
		{"hal/ping", nil, `{}`},
		{"hal/read", map[string]any{"device": "bench.out"}, `true`},
		{"hal/read", map[string]any{"device": "bench.none"}, ``},
	}
	for _, tt := range tests {
		m := c.call(tt.method, tt.params)
		switch {
		case tt.want == "" && m.Error == nil:
			t.Errorf("%s %v: %s, want an error", tt.method, tt.params, m.raw)
		case tt.method == "hal/ping" && string(m.Result) != tt.want:
			t.Errorf("%s: %s, want %s", tt.method, m.raw, tt.want)
		case tt.method == "hal/read" && tt.want != "":
			var v openhal.ValueResult
			if err := json.Unmarshal(m.Result, &v); err != nil || string(mustJSON(v.Value)) != tt.want {
				t.Errorf("%s %v: %s, want value %s", tt.method, tt.params, m.raw, tt.want)
			}
		}
	}
	close(release)
	if m := c.answer(json.RawMessage(`"slow"`)); m.Error != nil {
		t.Errorf("the measured read: %s", m.raw)
	}
}

// An answer the reader writes itself never makes it wait on a client that
// does not read: what the socket does not take goes to the writer. Reads
// answered from the cache, 64 KiB each, to a client that stopped reading
// fill its socket until the writer blocks on it; the reader still reads
// and serves a ping meanwhile; and when the client reads, every answer
// arrives whole and in order.
func TestQuickAnswersWholeOnAFullSocket(t *testing.T) {
	th := newTestHub(t)
	th.addDevice(t, lineSensor("bench.blob"))
	blob := strings.Repeat("x", 32<<10) // rawConn reads lines of up to 64 KiB
	th.reg.Publish("bench.blob", blob, th.reg.Now())
	rc := th.dialRaw(t, th.admin, 4096)
	s := th.stalledSession(t, "root")
	if s == nil || s.tw == nil {
		t.Fatal("the TCP session has no tryWriter: its reader never writes")
	}
	read := func(id int) {
		rc.send(request(id, "hal/read", map[string]any{"device": "bench.blob", "maxAgeMs": 1 << 30}))
	}
	sent := 0
	for stuck := false; !stuck; {
		if sent > 500 {
			t.Fatal("the writer never blocked on a client that does not read")
		}
		sent++
		read(100 + sent)
		waitFor(t, 5*time.Second, "the answer written or the writer blocked", func() bool {
			stuck = slices.Contains(goroutines("(*lineTransport).write"), "IO wait")
			return stuck || s.inflight.Load() == 0
		})
	}
	// The reader is not held: it reads a ping sent now and answers it
	// after the answers before it.
	rc.send(request(99, "hal/ping", nil))
	waitFor(t, 5*time.Second, "the ping read", func() bool {
		return s.inflight.Load() > 0 && len(goroutines("(*session).readLoop")) > 0 && slices.Contains(goroutines("(*session).readLoop"), "IO wait")
	})
	for i := 1; i <= sent; i++ {
		m := rc.next()
		var v openhal.ValueResult
		if string(m.ID) != strconv.Itoa(100+i) || m.Error != nil || json.Unmarshal(m.Result, &v) != nil || v.Value != blob {
			t.Fatalf("answer %d of %d: id %s, %d bytes, want id %d and the whole value", i, sent, m.ID, len(m.raw), 100+i)
		}
	}
	if m := rc.next(); string(m.ID) != "99" || m.Error != nil {
		t.Errorf("the ping: %.200s", m.raw)
	}
}

// The same over WebSocket, whose reader writes an answer through the
// connection's cork (cork.go): what the full socket does not take stays
// pending for the writer, which blocks on it while the reader goes on
// serving; when the client reads, every answer arrives whole and in
// order.
func TestQuickAnswersWholeOnAFullWebSocket(t *testing.T) {
	th := newTestHub(t)
	th.addDevice(t, lineSensor("bench.blob"))
	blob := strings.Repeat("x", 32<<10)
	th.reg.Publish("bench.blob", blob, th.reg.Now())
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	hc := &http.Client{Transport: &http.Transport{DialContext: smallRcvbuf().DialContext}}
	c, _, err := websocket.Dial(ctx, th.wsURL, &websocket.DialOptions{HTTPClient: hc})
	if err != nil {
		t.Fatal(err)
	}
	defer c.CloseNow()
	c.SetReadLimit(1 << 20)
	send := func(m string) {
		if err := c.Write(ctx, websocket.MessageText, []byte(m)); err != nil {
			t.Fatal(err)
		}
	}
	send(request(1, "hal/initialize", map[string]any{"protocolVersion": "0.1", "clientInfo": map[string]string{"name": "root", "version": "1"}, "token": th.admin}))
	if _, b, err := c.Read(ctx); err != nil || strings.Contains(string(b), `"error"`) {
		t.Fatalf("initialize: %s %v", b, err)
	}
	send(`{"jsonrpc":"2.0","method":"hal/initialized"}`)
	s := th.stalledSession(t, "root")
	if s == nil || s.tw == nil {
		t.Fatal("the WebSocket session has no tryWriter: its reader never writes")
	}
	sent := 0
	for stuck := false; !stuck; {
		if sent > 500 {
			t.Fatal("the writer never blocked on a client that does not read")
		}
		sent++
		send(request(100+sent, "hal/read", map[string]any{"device": "bench.blob", "maxAgeMs": 1 << 30}))
		waitFor(t, 5*time.Second, "the answer written or the writer blocked", func() bool {
			stuck = slices.Contains(goroutines("(*wsTransport).write"), "IO wait")
			return stuck || s.inflight.Load() == 0
		})
	}
	served := hubRequests(th.hub)
	send(request(99, "hal/ping", nil))
	waitFor(t, 5*time.Second, "the ping served while the client does not read", func() bool {
		return hubRequests(th.hub) > served
	})
	for i := 1; i <= sent; i++ {
		_, b, err := c.Read(ctx)
		var m struct {
			ID     json.RawMessage     `json:"id"`
			Result openhal.ValueResult `json:"result"`
		}
		if err != nil || json.Unmarshal(b, &m) != nil || string(m.ID) != strconv.Itoa(100+i) || m.Result.Value != blob {
			t.Fatalf("answer %d of %d: id %s, %d bytes (%v), want id %d and the whole value", i, sent, m.ID, len(b), err, 100+i)
		}
	}
	if _, b, err := c.Read(ctx); err != nil || !strings.Contains(string(b), `"id":99`) {
		t.Errorf("the ping: %.200s %v", b, err)
	}
}
