package gatewayext

import (
	"encoding/json"
	"reflect"
	"testing"
	"time"

	"github.com/openhal/gateway/openhal"
)

// The JSON the gateway sent before these types moved here from its
// inside (halhub, supervisor, history, audit, discovery): encoding them
// must give the very same bytes, field order and omitted fields included.
var wire = []struct {
	name string
	v    any
	want string
}{
	{"values", ValuesResult{Values: []LastValue{{Device: "sim.temperature", Value: 21.5, TS: ts, Seq: 7, AgeMs: 1200}, {Device: "sim.led", Value: false, TS: ts, AgeMs: 3}}},
		`{"values":[{"device":"sim.temperature","value":21.5,"ts":"2025-12-01T10:00:00.123Z","seq":7,"ageMs":1200},{"device":"sim.led","value":false,"ts":"2025-12-01T10:00:00.123Z","ageMs":3}]}`},
	{"no values", ValuesResult{Values: []LastValue{}}, `{"values":[]}`},
	{"clients", clients, `{"total":3,"byScope":{"admin":1,"read":2}}`},
	{"status", Status{Version: "v1", Commit: "abc", Board: "sim", Name: "bench", ID: "0123", Fingerprint: "ab", StartedAt: ts, UptimeSeconds: 12.5, Clients: clients,
		Adapters: []AdapterSummary{{Name: "mqtt", State: AdapterFailed, Reason: FailCrashloop, Detail: "boom"}, {Name: "x", State: AdapterRunning}}},
		`{"version":"v1","commit":"abc","board":"sim","name":"bench","id":"0123","fingerprint":"ab","startedAt":"2025-12-01T10:00:00.123Z","uptimeSeconds":12.5,"clients":{"total":3,"byScope":{"admin":1,"read":2}},"adapters":[{"name":"mqtt","state":"failed","reason":"crashloop","detail":"boom"},{"name":"x","state":"running"}]}`},
	{"status to a limited token", Status{Version: "v1", Commit: "abc", Board: "sim", Name: "bench", StartedAt: ts, Clients: ClientCounts{ByScope: map[openhal.Scope]int{}}},
		`{"version":"v1","commit":"abc","board":"sim","name":"bench","startedAt":"2025-12-01T10:00:00.123Z","uptimeSeconds":0,"clients":{"total":0,"byScope":{}},"adapters":null}`},
	{"adapter", adapter, `{"name":"mqtt","version":"1.0","kind":"service","user":"gw","state":"running","pid":42,"since":"2025-12-01T10:00:00.123Z","uptimeSeconds":3.25,"restarts":2,"crashes":1,"consecutiveCrashes":1,"lastExit":"exit 1","strikes":1,"strikesTotal":3,"droppedEvents":4,"lateReplies":5,"inFlight":6,"devices":["mqtt.broker"],"values":{"mqtt.broker":"connected"},"stderr":{"lines":1,"cut":2,"cutBytes":3,"droppedLines":4,"droppedBytes":5,"rotations":6}}`},
	{"failed adapter", AdapterStatus{Name: "x", State: AdapterFailed, Reason: FailTampered}, `{"name":"x","state":"failed","reason":"tampered","uptimeSeconds":0,"restarts":0,"crashes":0,"consecutiveCrashes":0,"strikes":0,"strikesTotal":0,"droppedEvents":0,"lateReplies":0,"inFlight":0,"stderr":{"lines":0,"cut":0,"cutBytes":0,"droppedLines":0,"droppedBytes":0,"rotations":0}}`},
	{"adapters.status", AdaptersResult{Adapters: []AdapterStatus{adapter}}, `{"adapters":[{"name":"mqtt","version":"1.0","kind":"service","user":"gw","state":"running","pid":42,"since":"2025-12-01T10:00:00.123Z","uptimeSeconds":3.25,"restarts":2,"crashes":1,"consecutiveCrashes":1,"lastExit":"exit 1","strikes":1,"strikesTotal":3,"droppedEvents":4,"lateReplies":5,"inFlight":6,"devices":["mqtt.broker"],"values":{"mqtt.broker":"connected"},"stderr":{"lines":1,"cut":2,"cutBytes":3,"droppedLines":4,"droppedBytes":5,"rotations":6}}]}`},
	{"adapters.status, none", AdaptersResult{}, `{"adapters":null}`},
	{"adapters.reset", AdapterResult{Adapter: adapter}, `{"adapter":{"name":"mqtt","version":"1.0","kind":"service","user":"gw","state":"running","pid":42,"since":"2025-12-01T10:00:00.123Z","uptimeSeconds":3.25,"restarts":2,"crashes":1,"consecutiveCrashes":1,"lastExit":"exit 1","strikes":1,"strikesTotal":3,"droppedEvents":4,"lateReplies":5,"inFlight":6,"devices":["mqtt.broker"],"values":{"mqtt.broker":"connected"},"stderr":{"lines":1,"cut":2,"cutBytes":3,"droppedLines":4,"droppedBytes":5,"rotations":6}}}`},
	{"adapters.logs", AdapterLogs{Adapter: "mqtt", Lines: []string{"a", "b"}, Omitted: 3}, `{"adapter":"mqtt","lines":["a","b"],"omitted":3}`},
	{"history params", HistoryParams{Device: "d", Field: "f", Resolution: HistoryMinute, Since: ptr(int64(1)), Until: ptr(int64(2)), From: ptr(uint64(3)), Limit: ptr(4)},
		`{"device":"d","field":"f","resolution":"minute","since":1,"until":2,"from":3,"limit":4}`},
	{"history params, device only", HistoryParams{Device: "d"}, `{"device":"d"}`},
	{"history samples", HistoryPage{Device: "d", Fields: []string{}, Kind: HistoryNumber, Resolution: HistoryFull, Samples: &HistorySamples{T: []int64{1, 2}, V: []any{1.5, 2.5}}, Dropped: 2, Next: 3, More: true},
		`{"device":"d","field":"","fields":[],"kind":"number","resolution":"full","samples":{"t":[1,2],"v":[1.5,2.5]},"dropped":2,"next":3,"more":true}`},
	{"history number buckets", HistoryPage{Device: "d", Field: "temperature", Fields: []string{"temperature"}, Kind: HistoryNumber, Resolution: HistoryMinute,
		Buckets: &HistoryNumberBuckets{T: []int64{1}, N: []uint32{2}, Min: []float64{1}, Max: []float64{2}, Mean: []float64{1.5}}, Next: 1},
		`{"device":"d","field":"temperature","fields":["temperature"],"kind":"number","resolution":"minute","buckets":{"t":[1],"n":[2],"min":[1],"max":[2],"mean":[1.5]},"next":1,"more":false}`},
	{"history boolean buckets", HistoryPage{Device: "d", Fields: []string{""}, Kind: HistoryBoolean, Resolution: HistoryMinute,
		Buckets: &HistoryBooleanBuckets{T: []int64{1}, N: []uint32{2}, Mean: []float64{0.5}, Last: []bool{true}, Changes: []uint32{1}}, Next: 1},
		`{"device":"d","field":"","fields":[""],"kind":"boolean","resolution":"minute","buckets":{"t":[1],"n":[2],"mean":[0.5],"last":[true],"changes":[1]},"next":1,"more":false}`},
	{"empty history", HistoryPage{Device: "d", Fields: []string{}, Resolution: HistoryFull}, `{"device":"d","field":"","fields":[],"resolution":"full","next":0,"more":false}`},
	{"audit entry", AuditEntry{Seq: 9, TS: ts, Principal: openhal.Principal{Kind: "agent", Name: "bot", Scope: openhal.ScopeControlLow}, Action: "write", Device: "sim.led", Value: false,
		Outcome: "refused", Rule: "r", Confirmation: "c-1", Reason: "why", Error: &AuditError{Code: -32001, Message: "no", Reason: "scope"},
		Count: 3, From: ts, To: ts.Add(time.Second), By: []AuditTally{{Action: "write", Outcome: "refused", Rule: "r", Reason: "x", Count: 2}},
		Cut: map[string]AuditCut{"reason": {Bytes: 10, SHA256: "ab"}}},
		`{"seq":9,"ts":"2025-12-01T10:00:00.123Z","principal":{"kind":"agent","name":"bot","scope":"control_low"},"action":"write","device":"sim.led","value":false,"outcome":"refused","rule":"r","confirmation":"c-1","reason":"why","error":{"code":-32001,"message":"no","reason":"scope"},"count":3,"from":"2025-12-01T10:00:00.123Z","to":"2025-12-01T10:00:01.123Z","by":[{"action":"write","outcome":"refused","rule":"r","reason":"x","count":2}],"cut":{"reason":{"bytes":10,"sha256":"ab"}}}`},
	{"plain audit entry", AuditEntry{Seq: 1, TS: ts, Principal: openhal.Principal{Kind: "operator", Name: "me"}, Action: "resume", Outcome: "resumed"}, `{"seq":1,"ts":"2025-12-01T10:00:00.123Z","principal":{"kind":"operator","name":"me"},"action":"resume","outcome":"resumed"}`},
	{"announcement", Gateway{Name: "bench", ID: "0123", Host: "bench.local.", Addresses: []string{"192.168.1.2"}, URLs: []string{"wss://192.168.1.2:7752/hal"}, Fingerprint: "ab",
		Level: "full", Protocol: "0.1", Console: true, ConsoleURL: "https://192.168.1.2:7752/", MCP: true},
		`{"name":"bench","id":"0123","host":"bench.local.","addresses":["192.168.1.2"],"urls":["wss://192.168.1.2:7752/hal"],"fingerprint":"ab","level":"full","protocol":"0.1","console":true,"consoleUrl":"https://192.168.1.2:7752/","mcp":true}`},
	{"bare announcement", Gateway{Name: "bench"}, `{"name":"bench","id":"","host":"","addresses":null,"urls":null,"level":"","protocol":"","console":false,"mcp":false}`},
}

