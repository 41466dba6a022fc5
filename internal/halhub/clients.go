package halhub

import "github.com/openhal/gateway/openhal"

// ClientCounts are the connections that completed hal/initialize, in all
// and by their token's scope: what `gateway status` shows of who is
// connected, without naming anyone.
type ClientCounts struct {
	Total   int                   `json:"total"`
	ByScope map[openhal.Scope]int `json:"byScope"`
}

// Clients counts the connections that completed hal/initialize, the
// in-process ones (adapters) included; a connection still authenticating
// is not a client yet.
func (h *Hub) Clients() ClientCounts {
	h.mu.RLock()
	all := make([]*session, 0, len(h.sessions))
	for s := range h.sessions {
		all = append(all, s)
	}
	h.mu.RUnlock()
	c := ClientCounts{ByScope: map[openhal.Scope]int{}}
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
