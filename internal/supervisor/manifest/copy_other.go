//go:build !unix

package manifest

import (
	"fmt"
	"runtime"
)

// copyTree needs the openat family to copy a folder without following a
// symlink swapped in under it; this system has none, so installing an
// adapter is refused here. The gateway that runs adapters is Linux only.
func copyTree(src, _ string) (string, error) {
	return "", fmt.Errorf("copy %s: installing an adapter needs Linux (this is %s)", src, runtime.GOOS)
}
