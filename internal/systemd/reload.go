package systemd

import "fmt"

// Reloading tells systemd that the gateway is reloading its configuration
// (RELOADING=1), with the time of CLOCK_MONOTONIC now (MONOTONIC_USEC),
// which systemd ≥ 253 requires to tell this reload from an earlier one.
// Ready (READY=1) ends the reload, whatever its outcome: the unit stays
// active, and STATUS says how it went.
func (n *Notifier) Reloading() error {
	msg := "RELOADING=1"
	if us, ok := monotonicUsec(); ok {
		msg += fmt.Sprintf("\nMONOTONIC_USEC=%d", us)
	}
	return n.send(msg)
}
