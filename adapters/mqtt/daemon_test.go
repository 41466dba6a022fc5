package main

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"sync"
	"testing"
	"time"
)

const wait = 15 * time.Second

// frame is any JSON-RPC message, as the daemon sees it.
type frame struct {
	ID     *uint64         `json:"id,omitempty"`
	Method string          `json:"method,omitempty"`
	Params json.RawMessage `json:"params,omitempty"`
	Result json.RawMessage `json:"result,omitempty"`
	Error  json.RawMessage `json:"error,omitempty"`
}

// writeCall is a device.write the adapter asked for.
type writeCall struct {
	Device string          `json:"device"`
	Value  json.RawMessage `json:"value"`
	Reason string          `json:"reason"`
}

// daemon is a small gateway for the adapter: the sim bench's led and
// heater, answering devices.list, device.read, device.write (led applied,
// heater pending) and devices.add, and recording value.publish of
// mqtt.broker. The adapter runs in the test's process, over pipes.
type daemon struct {
	t   *testing.T
	in  *io.PipeWriter
	mu  sync.Mutex
	seq int

	writes  chan writeCall
	stops   chan string // hub.stop's reasons
	broker  chan string // mqtt.broker's values
	initErr chan json.RawMessage
	done    chan struct{} // closed when run has returned
	code    int           // run's exit code, once done
	pending string        // hub.confirmations' list (JSON), "" for none
}

const benchDevices = `[{"id":"sim.led","kind":"gpio.output","source":"sim","access":"rw","risk":"low","schema":{"type":"boolean"},"safe":false,"state":"ok"},` +
	`{"id":"sim.heater","kind":"gpio.output","source":"sim","access":"rw","risk":"high","schema":{"type":"boolean"},"safe":false,"state":"ok"}]`

// startAdapter runs the adapter with settings (a JSON object) and
// completes the handshake.
func startAdapter(t *testing.T, settings string) *daemon {
	t.Helper()
	d := startRaw(t, settings)
	select {
	case e := <-d.initErr:
		if e != nil {
			t.Fatalf("initialize refused: %s", e)
		}
	case <-time.After(wait):
		t.Fatal("no answer to initialize")
	}
	d.send(`{"jsonrpc":"2.0","method":"initialized","params":{}}`)
	return d
}

