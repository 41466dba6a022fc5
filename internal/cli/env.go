package cli

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"strings"
	"time"

	"github.com/openhal/gateway/halclient"
	"github.com/openhal/gateway/openhal"
	"github.com/openhal/gateway/openhal/gatewayext"
)

// Env is what Run needs beyond the command line: the build's version,
// and the parts of the gateway's own code that some commands use, which
// this package does not import (see the package doc). cmd/gateway takes
// it from internal/gatewayd.
type Env struct {
	Version, Commit string
	// Server are the server's own commands (run, check), listed with the
	// others and run as they are.
	Server []Command
	// StateDir reads and writes the files of a state directory.
	StateDir StateDir
	// LAN finds the gateways announced on the LAN (gateway discover,
	// --hub NAME).
	LAN LAN
	// MCP starts the MCP bridge of `gateway mcp` on standard input and
	// output.
	MCP func(ctx context.Context, opt MCPOptions) (MCPBridge, error)
}

// Command is a command of the gateway's command line. Run follows the
// convention of usage.go: it returns a usage error (Usagef), ErrReported
// once it printed its own error lines, or any other error for one line.
type Command struct {
	Name    string
	Summary string
	Run     func(args []string, stdout, stderr io.Writer) error
}

// StateDir is a gateway's state directory as the commands that act on
// one (token, adapter, and the client commands given --state-dir) read
// and write it, beside or without a running gateway.
type StateDir interface {
	// Running returns the URLs the gateway running on dir listens on,
	// and its TLS certificate's fingerprint ("" without one);
	// ErrNotRunning when none runs there.
	Running(dir string) (hubs []string, fingerprint string, err error)
	// Tokens is dir's token file.
	Tokens(dir string) Tokens
	// Audit appends to dir's audit log, in turn with the running
	// gateway's own entries, one entry for a change a command made there
	// (action "token.add"): who made it, what became of it (outcome), and
	// what it was (reason).
	Audit(dir string, who openhal.Principal, action, outcome, reason string) error
	// Adapters are the adapters installed in dir.
	Adapters(dir string) Adapters
}

// ErrNotRunning says that no gateway runs on a state directory.
var ErrNotRunning = errors.New("no gateway runs on this state directory")

// Tokens is a state directory's token file, which a running gateway
// follows.
type Tokens interface {
	// Path is the file: a directory without it is not a state directory
	// (yet).
	Path() string
	// Add adds a token and returns it; it is shown once, never stored.
	Add(name, kind string, scope openhal.Scope, devices []string) (token string, err error)
	// Check checks what Add would be given (the name, kind, scope and
	// device patterns) without touching the file.
	Check(name, kind string, scope openhal.Scope, devices []string) error
	List() ([]TokenEntry, error)
	Revoke(name string) error
}

// TokenEntry is a token as `gateway token list` shows it: never the token.
type TokenEntry struct {
	Name  string        `json:"name"`
	Kind  string        `json:"kind"`
	Scope openhal.Scope `json:"scope"`
	// Devices limits the token to these device ids and "prefix.*"
	// patterns; empty means every device.
	Devices []string  `json:"devices,omitempty"`
	Created time.Time `json:"created"`
}

// Adapters are the adapters installed in a state directory, and their
// logs.
type Adapters interface {
	// Install checks the adapter folder src and installs it. A folder
	// whose manifest is not right gives FieldErrors.
	Install(src string) (AdapterRecord, error)
	List() ([]AdapterRecord, error)
	// Load, Remove and Logs give an error that is fs.ErrNotExist for an
	// adapter not installed, or (Logs) that has not run yet.
	Load(name string) (AdapterRecord, error)
	Remove(name string) error
	// Logs are the last n lines of the adapter's standard error, as kept
	// in LogDir.
	Logs(name string, n int) ([]string, error)
	LogDir() string
}

// AdapterRecord is an adapter's install record.
type AdapterRecord struct {
	Name        string    `json:"name"`
	Version     string    `json:"version"`
	Kind        string    `json:"kind"`
	Hash        string    `json:"hash"` // of the installed folder
	InstalledAt time.Time `json:"installedAt"`
}

// FieldError is one fault of an adapter folder: a manifest field's path
// ("exec"; "" for the folder) and what is wrong with it.
type FieldError struct {
	Path string
	Msg  string
}

func (e FieldError) Error() string {
	if e.Path == "" {
		return e.Msg
	}
	return e.Path + ": " + e.Msg
}

// FieldErrors are every fault found in an adapter folder.
type FieldErrors []FieldError

// Error is one fault a line.
func (es FieldErrors) Error() string {
	lines := make([]string, len(es))
	for i, e := range es {
		lines[i] = e.Error()
	}
	return strings.Join(lines, "\n")
}

// LAN finds the gateways that announce themselves on the LAN (DNS-SD).
type LAN interface {
	// Find returns the gateway announced by that name, or id;
	// ErrNotFound when none answers before ctx ends.
	Find(ctx context.Context, name string) (gatewayext.Gateway, error)
	// List returns the gateways that answer before ctx ends.
	List(ctx context.Context) ([]gatewayext.Gateway, error)
	// Watch calls seen for each gateway heard, again when what it
	// announces changes, and with gone for each withdrawn, until ctx
	// ends.
	Watch(ctx context.Context, seen func(g gatewayext.Gateway, gone bool)) error
}

// ErrNotFound says that no gateway of the name asked answered on the LAN.
var ErrNotFound = errors.New("no gateway of that name answered")

// MCPOptions configure the MCP bridge of `gateway mcp`.
type MCPOptions struct {
	// Dial connects to the gateway with the agent's token; the bridge
	// dials again after a lost connection.
	Dial func(ctx context.Context) (*halclient.Conn, error)
	// Gateway names the gateway in resource URIs, ConsoleURL is its
	// console's address ("" unknown), and ApproveFlags the flags a person
	// gives `gateway confirm approve ID` to reach it with its admin token
	// ("" when the command's defaults reach it).
	Gateway, ConsoleURL, ApproveFlags string
	Version                           string
	Log                               *slog.Logger
}

// MCPBridge is a started MCP bridge, connected to the gateway.
type MCPBridge interface {
	// Principal is who the agent's token speaks for.
	Principal() openhal.Principal
	// Serve serves MCP on standard input and output until ctx ends or
	// the client closes standard input.
	Serve(ctx context.Context) error
	Close()
}
