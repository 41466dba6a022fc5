package pca9685_test

import (
	"fmt"
	"log"
	"time"

	"periph.io/x/conn/v3/i2c/i2ctest"

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
