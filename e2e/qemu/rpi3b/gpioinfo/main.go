// Command gpioinfo prints, as JSON, what the kernel says of every GPIO
// chip and line (the GPIO character device's chip and line info, uAPI
// v2): chip name, label and line count; each line's name, consumer,
// direction, bias, edges and active-low flag. It is the rpi3b QEMU test's
// view of the guest's lines while the gateway holds some of them: the
// line info ioctl does not request a line, so it reads what the holder
// asked for (libgpiod's gpioinfo shows the same, and is not in busybox).
//
// Cross-built for arm64 by the test (CGO_ENABLED=0) and run in the guest.
package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sort"
)

func main() {
	chips, err := readChips("/dev")
	if err != nil {
		fmt.Fprintln(os.Stderr, "gpioinfo:", err)
		os.Exit(1)
	}
	enc := json.NewEncoder(os.Stdout)
	enc.SetIndent("", " ")
	if err := enc.Encode(chips); err != nil {
		fmt.Fprintln(os.Stderr, "gpioinfo:", err)
		os.Exit(1)
	}
}

// readChips reads every /dev/gpiochipN under dev, in name order.
func readChips(dev string) ([]Chip, error) {
	paths, err := filepath.Glob(filepath.Join(dev, "gpiochip*"))
	if err != nil {
		return nil, err
	}
	sort.Strings(paths)
	chips := []Chip{}
	for _, p := range paths {
		c, err := readChip(p)
		if err != nil {
			return nil, err
		}
		chips = append(chips, c)
	}
	return chips, nil
}
