package halclient_test

import (
	"encoding/json"
	"net"
	"testing"

	"github.com/openhal/gateway/device"
	"github.com/openhal/gateway/halclient"
	"github.com/openhal/gateway/internal/halhub/hubtest"
	"github.com/openhal/gateway/jsonrpc"
	"github.com/openhal/gateway/openhal"
)

// gapHub is a scripted Hub on TCP lines: it lists bench.a (readable) and
// bench.w (write-only), answers the read of bench.a with read, then sends
// values as hal/value notifications, one connection only.
func gapHub(t *testing.T, read openhal.ValueResult, values []openhal.ValueResult) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	devs := openhal.DevicesListResult{Devices: []device.Descriptor{
		{ID: "bench.a", Kind: device.KindSensor, Access: device.AccessRead, Schema: device.Schema{Type: device.TypeNumber}, State: device.StateOK},
		{ID: "bench.w", Kind: device.KindPWM, Access: device.AccessWrite, Schema: device.Schema{Type: device.TypeNumber}, State: device.StateOK},
	}}
	results := map[string]any{
		openhal.MethodInitialize:  openhal.InitializeResult{ProtocolVersion: openhal.Version, BootID: "boot-1", Principal: openhal.Principal{Kind: "agent", Name: "w"}},
		openhal.MethodDevicesList: devs,
		openhal.MethodRead:        read,
	}
	go func() {
		nc, err := l.Accept()
		if err != nil {
			return
		}
		defer nc.Close()
		lr := jsonrpc.NewLineReader(nc, 1<<20)
		for {
			b, err := lr.Next()
			if err != nil {
				return
			}
			var m struct {
				ID     json.RawMessage `json:"id"`
				Method string          `json:"method"`
			}
			if json.Unmarshal(b, &m) != nil || m.ID == nil {
				continue
			}
			out, _ := jsonrpc.AppendResult(nil, m.ID, results[m.Method])
			for _, v := range values {
				if m.Method != openhal.MethodRead {
					break
				}
				out = append(out, '\n')
				out, _ = jsonrpc.AppendNotification(out, openhal.NotifyValue, v)
			}
			if _, err := nc.Write(append(out, '\n')); err != nil {
				return
			}
		}
	}()
	return "tcp://" + l.Addr().String()
}

// Watch reports as missed exactly the values of a device its devSeq
// skips, naming the device: not a value it read or was sent already,
// not the first value of a device it could not read; with a Hub that
// sends no devSeq it goes by the Hub-wide seq.
func TestWatchMissedByDevSeq(t *testing.T) {
	v := func(id string, seq, devSeq uint64) openhal.ValueResult {
		return openhal.ValueResult{Device: id, Value: 1.0, TS: hubtest.Time, Seq: seq, DevSeq: devSeq}
	}
	type want struct {
		kind   halclient.EventKind
		device string
		n      uint64 // devSeq of a value (seq without devSeq), count of a miss
	}
	for _, tc := range []struct {
		name   string
		read   openhal.ValueResult
		values []openhal.ValueResult
		want   []want
	}{
		{"devSeq", v("bench.a", 0, 5), []openhal.ValueResult{
			v("bench.a", 0, 5), // what the read returned: not passed on again
			v("bench.a", 0, 6), v("bench.w", 0, 3), v("bench.a", 0, 9), v("bench.w", 0, 4), v("bench.w", 0, 7),
		}, []want{
			{halclient.EventValue, "bench.a", 6}, {halclient.EventValue, "bench.w", 3},
			{halclient.EventMissed, "bench.a", 2}, {halclient.EventValue, "bench.a", 9},
			{halclient.EventValue, "bench.w", 4}, {halclient.EventMissed, "bench.w", 2}, {halclient.EventValue, "bench.w", 7},
		}},
		{"seq only", v("bench.a", 5, 0), []openhal.ValueResult{
			v("bench.a", 5, 0), v("bench.a", 6, 0), v("bench.w", 9, 0),
		}, []want{
			{halclient.EventValue, "bench.a", 6}, {halclient.EventMissed, "", 2}, {halclient.EventValue, "bench.w", 9},
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			events, _, _ := watchEvents(t, gapHub(t, tc.read, tc.values), "t")
			expectKind(t, events, halclient.EventConnected)
			expectKind(t, events, halclient.EventDevices)
			if e := expectKind(t, events, halclient.EventValue); !e.Resync || e.Device != "bench.a" {
				t.Fatalf("resync %+v", e)
			}
			for i, w := range tc.want {
				e := next(t, events)
				got := want{kind: e.Kind, device: e.Device, n: e.Missed}
				if e.Kind == halclient.EventValue {
					got.n = e.Value.DevSeq
					if e.Value.DevSeq == 0 {
						got.n = e.Value.Seq
					}
				}
				if got != w {
					t.Fatalf("event %d: %+v, want %+v", i, got, w)
				}
			}
		})
	}
}
