package supervisor

import (
	"bufio"
	"fmt"
	"os"
	"os/user"
	"strconv"
	"strings"

	"github.com/openhal/gateway/adapterproto"
	"github.com/openhal/gateway/internal/supervisor/process"
)

// Capability bits of CapEff in /proc/self/status (linux/capability.h).
const (
	capSetgid = 6
	capSetuid = 7
)

// chooseUser decides who adapters run as (section 8): their own
// unprivileged user, without the gateway's supplementary groups (gpio,
// i2c, spi, dialout: an adapter reaches hardware only through the Hub) — or the
// gateway's own user when it cannot switch, which it says.
func (s *Supervisor) chooseUser() error {
	name := s.opt.User
	if name == "" {
		name = DefaultUser
	}
	can := CanSwitchUsers
	if s.opt.canSwitchUsers != nil {
		can = s.opt.canSwitchUsers
	}
	if !can() {
		me := strconv.Itoa(os.Geteuid())
		if u, err := user.Current(); err == nil {
			me = u.Username
		}
		s.log.Warn("the gateway cannot switch users (neither root nor CAP_SETUID and CAP_SETGID): adapters run as the gateway's own user, with its groups and files",
			"configured_user", name, "user", me)
		s.user = me
		return nil
	}
	cred, err := AdapterUser(name)
	if err != nil {
		return err
	}
	s.cred, s.user = cred, name
	return s.openStateDir()
}

// AdapterUser looks up the user adapters run as (name; "" is
// DefaultUser) and checks that it may be one: it exists, its ids are
// numbers, and it is not root. Its error is the one New refuses to start
// with when the gateway can switch users (CanSwitchUsers), and the one
// `gateway check` reports before a start. The credential drops every
// supplementary group.
func AdapterUser(name string) (*process.Credential, error) {
	if name == "" {
		name = DefaultUser
	}
	u, err := user.Lookup(name)
	if err != nil {
		return nil, fmt.Errorf("adapters run as user %q: %w (create it with `useradd --system --no-create-home --shell /usr/sbin/nologin %s`, or set adapters.user)", name, err, name)
	}
	uid, err1 := strconv.ParseUint(u.Uid, 10, 32)
	gid, err2 := strconv.ParseUint(u.Gid, 10, 32)
	if err1 != nil || err2 != nil {
		return nil, fmt.Errorf("adapters run as user %q: uid %q or gid %q is not a number", name, u.Uid, u.Gid)
	}
	if uid == 0 {
		return nil, fmt.Errorf("adapters run as user %q: it is root; adapters must run unprivileged", name)
	}
	// An empty, non-nil Groups drops every supplementary group.
	return &process.Credential{Uid: uint32(uid), Gid: uint32(gid), Groups: []uint32{}}, nil
}

// openStateDir lets the adapters' user traverse the gateway's state
// directory, without listing or reading it, so that it reaches its install
// folder (world-readable) and its own state directory (its own, 0700). The
// gateway's files there (tokens, audit log, the stop latch) are 0600 and
// stay out of its reach.
func (s *Supervisor) openStateDir() error {
	fi, err := os.Stat(s.opt.StateDir)
	if err != nil {
		return fmt.Errorf("state directory: %w", err)
	}
	if fi.Mode().Perm()&0o001 != 0 {
		return nil
	}
	if err := os.Chmod(s.opt.StateDir, fi.Mode().Perm()|0o001); err != nil {
		return fmt.Errorf("let adapters traverse the state directory: %w", err)
	}
	s.log.Info("state directory made traversable (o+x) for the adapters' user", "dir", s.opt.StateDir, "user", s.user)
	return nil
}

// CanSwitchUsers reports whether this process may set another uid and gid
// for its children (root, or CAP_SETUID and CAP_SETGID, as the installed
// service has): when it may not, adapters run as the gateway's own user,
// whatever adapters.user says.
func CanSwitchUsers() bool {
	eff, ok := effectiveCaps()
	if !ok {
		return os.Geteuid() == 0
	}
	return eff&(1<<capSetuid) != 0 && eff&(1<<capSetgid) != 0
}

// effectiveCaps reads CapEff from /proc/self/status.
func effectiveCaps() (uint64, bool) {
	f, err := os.Open("/proc/self/status")
	if err != nil {
		return 0, false
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), "CapEff:"); ok {
			n, err := strconv.ParseUint(strings.TrimSpace(v), 16, 64)
			return n, err == nil
		}
	}
	return 0, false
}

// basePath is the PATH of the adapters' cleared environment (seed 001).
const basePath = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"

// environment is an adapter's whole environment (seed 001): PATH, LANG,
// HOME (its state directory), the names its manifest passes through when
// the gateway has them, and OXIDEPM_ADAPTER_PROTOCOLS. Nothing else of the
// gateway's environment reaches it.
func (s *Supervisor) environment(home string, pass []string) []string {
	lang, ok := s.opt.LookupEnv("LANG")
	if !ok || lang == "" {
		lang = "C.UTF-8"
	}
	env := []string{"PATH=" + basePath, "LANG=" + lang, "HOME=" + home}
	for _, name := range pass {
		if v, ok := s.opt.LookupEnv(name); ok {
			env = append(env, name+"="+v)
		}
	}
	return append(env, adapterproto.EnvProtocols+"="+strconv.Itoa(adapterproto.Protocol))
}
