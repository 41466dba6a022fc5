package mcpbridge

import (
	"context"
	"maps"
	"slices"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestSessionSetBound: past the bound the least recently used sessions
// are closed, not the oldest; an id no session has is not remembered.
func TestSessionSetBound(t *testing.T) {
	server := mcp.NewServer(&mcp.Implementation{Name: "test", Version: "1"}, nil)
	s := newSessionSet()
	for _, id := range []string{"a", "b", "c", "d"} {
		ss, err := server.Connect(context.Background(), &mcp.StreamableServerTransport{SessionID: id}, nil)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { ss.Close() })
		s.add(id)
	}
	s.touch("a")
	s.touch("forged")
	s.mu.Lock()
	_, forged := s.used["forged"]
	s.mu.Unlock()
	if forged {
		t.Errorf("a request's id of no session is remembered")
	}
	s.bound(server, 2)
	s.mu.Lock()
	kept := slices.Sorted(maps.Keys(s.used))
	s.mu.Unlock()
	if !slices.Equal(kept, []string{"a", "d"}) {
		t.Errorf("kept %v, want [a d]: a used last, d made last", kept)
	}
}
