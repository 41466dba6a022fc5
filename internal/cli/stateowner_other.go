//go:build !unix

package cli

// asStateOwner does nothing where files have no Unix owner; the commands
// that call it need Linux anyway (ServerOnly).
func asStateOwner(string) error { return nil }
