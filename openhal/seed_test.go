package openhal

import (
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/openhal/gateway/jsonrpc"
)

// seedExamples reads seed 002's examples from testdata.
func seedExamples(t *testing.T) map[string]json.RawMessage {
	t.Helper()
	b, err := os.ReadFile("testdata/seed-002.json")
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]json.RawMessage
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	delete(m, "_comment")
	return m
}

func jsonValue(t *testing.T, b []byte) any {
	t.Helper()
	var v any
	if err := json.Unmarshal(b, &v); err != nil {
		t.Fatalf("%s: %v", b, err)
	}
	return v
}

// The test data is the seed's: every example in the file appears in seed
// 002, as a JSON value.
func TestSeedExamplesMatchTheSeed(t *testing.T) {
	var seed []byte
	for _, p := range []string{"../../shared/seeds/002_dcc85c96b5e8b3d3.txt", "/work/shared/seeds/002_dcc85c96b5e8b3d3.txt"} {
		if b, err := os.ReadFile(filepath.FromSlash(p)); err == nil {
			seed = b
			break
		}
	}
	if seed == nil {
		t.Skip("seed 002 is not beside the checkout")
	}
	var inSeed []any
	for _, obj := range jsonObjects(string(seed)) {
		inSeed = append(inSeed, jsonValue(t, []byte(obj)))
	}
	for name, ex := range seedExamples(t) {
		want := jsonValue(t, ex)
		found := false
		for _, v := range inSeed {
			found = found || reflect.DeepEqual(v, want)
		}
		if !found {
			t.Errorf("example %s is not in seed 002", name)
		}
	}
	if len(inSeed) != 4 {
		t.Errorf("seed 002 holds %d examples, the test data 4", len(inSeed))
	}
}

// jsonObjects returns the top-level {...} spans of text that parse as
// JSON.
func jsonObjects(text string) []string {
	var out []string
	for i := 0; i < len(text); i++ {
		if text[i] != '{' {
			continue
		}
		depth, inStr := 0, false
		for j := i; j < len(text); j++ {
			c := text[j]
			switch {
			case inStr && c == '\\':
				j++
			case c == '"':
				inStr = !inStr
			case !inStr && c == '{':
				depth++
			case !inStr && c == '}':
				depth--
			}
			if depth == 0 {
				if s := text[i : j+1]; json.Valid([]byte(s)) {
					out = append(out, s)
					i = j
				}
				break
			}
		}
	}
	return out
}

// Encoding the seed's request and answer with this package's types gives
// the seed's messages as JSON values (the answer plus bootId and stopped,
// which the spec adds; stopped is there, null, when no stop is in force).
func TestTypesEncodeTheSeedExamples(t *testing.T) {
	ex := seedExamples(t)
	v, c := "0.1", ClientInfo{Name: "bench-agent", Version: "1.4.0"}
	req, err := jsonrpc.AppendRequest(nil, jsonrpc.IntID(1), MethodInitialize, InitializeParams{ProtocolVersion: &v, ClientInfo: &c})
	if err != nil {
		t.Fatal(err)
	}
	if got, want := jsonValue(t, req), jsonValue(t, ex["initialize"]); !reflect.DeepEqual(got, want) {
		t.Errorf("initialize:\n got %s\nwant %s", req, ex["initialize"])
	}
	res := InitializeResult{
		ProtocolVersion: "0.1",
		HubInfo:         HubInfo{Name: "openhal", Version: "0.1.0"},
		Conformance:     LevelFull,
		Principal:       Principal{Kind: KindAgent, Name: "bench-agent", Scope: ScopeControlLow},
		Capabilities: Capabilities{Notifications: []string{NotifyValue, NotifyBlocked, NotifyStopped, NotifyDeviceAdded,
			NotifyDeviceRemoved, NotifyConfirmationRequested}},
		BootID: "b",
	}
	out, err := jsonrpc.AppendResult(nil, jsonrpc.IntID(1), res)
	if err != nil {
		t.Fatal(err)
	}
	got := jsonValue(t, out).(map[string]any)
	result := got["result"].(map[string]any)
	if stopped, ok := result["stopped"]; !ok || stopped != nil {
		t.Errorf("stopped: %v (present %v), want null", stopped, ok)
	}
	delete(result, "bootId")
	delete(result, "stopped")
	if want := jsonValue(t, ex["initializeResult"]); !reflect.DeepEqual(got, want) {
		t.Errorf("initialize result:\n got %s\nwant %s", out, ex["initializeResult"])
	}
	for name, method := range map[string]string{"initialized": NotifyInitialized, "shutdown": NotifyShutdown} {
		n, _ := jsonrpc.AppendNotification(nil, method, nil)
		if !reflect.DeepEqual(jsonValue(t, n), jsonValue(t, ex[name])) {
			t.Errorf("%s: got %s, want %s", name, n, ex[name])
		}
	}
}

// A full Hub sends every notification of the seed's example Hub.
func TestFullLevelListsTheSeedNotifications(t *testing.T) {
	var ex struct {
		Result struct {
			Capabilities Capabilities `json:"capabilities"`
		} `json:"result"`
	}
	json.Unmarshal(seedExamples(t)["initializeResult"], &ex)
	full := strings.Join(LevelFull.Notifications(), " ")
	for _, n := range ex.Result.Capabilities.Notifications {
		if !strings.Contains(full, n) {
			t.Errorf("a full hub does not list %s", n)
		}
	}
	if len(LevelFull.Notifications()) != 9 {
		t.Errorf("a full hub lists %d notifications, want the nine of spec §8", len(LevelFull.Notifications()))
	}
}

func TestLevelAllows(t *testing.T) {
	for _, tc := range []struct {
		level  Level
		method string
		want   bool
	}{
		{LevelRead, MethodRead, true},
		{LevelRead, MethodConfirmationsList, true},
		{LevelRead, MethodWrite, false},
		{LevelControl, MethodWrite, true},
		{LevelControl, MethodResume, true},
		{LevelControl, MethodConfirmationApprove, false},
		{LevelFull, MethodAuditList, true},
		{LevelFull, "hal/nope", false},
	} {
		if got := tc.level.Allows(tc.method); got != tc.want {
			t.Errorf("%s allows %s = %v", tc.level, tc.method, got)
		}
	}
}

func TestScopeOrder(t *testing.T) {
	order := []Scope{ScopeRead, ScopeControlLow, ScopeControlHigh, ScopeAdmin}
	for i, a := range order {
		for j, b := range order {
			if got := a.AtLeast(b); got != (i >= j) {
				t.Errorf("%s.AtLeast(%s) = %v", a, b, got)
			}
		}
	}
	if Scope("").AtLeast(ScopeRead) || Scope("root").AtLeast(ScopeRead) {
		t.Error("an unknown scope grants something")
	}
	if _, err := ParseScope("superuser"); err == nil {
		t.Error("ParseScope accepted an unknown scope")
	}
}
