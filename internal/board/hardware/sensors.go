package hardware

import (
	"fmt"

	"periph.io/x/conn/v3/i2c"

	"github.com/openhal/gateway/internal/board"
	"github.com/openhal/gateway/internal/hw/i2c/ads1115"
	"github.com/openhal/gateway/internal/hw/i2c/bme280"
	"github.com/openhal/gateway/internal/hw/i2c/mcp9808"
	"github.com/openhal/gateway/internal/hw/i2c/sht3x"
	"github.com/openhal/gateway/internal/hw/i2c/sht4x"
	"github.com/openhal/gateway/internal/hw/i2c/tmp102"
	"github.com/openhal/gateway/internal/hw/sensor"
)

// newSensor makes the named driver's sensor at addr, with the file's
// options in the driver's own terms (the validator has checked them).
func newSensor(driver string, bus i2c.Bus, addr uint16, o *board.SensorOptions) (sensor.Sensor, error) {
	if o == nil {
		o = &board.SensorOptions{}
	}
	switch driver {
	case "bme280":
		return bme280.New(bus, addr, bme280Opts(o))
	case "sht3x":
		return sht3x.New(bus, addr, &sht3x.Opts{Repeatability: level[sht3x.Repeatability](o.Repeatability, sht3x.High, sht3x.Medium, sht3x.Low)})
	case "sht4x":
		return sht4x.New(bus, addr, &sht4x.Opts{Precision: level[sht4x.Precision](o.Precision, sht4x.High, sht4x.Medium, sht4x.Low)})
	case "ads1115":
		opts := &ads1115.Opts{Channels: o.Channels}
		if o.FullScale != nil {
			opts.FullScale = ads1115.FullScale(*o.FullScale)
		}
		if o.DataRate != nil {
			opts.DataRate = *o.DataRate
		}
		return ads1115.New(bus, addr, opts)
	case "mcp9808":
		return mcp9808.New(bus, addr, mcp9808Opts(o))
	case "tmp102":
		return tmp102.New(bus, addr, &tmp102.Opts{Model: tmp102.TMP102, Extended: o.Extended != nil && *o.Extended})
	case "tmp105":
		opts := &tmp102.Opts{Model: tmp102.TMP105}
		if o.Bits != nil {
			opts.Bits = *o.Bits
		}
		return tmp102.New(bus, addr, opts)
	}
	return nil, fmt.Errorf("unknown sensor driver %q", driver)
}

// sensorQuantities are what the named driver measures with the file's
// options, known without the chip.
func sensorQuantities(driver string, o *board.SensorOptions) ([]sensor.Quantity, error) {
	switch driver {
	case "bme280":
		return bme280.Quantities(), nil
	case "sht3x":
		return sht3x.Quantities(), nil
	case "sht4x":
		return sht4x.Quantities(), nil
	case "ads1115":
		opts := &ads1115.Opts{}
		if o != nil {
			opts.Channels = o.Channels
		}
		return ads1115.Quantities(opts), nil
	case "mcp9808":
		return mcp9808.Quantities(), nil
	case "tmp102", "tmp105":
		return tmp102.Quantities(), nil
	}
	return nil, fmt.Errorf("unknown sensor driver %q", driver)
}

// level maps "high", "medium", "low" ("": high) to a driver's setting.
func level[T any](word string, high, medium, low T) T {
	switch word {
	case "medium":
		return medium
	case "low":
		return low
	}
	return high
}

// oversampling maps a factor (1, 2, 4, 8, 16) to the BME280's code; nil
// keeps the driver's default.
func oversampling(n *int) bme280.Oversampling {
	if n == nil {
		return 0
	}
	codes := map[int]bme280.Oversampling{1: bme280.O1x, 2: bme280.O2x, 4: bme280.O4x, 8: bme280.O8x, 16: bme280.O16x}
	return codes[*n]
}

func bme280Opts(o *board.SensorOptions) *bme280.Opts {
	opts := &bme280.Opts{}
	if os := o.Oversampling; os != nil {
		opts.Temperature = oversampling(os.Temperature)
		opts.Pressure = oversampling(os.Pressure)
		opts.Humidity = oversampling(os.Humidity)
	}
	if o.Filter != nil {
		filters := map[int]bme280.Filter{0: bme280.FilterOff, 2: bme280.Filter2, 4: bme280.Filter4, 8: bme280.Filter8, 16: bme280.Filter16}
		opts.Filter = filters[*o.Filter]
	}
	return opts
}

func mcp9808Opts(o *board.SensorOptions) *mcp9808.Opts {
	opts := &mcp9808.Opts{}
	if o.Resolution != nil {
		res := map[float64]mcp9808.Resolution{0.0625: mcp9808.Sixteenth, 0.125: mcp9808.Eighth, 0.25: mcp9808.Quarter, 0.5: mcp9808.Half}
		opts.Resolution = res[*o.Resolution]
	}
	return opts
}
