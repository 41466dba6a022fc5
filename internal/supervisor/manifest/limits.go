package manifest

import "errors"

// The limits of an adapter folder at install (docs/adapters.md). Every
// start hashes the whole installed folder again, a tool's on-demand starts
// included, so its size is start-up time on a Pi's SD card as well as
// disk: 64 MiB hash in about a second there. The depth bounds the
// directories held open while the folder is copied.
const (
	MaxFolderBytes   = 64 << 20 // the content of all its files
	MaxFolderEntries = 4096     // its files and directories, itself not counted
	MaxFolderDepth   = 32       // directories within directories below it
)

// ErrTooLarge is wrapped by Install's error for a folder over one of the
// limits above; the error names the limit.
var ErrTooLarge = errors.New("adapter folder too large")

// ErrChanged is wrapped by Install's error for an entry of the folder that
// was not, when opened, what had been listed a moment before (another
// file, another kind, a larger file) or that changed while it was copied.
// Nothing is installed; installing again once the folder is still works.
var ErrChanged = errors.New("changed while the folder was copied")
