package adapterproto

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/openhal/gateway/device"
)

// ScopeList is a grant's scope: every device (the string "all") or a list
// of device ids and "prefix.*" patterns. The zero value is an empty list:
// no device at all.
type ScopeList struct {
	All      bool
	Patterns []string
}

// MarshalJSON writes "all" or the list ([] when empty).
func (s ScopeList) MarshalJSON() ([]byte, error) {
	if s.All {
		return []byte(`"all"`), nil
	}
	if s.Patterns == nil {
		return []byte(`[]`), nil
	}
	return json.Marshal(s.Patterns)
}

// UnmarshalJSON reads "all" or a list of device ids and "prefix.*"
// patterns, and refuses anything else, null included: a grant that cannot
// be read must not become a grant of nothing or of everything by accident.
func (s *ScopeList) UnmarshalJSON(b []byte) error {
	b = bytes.TrimSpace(b)
	if len(b) > 0 && b[0] == '"' {
		var all string
		if err := json.Unmarshal(b, &all); err != nil || all != "all" {
			return fmt.Errorf(`scope: want "all" or a list of device ids and prefix.* patterns, not %s`, b)
		}
		*s = ScopeList{All: true}
		return nil
	}
	if len(b) == 0 || b[0] != '[' {
		return fmt.Errorf(`scope: want "all" or a list of device ids and prefix.* patterns, not %s`, b)
	}
	var list []string
	if err := json.Unmarshal(b, &list); err != nil {
		return fmt.Errorf("scope: %w", err)
	}
	for _, p := range list {
		if !ValidPattern(p) {
			return fmt.Errorf("scope: %q is neither a device id nor a prefix.* pattern", p)
		}
	}
	*s = ScopeList{Patterns: list}
	return nil
}

// ValidPattern reports whether p is a device id or a "prefix.*" pattern
// whose prefix is a device id.
func ValidPattern(p string) bool {
	if prefix, ok := strings.CutSuffix(p, ".*"); ok {
		return device.ValidID(prefix)
	}
	return device.ValidID(p)
}

// Match reports whether the device id is inside the scope. "sim.*" matches
// "sim.led" and "sim.a.b", not "sim" itself.
func (s ScopeList) Match(id string) bool {
	if s.All {
		return true
	}
	for _, p := range s.Patterns {
		if prefix, ok := strings.CutSuffix(p, ".*"); ok {
			if len(id) > len(prefix)+1 && id[len(prefix)] == '.' && strings.HasPrefix(id, prefix) {
				return true
			}
		} else if p == id {
			return true
		}
	}
	return false
}
