//go:build unix

package main

import (
	"math/rand/v2"
	"time"
)

// Values of --chaos-mode.
const (
	chaosCrash = "crash"
	chaosHang  = "hang"
	chaosAny   = "any"
)

// fileChaos records what --chaos did, for the tests to read.
const fileChaos = "chaos.txt"

// chaosExit is the exit code of a chaos crash.
const chaosExit = 3

// chaos misbehaves once, at a random moment between a quarter of within
// and within after initialized: it crashes (exit 3) or hangs (never
// writes again, so that pings and requests go unanswered until the
// daemon kills it), as --chaos-mode says ("any": either, at random). It
// is what make soak's adapters do, over and over, as they are restarted.
func (a *adapter) chaos(within time.Duration, mode string) {
	wait := within/4 + rand.N(within-within/4+1)
	time.Sleep(wait)
	if mode == chaosAny {
		mode = []string{chaosCrash, chaosHang}[rand.IntN(2)]
	}
	a.log.Info("chaos", "do", mode, "after", wait)
	if err := a.rec.appendLine(fileChaos, []byte(mode)); err != nil {
		a.fatal("chaos", err)
		return
	}
	if mode == chaosCrash {
		a.exit(chaosExit)
		return
	}
	a.out.mu.Lock() // never unlocked: every later write blocks, the read loop too
	sleepForever()  // a sleeping timer: the runtime must not call it a deadlock
}
