package audit

import (
	"encoding/json"
	"reflect"
	"testing"
	"time"

	"github.com/openhal/gateway/openhal"
	"github.com/openhal/gateway/openhal/gatewayext"
)

// gatewayext.AuditEntry is how a client reads what Entry writes: the same
// fields, by the same JSON names in the same order, with the same types
// (tags compared one nested struct at a time).
func TestPublicEntryMatches(t *testing.T) {
	pairs := [][2]reflect.Type{
		{reflect.TypeFor[Entry](), reflect.TypeFor[gatewayext.AuditEntry]()},
		{reflect.TypeFor[ErrorInfo](), reflect.TypeFor[gatewayext.AuditError]()},
		{reflect.TypeFor[Tally](), reflect.TypeFor[gatewayext.AuditTally]()},
		{reflect.TypeFor[Cut](), reflect.TypeFor[gatewayext.AuditCut]()},
	}
	same := map[reflect.Type]reflect.Type{}
	for _, p := range pairs {
		same[p[0]] = p[1]
	}
	for _, p := range pairs {
		ours, theirs := p[0], p[1]
		if ours.NumField() != theirs.NumField() {
			t.Errorf("%s has %d fields, %s %d", ours, ours.NumField(), theirs, theirs.NumField())
			continue
		}
		for i := range ours.NumField() {
			a, b := ours.Field(i), theirs.Field(i)
			if a.Tag.Get("json") != b.Tag.Get("json") || !sameType(a.Type, b.Type, same) {
				t.Errorf("%s.%s %s `json:%q` but %s.%s %s `json:%q`", ours, a.Name, a.Type, a.Tag.Get("json"), theirs, b.Name, b.Type, b.Tag.Get("json"))
			}
		}
	}
}

// sameType reports whether a (ours) and b (gatewayext's) are the same
// type, or the same shape of types paired in same.
func sameType(a, b reflect.Type, same map[reflect.Type]reflect.Type) bool {
	if a == b || same[a] == b {
		return true
	}
	if a.Kind() != b.Kind() {
		return false
	}
	switch a.Kind() {
	case reflect.Pointer, reflect.Slice:
		return sameType(a.Elem(), b.Elem(), same)
	case reflect.Map:
		return a.Key() == b.Key() && sameType(a.Elem(), b.Elem(), same)
	}
	return false
}

// An entry written by the log reads the same through gatewayext.
func TestPublicEntryWire(t *testing.T) {
	ts := time.Date(2025, 12, 1, 10, 0, 0, 123000000, time.UTC)
	e := Entry{Seq: 9, TS: ts, Principal: openhal.Principal{Kind: "agent", Name: "bot", Scope: openhal.ScopeControlLow}, Action: "write", Device: "sim.led", Value: false,
		Outcome: "refused", Rule: "r", Confirmation: "c-1", Reason: "why", Error: &ErrorInfo{Code: -32001, Message: "no", Reason: "scope"},
		Count: 3, From: ts, To: ts.Add(time.Second), By: []Tally{{Action: "write", Outcome: "refused", Rule: "r", Reason: "x", Count: 2}},
		Cut: map[string]Cut{"reason": {Bytes: 10, SHA256: "ab"}}}
	b, err := json.Marshal(e)
	if want := `{"seq":9,"ts":"2025-12-01T10:00:00.123Z","principal":{"kind":"agent","name":"bot","scope":"control_low"},"action":"write","device":"sim.led","value":false,"outcome":"refused","rule":"r","confirmation":"c-1","reason":"why","error":{"code":-32001,"message":"no","reason":"scope"},"count":3,"from":"2025-12-01T10:00:00.123Z","to":"2025-12-01T10:00:01.123Z","by":[{"action":"write","outcome":"refused","rule":"r","reason":"x","count":2}],"cut":{"reason":{"bytes":10,"sha256":"ab"}}}`; err != nil || string(b) != want {
		t.Fatalf("entry: %s, %v; want %s", b, err, want)
	}
	var pub gatewayext.AuditEntry
	if err := json.Unmarshal(b, &pub); err != nil {
		t.Fatal(err)
	}
	if again, err := json.Marshal(pub); err != nil || string(again) != string(b) {
		t.Errorf("through gatewayext: %s, %v; want %s", again, err, b)
	}
}
