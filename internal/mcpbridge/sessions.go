package mcpbridge

import (
	"sync"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// maxSessions bounds the MCP sessions one token holds at /mcp. A session
// costs the gateway some 30 KiB until its idle timeout (30 minutes by
// default), and nothing else bounds how many a token opens: an agent that
// starts a new session for each task and never ends one (or a token used
// against the gateway) would grow it without end. 32 is far more than the
// few clients an agent's token serves at once.
const maxSessions = 32

// sessionSet remembers when each session of one token's MCP server was
// last used, so that past maxSessions the least recently used is closed:
// its client's next request is answered 404, and a client starts a new
// session on a 404 (Streamable HTTP), where a refusal (503) would lock
// the token's agents out until a session timed out.
type sessionSet struct {
	mu   sync.Mutex
	tick uint64            // counts uses
	used map[string]uint64 // by session id: the tick of its last use
}

func newSessionSet() *sessionSet { return &sessionSet{used: map[string]uint64{}} }

// add notes a session just made.
func (s *sessionSet) add(id string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.tick++
	s.used[id] = s.tick
}

// touch notes a use of the session id, if it is one of the set's: an id
// a request names is anyone's guess, and is not remembered.
func (s *sessionSet) touch(id string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := s.used[id]; ok {
		s.tick++
		s.used[id] = s.tick
	}
}

// bound closes the least recently used sessions of server until at most
// max are left. Sessions not yet touched are being made by a request in
// flight: they count, but are not closed. Ids of sessions that ended by
// themselves (DELETE, idle timeout) are forgotten.
func (s *sessionSet) bound(server *mcp.Server, max int) {
	live := map[string]*mcp.ServerSession{}
	for ss := range server.Sessions() {
		if id := ss.ID(); id != "" { // "": a stateless request's session
			live[id] = ss
		}
	}
	s.mu.Lock()
	for id := range s.used {
		if live[id] == nil {
			delete(s.used, id)
		}
	}
	var closing []*mcp.ServerSession
	for n := len(live); n > max; n-- {
		oldest := ""
		for id, tick := range s.used {
			if oldest == "" || tick < s.used[oldest] {
				oldest = id
			}
		}
		if oldest == "" {
			break
		}
		closing = append(closing, live[oldest])
		delete(s.used, oldest)
	}
	s.mu.Unlock()
	for _, ss := range closing {
		go ss.Close() // it waits for the session's calls in flight
	}
}

// closeAll closes every session of server: its bridge has ended, and a
// client is better told at once (404: start a new session) than kept on
// a session whose calls can only fail. It does not wait: a session's
// Close waits for its calls in flight, which end once the bridge is closed
// (a call waiting for a value ends when the connection does).
func (s *sessionSet) closeAll(server *mcp.Server) {
	for ss := range server.Sessions() {
		go ss.Close()
	}
	s.mu.Lock()
	clear(s.used)
	s.mu.Unlock()
}
