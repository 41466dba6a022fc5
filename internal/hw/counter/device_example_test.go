package counter_test

import (
	"context"
	"fmt"
	"time"

	"github.com/openhal/gateway/device"
	"github.com/openhal/gateway/internal/clock/clocktest"
	"github.com/openhal/gateway/internal/hw/counter"
	"github.com/openhal/gateway/internal/hw/gpioevent"
	"github.com/openhal/gateway/internal/hw/gpioevent/gpioeventtest"
)

// printer shows a flow meter's values in litres and litres a minute.
type printer struct{}

func (printer) Value(v any, _ time.Time) {
	m := v.(map[string]any)
	fmt.Printf("%.3f L, %.1f L/min\n", m["count"], m["rate"].(float64)*60)
}

func (printer) State(s device.State, fault string) { fmt.Println("state", s, fault) }

func ExampleDevice() {
	// A flow meter of 450 pulses a litre on a line whose edges a test
	// makes (the gateway gets them from gpioevent.Open), on a clock the
	// test moves.
	clk := clocktest.NewFake(time.Date(2026, 12, 6, 10, 0, 0, 0, time.UTC))
	line := gpioeventtest.New(clk)
	open := func() (gpioevent.Source, error) { return line, nil }
	flow, err := counter.NewDevice(device.Descriptor{ID: "garden.flow"}, open,
		counter.Opts{PerPulse: 1.0 / 450}, clk, nil)
	if err != nil {
		fmt.Println(err)
		return
	}
	ctx, stop := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		flow.Run(ctx, printer{})
	}()
	line.WaitRead(ctx)
	// 45 pulses a second (6 L/min) for two seconds.
	for range 90 {
		clk.Advance(time.Second / 45)
		line.Edge()
		line.WaitRead(ctx)
	}
	clk.Advance(3 * time.Second) // the pulses stop: the rate falls to 0
	stop()
	<-done
	// Output:
	// 0.000 L, 0.0 L/min
	// 0.102 L, 6.0 L/min
	// 0.200 L, 5.9 L/min
	// 0.200 L, 0.0 L/min
}
