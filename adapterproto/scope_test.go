package adapterproto

import (
	"encoding/json"
	"slices"
	"testing"
)

func TestScopeListJSON(t *testing.T) {
	for _, tc := range []struct {
		in, out string
		want    ScopeList
	}{
		{`"all"`, `"all"`, ScopeList{All: true}},
		{`[]`, `[]`, ScopeList{Patterns: []string{}}},
		{` [ "sim.led" , "sim.*", "notifier.x-1_2" ] `, `["sim.led","sim.*","notifier.x-1_2"]`,
			ScopeList{Patterns: []string{"sim.led", "sim.*", "notifier.x-1_2"}}},
	} {
		var s ScopeList
		if err := json.Unmarshal([]byte(tc.in), &s); err != nil {
			t.Errorf("Unmarshal(%s): %v", tc.in, err)
			continue
		}
		if s.All != tc.want.All || !slices.Equal(s.Patterns, tc.want.Patterns) || (s.Patterns == nil) != (tc.want.Patterns == nil) {
			t.Errorf("Unmarshal(%s) = %+v, want %+v", tc.in, s, tc.want)
		}
		b, err := json.Marshal(s)
		if err != nil || string(b) != tc.out {
			t.Errorf("Marshal(%+v) = %s, %v; want %s", s, b, err, tc.out)
		}
	}
	if b, _ := json.Marshal(ScopeList{}); string(b) != `[]` {
		t.Errorf("Marshal(zero) = %s, want []", b)
	}
	if b, _ := json.Marshal(ScopeList{All: true, Patterns: []string{"x"}}); string(b) != `"all"` {
		t.Errorf("Marshal(all with patterns) = %s, want \"all\"", b)
	}
}

func TestScopeListRejects(t *testing.T) {
	for _, in := range []string{
		`"some"`, `"ALL"`, `null`, `5`, `{}`, `true`, `[1]`, `[""]`, `["Sim.led"]`,
		`["*"]`, `[".*"]`, `["sim.*.x"]`, `["sim*"]`, `["sim.**"]`, `[null]`,
	} {
		var g Grant
		if err := json.Unmarshal([]byte(`{"level":"read","scope":`+in+`}`), &g); err == nil {
			t.Errorf("scope %s accepted as %+v", in, g.Scope)
		}
	}
	// A missing scope is left for the manifest check to report: Unmarshal
	// is not called, and the zero value grants nothing.
	var g Grant
	if err := json.Unmarshal([]byte(`{"level":"read"}`), &g); err != nil || g.Scope.All || g.Scope.Match("x") {
		t.Errorf("missing scope = %+v, %v", g.Scope, err)
	}
}

func TestScopeListMatch(t *testing.T) {
	s := ScopeList{Patterns: []string{"sim.led", "notifier.*"}}
	for id, want := range map[string]bool{
		"sim.led": true, "sim.led2": false, "sim": false,
		"notifier.a": true, "notifier.a.b": true, "notifier": false, "notifier.": false, "notifierx.a": false,
		"": false,
	} {
		if got := s.Match(id); got != want {
			t.Errorf("Match(%q) = %v, want %v", id, got, want)
		}
	}
	if !(ScopeList{All: true}).Match("anything") {
		t.Error("all does not match")
	}
	if (ScopeList{}).Match("sim.led") {
		t.Error("the empty scope matches")
	}
}
