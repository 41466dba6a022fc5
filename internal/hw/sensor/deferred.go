package sensor

import (
	"context"
	"fmt"
	"sync"
)

// Deferred is a Sensor whose driver is set up at its first measurement,
// and again after any failed one. A sensor that is unplugged, unpowered
// or at the wrong address when the gateway starts then makes a device in
// fault that recovers once the chip answers, instead of a gateway that
// refuses to start; and a chip that lost its configuration in a power cut
// (a TMP105 back at 9 bits) is configured again after the failures the
// cut caused.
type Deferred struct {
	quantities []Quantity
	open       func() (Sensor, error)

	mu  sync.Mutex
	drv Sensor // nil until set up, and after a failure
}

// Defer returns a Deferred that sets up its driver with open. quantities
// are what the driver measures, known without the chip (each driver
// package's Quantities).
func Defer(quantities []Quantity, open func() (Sensor, error)) *Deferred {
	return &Deferred{quantities: quantities, open: open}
}

// Quantities implements Sensor.
func (d *Deferred) Quantities() []Quantity { return d.quantities }

// Sense sets the driver up if it is not, then measures. A failed setup or
// measurement drops the driver, so the next Sense sets it up afresh. The
// Device calls Sense one at a time; the lock makes Deferred safe anyway.
func (d *Deferred) Sense(ctx context.Context) (map[string]float64, error) {
	drv, err := d.driver()
	if err != nil {
		return nil, err
	}
	v, err := drv.Sense(ctx)
	if err != nil {
		d.mu.Lock()
		if d.drv == drv {
			d.drv = nil
		}
		d.mu.Unlock()
	}
	return v, err
}

func (d *Deferred) driver() (Sensor, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.drv == nil {
		drv, err := d.open()
		if err != nil {
			return nil, fmt.Errorf("set up: %w", err)
		}
		d.drv = drv
	}
	return d.drv, nil
}
