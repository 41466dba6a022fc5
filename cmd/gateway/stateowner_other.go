//go:build !unix

package main

// asStateOwner does nothing where files have no Unix owner; the commands
// that call it need Linux anyway (serverOnly).
func asStateOwner(string) error { return nil }
