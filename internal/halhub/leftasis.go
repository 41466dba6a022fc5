package halhub

import (
	"sort"

	"github.com/openhal/gateway/internal/halhub/token"
	"github.com/openhal/gateway/openhal"
)

// noSafeDeclared is the reason given for a written device that has no
// safe value and does not say why (an adapter's device, say).
const noSafeDeclared = "it declares no safe value"

// leftAsIs lists the written devices an emergency stop does not drive
// because they have no safe value, by id, each with the reason its
// descriptor gives: the operator learns what the stop left as it was.
func (h *Hub) leftAsIs() []openhal.LeftAsIs {
	out := []openhal.LeftAsIs{}
	for _, d := range h.reg.List() {
		if d.Safe != nil || !d.Access.CanWrite() {
			continue
		}
		reason := d.NoSafeReason
		if reason == "" {
			reason = noSafeDeclared
		}
		out = append(out, openhal.LeftAsIs{Device: d.ID, Reason: reason})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Device < out[j].Device })
	return out
}

// visibleLeft keeps the devices of left a token may see, as
// visibleOutcome does for the others.
func visibleLeft(e token.Entry, left []openhal.LeftAsIs) []openhal.LeftAsIs {
	if len(e.Devices) == 0 {
		return left
	}
	out := []openhal.LeftAsIs{}
	for _, l := range left {
		if e.Visible(l.Device) {
			out = append(out, l)
		}
	}
	return out
}
