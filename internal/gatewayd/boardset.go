//go:build unix

package gatewayd

import (
	"context"
	"fmt"
	"log/slog"
	"maps"
	"slices"
	"sync"

	"github.com/openhal/gateway/device"
	"github.com/openhal/gateway/internal/board"
	"github.com/openhal/gateway/internal/board/hardware"
	"github.com/openhal/gateway/internal/board/profile"
	"github.com/openhal/gateway/internal/clock"
)

// boardSet is a real board's devices, opened group by group
// (board.Config.Groups: a device alone, or the devices sharing a Modbus
// line, a chip or an SPI ADC), so that a reload closes and opens again
// only the groups it changes: every other device keeps its driver, its
// value and its pin. Only start-up, a reload and the shutdown call it,
// one at a time (the reloader's turn), so it needs no lock of its own.
type boardSet struct {
	ctx    context.Context // the board's: ends at the shutdown
	prof   *profile.Profile
	host   hardware.Host
	reg    *device.Registry
	log    *slog.Logger
	groups map[string]*deviceGroup
}

// deviceGroup is one group's devices at work: their runners run on ctx
// until cancel; release gives back what they hold.
type deviceGroup struct {
	ids     []string
	cancel  context.CancelFunc
	runners *sync.WaitGroup
	release func()
}

func newBoardSet(ctx context.Context, prof *profile.Profile, host hardware.Host, reg *device.Registry, log *slog.Logger) *boardSet {
	return &boardSet{ctx: ctx, prof: prof, host: host, reg: reg, log: log, groups: map[string]*deviceGroup{}}
}

// openAll opens every group of cfg; on an error it closes those it
// opened, and the error names the device.
func (b *boardSet) openAll(cfg *board.Config) error {
	groups := cfg.Groups()
	for _, key := range slices.Sorted(maps.Keys(groups)) {
		if err := b.open(cfg, key, groups[key]); err != nil {
			b.closeAll("board failed to start")
			return err
		}
	}
	return nil
}

// open builds the devices ids of cfg as one group, registers them (their
// hal/deviceAdded), publishes the outputs' initial values and starts
// their runners.
func (b *boardSet) open(cfg *board.Config, key string, ids []string) error {
	sub := cfg.Subset(ids)
	ctx, cancel := context.WithCancel(b.ctx)
	devs, release, err := hardware.Build(ctx, sub, b.prof, b.host, clock.Real(), b.log)
	if err != nil {
		cancel()
		return fmt.Errorf("board %s: %w", b.prof.Name, err)
	}
	runners, err := addDevices(ctx, sub, b.reg, devs)
	if err != nil {
		cancel()
		release()
		return err
	}
	b.groups[key] = &deviceGroup{ids: ids, cancel: cancel, runners: runners, release: release}
	return nil
}

// close unregisters a group's devices (hal/deviceRemoved with reason),
// stops their runners and releases their hardware: its pins are free for
// another group to take.
func (b *boardSet) close(key, reason string) {
	g, ok := b.groups[key]
	if !ok {
		return
	}
	for _, id := range g.ids {
		if err := b.reg.Remove(id, reason); err != nil {
			b.log.Warn("reload: remove device", "device", id, "err", err)
		}
	}
	g.cancel()
	g.runners.Wait()
	g.release()
	delete(b.groups, key)
}

func (b *boardSet) closeAll(reason string) {
	for _, key := range slices.Sorted(maps.Keys(b.groups)) {
		b.close(key, reason)
	}
}

// wait is the shutdown's end of the board: once the board's context is
// done, it waits for every runner and releases the hardware, the devices
// staying in the registry (the Hub is closing too).
func (b *boardSet) wait() {
	for _, g := range b.groups {
		g.runners.Wait()
		g.release()
	}
	b.groups = map[string]*deviceGroup{}
}

// groupOf is the key of the open group that holds device id, or "".
func (b *boardSet) groupOf(id string) string {
	for key, g := range b.groups {
		if slices.Contains(g.ids, id) {
			return key
		}
	}
	return ""
}
