//go:build unix

package gatewayd

import (
	"bytes"
	"context"
	"fmt"
	"log/slog"
	"maps"
	"os"
	"os/signal"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/openhal/gateway/device"
	"github.com/openhal/gateway/internal/board"
	"github.com/openhal/gateway/internal/halhub"
	"github.com/openhal/gateway/internal/halhub/audit"
	"github.com/openhal/gateway/internal/halhub/token"
	"github.com/openhal/gateway/internal/supervisor"
	"github.com/openhal/gateway/internal/systemd"
	"github.com/openhal/gateway/openhal"
)

// reloader applies a changed configuration file on SIGHUP (`systemctl
// reload gateway`): the devices added, removed and changed, the safety
// rules, the adapters enabled and their settings, and the token file read
// again, without closing a connection nor touching a device whose
// configuration did not change. A file that does not pass the validator
// is refused whole with the errors `gateway check` prints, and the
// running configuration stays. One reload runs at a time, on the
// reloader's goroutine: it is the only caller of the boardSet after
// start-up.
type reloader struct {
	src      configSource
	started  *board.Config // what the listeners and the rest were built from
	running  *board.Config // what the devices, rules and adapters now follow
	boards   *boardSet     // nil on the sim board
	hub      *halhub.Hub
	sup      *supervisor.Supervisor
	store    *token.Store
	stateDir string
	auditLog *audit.Log
	notifier *systemd.Notifier
	outcome  *atomic.Pointer[string] // the last reload's, for STATUS (statusLine)
	status   func() string           // the STATUS line (statusLine.String)
	kick     func()                  // has followStatus send STATUS again
	log      *slog.Logger
}

// listenHUP takes SIGHUP from now on, so that it no longer ends the
// process; signals that come before the reloader runs wait for it.
func listenHUP() (<-chan os.Signal, func()) {
	c := make(chan os.Signal, 1)
	signal.Notify(c, syscall.SIGHUP)
	return c, func() { signal.Stop(c) }
}

// run reloads on each signal until ctx ends; wait returns once a reload
// in progress is done.
func (r *reloader) run(ctx context.Context, hups <-chan os.Signal) (wait func()) {
	var wg sync.WaitGroup
	wg.Go(func() {
		for {
			select {
			case <-ctx.Done():
				return
			case <-hups:
				r.reload()
			}
		}
	})
	return wg.Wait
}

// reload is one reload, between RELOADING=1 and READY=1.
func (r *reloader) reload() {
	if err := r.notifier.Reloading(); err != nil {
		r.log.Warn("systemd: RELOADING=1 not sent", "err", err)
	}
	defer func() {
		// The outcome in STATUS before READY=1 ends the reload.
		if err := r.notifier.Status(r.status()); err != nil {
			r.log.Warn("systemd: STATUS not sent", "err", err)
		}
		r.kick()
		if err := r.notifier.Ready(); err != nil {
			r.log.Warn("systemd: READY=1 not sent", "err", err)
		}
	}()
	r.log.Info("reloading the configuration", "file", configName(r.src.path))
	if r.src.path == "" {
		r.refuse("no configuration file: the gateway runs the built-in sim configuration (start it with --config FILE to reload one)", nil)
		return
	}
	next, errs := r.load()
	if errs != nil {
		r.refuse(fmt.Sprintf("%s: %s", r.src.path, plural(len(errs), "error")), errs)
		return
	}
	d := board.Compare(r.running, next)
	pending := board.Compare(r.started, next).Restart
	if next.Board != r.started.Board {
		// Another board's devices, and their rules, wait for the restart
		// with it: the board's part of the running configuration stays.
		d.Added, d.Removed, d.Changed, d.Rules = nil, nil, nil, nil
		next.Board, next.Sim, next.StopButtonID = r.running.Board, r.running.Sim, r.running.StopButtonID
		next.Devices, next.Chips, next.Modbus = r.running.Devices, r.running.Chips, r.running.Modbus
	}
	if err := r.applyDevices(d, next); err != nil {
		r.fail(err)
		return
	}
	if len(d.Rules) > 0 {
		r.hub.SetRules(next.Rules())
	}
	adapterErrs := r.applyAdapters(d, next)
	tokens := r.reloadTokens()
	r.running = next
	r.applied(d, pending, append(adapterErrs, tokens...))
}

