package device

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"
)

func ptr[T any](v T) *T { return &v }

func TestSchemaValidate(t *testing.T) {
	pct := Schema{Type: TypeNumber, Minimum: ptr(0.0), Maximum: ptr(100.0), Unit: "%"}
	climate := Schema{Type: TypeObject, Properties: map[string]Schema{
		"temperature": {Type: TypeNumber, Unit: "Cel"},
		"humidity":    {Type: TypeNumber, Minimum: ptr(0.0), Maximum: ptr(100.0), Unit: "%RH"},
	}}
	for _, tc := range []struct {
		name   string
		schema Schema
		value  string
		reason string // "" when valid
	}{
		{"bool ok", Schema{Type: TypeBoolean}, `true`, ""},
		{"bool got string", Schema{Type: TypeBoolean}, `"true"`, "wrong_type"},
		{"bool got null", Schema{Type: TypeBoolean}, `null`, "wrong_type"},
		{"number in range", pct, `42.5`, ""},
		{"number at bounds", pct, `100`, ""},
		{"number below", pct, `-0.1`, "out_of_range"},
		{"number above", pct, `100.5`, "out_of_range"},
		{"number got bool", pct, `false`, "wrong_type"},
		{"integer ok", Schema{Type: TypeInteger}, `7`, ""},
		{"integer got fraction", Schema{Type: TypeInteger}, `7.5`, "wrong_type"},
		{"integer huge", Schema{Type: TypeInteger}, `1e300`, ""},
		{"string ok", Schema{Type: TypeString, MaxLength: ptr(3)}, `"abc"`, ""},
		{"string counts runes", Schema{Type: TypeString, MaxLength: ptr(3)}, `"äöü"`, ""},
		{"string too long", Schema{Type: TypeString, MaxLength: ptr(3)}, `"abcd"`, "too_long"},
		{"enum ok", Schema{Type: TypeString, Enum: []any{"low", "high"}}, `"high"`, ""},
		{"enum miss", Schema{Type: TypeString, Enum: []any{"low", "high"}}, `"mid"`, "not_in_enum"},
		{"enum of ints", Schema{Type: TypeInteger, Enum: []any{1, 2}}, `2`, ""},
		{"object ok", climate, `{"temperature":21.5,"humidity":40}`, ""},
		{"object partial", climate, `{"temperature":21.5}`, ""},
		{"object bad property", climate, `{"humidity":140}`, "out_of_range"},
		{"object unknown property", climate, `{"pressure":1000}`, "unknown_property"},
		{"object got array", climate, `[1]`, "wrong_type"},
		{"unsupported type", Schema{Type: "array"}, `[1]`, "bad_schema"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var v any
			if err := json.Unmarshal([]byte(tc.value), &v); err != nil {
				t.Fatal(err)
			}
			err := tc.schema.Validate(v)
			var ve *ValueError
			switch {
			case tc.reason == "" && err != nil:
				t.Fatalf("Validate(%s) = %v, want nil", tc.value, err)
			case tc.reason != "" && !errors.As(err, &ve):
				t.Fatalf("Validate(%s) = %v, want a *ValueError", tc.value, err)
			case tc.reason != "" && ve.Reason != tc.reason:
				t.Fatalf("Validate(%s) reason %q (%v), want %q", tc.value, ve.Reason, err, tc.reason)
			}
		})
	}
}

func TestValueErrorNamesTheProperty(t *testing.T) {
	s := Schema{Type: TypeObject, Properties: map[string]Schema{"humidity": {Type: TypeNumber, Maximum: ptr(100.0)}}}
	err := s.Validate(map[string]any{"humidity": 140.0})
	if err == nil || err.Error() != "humidity: 140 is above the maximum 100" {
		t.Fatalf("got %v", err)
	}
}

func TestValidID(t *testing.T) {
	for id, want := range map[string]bool{
		"sim.led": true, "a": true, "0x.y_z-1": true, "bench.heater": true,
		"": false, "Sim.led": false, ".led": false, "_a": false, "a b": false,
		"a23456789012345678901234567890123456789012345678901234567890123x":  true,
		"a234567890123456789012345678901234567890123456789012345678901234x": false,
	} {
		if got := ValidID(id); got != want {
			t.Errorf("ValidID(%q) = %v, want %v", id, got, want)
		}
	}
}

// A safe value of false must be encoded: it is not "no safe value".
func TestDescriptorKeepsFalseSafe(t *testing.T) {
	b, _ := json.Marshal(Descriptor{ID: "x", Safe: false})
	if !json.Valid(b) || !containsKey(b, `"safe":false`) {
		t.Fatalf("%s", b)
	}
	b, _ = json.Marshal(Descriptor{ID: "x"})
	if containsKey(b, `"safe"`) {
		t.Fatalf("no safe value encoded as %s", b)
	}
}

func containsKey(b []byte, s string) bool { return strings.Contains(string(b), s) }