func startRaw(t *testing.T, settings string) *daemon {
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	d := &daemon{t: t, in: inW, writes: make(chan writeCall, 16), stops: make(chan string, 16), broker: make(chan string, 64),
		initErr: make(chan json.RawMessage, 1), done: make(chan struct{})}
	ctx, cancel := context.WithCancel(context.Background())
	env := func(k string) (string, bool) { return "1", k == "OXIDEPM_ADAPTER_PROTOCOLS" }
	go func() {
		d.code = run(ctx, env, inR, outW, testLog{t})
		outW.Close()
		close(d.done)
	}()
	go d.serve(outR)
	t.Cleanup(func() {
		inW.Close() // the daemon's end of input: the adapter ends
		select {
		case <-d.done:
		case <-time.After(wait):
			t.Error("the adapter did not end after shutdown")
		}
		cancel()
	})
	d.send(fmt.Sprintf(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocols":[1],"host":{"name":"oxidepmd","version":"test","product":"gateway"},"adapter":{"name":"mqtt","version":"0.1.0"},"kind":"service","grant":{"level":"control_low","scope":"all"},"paths":{"state":"%s"},"limits":{"max_line":262144,"max_in_flight":32,"event_queue":1024},"settings":%s}}`, t.TempDir(), settings))
	return d
}

func (d *daemon) send(frame string) {
	if _, err := io.WriteString(d.in, frame+"\n"); err != nil {
		d.t.Logf("send to the adapter: %v", err)
	}
}

// event sends the adapter a HAL notification as an event.
func (d *daemon) event(typ, data string) {
	d.mu.Lock()
	d.seq++
	seq := d.seq
	d.mu.Unlock()
	d.send(fmt.Sprintf(`{"jsonrpc":"2.0","method":"event","params":{"seq":%d,"type":%q,"data":%s}}`, seq, typ, data))
}

// serve answers the adapter's frames.
func (d *daemon) serve(out io.Reader) {
	sc := bufio.NewScanner(out)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		var f frame
		if err := json.Unmarshal(sc.Bytes(), &f); err != nil {
			d.t.Errorf("adapter wrote %q: %v", sc.Text(), err)
			continue
		}
		switch {
		case f.Method == "" && *f.ID == 1:
			d.initErr <- f.Error
		case f.Method == "value.publish":
			var p struct {
				Device string `json:"device"`
				Value  string `json:"value"`
			}
			_ = json.Unmarshal(f.Params, &p)
			d.broker <- p.Value
		case f.ID != nil && f.Method != "":
			d.send(fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,%s}`, *f.ID, d.answer(f)))
		}
	}
}

func (d *daemon) answer(f frame) string {
	switch f.Method {
	case "devices.list":
		return `"result":{"devices":` + benchDevices + `}`
	case "device.read":
		var p struct{ Device string }
		_ = json.Unmarshal(f.Params, &p)
		return fmt.Sprintf(`"result":{"device":%q,"value":false,"ts":"2026-01-02T03:04:05Z","seq":1}`, p.Device)
	case "devices.add":
		return `"result":{"id":"mqtt.broker"}`
	case "hub.stopped":
		return `"result":{"stopped":null}`
	case "hub.confirmations":
		d.mu.Lock()
		list := d.pending
		d.mu.Unlock()
		if list == "" {
			list = "[]"
		}
		return `"result":{"confirmations":` + list + `}`
	case "hub.stop":
		var p struct{ Reason string }
		_ = json.Unmarshal(f.Params, &p)
		d.stops <- p.Reason
		return `"result":{"stopped":true,"safeApplied":["sim.led","sim.heater"],"failed":[],"leftAsIs":[]}`
	case "device.write":
		var w writeCall
		_ = json.Unmarshal(f.Params, &w)
		d.writes <- w
		if w.Device == "sim.heater" {
			return `"result":{"status":"pending","confirmation":{"id":"c-1","device":"sim.heater","value":true,"status":"pending","expiresAt":"2026-01-02T03:06:05Z"}}`
		}
		return fmt.Sprintf(`"result":{"status":"applied","device":%q,"value":%s,"ts":"2026-01-02T03:04:05Z","seq":2}`, w.Device, w.Value)
	}
	return `"error":{"code":-32601,"message":"method not found"}`
}

// nextStop is the reason of the adapter's next hub.stop.
func (d *daemon) nextStop() string {
	d.t.Helper()
	select {
	case r := <-d.stops:
		return r
	case <-time.After(wait):
		d.t.Fatal("no hub.stop")
	}
	return ""
}

// nextWrite is the adapter's next device.write.
func (d *daemon) nextWrite() writeCall {
	d.t.Helper()
	select {
	case w := <-d.writes:
		return w
	case <-time.After(wait):
		d.t.Fatal("no device.write")
	}
	return writeCall{}
}

// waitBroker waits for mqtt.broker to take a value holding s.
func (d *daemon) waitBroker(s string) string {
	d.t.Helper()
	deadline := time.After(wait)
	var seen []string
	for {
		select {
		case v := <-d.broker:
			if strings.Contains(v, s) {
				return v
			}
			seen = append(seen, v)
		case <-deadline:
			d.t.Fatalf("mqtt.broker never said %q; it said %q", s, seen)
		}
	}
}

// testLog is the adapter's standard error, in the test's log.
type testLog struct{ t *testing.T }

func (l testLog) Write(p []byte) (int, error) {
	l.t.Log(strings.TrimRight(string(p), "\n"))
	return len(p), nil
}
