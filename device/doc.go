// Package device holds what every part of the gateway speaks about a
// Device: its descriptor, its value schema, and the small interfaces that
// the sim board, the hardware drivers and the adapter supervisor implement
// so that the Hub can treat them all alike.
//
// The package knows nothing of JSON-RPC or of periph: values are plain Go
// values as encoding/json decodes them (bool, float64, string,
// map[string]any), so that the Hub can check them against a Schema without
// knowing where they go.
//
// # Stability
//
// The package is public for its vocabulary, which openhal's types and the
// adapter SDK carry: Descriptor, Schema (with Validate and ValueError),
// the Kind, Access, Risk, State and Type constants, ValidID and Equal. Their JSON is the
// protocol's (openhal-0.1 §6, and the descriptor's gateway extensions that
// docs/protocol.md lists) and stable with it; a struct may gain optional
// fields, so build one with named fields.
//
// The rest is the gateway's machinery, public only because the
// vocabulary and it live together: the Device, Reader, Writer, Runner,
// Proxy and Reporter interfaces, Registry with its Event and Snapshot,
// Rules and Condition, CheckValue, CodedError, ErrNoValue and ErrOffline. It changes as the Hub needs, in any
// release. A device outside the gateway is written as an adapter (package
// adapter), not against these interfaces.
//
// The module has no v1 yet; until it has, this promise is the project's
// rule rather than semantic versioning's.
package device
