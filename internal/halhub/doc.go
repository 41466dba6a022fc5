// Package halhub is the OpenHAL Hub: it serves the devices of a
// device.Registry to clients over WebSocket, TCP and Unix sockets
// (openhal-0.1), checking each request against the client's token,
// scope and the Hub's conformance level.
//
// The Hub owns no device: devices belong to the registry, and a client that
// disconnects changes none of them (seed 3.1.4).
//
// # Where each part of the protocol is
//
// The sections of openhal-0.1 (§3.1 is the seed's), with the gateway's
// own extensions, and the files that implement them; docs/protocol.md
// says what the Hub chose where the spec leaves a choice.
//
//	§1 Messages            dispatch.go: decoding (package jsonrpc frames),
//	                       the method table, an answer per request;
//	                       errors.go: the error object, data.reason;
//	                       writeorder.go: writes to a device in arrival order
//	§2 Transports          transport_ws.go: GET /hal, the bearer token;
//	                       transport_line.go: TCP and Unix, a message a line;
//	                       pipe.go: in memory; http.go: the HTTP listener
//	                       (/hal, /healthz, /metrics, /mcp, the console);
//	                       headers.go; origin.go: a foreign Origin gets 403;
//	                       stats.go: /metrics, the Hub's figures (TLS:
//	                       package tlscert); metricsview.go: who sees
//	                       what of /metrics; devmetrics.go: its device
//	                       values, states and value ages
//	   limits              session.go: message size, requests in flight,
//	                       hal/initialize within 10 s
//	   admission           listener.go: Guard, accept and its back-off;
//	                       admission.go: tickets, slots, the bound per token,
//	                       idle keep-alive connections, AdmitHTTP;
//	                       refuse.go: held, then refused (503, Retry-After);
//	                       peercred_linux.go, peercred_other.go: the peer uid
//	§3 Lifecycle           initialize.go: hal/initialize (hal/initialized
//	                       and hal/shutdown: dispatch.go); version.go:
//	                       protocolVersion; auth.go: the token first,
//	                       UNAUTHORIZED; authlimit.go: 5 failures a minute;
//	                       session.go: a connection's life, a disconnect
//	                       cancels its reads; shutdown.go: the gateway's stop
//	§4 Principals, scopes  dispatch.go: the scope, before the params;
//	                       auth.go; token/: tokens, stored hashed, revoked
//	                       within 1 s (Hub.SetTokens: hub.go); devices.go:
//	                       a token limited to some devices; seqview.go:
//	                       what such a token is told; local.go: in-process
//	                       principals (adapters)
//	§5 Conformance levels  dispatch.go: METHOD_NOT_FOUND above the level;
//	                       confirm.go: confirmation_unavailable
//	§6 Devices, methods    ping.go; devices.go: hal/devices/list and get;
//	                       read.go, readparams.go: hal/read; write.go:
//	                       hal/write and its order of checks; devicecheck.go:
//	                       a device's own check of a value; reason.go
//	   safety rules        rules.go: minimum, maximum, rateLimit, maxOnMs;
//	                       interlock.go: interlocks, enforced all the time;
//	                       safetyloop.go: the loop that enforces them;
//	                       reload.go: rules replaced, requests on devices
//	                       closed rejected, by a configuration reload
//	   emergency stop      stop.go: hal/stop, hal/resume, stop buttons;
//	                       stoplatch.go: the latch on disk; leftasis.go:
//	                       devices the stop leaves as they are
//	§7 Confirmations       confirm.go: requests, approval, expiry;
//	                       confirmlist.go: hal/confirmations/list, paged
//	                       (page.go); supersede.go: a write supersedes them
//	§8 Notifications       events.go: registry events and the Hub's own, to
//	                       each connection that may see them; queue.go: the
//	                       bounded queue, values coalesced, an overflow
//	                       closes; queuebudget.go: all queues' bytes;
//	                       fanout.go, cork.go, rawwrite.go, rawwrite_unix.go,
//	                       rawwrite_other.go, trywrite_unix.go,
//	                       trywrite_other.go: writes that never wait;
//	                       seqview.go: telling a coalesced value;
//	                       subscribe.go: in-process subscribers
//	§9 Errors              errors.go (the codes: package openhal)
//	§10 Audit              auditlog.go: every audited answer recorded, on
//	                       disk first; auditcoalesce.go: past a rate,
//	                       counted; auditlist.go: hal/audit/list; audit/:
//	                       the log, its files, rotation and the kept set
//	gateway/* extensions   extension.go: Extension, ExtensionPrefix, CallerOf;
//	                       values.go: gateway/values; clients.go: the
//	                       counts of gateway/status. The gateway registers
//	                       the others (Options.Extensions): gateway/status
//	                       and gateway/adapters.* in its wiring,
//	                       gateway/history in package history.
//
// The Hub itself — Options, Limits, New, Restore, Close — is hub.go;
// package hubtest runs one for the tests of other packages.
//
// # Locks
//
// The Hub's mutexes, the order in which they may be taken and the rules
// that keep it (never close a connection under the Hub's lock, never
// call the registry under one) are in locksordering.txt, beside this
// file. A change that takes a lock under another reads it first.
//
// # Test hooks
//
// HangForTest, the fault the gateway's watchdog must catch, exists only in
// builds tagged testhang (hang_testhang.go), as audit's does.
package halhub
