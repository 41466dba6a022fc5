package discovery

import (
	"context"
	"fmt"
	"log/slog"
	"net"
	"slices"
	"sync"

	"github.com/godbus/dbus/v5"
	"github.com/holoplot/go-avahi"
)

// viaAvahi publishes through avahi-daemon's D-Bus API: one entry group
// for all the services. D-Bus rather than a file under
// /etc/avahi/services: the TXT record carries the fingerprint of a
// certificate the gateway may make at its first start, which no file the
// package installs can know, the gateway's user may not write that
// folder, and avahi withdraws an entry group by itself when the gateway's
// bus connection ends, a crash included.
type viaAvahi struct {
	log    *slog.Logger
	mu     sync.Mutex
	server *avahi.Server
	group  *avahi.EntryGroup
	svcs   []Service // as published, renamed after a collision
	owner  chan *dbus.Signal
	done   chan struct{} // closed by Close: ends follow
	wg     sync.WaitGroup
}

// Avahi's "any interface" and "any protocol".
const (
	avahiIfaceUnspec = -1
	avahiProtoUnspec = -1
)

// NewAvahi connects to avahi-daemon on the system bus
// ($DBUS_SYSTEM_BUS_ADDRESS, else the standard socket), and fails when
// there is no bus or no avahi on it.
func NewAvahi(log *slog.Logger) (Publisher, error) {
	conn, err := dbus.ConnectSystemBus()
	if err != nil {
		return nil, fmt.Errorf("connect to the system D-Bus: %w", err)
	}
	var owned bool
	if err := conn.BusObject().Call("org.freedesktop.DBus.NameHasOwner", 0, "org.freedesktop.Avahi").Store(&owned); err != nil || !owned {
		conn.Close()
		if err == nil {
			err = fmt.Errorf("avahi-daemon is not on the system bus")
		}
		return nil, fmt.Errorf("find avahi-daemon: %w", err)
	}
	// avahi-daemon restarted (an upgrade) forgets our services: the bus
	// says when its name has a new owner, and they are published again.
	owner := make(chan *dbus.Signal, 8)
	conn.Signal(owner)
	if err := conn.AddMatchSignal(dbus.WithMatchInterface("org.freedesktop.DBus"), dbus.WithMatchMember("NameOwnerChanged"),
		dbus.WithMatchArg(0, "org.freedesktop.Avahi")); err != nil {
		conn.Close()
		return nil, fmt.Errorf("follow avahi-daemon on the bus: %w", err)
	}
	server, err := avahi.ServerNew(conn)
	if err != nil {
		conn.Close()
		return nil, fmt.Errorf("connect to avahi-daemon: %w", err)
	}
	return &viaAvahi{log: log, server: server, owner: owner, done: make(chan struct{})}, nil
}

func (a *viaAvahi) Name() string { return "avahi" }

// Publish replaces the entry group's services with svcs.
func (a *viaAvahi) Publish(_ context.Context, svcs []Service) error {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.group == nil {
		g, err := a.server.EntryGroupNew()
		if err != nil {
			return fmt.Errorf("avahi: new entry group: %w", err)
		}
		a.group = g
		a.wg.Add(1)
		go a.follow()
	}
	a.svcs = slices.Clone(svcs)
	return a.commit()
}

// commit puts a.svcs in the entry group in place of what it held.
func (a *viaAvahi) commit() error {
	if err := a.group.Reset(); err != nil {
		return fmt.Errorf("avahi: withdraw services: %w", err)
	}
	if len(a.svcs) == 0 {
		return nil
	}
	for _, s := range a.svcs {
		if err := a.group.AddService(avahiIface(s), avahiProtoUnspec, 0, s.Name, s.Type, "local", "", uint16(s.Port), txtRecord(s.Text)); err != nil {
			return fmt.Errorf("avahi: add %s %q: %w", s.Type, s.Name, err)
		}
	}
	if err := a.group.Commit(); err != nil {
		return fmt.Errorf("avahi: commit services: %w", err)
	}
	return nil
}