// load reads, adjusts and validates the file as `gateway run` did at
// start-up; its errors are the lines `gateway check` prints.
func (r *reloader) load() (*board.Config, []string) {
	var out bytes.Buffer
	cfg, err := board.Load(r.src.path)
	if err == nil {
		r.src.adjust(cfg)
		err = cfg.Validate()
		if err == nil && r.boards != nil && r.running.Board == board.BoardAuto && cfg.Board == board.BoardAuto {
			err = cfg.ValidateOn(r.boards.prof)
		}
	}
	if err == nil {
		cfg.StateDir = r.src.stateDirOf(cfg)
		return cfg, nil
	}
	if rerr := reportConfig(r.src.path, err, &out); rerr != nil && out.Len() == 0 {
		return nil, []string{fmt.Sprintf("gateway: %s: %v", r.src.path, err)} // unreadable: not a board.Errors
	}
	return nil, strings.Split(strings.TrimSuffix(out.String(), "\n"), "\n")
}

// applyDevices closes the groups of devices removed and changed, then
// opens those of the devices added and changed: in that order, so that a
// pin may go from one device to another within one reload. A pending
// Confirmation Request on a device closed is rejected first; a device
// removed is driven to its safe value before it is closed when the
// configuration drives outputs safe at a clean stop
// (hub.safeOnShutdown); a device opened while the emergency stop is in
// force is opened at its safe value, not its initial one. When the hardware refuses a group (a line
// taken by another program), everything is put back as it was.
func (r *reloader) applyDevices(d board.Diff, next *board.Config) error {
	if r.boards == nil || len(d.Added)+len(d.Removed)+len(d.Changed) == 0 {
		return nil
	}
	gone := slices.Concat(d.Removed, d.Changed)
	r.hub.RejectPendingOn(d.Removed, "the device was removed by a configuration reload")
	r.hub.RejectPendingOn(d.Changed, "the device was changed by a configuration reload")
	if r.running.Hub.SafeOnShutdown && len(d.Removed) > 0 {
		applied, failed := r.hub.DriveSafe(d.Removed, "removed by a configuration reload")
		r.log.Info("reload: removed devices driven to their safe values", "applied", strings.Join(applied, ","), "failed", fmt.Sprint(failed))
	}
	closed := map[string][]string{} // old groups closed: key -> ids
	for _, id := range gone {
		if key := r.boards.groupOf(id); key != "" {
			if _, done := closed[key]; !done {
				closed[key] = r.boards.groups[key].ids
				r.boards.close(key, "configuration reload")
			}
		}
	}
	opened, err := r.openGroups(openingConfig(next, r.hub.Stopped()), slices.Concat(d.Added, d.Changed))
	if err != nil {
		for _, key := range opened {
			r.boards.close(key, "configuration reload failed")
		}
		for key, ids := range closed {
			if rerr := r.boards.open(openingConfig(r.running, r.hub.Stopped()), key, ids); rerr != nil {
				r.log.Error("reload: could not open again a device group of the running configuration", "group", key, "err", rerr)
			}
		}
		return err
	}
	if applied, failed := r.hub.SafeIfStopped(slices.Concat(d.Added, d.Changed)); len(applied)+len(failed) > 0 {
		r.log.Warn("reload: devices opened under the emergency stop driven to their safe values", "applied", strings.Join(applied, ","), "failed", fmt.Sprint(failed))
	}
	return nil
}

// openingConfig is the configuration devices are opened with: cfg, or
// while the emergency stop is engaged (stopped), cfg with the safe value
// of each output as its initial value: a device opened under a stop, at
// start or by a reload, must not be driven away from safe, not even
// until the stop's drive to the safe values reaches it. cfg itself is
// left as the file says, for the next reload to compare with.
func openingConfig(cfg *board.Config, stopped bool) *board.Config {
	if !stopped {
		return cfg
	}
	return safeInitials(cfg)
}

// safeInitials is cfg with the safe value of each output as its initial
// value (openingConfig).
func safeInitials(cfg *board.Config) *board.Config {
	out := *cfg
	out.Devices = maps.Clone(cfg.Devices)
	for _, d := range cfg.Descriptors() {
		if dc, ok := out.Devices[d.ID]; ok && d.Safe != nil && d.Access != device.AccessRead {
			dc.Initial = d.Safe
			out.Devices[d.ID] = dc
		}
	}
	return &out
}

// openGroups opens the groups of next that hold ids, and returns their
// keys, those opened before an error too.
func (r *reloader) openGroups(next *board.Config, ids []string) ([]string, error) {
	groups := next.Groups()
	var keys []string
	for key, members := range groups {
		if slices.ContainsFunc(members, func(id string) bool { return slices.Contains(ids, id) }) {
			keys = append(keys, key)
		}
	}
	slices.Sort(keys)
	var opened []string
	for _, key := range keys {
		if err := r.boards.open(next, key, groups[key]); err != nil {
			return opened, err
		}
		opened = append(opened, key)
	}
	return opened, nil
}

