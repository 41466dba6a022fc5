package halhub

import (
	"fmt"
	"unicode/utf8"

	"github.com/openhal/gateway/jsonrpc"
	"github.com/openhal/gateway/openhal"
)

// checkReason refuses a reason longer than MaxReasonBytes (spec §7): a
// reason is kept with a write's audit entry, a pending request and the
// notifications about it, so a client must not be able to make it
// large. It names the param, as every INVALID_PARAMS about one does.
func checkReason(reason string) *jsonrpc.Error {
	if len(reason) <= openhal.MaxReasonBytes {
		return nil
	}
	return newError(openhal.CodeInvalidParams, "too_long",
		fmt.Sprintf("params.reason: %d bytes, and a reason is at most %d bytes of UTF-8", len(reason), openhal.MaxReasonBytes),
		errorData{"param": "reason", "maxBytes": openhal.MaxReasonBytes})
}

// cutReason shortens a reason to MaxReasonBytes at a character boundary,
// for hal/stop, which is never refused for its reason: an operator's stop
// with a long explanation still stops everything.
func cutReason(reason string) string {
	if len(reason) <= openhal.MaxReasonBytes {
		return reason
	}
	cut := openhal.MaxReasonBytes
	for cut > 0 && !utf8.RuneStart(reason[cut]) {
		cut--
	}
	return reason[:cut]
}
