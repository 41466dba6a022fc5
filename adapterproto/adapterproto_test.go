package adapterproto

import (
	"bytes"
	"encoding/json"
	"testing"

	"github.com/openhal/gateway/adapterproto/reference"
	"github.com/openhal/gateway/jsonrpc"
)

// seedInitialize is the seed's initialize, with the seed's values.
func seedInitialize() InitializeParams {
	return InitializeParams{
		Protocols: []int{1},
		Host:      Host{Name: HostName, Version: "0.4.0"},
		Adapter:   Info{Name: "notifier", Version: "0.1.0"},
		Kind:      KindService,
		Grant:     Grant{Level: "read", Scope: ScopeList{All: true}},
		Paths:     Paths{State: "/home/u/.oxidepm/adapters/state/notifier"},
		Limits:    Limits{MaxLine: 262144, MaxInFlight: 32, EventQueue: 1024},
	}
}

// TestEncodeGivesReferenceFrames is the key test: the types and the
// jsonrpc encoder give the seed's bytes, field order included.
func TestEncodeGivesReferenceFrames(t *testing.T) {
	enc := func(b []byte, err error) []byte {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	for name, got := range map[string][]byte{
		"initialize":        enc(jsonrpc.AppendRequest(nil, jsonrpc.IntID(1), MethodInitialize, seedInitialize())),
		"initialize_result": enc(jsonrpc.AppendResult(nil, jsonrpc.IntID(1), InitializeResult{Protocol: 1, Name: "notifier", Version: "0.1.0"})),
		"initialized":       enc(jsonrpc.AppendNotification(nil, MethodInitialized, Empty{})),
		"initialize_unsupported": jsonrpc.AppendError(nil, jsonrpc.IntID(1), &jsonrpc.Error{
			Code: CodeUnsupportedProtocol, Message: "unsupported protocol",
			Data: UnsupportedProtocolData{Supported: []int{1}, Code: EAdapterProtocol},
		}),
		"ping":        enc(jsonrpc.AppendRequest(nil, jsonrpc.IntID(2), MethodPing, Empty{})),
		"ping_result": enc(jsonrpc.AppendResult(nil, jsonrpc.IntID(2), Empty{})),
	} {
		want := reference.Bytes(name)
		if want == nil {
			t.Fatalf("no reference frame %q", name)
		}
		if !bytes.Equal(got, want) {
			t.Errorf("%s:\n got %s\nwant %s", name, got, want)
		}
	}
}

// TestReferenceFramesDecode checks every reference frame against the
// adapter rules, and that its params or result read into this package's
// types and write back to the same bytes.
func TestReferenceFramesDecode(t *testing.T) {
	frames := reference.Frames()
	if len(frames) == 0 {
		t.Fatal("no reference frames")
	}
	for _, f := range frames {
		m, err := jsonrpc.DecodeAdapter(f.Bytes)
		if err != nil {
			t.Errorf("%s: %v", f.Name, err)
			continue
		}
		switch {
		case m.Method == MethodInitialize:
			var p InitializeParams
			roundTrip(t, f.Name, m.Params, &p)
			if p.Host.Name != HostName || !p.Grant.Scope.All || p.Limits.MaxLine != 262144 {
				t.Errorf("%s: read as %+v", f.Name, p)
			}
		case f.Name == "initialize_result":
			var r InitializeResult
			roundTrip(t, f.Name, m.Result, &r)
		case m.Error != nil:
			var d UnsupportedProtocolData
			roundTrip(t, f.Name, m.Error.Data.(json.RawMessage), &d)
			if m.Error.Code != CodeUnsupportedProtocol || d.Code != EAdapterProtocol {
				t.Errorf("%s: read as %d %+v", f.Name, m.Error.Code, d)
			}
		case m.Params != nil:
			roundTrip(t, f.Name, m.Params, &Empty{})
		case m.Result != nil:
			roundTrip(t, f.Name, m.Result, &Empty{})
		}
	}
}

func roundTrip(t *testing.T, name string, raw []byte, v any) {
	t.Helper()
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		t.Errorf("%s: decode %s: %v", name, raw, err)
		return
	}
	out, err := json.Marshal(v)
	if err != nil {
		t.Errorf("%s: encode: %v", name, err)
		return
	}
	if !bytes.Equal(out, raw) {
		t.Errorf("%s: re-encoded\n got %s\nwant %s", name, out, raw)
	}
}

func TestHostProduct(t *testing.T) {
	p := seedInitialize()
	p.Host.Product = HostProduct
	b, err := json.Marshal(p.Host)
	if err != nil {
		t.Fatal(err)
	}
	if want := `{"name":"oxidepmd","version":"0.4.0","product":"gateway"}`; string(b) != want {
		t.Errorf("host = %s, want %s", b, want)
	}
}

func TestEventParams(t *testing.T) {
	for _, tc := range []struct {
		p    EventParams
		want string
	}{
		{EventParams{Seq: 1, Type: "value", Data: map[string]any{"device": "sim.led", "value": true}},
			`{"seq":1,"type":"value","data":{"device":"sim.led","value":true}}`},
		{EventParams{Seq: 18446744073709551615, Type: "stopped", Data: json.RawMessage(`{}`), Dropped: 3},
			`{"seq":18446744073709551615,"type":"stopped","data":{},"dropped":3}`},
	} {
		b, err := json.Marshal(tc.p)
		if err != nil {
			t.Fatal(err)
		}
		if string(b) != tc.want {
			t.Errorf("got %s, want %s", b, tc.want)
		}
	}
}

func TestCancelParams(t *testing.T) {
	const in = `{"id":18446744073709551615}`
	var p CancelParams
	if err := json.Unmarshal([]byte(in), &p); err != nil || p.ID != 1<<64-1 {
		t.Fatalf("Unmarshal = %+v, %v", p, err)
	}
	b, err := jsonrpc.AppendNotification(nil, MethodCancel, p)
	if err != nil {
		t.Fatal(err)
	}
	if want := `{"jsonrpc":"2.0","method":"cancel","params":` + in + `}`; string(b) != want {
		t.Errorf("got %s, want %s", b, want)
	}
}

func TestDefaultLimits(t *testing.T) {
	want := seedInitialize().Limits
	if got := DefaultLimits(); got != want {
		t.Errorf("DefaultLimits() = %+v, want the seed's %+v", got, want)
	}
}
