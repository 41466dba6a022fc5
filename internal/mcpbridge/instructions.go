package mcpbridge

import (
	"fmt"

	"github.com/openhal/gateway/openhal"
)

// instructions tell the model, once per session, how the bench works
// under this token: what it may do, that a pending write is not done, and
// that consent and resuming belong to a person.
func instructions(p openhal.Principal) string {
	s := fmt.Sprintf("This server is a gateway to a physical bench (relays, heaters, sensors, instruments). "+
		"You act as %s %q with scope %s. Every call goes through the gateway's safety checks and is kept in its audit log. ",
		p.Kind, p.Name, p.Scope)
	switch {
	case !p.Scope.AtLeast(openhal.ScopeControlLow):
		s += "This token only reads: list_devices, read_device and wait_for_value. "
	case !p.Scope.AtLeast(openhal.ScopeControlHigh):
		s += "Low-risk devices are set at once with write_device. A write of a high-risk device is a request " +
			"that waits for a person's approval: its result is \"pending\" and nothing is applied until a person " +
			"approves; tell the user and follow it with confirmation_status. "
	default:
		s += "This token sets high-risk devices without a person's approval: be sure before each write. "
	}
	s += "No tool approves, rejects or lifts an emergency stop: those are a person's decisions. " +
		"If anything on the bench looks unsafe, call emergency_stop (when offered) and tell the user."
	return s
}
