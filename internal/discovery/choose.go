package discovery

import (
	"fmt"
	"log/slog"
)

// Modes of hub.announce.
const (
	ModeAuto    = "auto"
	ModeAvahi   = "avahi"
	ModeBuiltin = "builtin"
	ModeOff     = "off"
)

// New returns the publisher mode asks for: avahi when avahi-daemon is on
// the system bus and auto or avahi is asked, the built-in responder for
// builtin or when auto finds no avahi, nil for off. avahi without avahi
// running is an error: the operator asked for it by name.
func NewPublisher(mode string, log *slog.Logger) (Publisher, error) {
	switch mode {
	case ModeOff:
		return nil, nil
	case ModeBuiltin:
		return NewBuiltin(log), nil
	case ModeAvahi, ModeAuto:
		p, err := NewAvahi(log)
		if err == nil {
			return p, nil
		}
		if mode == ModeAvahi {
			return nil, fmt.Errorf("hub.announce: avahi: %w", err)
		}
		log.Debug("announce: no avahi-daemon, using the built-in responder", "err", err)
		return NewBuiltin(log), nil
	}
	return nil, fmt.Errorf("hub.announce: unknown mode %q", mode)
}
