package halhub

import (
	"github.com/openhal/gateway/openhal"
	"github.com/openhal/gateway/openhal/gatewayext"
)

// Clients counts the connections that completed hal/initialize, the
// in-process ones (adapters) included, in all and by their token's
// scope: what `gateway status` shows of who is connected (gateway/status),
// without naming anyone. A connection still authenticating is not a
// client yet.
func (h *Hub) Clients() gatewayext.ClientCounts {
	h.mu.RLock()
	all := make([]*session, 0, len(h.sessions))
	for s := range h.sessions {
		all = append(all, s)
	}
	h.mu.RUnlock()
	c := gatewayext.ClientCounts{ByScope: map[openhal.Scope]int{}}
	for _, s := range all {
		if s.phaseIs(phaseNew) {
			continue
		}
		p, _ := s.who()
		c.Total++
		c.ByScope[p.Scope]++
	}
	return c
}
