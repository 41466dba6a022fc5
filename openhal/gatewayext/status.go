package gatewayext

import (
	"time"

	"github.com/openhal/gateway/openhal"
)

// Status is the answer of MethodStatus: the gateway's version, board,
// names and uptime, its clients, and its adapters. Nothing in it names a
// device, so any token may ask.
type Status struct {
	Version string `json:"version"`
	Commit  string `json:"commit"`
	// Board is the configuration's board, with the detected profile for
	// "auto" ("pi4 (auto)").
	Board string `json:"board"`
	// Name is the gateway's name on the LAN (hub.name, else the host
	// name), ID its gateway id, and Fingerprint the SHA-256 of its TLS
	// listeners' certificate ("" without one): what a person compares
	// with what a client or a browser is shown at first contact.
	Name        string    `json:"name"`
	ID          string    `json:"id,omitempty"`
	Fingerprint string    `json:"fingerprint,omitempty"`
	StartedAt   time.Time `json:"startedAt"`
	// UptimeSeconds counts on the monotonic clock from this run's start.
	UptimeSeconds float64      `json:"uptimeSeconds"`
	Clients       ClientCounts `json:"clients"`
	// Adapters is nil (null) for a token that is not admin or is limited
	// to some devices: an adapter's name tells of the devices it
	// provides.
	Adapters []AdapterSummary `json:"adapters"`
}

// ClientCounts are the connections that completed hal/initialize, the
// gateway's in-process ones (adapters) included, in all and by their
// token's scope: who is connected, without naming anyone.
type ClientCounts struct {
	Total   int                   `json:"total"`
	ByScope map[openhal.Scope]int `json:"byScope"`
}

// AdapterSummary is an adapter as Status lists it.
type AdapterSummary struct {
	Name   string       `json:"name"`
	State  AdapterState `json:"state"`
	Reason FailReason   `json:"reason,omitempty"`
	Detail string       `json:"detail,omitempty"`
}
