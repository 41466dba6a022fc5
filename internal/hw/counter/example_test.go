package counter_test

import (
	"fmt"
	"time"

	"github.com/openhal/gateway/internal/hw/counter"
)

func Example() {
	// A flow meter of 450 pulses a litre, read over 1 s windows; edges as
	// the kernel stamps them, here 30 a second for 2 s.
	flow, _ := counter.New(0, time.Millisecond, time.Second)
	start := time.Date(2026, 12, 6, 10, 0, 0, 0, time.UTC)
	var now time.Time
	for i := range 60 {
		now = start.Add(time.Duration(i) * time.Second / 30)
		flow.Edge(now)
	}
	fmt.Printf("%.4f l, %.2f l/min\n", float64(flow.Total())/450, flow.Rate(now)/450*60)
	// Output: 0.1333 l, 4.00 l/min
}
