package openhal

import "fmt"

// Scope is what a principal may do, ordered read < control_low <
// control_high < admin (spec §4).
type Scope string

const (
	ScopeRead        Scope = "read"
	ScopeControlLow  Scope = "control_low"
	ScopeControlHigh Scope = "control_high"
	ScopeAdmin       Scope = "admin"
)

var scopeRank = map[Scope]int{ScopeRead: 1, ScopeControlLow: 2, ScopeControlHigh: 3, ScopeAdmin: 4}

// ParseScope checks a scope's name.
func ParseScope(s string) (Scope, error) {
	if _, ok := scopeRank[Scope(s)]; !ok {
		return "", fmt.Errorf("unknown scope %q (want read, control_low, control_high or admin)", s)
	}
	return Scope(s), nil
}

// AtLeast reports whether s includes everything min allows.
func (s Scope) AtLeast(min Scope) bool { return scopeRank[s] >= scopeRank[min] && scopeRank[s] > 0 }

// Principal kinds.
const (
	KindAgent    = "agent"
	KindOperator = "operator"
	KindService  = "service"
	KindAdapter  = "adapter"
	KindHub      = "hub"
)

// ParseKind checks a principal kind that a token may carry (adapter and
// hub principals are the gateway's own and have no tokens).
func ParseKind(s string) (string, error) {
	switch s {
	case KindAgent, KindOperator, KindService:
		return s, nil
	}
	return "", fmt.Errorf("unknown principal kind %q (want agent, operator or service)", s)
}
