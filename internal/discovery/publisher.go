package discovery

import "context"

// Publisher puts services on the LAN.
type Publisher interface {
	// Publish announces svcs in place of what it announced before (the
	// listeners or the certificate changed); none withdraws everything.
	Publish(ctx context.Context, svcs []Service) error
	// Close withdraws every service (goodbye packets, or avahi's removal)
	// and lets go of the network or the bus.
	Close() error
	// Name says which publisher this is, for the log: "avahi" or "builtin".
	Name() string
}
