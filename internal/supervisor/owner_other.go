//go:build !unix

package supervisor

import "os"

// ownedBy reports false: files have no Unix owner here, and no adapter
// runs here either (package process is Linux only).
func ownedBy(os.FileInfo, uint32, uint32) bool { return false }
