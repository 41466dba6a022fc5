package gatewayd

import (
	"log/slog"
	"os"
	"runtime/debug"
)

// defaultMemoryLimit is the soft limit `gateway run` gives the Go
// runtime's memory (heap, stacks, runtime), unless GOMEMLIMIT sets
// another. The gateway's own bounds keep what clients can make it hold
// to a few tens of MiB, but between two collections the heap may grow
// to twice what is live (GOGC=100): under a flood of requests that would
// double the peak. Near the limit the runtime collects more often
// instead. With the binary's own pages (about 10 MiB resident) the
// gateway stays under 64 MiB. It is soft: if more were live, the runtime
// would pass it rather than stop.
const defaultMemoryLimit = 32 << 20

// setMemoryLimit applies defaultMemoryLimit when GOMEMLIMIT is not set,
// and logs the limit in force.
func setMemoryLimit(log *slog.Logger) {
	from := "GOMEMLIMIT"
	if os.Getenv("GOMEMLIMIT") == "" {
		debug.SetMemoryLimit(defaultMemoryLimit)
		from = "default"
	}
	log.Info("memory limit", "bytes", debug.SetMemoryLimit(-1), "from", from)
}
