// Package gatewayext is the gateway's own wire vocabulary beyond OpenHAL
// 0.1 (package openhal): the names, params and answers of its extension
// methods under "gateway/" (docs/protocol.md, "Extension methods"), the
// entries of its audit log as hal/audit/list returns them, and what it
// announces on the LAN (docs/discovery.md). The gateway encodes these
// very types, so a client that wants gateway/values or gateway/status
// imports this package and halclient, and nothing of the gateway's
// inside:
//
//	var res gatewayext.ValuesResult
//	err := conn.Call(ctx, gatewayext.MethodValues, nil, &res)
//
// # Stability
//
// The wire is stable for as long as the gateway speaks OpenHAL 0.1: a
// method keeps its name, params and scope, and a field keeps its JSON
// name, type and meaning. Answers may gain fields, which a client that
// decodes with encoding/json ignores until it knows them; none is
// removed or renamed. Enumerations (an adapter's state, why it failed, a
// series' kind) are strings, so that a value added later decodes as a
// string the client does not know yet rather than failing the answer.
//
// The Go API follows the wire: a struct gains a field when its answer
// does (write composite literals with field names), and existing fields
// keep their Go names and types. A change that breaks either comes with
// a new protocol version, not within this one.
package gatewayext

// Prefix starts the name of every extension method: openhal-0.1 leaves
// the names outside hal/ to the implementation.
const Prefix = "gateway/"

// The extension methods, with the scope each needs (docs/protocol.md).
const (
	// MethodStatus (scope read) answers Status: what `gateway status` adds
	// to the protocol's own methods.
	MethodStatus = Prefix + "status"
	// MethodValues (scope read, the token's devices) answers
	// ValuesResult: the last known value of each readable device, from
	// the Hub's memory; it reads no device.
	MethodValues = Prefix + "values"
	// MethodHistory (scope read, the token's devices) takes HistoryParams
	// and answers a HistoryPage of one device's recent values.
	MethodHistory = Prefix + "history"
	// MethodAdaptersStatus (admin, not limited to some devices) takes
	// AdapterParams (the name may be empty: every adapter) and answers
	// AdaptersResult.
	MethodAdaptersStatus = Prefix + "adapters.status"
	// MethodAdaptersReset and MethodAdaptersReload (admin, not limited to
	// some devices) take AdapterParams and answer AdapterResult, the
	// adapter's status after the reset (a failed adapter may start
	// again) or the reload (its install applied to the running gateway).
	MethodAdaptersReset  = Prefix + "adapters.reset"
	MethodAdaptersReload = Prefix + "adapters.reload"
	// MethodAdaptersLogs (admin, not limited to some devices) takes
	// AdapterLogsParams and answers AdapterLogs.
	MethodAdaptersLogs = Prefix + "adapters.logs"
)

// Reasons in the data of the adapter methods' error answers
// (halclient.HubError.Reason).
const (
	// ReasonAdapterNotEnabled: the configuration does not enable the
	// adapter named (adapters.enabled); INVALID_PARAMS.
	ReasonAdapterNotEnabled = "adapter_not_enabled"
	// ReasonAdapterRefused: the adapter's state does not allow the
	// operation (a reset of an adapter that is not failed);
	// INVALID_REQUEST.
	ReasonAdapterRefused = "adapter_refused"
	// ReasonLogUnreadable: the adapter's log files could not be read.
	ReasonLogUnreadable = "log_unreadable"
)
