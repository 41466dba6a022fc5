package systemd

import (
	"context"
	"fmt"
	"log/slog"
	"net"
	"sort"
	"sync"

	"github.com/coreos/go-systemd/v22/activation"
)

// Sockets are the listening sockets systemd passed by socket activation
// (LISTEN_FDS, LISTEN_FDNAMES), by their FileDescriptorName. The gateway
// asks for "http" (gateway.socket) and "tcp" (gateway-tcp.socket); a name
// systemd did not pass falls back to a listener of the gateway's own.
type Sockets struct {
	log *slog.Logger

	mu     sync.Mutex
	byName map[string][]net.Listener
}

// ActivatedSockets takes the sockets systemd passed to this process and
// removes LISTEN_* from the environment, so that no child sees them.
// Without socket activation it returns an empty Sockets.
func ActivatedSockets(log *slog.Logger) (*Sockets, error) {
	if log == nil {
		log = slog.Default()
	}
	byName, err := activation.ListenersWithNames()
	if err != nil {
		return nil, fmt.Errorf("socket activation: %w", err)
	}
	return &Sockets{log: log, byName: byName}, nil
}

// Has reports whether systemd passed a socket named name that is not yet
// taken.
func (s *Sockets) Has(name string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.byName[name]) > 0
}

// Listen returns the socket systemd passed as name, or else a listener of
// its own on network and addr. It reports which it was. A name passed
// with several sockets gives the first; the others are closed by Close.
func (s *Sockets) Listen(ctx context.Context, name, network, addr string) (ln net.Listener, activated bool, err error) {
	s.mu.Lock()
	if l := s.byName[name]; len(l) > 0 {
		s.byName[name] = l[1:]
		if len(s.byName[name]) == 0 {
			delete(s.byName, name)
		}
		s.mu.Unlock()
		return l[0], true, nil
	}
	s.mu.Unlock()
	var lc net.ListenConfig
	ln, err = lc.Listen(ctx, network, addr)
	if err != nil {
		return nil, false, fmt.Errorf("listen %s %s: %w", name, addr, err)
	}
	return ln, false, nil
}

// CloseUnused closes every passed socket that Listen did not take, and
// logs each: a unit that passes a socket the configuration does not use
// is a mistake to see, not a port left open with nobody answering.
// It returns the names closed, sorted.
func (s *Sockets) CloseUnused() []string {
	s.mu.Lock()
	byName := s.byName
	s.byName = map[string][]net.Listener{}
	s.mu.Unlock()
	var names []string
	for name, lns := range byName {
		for _, ln := range lns {
			s.log.Warn("socket passed by systemd is not used; closed", "name", name, "addr", ln.Addr().String())
			ln.Close()
		}
		names = append(names, name)
	}
	sort.Strings(names)
	return names
}
