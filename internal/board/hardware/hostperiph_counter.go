//go:build linux

package hardware

import (
	"fmt"

	"periph.io/x/host/v3/gpioioctl"

	"github.com/openhal/gateway/internal/board/profile"
	"github.com/openhal/gateway/internal/hw/gpioevent"
)

// EdgeLine finds the line as Line does and requests it through the
// character device directly (gpioevent): periph's requests give back
// neither the edges' timestamps nor the kernel's sequence numbers.
func (*Periph) EdgeLine(ref profile.LineRef, cfg gpioevent.Config) (gpioevent.Source, error) {
	path, offset, err := chipOffset(ref)
	if err != nil {
		return nil, err
	}
	l, err := gpioevent.Open(path, offset, cfg)
	if err != nil {
		return nil, err
	}
	return l, nil
}

// chipOffset is the chip device (/dev/gpiochipN) and offset of a line
// given by chip and offset, or by its kernel name.
func chipOffset(ref profile.LineRef) (string, int, error) {
	var labels []string
	for _, c := range gpioioctl.Chips {
		if ref.Chip == "" {
			for _, l := range c.Lines() {
				if l.Name() == ref.Name {
					return c.Path(), l.Number(), nil
				}
			}
			continue
		}
		if c.Label() != ref.Chip && c.Name() != ref.Chip && "/dev/"+ref.Chip != c.Name() {
			labels = append(labels, c.Name()+" "+c.Label())
			continue
		}
		if ref.Offset < 0 || ref.Offset >= c.LineCount() {
			return "", 0, fmt.Errorf("chip %s has %d lines, no offset %d", ref.Chip, c.LineCount(), ref.Offset)
		}
		return c.Path(), ref.Offset, nil
	}
	if ref.Chip == "" {
		return "", 0, fmt.Errorf("no GPIO line named %q on this machine (gpioinfo lists them)", ref.Name)
	}
	return "", 0, fmt.Errorf("no GPIO chip %q on this machine (chips: %s)", ref.Chip, chipList(labels))
}
