package hardware

import (
	"context"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/openhal/gateway/device"
	"github.com/openhal/gateway/internal/clock/clocktest"
	"github.com/openhal/gateway/internal/hw/sysfstest"
)

// reports is a device.Reporter that hands each value and state on.
type reports chan string

func (r reports) Value(v any, ts time.Time)          { r <- "value" }
func (r reports) State(s device.State, fault string) { r <- "state " + string(s) }

// A read of w1_slave blocks in the kernel for the conversion (750 ms at
// 12 bits, longer while another thermometer holds the bus). Here it
// blocks until the test answers, through a FIFO in w1_slave's place:
// meanwhile the other sensors are polled and publish, and the
// thermometer publishes once its read returns.
func TestW1ReadDoesNotStallOtherDevices(t *testing.T) {
	s := sysfstest.New(t)
	s.W1Master(1)
	s.W1Slave(1, "28-0316a2797dff", "")
	slave := filepath.Join(s.Root, "bus/w1/devices/28-0316a2797dff/w1_slave")
	if err := syscall.Mkfifo(slave, 0o644); err != nil {
		t.Fatal(err)
	}
	s.IIO(0, dhtParent, map[string]string{"name": "dht11\n", "in_temp_input": "23400\n", "in_humidityrelative_input": "45600\n"})
	s.Hwmon(1, tmpParent, map[string]string{"name": "tmp105\n", "temp1_input": "21500\n"})
	cfg, prof := parse(t, kernelYAML)
	devs, release, err := Build(context.Background(), cfg, prof, &fakeHost{root: s.Root}, clocktest.NewFake(time.Unix(0, 0)), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer release()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	got := map[string]reports{}
	for _, d := range devs {
		r := make(reports, 8)
		got[d.Descriptor().ID] = r
		go d.(device.Runner).Run(ctx, r)
	}
	expect := func(id string, want ...string) {
		t.Helper()
		for _, w := range want {
			select {
			case r := <-got[id]:
				if r != w {
					t.Fatalf("%s reported %q, want %q", id, r, w)
				}
			case <-time.After(10 * time.Second):
				t.Fatalf("%s reported nothing, want %q", id, w)
			}
		}
	}
	expect("greenhouse.air", "state ok", "value")
	expect("lab.board", "state ok", "value")
	select {
	case r := <-got["greenhouse.soil"]:
		t.Fatalf("the thermometer reported %q while its read was blocked", r)
	default:
	}
	if err := os.WriteFile(slave, []byte(w1At23125), 0o644); err != nil { // opens the FIFO: the read returns
		t.Fatal(err)
	}
	expect("greenhouse.soil", "state ok", "value")
}
