//go:build unix

package gatewayd

import (
	"log/slog"
	"syscall"
)

// raiseOpenFiles raises the soft limit of open files to the hard limit
// (openhal-0.1 §2), so that connections, each a descriptor, run out as
// late as the system allows, and logs both. Go's runtime does the same at
// start on most systems and keeps the old soft limit for the processes it
// starts (the adapters); this call changes the limit only where the
// runtime did not, and says where the gateway stands either way.
func raiseOpenFiles(log *slog.Logger) {
	var lim syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &lim); err != nil {
		log.Warn("cannot read the open-file limit", "err", err)
		return
	}
	if lim.Cur < lim.Max {
		was := lim.Cur
		lim.Cur = lim.Max
		if err := syscall.Setrlimit(syscall.RLIMIT_NOFILE, &lim); err != nil {
			log.Warn("cannot raise the open-file limit to the hard limit", "soft", was, "hard", lim.Max, "err", err)
			return
		}
	}
	log.Info("open-file limit", "soft", lim.Cur, "hard", lim.Max)
}
