// Package openhal holds the wire vocabulary of the OpenHAL protocol v0.1:
// method and notification names, error codes and reasons, scopes,
// conformance levels and the shapes of params and results. Both the Hub
// (the gateway's internal/halhub) and its clients (package halclient)
// speak it. The answers of the gateway's own gateway/* methods, which are
// not OpenHAL's, are in package openhal/gatewayext.
//
// Where the spec leaves a choice open, and where the gateway adds to it
// (bootId and stopped in hal/initialize, devSeq, noSafeReason...), the
// field's comment says so; docs/protocol.md has each choice and its
// reason.
//
// # Stability
//
// The names, codes and reasons, and the JSON each type encodes to and
// decodes from, are the protocol's: they are stable for as long as
// Version is "0.1", and a type keeps them whatever Go type a field has.
// The gateway may add optional members to a result or params (the spec
// allows it): a Go struct here may gain fields, so build one with named
// fields. The helpers (AppendJSON, CodeName, the Parse functions) are
// stable too.
//
// Versions: Version is the one protocol version this package describes.
// A later protocol would be described beside it, not by changing what
// 0.1's types mean. The module has no v1 yet; until it has, this promise
// is the project's rule rather than semantic versioning's.
package openhal
