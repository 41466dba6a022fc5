package openhal

import (
	"encoding/json"
	"time"
)

// Confirmation statuses (spec §7).
const (
	ConfirmPending   = "pending"
	ConfirmApproved  = "approved"
	ConfirmRejected  = "rejected"
	ConfirmCancelled = "cancelled"
	ConfirmExpired   = "expired"
	ConfirmFailed    = "failed"
	// ConfirmSuperseded: a write applied to the device after the request
	// was made, or a newer request of its creator for the device, took
	// its place (SupersededBy says which); approving it applies nothing.
	ConfirmSuperseded = "superseded"
)

// ConfirmStatuses are the statuses a Confirmation Request can have, in
// the order a request lives them: the values hal/confirmations/list
// filters on.
var ConfirmStatuses = []string{
	ConfirmPending, ConfirmApproved, ConfirmRejected, ConfirmCancelled,
	ConfirmExpired, ConfirmFailed, ConfirmSuperseded,
}

// Confirmation is a Confirmation Request as clients see it.
type Confirmation struct {
	ID          string     `json:"id"`
	Device      string     `json:"device"`
	Value       any        `json:"value"`
	RequestedBy Principal  `json:"requestedBy"`
	Reason      string     `json:"reason,omitempty"`
	Status      string     `json:"status"`
	CreatedAt   time.Time  `json:"createdAt"`
	ExpiresAt   time.Time  `json:"expiresAt"`
	ResolvedAt  *time.Time `json:"resolvedAt,omitempty"`
	ApprovedBy  *Principal `json:"approvedBy,omitempty"`
	RejectedBy  *Principal `json:"rejectedBy,omitempty"`
	// ResolveReason is why it was rejected ("emergency_stop", an admin's
	// words).
	ResolveReason string `json:"resolveReason,omitempty"`
	// Error is why an approved write failed (status "failed").
	Error *ErrorObject `json:"error,omitempty"`
	// Result is the applied write of an approved request.
	Result *WriteResult `json:"result,omitempty"`
	// SupersededBy is what took the place of a superseded request.
	SupersededBy *SupersededBy `json:"supersededBy,omitempty"`
	// Current is the device's value when the Hub answered, beside the
	// value asked for: sent with a pending request in the answers of
	// hal/confirmations/list (a gateway extension), so that an approver
	// sees what approving would change. Absent while the device has no
	// value yet.
	Current *CurrentValue `json:"current,omitempty"`
}

// SupersededBy says what superseded a Confirmation Request (spec §7):
// either a write applied to its device after it was made, by Principal,
// of Value, at TS, with that value's Seq and DevSeq (and Confirmation,
// when the write carried out another request's approval); or a newer
// request of its creator for the same device, which Request names (then
// nothing was applied: TS is the newer request's, and no Seq).
type SupersededBy struct {
	Principal    Principal `json:"principal"`
	Value        any       `json:"value"`
	TS           time.Time `json:"ts"`
	Seq          uint64    `json:"seq,omitempty"` // as in ValueResult
	DevSeq       uint64    `json:"devSeq,omitempty"`
	Confirmation string    `json:"confirmation,omitempty"`
	Request      string    `json:"request,omitempty"`
}

// CurrentValue is a device's value as a Confirmation Request shows it.
type CurrentValue struct {
	Value  any       `json:"value"`
	TS     time.Time `json:"ts"`
	Seq    uint64    `json:"seq,omitempty"` // as in ValueResult
	DevSeq uint64    `json:"devSeq,omitempty"`
}

// ErrorObject is an error as it appears inside a result or notification.
type ErrorObject struct {
	Code    int64           `json:"code"`
	Message string          `json:"message"`
	Data    json.RawMessage `json:"data,omitempty"`
}

// PendingResult is the answer to a hal/write that waits for a confirmation.
type PendingResult struct {
	Status       string       `json:"status"` // "pending"
	Confirmation Confirmation `json:"confirmation"`
}

// ConfirmationParams name a confirmation (approve, cancel).
type ConfirmationParams struct {
	ID string `json:"id"`
}

// RejectParams are the params of hal/confirmations/reject.
type RejectParams struct {
	ID     string `json:"id"`
	Reason string `json:"reason,omitempty"`
}

// ConfirmationsListParams filter hal/confirmations/list and choose its
// page: the requests after the id After (none: from the first), at most
// Limit of them (none: as many as fit in one message).
type ConfirmationsListParams struct {
	Status string `json:"status,omitempty"`
	After  string `json:"after,omitempty"`
	Limit  *int   `json:"limit,omitempty"`
}

// ConfirmationsListResult is one page of hal/confirmations/list, by id.
// Next is set when more follow: the After of the next page.
type ConfirmationsListResult struct {
	Confirmations []Confirmation `json:"confirmations"`
	Next          string         `json:"next,omitempty"`
}

