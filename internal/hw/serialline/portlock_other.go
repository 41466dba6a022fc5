//go:build !unix

package serialline

import "os"

// lockPort takes no lock where there is no flock: the port's own
// exclusive open is all there is.
func lockPort(string) (*os.File, error) { return nil, nil }