var (
	ts      = time.Date(2025, 12, 1, 10, 0, 0, 123000000, time.UTC)
	clients = ClientCounts{Total: 3, ByScope: map[openhal.Scope]int{openhal.ScopeAdmin: 1, openhal.ScopeRead: 2}}
	adapter = AdapterStatus{Name: "mqtt", Version: "1.0", Kind: "service", User: "gw", State: AdapterRunning, Pid: 42, Since: &ts, UptimeSeconds: 3.25,
		Restarts: 2, Crashes: 1, ConsecutiveCrashes: 1, LastExit: "exit 1", Strikes: 1, StrikesTotal: 3, DroppedEvents: 4, LateReplies: 5, InFlight: 6,
		Devices: []string{"mqtt.broker"}, Values: map[string]any{"mqtt.broker": "connected"},
		Stderr: StderrStats{Lines: 1, Cut: 2, CutBytes: 3, DroppedLines: 4, DroppedBytes: 5, Rotations: 6}}
)

func ptr[T any](v T) *T { return &v }

func TestWireUnchanged(t *testing.T) {
	for _, c := range wire {
		b, err := json.Marshal(c.v)
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		if string(b) != c.want {
			t.Errorf("%s encodes as\n%s\nwant\n%s", c.name, b, c.want)
		}
	}
}

