package board

import (
	"maps"
	"reflect"
	"slices"
	"strings"
)

// Diff is what a reload (SIGHUP, `systemctl reload gateway`) has to do to
// go from a running configuration to a new one: which devices to open,
// close, or close and open again, whose safety rules to replace, which
// adapters to start, stop or restart, and which changed settings it
// cannot apply (they wait for a restart).
//
// A device is Changed when anything the driver is built from differs: its
// own entry but for its rules and confirmTtl (those only change the Hub's
// rules: Rules), or what it shares with others — a Modbus line, an
// expander or PCA9685 chip, an SPI ADC's device file. Devices that share
// one of those are opened together (they hold it together), so when one
// of them is added, removed or changed, the others of that group are
// Changed too: the group is closed and opened again as a whole.
type Diff struct {
	Added, Removed, Changed []string // device ids, sorted
	// Rules are the devices whose effective rules (Config.Rules) differ,
	// those added and removed included.
	Rules []string
	// AdaptersStarted and AdaptersStopped are adapters enabled and
	// disabled; AdaptersChanged are adapters enabled in both whose
	// settings differ: restarted with their new settings.
	AdaptersStarted, AdaptersStopped, AdaptersChanged []string
	// Restart names the changed settings a reload does not apply, by
	// their path in the file ("hub.listen", "devices.sim.fan"): they take
	// effect at the next start.
	Restart []string
}

// Empty reports whether the two configurations run the same.
func (d Diff) Empty() bool {
	return len(d.Added)+len(d.Removed)+len(d.Changed)+len(d.Rules)+
		len(d.AdaptersStarted)+len(d.AdaptersStopped)+len(d.AdaptersChanged)+len(d.Restart) == 0
}

// Compare returns what a reload from old to new has to do. Both must have
// passed Validate.
func Compare(old, new *Config) Diff {
	var d Diff
	d.Restart = restartFields(old, new)
	if old.Board == new.Board {
		d.Added, d.Removed, d.Changed = compareDevices(old, new)
		if old.Board == BoardSim {
			d.Restart = append(d.Restart, simDevices(old, new)...)
			d.Added, d.Removed, d.Changed = nil, nil, nil
		}
	}
	d.Rules = changedKeys(old.Rules(), new.Rules())
	d.AdaptersStarted, d.AdaptersStopped, d.AdaptersChanged = compareAdapters(old, new)
	return d
}

// restartFields are the settings outside devices, rules and adapters
// that differ: the listeners, limits, the board itself...
func restartFields(old, new *Config) []string {
	var out []string
	for _, f := range []struct {
		path     string
		old, new any
	}{
		{"board", old.Board, new.Board},
		{"stateDir", old.StateDir, new.StateDir},
		{"hub.conformance", old.Hub.Conformance, new.Hub.Conformance},
		{"hub.listen", old.Hub.Listen, new.Hub.Listen},
		{"hub.limits", old.Hub.Limits, new.Hub.Limits},
		{"hub.metricsPublic", old.Hub.MetricsPublic, new.Hub.MetricsPublic},
		{"hub.safeOnShutdown", old.Hub.SafeOnShutdown, new.Hub.SafeOnShutdown},
		{"hub.tls", old.Hub.TLS, new.Hub.TLS},
		{"hub.allowedOrigins", old.Hub.AllowedOrigins, new.Hub.AllowedOrigins},
		{"hub.history", old.Hub.History, new.Hub.History},
		{"hub.mcp", old.Hub.MCP, new.Hub.MCP},
		{"hub.name", old.Hub.Name, new.Hub.Name},
		{"hub.announce", old.Hub.Announce, new.Hub.Announce},
		{"sim", old.Sim, new.Sim},
		{"stopButton", old.StopButtonID, new.StopButtonID},
		{"adapters.user", old.Adapters.User, new.Adapters.User},
		{"adapters.shipped", old.Adapters.Shipped, new.Adapters.Shipped},
	} {
		if !reflect.DeepEqual(f.old, f.new) {
			out = append(out, f.path)
		}
	}
	return out
}

// compareDevices sorts the devices of two configurations of one real
// board into added, removed and changed, whole groups changed.
func compareDevices(old, new *Config) (added, removed, changed []string) {
	dirty := map[string]bool{} // groups to open again
	for id, odc := range old.Devices {
		ndc, ok := new.Devices[id]
		switch {
		case !ok:
			removed = append(removed, id)
			dirty[old.group(id)] = true
		case old.group(id) != new.group(id) || !sameDriver(odc, ndc) || !reflect.DeepEqual(old.shared(id), new.shared(id)):
			changed = append(changed, id)
			dirty[old.group(id)], dirty[new.group(id)] = true, true
		}
	}
	for id := range new.Devices {
		if _, ok := old.Devices[id]; !ok {
			added = append(added, id)
			dirty[new.group(id)] = true
		}
	}
	for id := range old.Devices {
		_, kept := new.Devices[id]
		g := old.group(id)
		if kept && !strings.HasPrefix(g, "device:") && dirty[g] && !slices.Contains(changed, id) {
			changed = append(changed, id)
		}
	}
	slices.Sort(added)
	slices.Sort(removed)
	slices.Sort(changed)
	return added, removed, changed
}

