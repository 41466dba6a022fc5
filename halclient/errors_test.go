package halclient

import (
	"testing"

	"github.com/openhal/gateway/jsonrpc"
	"github.com/openhal/gateway/openhal"
)

// A HubError says its code's name and reason after the sentence, unless
// Plain: then the sentence, which already says them, stands alone.
func TestHubErrorPlain(t *testing.T) {
	closed := &jsonrpc.Error{Code: openhal.CodeConfirmationClosed, Message: "confirmation c-1 is already approved",
		Data: map[string]any{"reason": "confirmation_closed"}}
	unknown := &jsonrpc.Error{Code: openhal.CodeUnauthorized, Message: "unknown or revoked token",
		Data: map[string]any{"reason": "token_unknown"}}
	missing := &jsonrpc.Error{Code: openhal.CodeUnauthorized, Message: "no token", Data: map[string]any{"reason": "token_missing"}}
	tests := []struct {
		err          *jsonrpc.Error
		method, dev  string
		plain, words string
	}{
		{closed, openhal.MethodConfirmationApprove, "", "confirmation c-1 is already approved",
			"confirmation c-1 is already approved (CONFIRMATION_CLOSED): confirmation_closed"},
		{unknown, openhal.MethodInitialize, "", "the hub refused the token: unknown or revoked token",
			"the hub refused the token (UNAUTHORIZED): token_unknown"},
		{missing, openhal.MethodInitialize, "", "the hub wants a token and none was given",
			"the hub wants a token and none was given (UNAUTHORIZED): token_missing"},
		{&jsonrpc.Error{Code: openhal.CodeMethodNotFound, Message: "x"}, "gw/x", "",
			"the hub does not serve gw/x (unknown to it, or above its conformance level)",
			"the hub does not serve gw/x (unknown to it, or above its conformance level) (METHOD_NOT_FOUND)"},
	}
	for _, tt := range tests {
		he := Describe(tt.err, tt.method, tt.dev).(*HubError)
		if got := he.Error(); got != tt.words {
			t.Errorf("Error() = %q, want %q", got, tt.words)
		}
		he.Plain = true
		if got := he.Error(); got != tt.plain {
			t.Errorf("Plain Error() = %q, want %q", got, tt.plain)
		}
	}
}
