//go:build !linux

package hardware

import (
	"errors"
	"log/slog"
)

// NewPeriph fails: GPIO lines, I2C buses and PWM channels are opened
// through Linux's interfaces only.
func NewPeriph(log *slog.Logger) (Host, error) {
	return nil, errors.New("hardware boards run on Linux only")
}