// Bounds on what a client may make the Hub keep (spec §7).
const (
	// MaxReasonBytes bounds the reason of a write, a stop or a
	// rejection, in bytes of UTF-8.
	MaxReasonBytes = 1024
	// MaxPendingPerPrincipal and MaxPending bound the Confirmation
	// Requests waiting for an admin; past them a write that needs one is
	// BUSY (data.reason "confirmations_full").
	MaxPendingPerPrincipal = 16
	MaxPending             = 256
	// MaxConfirmValueBytes bounds the value a Confirmation Request holds,
	// as compact JSON.
	MaxConfirmValueBytes = 4096
	// MaxConfirmationsPage is the largest limit of hal/confirmations/list.
	MaxConfirmationsPage = 1000
)

// ConfirmationNotice is the params of hal/confirmationRequested and
// hal/confirmationResolved.
type ConfirmationNotice struct {
	Confirmation Confirmation `json:"confirmation"`
}

// StopParams are the params of hal/stop.
type StopParams struct {
	Reason string `json:"reason,omitempty"`
}

// SafeFailure is a device that did not reach its safe value.
type SafeFailure struct {
	Device string      `json:"device"`
	Error  ErrorObject `json:"error"`
}

// LeftAsIs is a device a stop did not drive because it has no safe
// value, and why (a gateway extension of the stop's result): a person
// reading the result learns what is still as it was.
type LeftAsIs struct {
	Device string `json:"device"`
	Reason string `json:"reason"`
}

// StopResult is the answer to hal/stop.
type StopResult struct {
	Stopped bool `json:"stopped"`
	// AlreadyStopped says that the stop was engaged before this one,
	// which drove the safe values again (an extension of the spec's
	// result, left out when false).
	AlreadyStopped bool          `json:"alreadyStopped,omitempty"`
	SafeApplied    []string      `json:"safeApplied"`
	Failed         []SafeFailure `json:"failed"`
	LeftAsIs       []LeftAsIs    `json:"leftAsIs"`
	DiskTrouble
}

// DiskTrouble says what of a stop the gateway could not write to its state
// directory (gone, unwritable, full). The stop holds in memory all the
// same: writes are refused and the safe values were driven.
type DiskTrouble struct {
	// LatchFailed is why the stop is not latched in the state directory;
	// the gateway writes the latch as soon as the directory is usable.
	LatchFailed string `json:"latchFailed,omitempty"`
	// AuditFailed is why the stop (or one of its safe values) is not in
	// the audit log.
	AuditFailed string `json:"auditFailed,omitempty"`
}

// StoppedParams are the params of hal/stopped.
type StoppedParams struct {
	Principal   Principal     `json:"principal"`
	Reason      string        `json:"reason"`
	TS          time.Time     `json:"ts"`
	SafeApplied []string      `json:"safeApplied"`
	Failed      []SafeFailure `json:"failed"`
	LeftAsIs    []LeftAsIs    `json:"leftAsIs"`
	DiskTrouble
}

// ResumeResult is the answer to hal/resume.
type ResumeResult struct {
	Stopped bool `json:"stopped"`
	// WasStopped says whether this resume lifted a stop: false when the
	// Hub was not stopped, and nothing changed (an extension of the
	// spec's result; a Hub without it leaves it out).
	WasStopped bool `json:"wasStopped"`
}

// ResumedParams are the params of hal/resumed.
type ResumedParams struct {
	Principal Principal `json:"principal"`
	TS        time.Time `json:"ts"`
}

// BlockedParams are the params of hal/blocked.
type BlockedParams struct {
	Device    string    `json:"device"`
	Value     any       `json:"value"`
	Principal Principal `json:"principal"`
	Rule      string    `json:"rule"`
	Reason    string    `json:"reason"`
	TS        time.Time `json:"ts"`
}

// Rule names in BLOCKED errors and hal/blocked.
const (
	RuleMinimum   = "minimum"
	RuleMaximum   = "maximum"
	RuleRateLimit = "rateLimit"
	RuleInterlock = "interlock"
	RuleMaxOn     = "maxOnMs"
)

// AuditListParams are the params of hal/audit/list.
type AuditListParams struct {
	Since *uint64 `json:"since,omitempty"`
	Limit *int    `json:"limit,omitempty"`
}

// AuditListResult is the answer to hal/audit/list: the entries as they are
// on disk, as many as fit in one message, and Next, the seq to pass as
// since for the next page, when more remain.
type AuditListResult struct {
	Entries []json.RawMessage `json:"entries"`
	Skipped int               `json:"skipped,omitempty"`
	Next    *uint64           `json:"next,omitempty"`
}
