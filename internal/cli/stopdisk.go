package cli

import (
	"errors"
	"fmt"
	"strings"

	"github.com/openhal/gateway/openhal"
)

// stopOutcome is the error `gateway stop` exits 1 with when the stop is
// engaged but not everything went as it should: a device that did not
// reach its safe value, or a gateway that could not write the stop to its
// state directory (removed, unwritable, full). The stop holds in memory
// either way; the operator must see what to fix.
func stopOutcome(res openhal.StopResult) error {
	return errors.Join(stopFailures(res), stopDiskTrouble(res.DiskTrouble))
}

// stopDiskTrouble says what of the stop the gateway could not write.
func stopDiskTrouble(t openhal.DiskTrouble) error {
	var parts []string
	if t.LatchFailed != "" {
		parts = append(parts, fmt.Sprintf("it is not latched on disk yet (%s): the gateway writes it as soon as its state directory is usable, and a restart before that would lift it", t.LatchFailed))
	}
	if t.AuditFailed != "" {
		parts = append(parts, fmt.Sprintf("the audit log could not record it (%s)", t.AuditFailed))
	}
	if len(parts) == 0 {
		return nil
	}
	return fmt.Errorf("the emergency stop is engaged, but %s", strings.Join(parts, "; and "))
}
