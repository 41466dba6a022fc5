//go:build linux

package modbussim

import (
	"slices"
	"testing"
)

// TestRequests: the simulator notes each request it hears, answered or
// not (an exception, a silent unit), with its function, first address
// and span, and forgets them once told; a unit not configured is not
// heard.
func TestRequests(t *testing.T) {
	eachTransport(t, func(t *testing.T, sim *Sim, m master) {
		sim.Requests() // whatever came before
		read(t, m, 1, Holding, 100, 2)
		read(t, m, 1, Coil, 0, 3)
		read(t, m, 1, Discrete, 10, 1)
		read(t, m, 1, Input, 0, 2)
		ask(t, m, 1, writeRegs(200, 5))
		ask(t, m, 1, writeRegs(200, 1, 2, 3))
		ask(t, m, 1, writeCoils(1, 1))
		if resp, err := ask(t, m, 1, readReq(3, 150, 1)); err != nil || len(resp) != 2 || resp[0] != 0x83 || resp[1] != 2 {
			t.Fatalf("holding 150 of unit 1: % x, %v; want exception 2", resp, err)
		}
		quiet(t, m, 9, readReq(3, 0, 1), 2)
		sim.Silent(2)
		quiet(t, m, 2, readReq(3, 0, 1), 1)
		want := []Request{
			{1, 3, 100, 2}, {1, 1, 0, 3}, {1, 2, 10, 1}, {1, 4, 0, 2},
			{1, 6, 200, 1}, {1, 16, 200, 3}, {1, 5, 1, 1}, {1, 3, 150, 1},
			{2, 3, 0, 1}, // quiet's check of unit 2 after unit 9's silence
			{2, 3, 0, 1}, // silent unit 2, heard
			{1, 3, 0, 1}, // quiet's check of unit 1 (an exception)
		}
		if got := sim.Requests(); !slices.Equal(got, want) {
			t.Errorf("Requests = %v\nwant        %v", got, want)
		}
		if again := sim.Requests(); len(again) != 0 {
			t.Errorf("Requests again = %v, want none", again)
		}
	})
}