// applyAdapters stops the adapters disabled, starts those enabled and
// restarts those whose settings changed; what fails is returned, said in
// the outcome, and the rest goes on.
func (r *reloader) applyAdapters(d board.Diff, next *board.Config) []string {
	var errs []string
	r.sup.SetSettings(next.AdapterSettings())
	for _, name := range d.AdaptersStopped {
		if err := r.sup.Disable(name); err != nil {
			errs = append(errs, err.Error())
		}
	}
	if len(d.AdaptersStarted) > 0 {
		installShipped(next.Adapters.Shipped, r.stateDir, d.AdaptersStarted, r.log)
	}
	for _, name := range d.AdaptersStarted {
		if err := r.sup.Enable(name); err != nil {
			errs = append(errs, err.Error())
		}
	}
	for _, name := range d.AdaptersChanged {
		if err := r.sup.Reload(name); err != nil {
			errs = append(errs, err.Error())
		}
	}
	return errs
}

// reloadTokens reads the token file again (it is followed on disk too:
// this is for an edit the watch missed, or a file copied in place).
func (r *reloader) reloadTokens() []string {
	t, err := r.store.Load()
	switch {
	case err != nil:
		return []string{fmt.Sprintf("tokens not read again: %v", err)}
	case t.Absent():
		return []string{"token file missing; keeping the tokens loaded"}
	}
	r.hub.SetTokens(t)
	return nil
}

// refuse records a reload that changed nothing.
func (r *reloader) refuse(why string, lines []string) {
	// Warnings, not errors: the gateway runs on, unchanged.
	for _, l := range lines {
		r.log.Warn("reload refused", "error", l)
	}
	r.log.Warn("reload refused; the running configuration stays", "reason", why)
	r.note("reload refused", why)
	// The count, not the lines: they name devices, and a token limited
	// to some reads this entry (the lines are in the log).
	r.audit("refused", why)
}

// fail records a reload the hardware refused, all put back.
func (r *reloader) fail(err error) {
	why := fmt.Sprintf("%v; the running configuration stays", err)
	r.log.Warn("reload failed", "err", why)
	r.note("reload failed", why)
	r.audit("failed", why)
}

// applied records a reload that went through.
func (r *reloader) applied(d board.Diff, pending, problems []string) {
	var attrs []any
	for _, f := range []struct {
		key  string
		list []string
	}{
		{"added", d.Added}, {"removed", d.Removed}, {"changed", d.Changed}, {"rules", d.Rules},
		{"adapters_started", d.AdaptersStarted}, {"adapters_stopped", d.AdaptersStopped}, {"adapters_restarted", d.AdaptersChanged},
		{"restart_needed", pending},
	} {
		if len(f.list) > 0 {
			attrs = append(attrs, f.key, strings.Join(f.list, ","))
		}
	}
	if len(problems) > 0 {
		attrs = append(attrs, "problems", strings.Join(problems, "; "))
	}
	r.log.Info("configuration reloaded", attrs...)
	// Counts, not ids: a token limited to some devices reads this entry,
	// and learns nothing of the others' ids (spec §8, §10).
	summary := fmt.Sprintf("devices: %d added, %d removed, %d changed; rules of %s; adapters: %d started, %d stopped, %d restarted",
		len(d.Added), len(d.Removed), len(d.Changed), plural(len(d.Rules), "device"), len(d.AdaptersStarted), len(d.AdaptersStopped), len(d.AdaptersChanged))
	if len(pending) > 0 {
		summary += "; waiting for a restart: " + strings.Join(pending, ", ")
	}
	if len(problems) > 0 {
		summary += "; " + strings.Join(problems, "; ")
	}
	r.note("reloaded", summary)
	r.audit("applied", summary)
}

// note keeps the outcome for STATUS, with the time.
func (r *reloader) note(what, why string) {
	s := fmt.Sprintf("%s at %s", what, time.Now().Format(time.TimeOnly))
	if what != "reloaded" {
		s += ": " + why
	}
	r.outcome.Store(&s)
}

// audit appends the reload's entry: a Hub-wide one, principal {hub,
// reload}, action config.reload.
func (r *reloader) audit(outcome, why string) {
	entry := audit.Entry{
		Principal: openhal.Principal{Kind: openhal.KindHub, Name: "reload"},
		Action:    "config.reload", Outcome: outcome, Reason: why,
	}
	if _, err := r.auditLog.Append(context.Background(), entry); err != nil {
		r.log.Error("reload not in the audit log", "err", err)
	}
}

// plural is "1 error", "2 errors".
func plural(n int, what string) string {
	if n == 1 {
		return "1 " + what
	}
	return fmt.Sprintf("%d %ss", n, what)
}
