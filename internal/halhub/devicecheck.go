package halhub

import (
	"github.com/openhal/gateway/device"
	"github.com/openhal/gateway/jsonrpc"
)

// checkDeviceValue asks the device about a value that fits its schema
// (device.ValueChecker), after the schema check of a client's write and of
// an approved confirmation's: a value the device cannot apply as asked (a
// line break sent to a line device) is INVALID_PARAMS with data.device and
// the device's reason, like a value the schema refuses, and the device
// never sees it, so it stays ok.
func checkDeviceValue(f found, v any) *jsonrpc.Error {
	if err := device.CheckValue(f.dev, v); err != nil {
		return valueError(f.id, err)
	}
	return nil
}
