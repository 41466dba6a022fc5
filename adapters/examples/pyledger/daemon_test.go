package pyledger_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/openhal/gateway/adapterproto"
	"github.com/openhal/gateway/adapterproto/reference"
	"github.com/openhal/gateway/internal/supervisor/manifest"
	"github.com/openhal/gateway/jsonrpc"
)

// frameTimeout bounds every wait for the adapter: generous, since a loaded
// machine running -race may start Python slowly, and only a broken adapter
// ever reaches it.
const frameTimeout = 10 * time.Second

// basePath is the PATH of the daemon's cleared environment.
const basePath = "PATH=/usr/local/bin:/usr/bin:/bin"

// python3 returns the interpreter's path, or skips the test: the adapter
// cannot be run without one, and that says nothing about the adapter.
func python3(t *testing.T) string {
	t.Helper()
	py, err := exec.LookPath("python3")
	if err != nil {
		t.Skipf("python3 not found: %v", err)
	}
	return py
}

// adapterEnv is the cleared environment the daemon starts an adapter with.
func adapterEnv(home, protocols string) []string {
	return []string{basePath, "HOME=" + home, adapterproto.EnvProtocols + "=" + protocols}
}

// lockedBuffer collects the adapter's log while the test may read it.
type lockedBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *lockedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *lockedBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// frame is one line the adapter wrote, decoded under the adapter rules.
type frame struct {
	raw []byte
	msg jsonrpc.Message
	err error
}

// daemon plays oxidepmd's side of one adapter process.
type daemon struct {
	t       *testing.T
	stdin   io.WriteCloser
	frames  chan frame // closed at the adapter's EOF
	exited  chan struct{}
	waitErr error // set before exited is closed
	stderr  *lockedBuffer
	nextID  uint64
}

