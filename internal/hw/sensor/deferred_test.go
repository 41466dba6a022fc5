package sensor

import (
	"context"
	"errors"
	"testing"
)

// scriptedSensor answers from a script of errors.
type scriptedSensor struct{ fails []error }

func (f *scriptedSensor) Quantities() []Quantity { return []Quantity{{Name: "t", Unit: "Cel"}} }

func (f *scriptedSensor) Sense(context.Context) (map[string]float64, error) {
	if len(f.fails) > 0 {
		err := f.fails[0]
		f.fails = f.fails[1:]
		if err != nil {
			return nil, err
		}
	}
	return map[string]float64{"t": 21}, nil
}

// A sensor that does not answer at setup is set up again at each
// measurement until it does; a failed measurement sets it up again.
func TestDeferred(t *testing.T) {
	absent := errors.New("no such device or address")
	opens := 0
	setups := []error{absent, absent, nil, nil}
	drv := &scriptedSensor{fails: []error{nil, errors.New("bus error"), nil}}
	d := Defer([]Quantity{{Name: "t", Unit: "Cel"}}, func() (Sensor, error) {
		err := setups[opens]
		opens++
		if err != nil {
			return nil, err
		}
		return drv, nil
	})
	steps := []struct {
		ok    bool
		opens int
	}{
		{false, 1}, // absent at start
		{false, 2}, // still absent
		{true, 3},  // plugged in: set up, measured
		{false, 3}, // a bus error drops the driver
		{true, 4},  // set up again, measured
		{true, 4},  // kept
	}
	for i, s := range steps {
		v, err := d.Sense(context.Background())
		if (err == nil) != s.ok || opens != s.opens {
			t.Fatalf("step %d: %v, %v, %d setups; want ok %v after %d setups", i, v, err, opens, s.ok, s.opens)
		}
		if i == 0 && !errors.Is(err, absent) {
			t.Fatalf("the setup's error is not passed on: %v", err)
		}
	}
	if q := d.Quantities(); len(q) != 1 || q[0].Name != "t" {
		t.Fatalf("quantities %v", q)
	}
}
