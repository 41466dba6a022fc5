package supervisor

import (
	"os"
	"os/user"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/openhal/gateway/internal/supervisor/restart"
)

// Section 8: an adapter runs as its own unprivileged user, without the
// gateway's supplementary groups, and cannot read the gateway's tokens.
func TestIsolation(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("switching users needs root or CAP_SETUID/CAP_SETGID; this test runs as root in CI")
	}
	nobody, err := user.Lookup("nobody")
	if err != nil {
		t.Fatal(err)
	}
	// The probe is given after the bench exists: the tokens file is there.
	b := newBench(t)
	tokens := filepath.Join(b.stateDir, "tokens.json")
	if _, err := os.Stat(tokens); err != nil {
		t.Fatal(err)
	}
	b.install(spec{name: "ta", args: []string{"--probe", tokens}})
	sup, err := New(Options{StateDir: b.stateDir, Enabled: []string{"ta"}, Hub: b.hub, Registry: b.reg, Version: "test",
		User: "nobody", Timing: b.timing, Log: b.sup.log})
	if err != nil {
		t.Fatal(err)
	}
	b.sup = sup
	b.start()
	b.waitState("ta", restart.Running)
	rec := b.startRecord("ta")
	if strconv.Itoa(rec.UID) != nobody.Uid || strconv.Itoa(rec.GID) != nobody.Gid {
		t.Fatalf("uid %d gid %d, want nobody's %s/%s", rec.UID, rec.GID, nobody.Uid, nobody.Gid)
	}
	for _, g := range rec.Groups {
		if strconv.Itoa(g) != nobody.Gid {
			t.Fatalf("supplementary groups %v: want none of the gateway's", rec.Groups)
		}
	}
	if rec.Probe == nil || rec.Probe.Readable {
		t.Fatalf("probe %+v: the adapter read the gateway's tokens", rec.Probe)
	}
	fi, err := os.Stat(b.home("ta"))
	if err != nil || fi.Mode().Perm() != 0o700 {
		t.Fatalf("state dir %v, %v", fi.Mode(), err)
	}
}

// A gateway that cannot switch users runs adapters as itself, and says so.
func TestCannotSwitchUsers(t *testing.T) {
	b := newBench(t, spec{name: "ta"})
	sup, err := New(Options{StateDir: b.stateDir, Enabled: []string{"ta"}, Hub: b.hub, Registry: b.reg, Version: "test",
		User: "nobody", Timing: b.timing, Log: b.sup.log, canSwitchUsers: func() bool { return false }})
	if err != nil {
		t.Fatal(err)
	}
	if sup.cred != nil {
		t.Fatal("credentials set although users cannot be switched")
	}
	if !strings.Contains(b.log.String(), "cannot switch users") {
		t.Fatalf("no warning in the log:\n%s", b.log.String())
	}
	b.sup = sup
	b.start()
	b.waitState("ta", restart.Running)
	if rec := b.startRecord("ta"); rec.UID != os.Geteuid() {
		t.Fatalf("uid %d, want the gateway's %d", rec.UID, os.Geteuid())
	}
}
