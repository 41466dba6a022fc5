// Package halclient is a client of the OpenHAL Hub (openhal-0.1): it dials
// the Hub over WebSocket or TCP, each with or without TLS, or over a Unix
// socket, goes through hal/initialize, and then carries requests and
// notifications. The gateway's CLI, its end-to-end tests and its load tool
// all use it, so that each of them speaks the protocol the same way a
// third-party agent would.
//
// Dial returns a Conn, whose methods are the protocol's requests (Devices,
// Read, Write, Stop, Resume, the confirmations and the audit log; Call for
// any other, such as the gateway's gateway/* extensions, whose answer
// types are in package openhal/gatewayext) and whose Notifications
// channel carries what the Hub sends. Watch keeps a watch across lost
// connections and restarts of the Hub, and tells values missed in
// between. A refused request is a *HubError that reads as one sentence;
// the other error types say why a dial failed and whether retrying can
// help.
//
// # Stability
//
// halclient is public: a program outside this module may build on it,
// and the gateway's own CLI uses it the same way. What is stable:
//
//   - Dial, the URL schemes it takes (ws, wss, tcp, tls, unix), and
//     Options: a field keeps its meaning, and its zero value is the
//     behaviour described here;
//   - the methods of Conn, Watch and the meaning of each EventKind;
//   - the error types, for errors.As, and which of them Watch treats as
//     permanent;
//   - the known-gateways file: its format and where KnownGatewaysFile
//     finds it (a user's file outlives any one version of the client).
//
// What may change: the wording of error messages (match the types, not
// the text); Watch's backoff and the default buffer sizes; DialConn,
// which serves clients inside the gateway (the MCP bridge). The package
// grows by adding: new Options fields, methods, EventKinds and error
// types, so a switch over EventKind needs a default case.
//
// Versions: the package speaks OpenHAL 0.1 (openhal.Version) and nothing
// else; a Hub that answers hal/initialize with another version is refused
// with a *VersionError rather than half understood. The module has no v1
// yet. Until it has, the promise above is the project's rule rather than
// semantic versioning's: what is listed as stable changes only with a new
// version of the protocol or the module's first major version, never in
// passing.
package halclient
