package cli

import (
	"bytes"
	"testing"

	"github.com/openhal/gateway/device"
	"github.com/openhal/gateway/openhal"
)

func TestPrintLeftAsIs(t *testing.T) {
	tests := []struct {
		name string
		left []openhal.LeftAsIs
		want string
	}{
		{"none", nil, ""},
		{"one", []openhal.LeftAsIs{{Device: "sim.fan", Reason: "cools the rack"}}, "left as they are: sim.fan (cools the rack)\n"},
		{"two", []openhal.LeftAsIs{{Device: "a", Reason: "x"}, {Device: "b", Reason: "y"}}, "left as they are: a (x), b (y)\n"},
	}
	for _, tt := range tests {
		var b bytes.Buffer
		printLeftAsIs(&b, tt.left)
		if b.String() != tt.want {
			t.Errorf("%s: printed %q, want %q", tt.name, b.String(), tt.want)
		}
	}
}

func TestNoSafeMark(t *testing.T) {
	tests := []struct {
		d    device.Descriptor
		want string
	}{
		{device.Descriptor{Access: device.AccessReadWrite, Safe: false}, ""},
		{device.Descriptor{Access: device.AccessReadWrite, Safe: 0.0}, ""},
		{device.Descriptor{Access: device.AccessReadWrite, NoSafeReason: "why"}, ", no safe value"},
		{device.Descriptor{Access: device.AccessWrite}, ", no safe value"},
		{device.Descriptor{Access: device.AccessRead}, ""},
	}
	for _, tt := range tests {
		if got := noSafeMark(tt.d); got != tt.want {
			t.Errorf("noSafeMark(%+v) = %q, want %q", tt.d, got, tt.want)
		}
	}
}
