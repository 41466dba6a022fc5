package cli

import (
	"fmt"
	"runtime"
)

// ServerOnly refuses a server command (run, token, adapter install and
// remove) on a system other than Linux. The gateway serves and supervises
// with Linux's own interfaces (inotify, pidfds, PR_SET_PDEATHSIG, systemd);
// the client commands, which only talk to a gateway over the network, run
// anywhere (docs/install.md, "Clients on other systems").
func ServerOnly(what string) error { return needsLinux(what, runtime.GOOS) }

// needsLinux is ServerOnly for the system goos.
func needsLinux(what, goos string) error {
	if goos == "linux" {
		return nil
	}
	return fmt.Errorf("%s needs Linux (this is %s)", what, goos)
}
