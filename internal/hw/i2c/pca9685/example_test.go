package pca9685_test

import (
	"context"
	"fmt"
	"log"
	"time"

	"periph.io/x/conn/v3/i2c"
	"periph.io/x/conn/v3/i2c/i2ctest"

	"github.com/openhal/gateway/device"
	"github.com/openhal/gateway/internal/hw/i2c/pca9685"
)

func Example() {
	// On a Pi: bus, err := i2creg.Open("1"). Here, a bus that plays back
	// a PCA9685 at 0x40 set to 50 Hz and a servo on channel 0 centred.
	bus := &i2ctest.Playback{Ops: []i2ctest.IO{
		{Addr: 0x40, W: []byte{0x00}, R: []byte{0x11}},
		{Addr: 0x40, W: []byte{0x00, 0x11}},
		{Addr: 0x40, W: []byte{0xFE, 121}},
		{Addr: 0x40, W: []byte{0x01, 0x04}},
		{Addr: 0x40, W: []byte{0x00, 0x21}},
		{Addr: 0x40, W: []byte{0x06, 0x00, 0x00, 0x33, 0x01}},
	}}
	pwm, err := pca9685.New(bus, 0x40, 50)
	if err != nil {
		log.Fatal(err)
	}
	if err := pwm.SetPulse(0, 1500*time.Microsecond); err != nil {
		log.Fatal(err)
	}
	fmt.Printf("%.2f Hz\n", pwm.Frequency())
	// Output: 50.03 Hz
}

func ExampleShared() {
	// One board shared by its devices, set up at the first write: here a
	// bus that plays back its set-up and a lamp on output 15 at 25 %.
	bus := &i2ctest.Playback{Ops: []i2ctest.IO{
		{Addr: 0x40, W: []byte{0x00}, R: []byte{0x11}},
		{Addr: 0x40, W: []byte{0x00, 0x11}},
		{Addr: 0x40, W: []byte{0xFE, 121}},
		{Addr: 0x40, W: []byte{0x01, 0x04}},
		{Addr: 0x40, W: []byte{0x00, 0x21}},
		{Addr: 0x40, W: []byte{0x42, 0x00, 0x00, 0x00, 0x04}},
	}}
	open := func() (i2c.BusCloser, error) { return bus, nil }
	chip, err := pca9685.NewShared("chips.servos", open, 0x40, 50)
	if err != nil {
		log.Fatal(err)
	}
	lamp, err := pca9685.NewOutput(device.Descriptor{ID: "arm.lamp"}, chip, 15, 0)
	if err != nil {
		log.Fatal(err)
	}
	if _, err := lamp.Write(context.Background(), device.WriteRequest{Value: 25.0}); err != nil {
		log.Fatal(err)
	}
	fmt.Printf("%.2f Hz\n", chip.Frequency())
	// Output: 50.03 Hz
}
