//go:build !unix

package gatewayd

import "log/slog"

// raiseOpenFiles: no RLIMIT_NOFILE here.
func raiseOpenFiles(*slog.Logger) {}