// sameDriver reports whether two entries build the same driver: equal
// but for the rules and the confirmations' lifetime, which are the Hub's.
func sameDriver(a, b DeviceConfig) bool {
	a.Rules, b.Rules = RulesConfig{}, RulesConfig{}
	a.ConfirmTTL, b.ConfirmTTL = nil, nil
	return reflect.DeepEqual(a, b)
}

// group names what device id is opened with: the Modbus line, chip or
// SPI ADC it shares with other devices, or itself alone ("device:ID").
func (c *Config) group(id string) string {
	dc := c.Devices[id]
	switch {
	case dc.Kind == KindModbus:
		return "modbus:" + dc.Bus
	case c.PCA9685Name(dc) != "":
		return "chip:" + c.PCA9685Name(dc)
	}
	if ep, ok, err := c.ExpanderPinOf(dc.Pin); ok && err == nil {
		return "chip:" + ep.Chip
	}
	if adc, ok := dc.SPIADC(); ok {
		return "spi:" + adc.Bus
	}
	return "device:" + id
}

// PCA9685Name is the name of the PCA9685 chip dc sits on, or "".
func (c *Config) PCA9685Name(dc DeviceConfig) string {
	name, _, _ := c.PCA9685(dc)
	return name
}

// shared is the configuration of what id shares with its group: its
// Modbus line's or its chip's settings; nil for a device alone.
func (c *Config) shared(id string) any {
	g := c.group(id)
	kind, name, _ := strings.Cut(g, ":")
	switch kind {
	case "modbus":
		return c.Modbus[name]
	case "chip":
		return c.Chips[name]
	}
	return nil
}

// Groups returns the configuration's devices by what they are opened with
// (group), each group's ids sorted: a reload closes and opens a group as
// a whole.
func (c *Config) Groups() map[string][]string {
	out := map[string][]string{}
	for _, id := range slices.Sorted(maps.Keys(c.Devices)) {
		g := c.group(id)
		out[g] = append(out[g], id)
	}
	return out
}

// Subset is c with only the devices ids: what hardware.Build opens for
// one group during a reload. The rest is shared with c.
func (c *Config) Subset(ids []string) *Config {
	sub := *c
	sub.Devices = make(map[string]DeviceConfig, len(ids))
	for _, id := range ids {
		sub.Devices[id] = c.Devices[id]
	}
	return &sub
}

// simDevices are the sim board's entries whose change reaches the
// devices themselves (risk, safe value): the sim bench is built once, so
// they wait for a restart.
func simDevices(old, new *Config) []string {
	od, nd := map[string]any{}, map[string]any{}
	for _, d := range old.Descriptors() {
		od[d.ID] = d
	}
	for _, d := range new.Descriptors() {
		nd[d.ID] = d
	}
	var out []string
	for _, id := range changedKeys(od, nd) {
		out = append(out, "devices."+id)
	}
	return out
}

// compareAdapters compares the adapters enabled and their settings.
func compareAdapters(old, new *Config) (started, stopped, changed []string) {
	os, ns := old.AdapterSettings(), new.AdapterSettings()
	for _, name := range new.Adapters.Enabled {
		switch {
		case !slices.Contains(old.Adapters.Enabled, name):
			started = append(started, name)
		case string(os[name]) != string(ns[name]):
			changed = append(changed, name)
		}
	}
	for _, name := range old.Adapters.Enabled {
		if !slices.Contains(new.Adapters.Enabled, name) {
			stopped = append(stopped, name)
		}
	}
	slices.Sort(started)
	slices.Sort(stopped)
	slices.Sort(changed)
	return started, stopped, changed
}

// changedKeys are the keys of a and b whose values differ, or that one of
// them lacks, sorted.
func changedKeys[V any](a, b map[string]V) []string {
	var out []string
	for k, av := range a {
		if bv, ok := b[k]; !ok || !reflect.DeepEqual(av, bv) {
			out = append(out, k)
		}
	}
	for k := range b {
		if _, ok := a[k]; !ok {
			out = append(out, k)
		}
	}
	slices.Sort(out)
	return out
}
