package gatewayext

// Gateway is a gateway as it announces itself on the LAN (DNS-SD over
// multicast DNS, docs/discovery.md), what `gateway discover --json`
// prints. What it says is the announcer's word, not proof: a client
// checks the certificate itself (halclient.Options.KnownGateways).
type Gateway struct {
	Name string `json:"name"`
	ID   string `json:"id"`
	Host string `json:"host"`
	// Addresses are the addresses it was heard at, IPv4 first.
	Addresses []string `json:"addresses"`
	// URLs are its Hub's, one per announced listener: the WebSocket first.
	URLs []string `json:"urls"`
	// Fingerprint is the announced SHA-256 of its TLS certificate; "" when
	// no announced listener is TLS.
	Fingerprint string `json:"fingerprint,omitempty"`
	Level       string `json:"level"`    // its conformance level
	Protocol    string `json:"protocol"` // its OpenHAL version
	Console     bool   `json:"console"`
	// ConsoleURL is the operator console's address: https:// on a TLS
	// WebSocket listener, http:// on a plain one; "" when none is
	// announced.
	ConsoleURL string `json:"consoleUrl,omitempty"`
	MCP        bool   `json:"mcp"`
}