// startAdapter starts python3 pyledger.py with env, the way the daemon
// would, and stops it when the test ends.
func startAdapter(t *testing.T, env []string) *daemon {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	cmd := exec.CommandContext(ctx, python3(t), "pyledger.py")
	cmd.Env = env
	d := &daemon{t: t, frames: make(chan frame), exited: make(chan struct{}), stderr: &lockedBuffer{}, nextID: 1}
	cmd.Stderr = d.stderr
	var err error
	if d.stdin, err = cmd.StdinPipe(); err != nil {
		t.Fatalf("stdin pipe: %v", err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatalf("stdout pipe: %v", err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatalf("start adapter: %v", err)
	}
	stop := make(chan struct{})
	go d.read(cmd, stdout, stop)
	t.Cleanup(func() {
		cancel()
		close(stop)
		<-d.exited
		if t.Failed() {
			t.Logf("adapter log:\n%s", d.stderr.String())
		}
	})
	return d
}

// read decodes the adapter's standard output until EOF, then waits for the
// process (exec requires every read from the pipe to be done first).
func (d *daemon) read(cmd *exec.Cmd, stdout io.Reader, stop <-chan struct{}) {
	lr := jsonrpc.NewLineReader(stdout, adapterproto.DefaultLimits().MaxLine)
	for {
		line, err := lr.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		f := frame{raw: bytes.Clone(line), err: err}
		if err == nil {
			f.msg, f.err = jsonrpc.DecodeAdapter(line)
		}
		select {
		case d.frames <- f:
		case <-stop:
		}
		if err != nil && !errors.Is(err, jsonrpc.ErrLineTooLong) {
			break
		}
	}
	close(d.frames)
	d.waitErr = cmd.Wait()
	close(d.exited)
}

// send writes one line to the adapter.
func (d *daemon) send(line []byte) {
	d.t.Helper()
	if _, err := d.stdin.Write(append(bytes.Clone(line), '\n')); err != nil {
		d.t.Fatalf("write to adapter: %v", err)
	}
}

// call sends a request with the daemon's next id and returns that id.
func (d *daemon) call(method string, params any) uint64 {
	d.t.Helper()
	id := d.nextID
	d.nextID++
	b, err := jsonrpc.AppendRequest(nil, jsonrpc.IntID(id), method, params)
	if err != nil {
		d.t.Fatalf("encode %s: %v", method, err)
	}
	d.send(b)
	return id
}

// notify sends a notification.
func (d *daemon) notify(method string, params any) {
	d.t.Helper()
	b, err := jsonrpc.AppendNotification(nil, method, params)
	if err != nil {
		d.t.Fatalf("encode %s: %v", method, err)
	}
	d.send(b)
}

// answer sends the result of one of the adapter's requests.
func (d *daemon) answer(id json.RawMessage, result any) {
	d.t.Helper()
	b, err := jsonrpc.AppendResult(nil, id, result)
	if err != nil {
		d.t.Fatalf("encode result: %v", err)
	}
	d.send(b)
}

// next returns the adapter's next frame, failing on anything that is not
// protocol, on EOF and after frameTimeout.
func (d *daemon) next() frame {
	d.t.Helper()
	select {
	case f, ok := <-d.frames:
		if !ok {
			d.t.Fatalf("adapter closed its output; log:\n%s", d.stderr.String())
		}
		if f.err != nil {
			d.t.Fatalf("adapter wrote %q, not a protocol frame: %v", f.raw, f.err)
		}
		return f
	case <-time.After(frameTimeout):
		d.t.Fatalf("no frame from the adapter within %v; log:\n%s", frameTimeout, d.stderr.String())
	}
	panic("unreachable")
}

// response reads the next frame, which must answer request id.
func (d *daemon) response(id uint64) frame {
	d.t.Helper()
	f := d.next()
	got, ok := jsonrpc.ParseUint64ID(f.msg.ID)
	if !f.msg.IsResponse() || !ok || got != id {
		d.t.Fatalf("want the response to %d, got %s", id, f.raw)
	}
	return f
}

// exit waits for the adapter to close its output and end, and returns its
// exit code.
func (d *daemon) exit() int {
	d.t.Helper()
	deadline := time.After(frameTimeout)
	select {
	case f, ok := <-d.frames:
		if ok {
			d.t.Fatalf("want the adapter to exit, got %q", f.raw)
		}
	case <-deadline:
		d.t.Fatalf("adapter did not close its output within %v", frameTimeout)
	}
	select {
	case <-d.exited:
	case <-deadline:
		d.t.Fatalf("adapter did not exit within %v", frameTimeout)
	}
	var ee *exec.ExitError
	switch {
	case d.waitErr == nil:
		return 0
	case errors.As(d.waitErr, &ee):
		return ee.ExitCode()
	}
	d.t.Fatalf("wait for adapter: %v", d.waitErr)
	return -1
}

// readManifest reads the folder's adapter.json as the supervisor does.
func readManifest(t *testing.T) *manifest.Manifest {
	t.Helper()
	m, err := manifest.ReadDir(".")
	if err != nil {
		t.Fatalf("read manifest: %v", err)
	}
	return m
}

// initializeFrame is the seed's reference initialize, addressed to this
// adapter: its name and version from the manifest, its state directory,
// and the offered protocols when not nil.
func initializeFrame(t *testing.T, m *manifest.Manifest, state string, protocols []int) []byte {
	t.Helper()
	ref, err := jsonrpc.DecodeAdapter(reference.Bytes("initialize"))
	if err != nil {
		t.Fatalf("decode reference initialize: %v", err)
	}
	var p adapterproto.InitializeParams
	if err := json.Unmarshal(ref.Params, &p); err != nil {
		t.Fatalf("decode reference initialize params: %v", err)
	}
	p.Adapter = adapterproto.Info{Name: m.Name, Version: m.Version}
	p.Paths.State = state
	if protocols != nil {
		p.Protocols = protocols
	}
	b, err := jsonrpc.AppendRequest(nil, ref.ID, adapterproto.MethodInitialize, p)
	if err != nil {
		t.Fatalf("encode initialize: %v", err)
	}
	return b
}

// referenceFor is a reference frame with the seed's adapter name replaced
// by this adapter's.
func referenceFor(name, adapter string) []byte {
	return bytes.Replace(reference.Bytes(name), []byte(`"notifier"`), []byte(`"`+adapter+`"`), 1)
}

// readLines returns the lines of a file in the adapter's state directory.
func readLines(t *testing.T, dir, name string) []string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, name))
	if err != nil {
		t.Fatalf("read %s: %v", name, err)
	}
	return strings.Split(strings.TrimSuffix(string(b), "\n"), "\n")
}
