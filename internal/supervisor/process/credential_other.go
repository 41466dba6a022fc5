//go:build !unix

package process

// Credential is the user and groups an adapter runs as. Systems without
// Unix credentials have no syscall.Credential: this stand-in keeps the
// supervisor's code and its status building there.
type Credential struct {
	Uid, Gid uint32
	Groups   []uint32
}
