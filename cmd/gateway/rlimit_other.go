//go:build !unix

package main

import "log/slog"

// raiseOpenFiles: no RLIMIT_NOFILE here.
func raiseOpenFiles(*slog.Logger) {}
