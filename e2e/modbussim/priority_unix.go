//go:build unix

package modbussim

import "syscall"

// simNice is the simulator's scheduling priority. The simulator stands
// for a unit on the line, which has a CPU of its own: the test machine's
// load (parallel tests, under-load's hogs) must not make it answer later
// than the gateway's timeout, which no real unit would do for that
// reason. Raising a priority needs root (CI runs as root); elsewhere it
// stays as it was.
const simNice = -10

// prioritize gives process pid simNice, before it starts its threads.
func prioritize(pid int) error {
	return syscall.Setpriority(syscall.PRIO_PROCESS, pid, simNice)
}
