package gatewayext

import (
	"time"

	"github.com/openhal/gateway/openhal"
)

// AuditEntry is one entry of the gateway's audit log, as hal/audit/list
// answers it (openhal.AuditListResult.Entries, one JSON object each): the
// spec's fields (section 10) and the gateway's own.
type AuditEntry struct {
	// Seq grows with every entry, across restarts, and is never reused.
	Seq       uint64            `json:"seq"`
	TS        time.Time         `json:"ts"`
	Principal openhal.Principal `json:"principal"`
	// Action: "write", "confirm", "approve", "reject", "cancel",
	// "expire", "supersede", "stop", "resume", "token.add",
	// "token.revoke", "initialize", or "count" (below).
	Action string `json:"action"`
	Device string `json:"device,omitempty"`
	// Value is kept when it is false or 0: omitempty drops only a nil
	// interface.
	Value any `json:"value,omitempty"`
	// Outcome: "applied", "blocked", "pending", "approved", "rejected",
	// "cancelled", "expired", "superseded", "failed", "refused",
	// "stopped", "resumed", "unauthorized", "created", "revoked",
	// "counted".
	Outcome      string      `json:"outcome"`
	Rule         string      `json:"rule,omitempty"`
	Confirmation string      `json:"confirmation,omitempty"`
	Reason       string      `json:"reason,omitempty"`
	Error        *AuditError `json:"error,omitempty"` // of a refused or failed request

	// A count entry (action "count") stands for Count requests that were
	// not recorded one by one: the first was at From, the last at To,
	// and By says what they were.
	Count int          `json:"count,omitempty"`
	From  time.Time    `json:"from,omitzero"`
	To    time.Time    `json:"to,omitzero"`
	By    []AuditTally `json:"by,omitempty"`

	// Cut names the fields cut to their bound, by field ("reason",
	// "value", ...), each with the full length and hash of what was
	// there.
	Cut map[string]AuditCut `json:"cut,omitempty"`
}

// AuditError is the error a refused or failed request was answered with.
type AuditError struct {
	Code    int64  `json:"code"`
	Message string `json:"message"`
	Reason  string `json:"reason,omitempty"`
}

// AuditTally is one kind of counted request in a count entry.
type AuditTally struct {
	Action  string `json:"action"`
	Outcome string `json:"outcome"`
	Rule    string `json:"rule,omitempty"`
	Reason  string `json:"reason,omitempty"`
	Count   int    `json:"count"`
}

// AuditCut is what a cut field held: its length and SHA-256 (lowercase
// hex), of its UTF-8 bytes for a string, else of its JSON encoding.
type AuditCut struct {
	Bytes  int    `json:"bytes"`
	SHA256 string `json:"sha256"`
}
