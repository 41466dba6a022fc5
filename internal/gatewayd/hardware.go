package gatewayd

import (
	"encoding/json"
	"fmt"
	"io"

	"github.com/openhal/gateway/internal/board/inventory"
	"github.com/openhal/gateway/internal/cli"
)

// cmdHardware lists what the kernel of this machine says is there for
// the gateway to read (issue 30): 1-Wire ids, IIO and hwmon devices with
// their quantities, I2C buses and SPI device files, and an entry of the
// configuration file for each sensor. It reads sysfs only, and touches
// no device: gateway check, which judges a file that may be written
// elsewhere, looks at no hardware; this is where a person looks at it.
func cmdHardware(args []string, stdout, stderr io.Writer) error {
	fs := cli.NewFlagSet("hardware", "[--sys DIR] [--json]")
	sys := fs.String("sys", "/sys", "the sysfs `dir`ectory to read (a copy of one, for tests)")
	asJSON := fs.Bool("json", false, "machine-readable output: one JSON object")
	if err := cli.ParseFlags(fs, args); err != nil {
		return err
	}
	if err := cli.WantArgs(fs, fs.Args(), 0); err != nil {
		return err
	}
	inv, err := inventory.Scan(*sys)
	if err != nil {
		return fmt.Errorf("hardware: %w", err)
	}
	if *asJSON {
		b, err := json.Marshal(inv)
		if err != nil {
			return err
		}
		_, err = fmt.Fprintf(stdout, "%s\n", b)
		return err
	}
	return inv.WriteText(stdout, *sys)
}
