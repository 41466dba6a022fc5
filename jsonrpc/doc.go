// Package jsonrpc is the JSON-RPC 2.0 framing that both protocols of the
// gateway share: OpenHAL between the Hub and its clients, and the oxidepmd
// adapter protocol between the supervisor and its adapters.
//
// The two protocols read the same messages under different rules, so there
// are two decoders: DecodeHAL answers a broken message with a ready-to-send
// *Error, DecodeAdapter names the broken rule in a *Violation (which the
// supervisor counts as a strike). Both first check the whole message in one
// pass without recursion (UTF-8, syntax, nesting depth, repeated keys), then
// pick out the top-level members. Ids and params are kept as the bytes
// received, so that an id is echoed exactly and a number is never rounded
// through a float64.
//
// # Stability
//
// What a message is allowed to be, and how a broken one is answered, is
// the protocols' and stable with them: the codes, the Reason words, which
// messages each decoder refuses and with what, MaxDepth, and the bytes the
// Append functions write (the reference frames' key order). Message,
// Error, Violation, LineReader and the Append and Parse functions keep
// their signatures and meaning.
//
// What may change: DecodeHALNamed and DecodeHALView, which serve the
// Hub's hot path and may follow its needs; the wording of Error.Message
// and Violation.Detail, which are for people (match Code and Reason).
// New Reason words may be added for rules a protocol adds.
//
// The module has no v1 yet; until it has, this promise is the project's
// rule rather than semantic versioning's.
package jsonrpc
