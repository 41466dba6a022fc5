package main

import "testing"

// The flags the kernel gives the lines the rpi3b test's gateway holds.
func TestDecodeLine(t *testing.T) {
	for _, c := range []struct {
		name  string
		flags uint64
		want  Line
	}{
		{"free line", 0, Line{Direction: "input", Drive: "push-pull"}},
		{"output", flagUsed | flagOutput, Line{Used: true, Direction: "output", Drive: "push-pull"}},
		{"active-low open-drain output", flagUsed | flagOutput | flagActiveLow | flagOpenDrain,
			Line{Used: true, ActiveLow: true, Direction: "output", Drive: "open-drain"}},
		{"input, pull-up, both edges", flagUsed | flagInput | flagBiasPullUp | flagEdgeRising | flagEdgeFalling,
			Line{Used: true, Direction: "input", Bias: "pull-up", Edge: "both", Drive: "push-pull"}},
		{"input, pull-down, rising", flagUsed | flagInput | flagBiasPullDown | flagEdgeRising,
			Line{Used: true, Direction: "input", Bias: "pull-down", Edge: "rising", Drive: "push-pull"}},
		{"input, bias disabled, falling", flagUsed | flagInput | flagBiasDisabled | flagEdgeFalling,
			Line{Used: true, Direction: "input", Bias: "disabled", Edge: "falling", Drive: "push-pull"}},
		{"open source", flagUsed | flagOutput | flagOpenSource, Line{Used: true, Direction: "output", Drive: "open-source"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			if got := decodeLine(0, "", "", c.flags); got != c.want {
				t.Errorf("decodeLine(%#x) = %+v, want %+v", c.flags, got, c.want)
			}
		})
	}
}

func TestCString(t *testing.T) {
	var b [32]byte
	copy(b[:], "pinctrl-bcm2835\x00junk")
	if got := cString(b[:]); got != "pinctrl-bcm2835" {
		t.Errorf("cString = %q", got)
	}
	if got := cString([]byte("GPIO17")); got != "GPIO17" {
		t.Errorf("cString without NUL = %q", got)
	}
}
