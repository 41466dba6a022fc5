package device

import (
	"errors"
	"testing"
)

type plainDevice struct{}

func (plainDevice) Descriptor() Descriptor { return Descriptor{ID: "x"} }

type pickyDevice struct{ plainDevice }

func (pickyDevice) CheckValue(v any) error {
	if v == "bad" {
		return &ValueError{Reason: "line_break", Detail: "no"}
	}
	return nil
}

// CheckValue asks a ValueChecker and lets every value through a device
// without one.
func TestCheckValue(t *testing.T) {
	if err := CheckValue(plainDevice{}, "bad"); err != nil {
		t.Fatalf("a device without a checker refused: %v", err)
	}
	if err := CheckValue(pickyDevice{}, "good"); err != nil {
		t.Fatalf("refused a good value: %v", err)
	}
	var ve *ValueError
	if err := CheckValue(pickyDevice{}, "bad"); !errors.As(err, &ve) || ve.Reason != "line_break" {
		t.Fatalf("CheckValue = %v, want the device's ValueError", err)
	}
}
