// Package adapter is for writing an oxidepmd protocol-1 adapter in Go:
// an executable that the gateway (or oxidepmd) starts, and that speaks
// JSON-RPC 2.0 over its standard input and output, one object a line.
//
// An author fills an Adapter with a name, a version and the callbacks the
// adapter needs, and calls Main from func main. The package does the rest
// of the protocol: it stays silent until initialize, answers it with the
// highest shared protocol, answers ping, obeys cancel and shutdown,
// delivers events in order, runs each device request on a goroutine of its
// own, and numbers and matches the adapter's own requests to the daemon
// (Conn.Call and the typed helpers). Run does the same over any reader and
// writer, so that an adapter is tested over pipes (the package's Example
// drives one as the supervisor does).
//
// See README.md beside this file for an example and for how to build and
// install an adapter.
//
// # Stability
//
// This is the gateway's adapter SDK, for programs in modules of their
// own. Stable: the fields and callbacks of Adapter and when each is
// called; Main's exit codes; Run; the methods of Conn; Event, Reading,
// Value and WriteResult; Error, CodeFailed and the sentinel errors, for
// errors.Is and errors.As. What may change: the wording of the package's
// errors and log lines, and the defaults of what the daemon does not set.
// The package grows by adding: new callbacks and Conn methods as the
// protocol's extensions grow, so an Adapter literal is built with named
// fields.
//
// Versions: the package speaks adapter protocol 1 (adapterproto.Protocol)
// and says so in initialize. A later protocol would be negotiated there,
// so an adapter built today keeps working with any daemon that still
// offers protocol 1. The module has no v1 yet; until it has, this promise
// is the project's rule rather than semantic versioning's.
package adapter