// follow reads the entry group's states and avahi's comings and goings
// until Close. Avahi withdraws a group whose name another host holds and
// leaves the choice of another to us: the name avahi proposes ("bench
// #2"), as its own tools do.
func (a *viaAvahi) follow() {
	defer a.wg.Done()
	for {
		a.mu.Lock()
		states := a.group.StateChangeChannel // a new group after a restart
		a.mu.Unlock()
		select {
		case <-a.done:
			return
		case sig := <-a.owner:
			if newOwner(sig) {
				a.restarted()
			}
		case st := <-states:
			switch st.State {
			case avahi.EntryGroupCollision:
				a.rename()
			case avahi.EntryGroupFailure:
				a.log.Error("announce: avahi withdrew the services", "err", st.Error)
			}
		}
	}
}

// newOwner reports whether sig says avahi-daemon is on the bus again
// (NameOwnerChanged with a new owner).
func newOwner(sig *dbus.Signal) bool {
	if sig == nil || sig.Name != "org.freedesktop.DBus.NameOwnerChanged" || len(sig.Body) != 3 {
		return false
	}
	name, _ := sig.Body[0].(string)
	owner, _ := sig.Body[2].(string)
	return name == "org.freedesktop.Avahi" && owner != ""
}

// restarted publishes the services again in a new entry group: the old
// one went with the avahi-daemon that held it.
func (a *viaAvahi) restarted() {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.server.EntryGroupFree(a.group)
	g, err := a.server.EntryGroupNew()
	if err != nil {
		a.log.Error("announce: avahi-daemon restarted; not announced again", "err", err)
		return
	}
	a.group = g
	if err := a.commit(); err != nil {
		a.log.Error("announce: avahi-daemon restarted; not announced again", "err", err)
		return
	}
	a.log.Info("announce: avahi-daemon restarted; announced again", "services", len(a.svcs))
}

// rename takes avahi's alternative to the name in use and publishes again.
func (a *viaAvahi) rename() {
	a.mu.Lock()
	defer a.mu.Unlock()
	if len(a.svcs) == 0 {
		return
	}
	old := a.svcs[0].Name
	alt, err := a.server.GetAlternativeServiceName(old)
	if err != nil {
		a.log.Error("announce: the name is taken on the LAN and avahi proposed no other", "name", old, "err", err)
		return
	}
	for i := range a.svcs {
		a.svcs[i].Name = alt
	}
	a.log.Warn("announce: the name is taken on the LAN; announced under another", "name", old, "now", alt)
	if err := a.commit(); err != nil {
		a.log.Error("announce: not announced", "via", "avahi", "err", err)
	}
}

// Close withdraws the services and leaves the bus.
func (a *viaAvahi) Close() error {
	close(a.done)
	a.wg.Wait()
	a.mu.Lock()
	defer a.mu.Unlock()
	var err error
	if a.group != nil {
		err = a.group.Reset()
		a.server.EntryGroupFree(a.group)
		a.group = nil
	}
	a.server.Close()
	if err != nil {
		return fmt.Errorf("avahi: withdraw services: %w", err)
	}
	return nil
}

// avahiIface is the interface index of a service bound to one address.
func avahiIface(s Service) int32 {
	names := interfacesOf(s.Addr)
	if len(names) == 0 {
		return avahiIfaceUnspec
	}
	ifc, err := net.InterfaceByName(names[0])
	if err != nil {
		return avahiIfaceUnspec
	}
	return int32(ifc.Index)
}

// txtRecord is t as DNS-SD's key=value strings, sorted for a stable
// record.
func txtRecord(t map[string]string) [][]byte {
	keys := make([]string, 0, len(t))
	for k := range t {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	out := make([][]byte, 0, len(keys))
	for _, k := range keys {
		out = append(out, []byte(k+"="+t[k]))
	}
	return out
}
