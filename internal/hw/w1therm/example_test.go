package w1therm_test

import (
	"context"
	"fmt"
	"log"
	"os"
	"path/filepath"

	"github.com/openhal/gateway/internal/hw/w1therm"
)

func Example() {
	// On a Pi with dtoverlay=w1-gpio, root is w1therm.DefaultRoot. Here, a
	// directory laid out as the kernel lays it out, with one DS18B20.
	root, _ := os.MkdirTemp("", "w1")
	defer os.RemoveAll(root)
	os.MkdirAll(filepath.Join(root, "28-0316a2791aff"), 0o755)
	os.WriteFile(filepath.Join(root, "28-0316a2791aff", "w1_slave"),
		[]byte("72 01 4b 46 7f ff 0e 10 57 : crc=57 YES\n72 01 4b 46 7f ff 0e 10 57 t=23125\n"), 0o644)

	ids, err := w1therm.List(root)
	if err != nil {
		log.Fatal(err)
	}
	for _, id := range ids {
		d, err := w1therm.New(root, id)
		if err != nil {
			log.Fatal(err)
		}
		v, err := d.Sense(context.Background())
		if err != nil {
			log.Fatal(err)
		}
		fmt.Printf("%v: %.3f °C\n", d, v["temperature"])
	}
	// Output: DS18B20{28-0316a2791aff}: 23.125 °C
}
