package kernelsensor_test

import (
	"context"
	"fmt"
	"log"
	"os"
	"path/filepath"

	"github.com/openhal/gateway/internal/hw/kernelsensor"
)

func Example() {
	// On a Pi with dtoverlay=dht11,gpiopin=4 the root is
	// kernelsensor.IIO.Root(). Here, a directory laid out as the kernel
	// lays out the dht11 driver's device.
	root, _ := os.MkdirTemp("", "iio")
	defer os.RemoveAll(root)
	dev := filepath.Join(root, "iio:device0")
	os.MkdirAll(dev, 0o755)
	os.WriteFile(filepath.Join(dev, "name"), []byte("dht11\n"), 0o644)
	os.WriteFile(filepath.Join(dev, "in_temp_input"), []byte("23400\n"), 0o644)
	os.WriteFile(filepath.Join(dev, "in_humidityrelative_input"), []byte("45600\n"), 0o644)

	d, err := kernelsensor.Open(kernelsensor.IIO, root, "dht11", 0)
	if err != nil {
		log.Fatal(err)
	}
	v, err := d.Sense(context.Background())
	if err != nil {
		log.Fatal(err)
	}
	for _, q := range d.Quantities() {
		fmt.Printf("%s = %g %s\n", q.Name, v[q.Name], q.Unit)
	}
	// Output:
	// humidity = 45.6 %RH
	// temperature = 23.4 Cel
}
