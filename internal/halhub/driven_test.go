package halhub

import (
	"context"
	"reflect"
	"sync"
	"testing"
	"time"

	"github.com/openhal/gateway/device"
)

// The safe values the Hub drives on its own — a broken interlock, maxOnMs,
// an emergency stop — reach the device with WriteRequest.Safe, so that a
// device that paces its moves (a servo's rate) goes at once; a client's
// writes, of the safe value too, do not (issue 30, point 4).
func TestDrivenSafeValuesSaySo(t *testing.T) {
	b := newBench(t)
	var mu sync.Mutex
	var got []bool
	b.heater.writeFn = func(_ context.Context, req device.WriteRequest) (device.WriteResult, error) {
		mu.Lock()
		got = append(got, req.Safe)
		mu.Unlock()
		return device.WriteResult{}, nil
	}
	admin := b.admin(t)
	wantOK(t, write(admin, "bench.heater", true))
	wantOK(t, write(admin, "bench.heater", false)) // the safe value, by a client
	wantOK(t, write(admin, "bench.heater", true))
	b.door.Value(true, time.Time{}) // the interlock breaks
	admin.notification("hal/blocked")
	b.door.Value(false, time.Time{})
	wantOK(t, write(admin, "bench.heater", true))
	b.settle(t)
	b.clock.Advance(10 * time.Minute) // maxOnMs
	waitFor(t, 5*time.Second, "maxOnMs drives the heater safe", func() bool { return b.value(t, "bench.heater") == false })
	wantOK(t, admin.call("hal/stop", map[string]any{"reason": "test"}))
	mu.Lock()
	defer mu.Unlock()
	if want := []bool{false, false, false, true, false, true, true}; !reflect.DeepEqual(got, want) {
		t.Errorf("WriteRequest.Safe of the heater's writes = %v, want %v", got, want)
	}
}
