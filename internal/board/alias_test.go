package board

import (
	"fmt"
	"strings"
	"testing"
	"time"
)

// laughs returns a file whose anchors nest ten aliases a level, depth
// levels deep ("billion laughs"), in a field the gateway does not know,
// and use as the device sim.fan's setting: a few hundred bytes that name
// 10^depth values.
func laughs(use string, depth int) string {
	var b strings.Builder
	b.WriteString("board: sim\nx:\n  - &a0 [1, 1, 1, 1, 1, 1, 1, 1, 1, 1]\n")
	for i := 1; i <= depth; i++ {
		fmt.Fprintf(&b, "  - &a%d [%s]\n", i, strings.TrimSuffix(strings.Repeat(fmt.Sprintf("*a%d, ", i-1), 10), ", "))
	}
	fmt.Fprintf(&b, "devices:\n  sim.fan:\n    %s\n", fmt.Sprintf(use, fmt.Sprintf("*a%d", depth)))
	return b.String()
}

// TestAliasExpansionBounded: aliases that expand to a billion values are
// refused, by name, at once, whether they stand in a device value (safe)
// or in a list of settings (interlock). Before the bound, Parse walked
// them for ever.
func TestAliasExpansionBounded(t *testing.T) {
	for name, use := range map[string]string{
		"safe":      "safe: %s",
		"interlock": "rules: {interlock: [{device: sim.door, op: eq, value: %s}]}",
	} {
		t.Run(name, func(t *testing.T) {
			done := make(chan error, 1)
			go func() { _, err := Parse([]byte(laughs(use, 9))); done <- err }()
			select {
			case err := <-done:
				if err == nil || !strings.Contains(err.Error(), "aliases (*name) are expanded") {
					t.Fatalf("Parse: %v, want the aliases refused", err)
				}
			case <-time.After(30 * time.Second):
				t.Fatal("Parse still walking the aliases after 30 s")
			}
		})
	}
	// A few aliases, as a person writes them, still work.
	if _, err := Parse([]byte("board: sim\ndevices:\n  sim.fan:\n    safe: &z 0\n  sim.led:\n    confirmTtl: 5s\n")); err != nil {
		t.Fatalf("a file with an anchor: %v", err)
	}
}
