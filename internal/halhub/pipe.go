package halhub

import "net"

// Pipe returns one end of an in-memory connection whose other end the
// Hub serves as it serves a TCP connection, one message per line: a client
// inside the gateway (the MCP bridge on /mcp) talks to the Hub through it
// and is an ordinary client all the same — hal/initialize with its token,
// its slot, its scope and devices, its queue and its notifications. peer is
// the address the client acts for (an HTTP request's remote host): failed
// tokens are rate-limited by it, as they are for a socket of that peer.
// The connection holds no ticket of the budget of connections not yet
// authenticated: the caller initializes it at once, and its own listener
// admitted the peer already. Closing the returned end ends the session.
func (h *Hub) Pipe(peer string) net.Conn {
	client, server := net.Pipe()
	h.serveLine(server, peer, nil)
	return client
}