// Every answer decodes back into its type and encodes the same again:
// a client of this package reads what the gateway sends.
func TestWireRoundTrip(t *testing.T) {
	for _, c := range wire {
		p := reflect.New(reflect.TypeOf(c.v))
		if err := json.Unmarshal([]byte(c.want), p.Interface()); err != nil {
			t.Fatalf("%s: decode: %v", c.name, err)
		}
		b, err := json.Marshal(p.Elem().Interface())
		if err != nil || string(b) != c.want {
			t.Errorf("%s: decoded and encoded again: %s, %v; want %s", c.name, b, err, c.want)
		}
	}
}

// A page's buckets decode as the type its kind calls for; those of a kind
// not known yet as an object.
func TestHistoryPageBuckets(t *testing.T) {
	var p HistoryPage
	if err := json.Unmarshal([]byte(`{"device":"d","field":"temperature","fields":["temperature"],"kind":"number","resolution":"minute","buckets":{"t":[1],"n":[2],"min":[1],"max":[2],"mean":[1.5]},"next":1,"more":false}`), &p); err != nil {
		t.Fatal(err)
	}
	if b, ok := p.Buckets.(*HistoryNumberBuckets); !ok || b.Mean[0] != 1.5 {
		t.Errorf("number buckets decoded as %#v", p.Buckets)
	}
	if err := json.Unmarshal([]byte(`{"device":"d","field":"","fields":[""],"kind":"boolean","resolution":"minute","buckets":{"t":[1],"n":[2],"mean":[0.5],"last":[true],"changes":[1]},"next":1,"more":false}`), &p); err != nil {
		t.Fatal(err)
	}
	if b, ok := p.Buckets.(*HistoryBooleanBuckets); !ok || !b.Last[0] || p.Samples != nil {
		t.Errorf("boolean buckets decoded as %#v (samples %v)", p.Buckets, p.Samples)
	}
	if err := json.Unmarshal([]byte(`{"device":"d","kind":"string","buckets":{"t":[1]},"next":1}`), &p); err != nil {
		t.Fatal(err)
	}
	if b, ok := p.Buckets.(map[string]any); !ok || b["t"] == nil || p.Kind != "string" {
		t.Errorf("buckets of an unknown kind decoded as %#v", p.Buckets)
	}
	if err := json.Unmarshal([]byte(`{"device":"d","kind":"number","buckets":{"t":"x"}}`), &p); err == nil {
		t.Error("buckets that do not fit their kind decoded without an error")
	}
}
