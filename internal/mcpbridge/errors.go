package mcpbridge

import (
	"context"
	"errors"
	"fmt"

	"github.com/openhal/gateway/halclient"
	"github.com/openhal/gateway/jsonrpc"
	"github.com/openhal/gateway/openhal"
)

// toolError turns an error of the Hub into a tool error a model can act
// on: what happened, in the Hub's words, and what to do next. The MCP SDK
// sends it as a result with isError set (not a protocol error), which is
// what a model sees and reasons about.
func (b *Bridge) toolError(err error, method, dev string) error {
	var je *jsonrpc.Error
	if !errors.As(err, &je) {
		if errors.Is(err, context.DeadlineExceeded) {
			return errors.New("TIMEOUT: the gateway did not answer in time. Its state is unknown: read the device before trying again")
		}
		return fmt.Errorf("the gateway cannot be reached: %v. Try again later; if it persists, tell the user", err)
	}
	he, ok := err.(*halclient.HubError)
	if !ok {
		he = halclient.Describe(je, method, dev).(*halclient.HubError)
	}
	he.Plain = true
	name := openhal.CodeName(je.Code)
	if name == "" {
		name = fmt.Sprintf("error %d", je.Code)
	}
	return fmt.Errorf("%s: %s. %s", name, he.Error(), b.advice(he))
}

// advice is what to do after an error of the Hub.
func (b *Bridge) advice(he *halclient.HubError) string {
	switch he.Code() {
	case openhal.CodeStopped:
		return "The emergency stop is engaged: only safe values can be written until a person lifts it (`gateway resume` or the console). Do not retry; tell the user."
	case openhal.CodeBlocked:
		return "A safety rule of the bench refused it, and nothing was changed. Choose another value, or wait until the rule's condition holds (read the devices it names); do not work around the rule."
	case openhal.CodeForbidden:
		if he.Reason() == "scope" {
			return "This token's scope does not allow it. A person decides scopes: ask the user if this is needed."
		}
		return "The gateway does not let this agent do it. A person decides what agents may do: ask the user if this is needed."
	case openhal.CodeDeviceNotFound:
		return "list_devices shows the devices this token sees."
	case openhal.CodeDeviceFault:
		return "The device or its adapter failed; its state is shown by list_devices. A person may need to look at the hardware; tell the user."
	case openhal.CodeTimeout:
		return "The device did not answer in time: the outcome is unknown and the device is in fault. Read it before doing anything else."
	case openhal.CodeNotSupported:
		return "list_devices says which devices are readable and writable."
	case openhal.CodeInvalidParams:
		return "Nothing was changed. list_devices gives each device's type and range."
	case openhal.CodeBusy:
		if he.Reason() == "confirmations_full" {
			return "Too many of this agent's requests wait for a person: follow them with confirmation_status before asking for more."
		}
		return "The gateway is busy; try again in a few seconds."
	case openhal.CodeUnauthorized:
		return "The gateway no longer accepts this agent's token (revoked?). A person must give it a new one."
	case openhal.CodeConfirmationNotFound:
		return "Check the id: it is the one a pending write returned."
	}
	return "Tell the user if it persists."
}
