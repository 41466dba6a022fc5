// Package adapterproto holds the message types of the oxidepmd adapter
// protocol, version 1: what the gateway's supervisor and its adapters say
// to each other over the adapter's standard input and output. The framing
// (JSON-RPC 2.0, one object a line) is package jsonrpc's; the reference
// frames of the user's seed pages are in package reference. An adapter
// written in Go uses package adapter, which speaks this protocol for it.
//
// Field order in the types below is wire order: encoding the seed's
// initialize with the seed's values gives the seed's bytes.
//
// # Stability
//
// Protocol 1 does not change: its method names, codes, field names and
// field order are fixed, and the reference frames are their test.
// Changing a frame needs a new protocol number, which daemon and adapter
// negotiate in initialize (EnvProtocols, InitializeParams.Protocols), so
// that an adapter built against protocol 1 keeps working with a daemon
// that still offers it. The gateway's extensions (hub.stop, hub.stopped,
// hub.confirmations, host.product) are additions an oxidepmd adapter may ignore. A Go type
// may gain fields for such additions: build one with named fields.
//
// The module has no v1 yet; until it has, this promise is the project's
// rule rather than semantic versioning's.
package adapterproto
