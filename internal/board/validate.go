package board

import (
	"fmt"
	"math"
	"net"
	"net/netip"
	pathpkg "path"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/openhal/gateway/internal/board/profile"
	"github.com/openhal/gateway/internal/board/sim"
	"github.com/openhal/gateway/openhal"
)

// MinMessageBytes is the smallest hub.limits.maxMessageBytes accepted: a
// hal/initialize with a token and a client name must fit.
const MinMessageBytes = 1024

// MinTemperatureThreshold is the smallest sim.temperatureThreshold, the
// resolution of the values sim.temperature publishes (°C).
const MinTemperatureThreshold = 0.001

// unixPathMax is the longest path a Unix socket address holds (sun_path
// less its terminating NUL) on Linux.
const unixPathMax = 107

// check returns every fault in c's values, in the order of the fields,
// judging the devices against the profile the board names.
func (c *Config) check() Errors {
	t, ok := targetOf(c.Board)
	return c.checkOn(t, ok)
}

// ValidateOn checks c as Validate does, but judges the devices against
// p, the profile `board: auto` detected when the gateway started, so that
// header pins and the board's buses are checked too. It returns nil or an
// Errors.
func (c *Config) ValidateOn(p *profile.Profile) error {
	if errs := c.checkOn(target{prof: p}, true); len(errs) > 0 {
		return errs
	}
	return nil
}

func (c *Config) checkOn(t target, known bool) Errors {
	v := validator{skip: map[string]bool{}}
	v.board(c.Board)
	if c.StateDir != "" && !filepath.IsAbs(c.StateDir) {
		v.add("stateDir", "want an absolute path, got %q", c.StateDir)
	}
	if _, err := openhal.ParseLevel(string(c.Hub.Conformance)); err != nil {
		v.add("hub.conformance", "%v", err)
	}
	v.listen(c.Hub.Listen)
	v.limits(c.Hub.Limits)
	v.tlsFiles(c.Hub.TLS)
	v.allowedOrigins(c.Hub.AllowedOrigins)
	v.duration("hub.mcp.idleTimeout", c.Hub.MCP.IdleTimeout)
	v.announce(c.Hub.Name, c.Hub.Announce)
	if n := c.Hub.History.MaxSeries; n < 0 || n > MaxHistorySeries {
		v.add("hub.history.maxSeries", "must be from 0 to %d, got %d", MaxHistorySeries, n)
	}
	v.historyDisk(c.Hub.History)
	v.simBoard(c.Sim)
	v.devices(c, t, known)
	v.adapters(c.Adapters)
	return v.errs
}

type validator struct {
	errs Errors
	// skip holds the ids of devices the file declares with faults that
	// leave them without a descriptor; a rule that names one is not
	// reported again.
	skip map[string]bool
}

func (v *validator) add(path, format string, args ...any) {
	v.errs = append(v.errs, FieldError{Path: path, Msg: fmt.Sprintf(format, args...)})
}

func (v *validator) board(name string) {
	switch {
	case name == "":
		v.add("board", "required (%s)", strings.Join(BoardNames(), ", "))
	case !knownBoard(name):
		v.add("board", "unknown board %q (want %s)", name, strings.Join(BoardNames(), ", "))
	}
}

// tlsFiles checks that the certificate and key are named together, by
// absolute paths (the gateway may run from any directory).
func (v *validator) tlsFiles(f TLSFiles) {
	switch {
	case f.Cert != "" && f.Key == "":
		v.add("hub.tls.key", "required with hub.tls.cert (or leave both empty for a self-signed certificate)")
	case f.Cert == "" && f.Key != "":
		v.add("hub.tls.cert", "required with hub.tls.key (or leave both empty for a self-signed certificate)")
	}
	for _, p := range []struct{ path, file string }{{"hub.tls.cert", f.Cert}, {"hub.tls.key", f.Key}} {
		if p.file != "" && !filepath.IsAbs(p.file) {
			v.add(p.path, "want an absolute path, got %q", p.file)
		}
	}
}

var hostname = regexp.MustCompile(`^[A-Za-z0-9]([A-Za-z0-9-]*[A-Za-z0-9])?(\.[A-Za-z0-9]([A-Za-z0-9-]*[A-Za-z0-9])?)*$`)

// CheckHostPort returns what is wrong with a listen address, or "": the
// file's hub.listen fields and `gateway run`'s flags are checked alike.
func CheckHostPort(addr string) string {
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return fmt.Sprintf("want host:port such as 127.0.0.1:7750 (or \"\" to disable), got %q", addr)
	}
	if _, err := strconv.ParseUint(port, 10, 16); err != nil {
		return fmt.Sprintf("port %q in %q is not a number from 0 to 65535", port, addr)
	}
	if host == "" || hostname.MatchString(host) {
		return ""
	}
	if _, err := netip.ParseAddr(host); err != nil {
		return fmt.Sprintf("host %q in %q is neither an IP address nor a host name", host, addr)
	}
	return ""
}

func (v *validator) limits(l Limits) {
	positive := func(path string, n int) {
		if n <= 0 {
			v.add(path, "must be positive, got %d", n)
		}
	}
	if l.MaxMessageBytes < MinMessageBytes {
		v.add("hub.limits.maxMessageBytes", "must be at least %d, got %d", MinMessageBytes, l.MaxMessageBytes)
	}
	positive("hub.limits.maxInFlight", l.MaxInFlight)
	positive("hub.limits.maxConnections", l.MaxConnections)
	if l.AdminReserve < 0 {
		v.add("hub.limits.adminReserve", "must not be negative, got %d", l.AdminReserve)
	}
	positive("hub.limits.maxConnectionsPerToken", l.MaxConnectionsPerToken)
	v.duration("hub.limits.initTimeout", l.InitTimeout)
	positive("hub.limits.queueLength", l.QueueLength)
	positive("hub.limits.authFailures", l.AuthFailures)
	v.duration("hub.limits.authWindow", l.AuthWindow)
	if l.QueueBytes < l.MaxMessageBytes {
		v.add("hub.limits.queueBytes", "must be at least hub.limits.maxMessageBytes (%d), so that an answer of that size fits; got %d", l.MaxMessageBytes, l.QueueBytes)
	}
	if l.TotalQueueBytes < l.QueueBytes {
		v.add("hub.limits.totalQueueBytes", "must be at least hub.limits.queueBytes (%d), got %d", l.QueueBytes, l.TotalQueueBytes)
	}
	v.admissionLimits(l)
}

// MaxHistorySeries bounds hub.history.maxSeries: 4096 series of 136 KiB
// are 544 MiB, more than a Raspberry Pi with 1 GiB can give its gateway.
const MaxHistorySeries = 4096

// MaxAuthFailures and MaxAuthTrackedPeers bound the memory of the limiter
// of failed tokens: each peer it tracks keeps its last authFailures times.
const (
	MaxAuthFailures     = 100
	MaxAuthTrackedPeers = 100_000
)

// admissionLimits checks the limits of connections not yet authenticated
// (openhal-0.1 §2, §3).
func (v *validator) admissionLimits(l Limits) {
	atMost := func(path string, n, most int) {
		switch {
		case n <= 0:
			v.add(path, "must be positive, got %d", n)
		case n > most:
			v.add(path, "must be at most %d, got %d", most, n)
		}
	}
	if l.AuthFailures > MaxAuthFailures {
		v.add("hub.limits.authFailures", "must be at most %d, got %d", MaxAuthFailures, l.AuthFailures)
	}
	atMost("hub.limits.authTrackedPeers", l.AuthTrackedPeers, MaxAuthTrackedPeers)
	atMost("hub.limits.maxUnauthenticated", l.MaxUnauthenticated, math.MaxInt32)
	atMost("hub.limits.maxUnauthenticatedPerPeer", l.MaxUnauthenticatedPerPeer, math.MaxInt32)
	// Above maxMessageBytes it is taken as maxMessageBytes: a file that
	// lowers maxMessageBytes alone stays valid.
	if l.InitMessageBytes < MinMessageBytes {
		v.add("hub.limits.initMessageBytes", "must be at least %d, got %d", MinMessageBytes, l.InitMessageBytes)
	}
	v.duration("hub.limits.httpIdleTimeout", l.HTTPIdleTimeout)
}

func (v *validator) simBoard(s sim.Config) {
	v.duration("sim.meterInterval", s.MeterInterval)
	v.duration("sim.pollInterval", s.PollInterval)
	t := s.TemperatureThreshold
	switch {
	case math.IsNaN(t) || math.IsInf(t, 0):
		v.add("sim.temperatureThreshold", "want a finite number, got %v", t)
	case t < MinTemperatureThreshold:
		v.add("sim.temperatureThreshold", "must be at least %v, got %v", MinTemperatureThreshold, t)
	}
}

func (v *validator) duration(path string, d time.Duration) {
	if d <= 0 {
		v.add(path, "must be a positive duration, got %v", d)
	}
}

// adapterName is what protocol 1 allows as an adapter's name; "state" is
// taken by the folder of the adapters' own data.
var adapterName = regexp.MustCompile(`^[a-z][a-z0-9-]{0,31}$`)

func (v *validator) adapters(a AdaptersConfig) {
	seen := map[string]int{}
	for i, name := range a.Enabled {
		path := fmt.Sprintf("adapters.enabled[%d]", i)
		switch first, dup := seen[name]; {
		case !adapterName.MatchString(name):
			v.add(path, "want an adapter name matching %s, got %q", adapterName, name)
		case name == "state":
			v.add(path, "%q is reserved, not an adapter name", name)
		case dup:
			v.add(path, "%q is already enabled (adapters.enabled[%d])", name, first)
		default:
			seen[name] = i
		}
	}
	if a.Shipped != "" && !filepath.IsAbs(a.Shipped) {
		v.add("adapters.shipped", "must be an absolute path, got %q", a.Shipped)
	}
	for name := range a.Settings {
		if !adapterName.MatchString(name) {
			v.add("adapters.settings."+name, "want an adapter name matching %s", adapterName)
		}
	}
	if a.User == "" || strings.ContainsAny(a.User, ": \t\n\x00/") {
		v.add("adapters.user", "%q is not a user name", a.User)
	}
}

// allowedOrigins checks the host patterns of hub.allowedOrigins: each a
// path.Match pattern of an Origin's host[:port] (or scheme://host[:port]),
// none so wide that it lets any site's pages in.
func (v *validator) allowedOrigins(patterns []string) {
	for i, p := range patterns {
		path := fmt.Sprintf("hub.allowedOrigins[%d]", i)
		target := strings.TrimPrefix(strings.TrimPrefix(p, "https://"), "http://")
		_, err := pathpkg.Match(p, "")
		switch {
		case p == "":
			v.add(path, "want a host pattern such as console.lan:8080 or *.lan, got \"\"")
		case err != nil:
			v.add(path, "%q is not a pattern: %v", p, err)
		case strings.ContainsAny(target, "/?#@ \t"):
			v.add(path, "want host[:port] or scheme://host[:port], without path or user, got %q", p)
		case matchesAnySite(p):
			v.add(path, "%q lets a page from any site reach the Hub; name the sites", p)
		}
	}
}

// matchesAnySite reports whether an origin pattern matches two unrelated
// sites of one scheme, with and without a port, as "*" does.
func matchesAnySite(p string) bool {
	p = strings.ToLower(p)
	for _, scheme := range []string{"", "http://", "https://"} {
		for _, a := range []string{"a.example", "a.example:1234"} {
			ok1, _ := pathpkg.Match(p, scheme+a)
			ok2, _ := pathpkg.Match(p, scheme+"192.0.2.7:8080")
			if ok1 && ok2 {
				return true
			}
		}
	}
	return false
}

// AnnounceModes are the values of hub.announce.
var AnnounceModes = []string{"auto", "avahi", "builtin", "off"}

// maxInstanceName is the longest DNS label, which a DNS-SD instance name
// is (RFC 6763 §4.1.1).
const maxInstanceName = 63

// announce checks the gateway's name on the LAN and how it is announced.
// The name is one DNS label of UTF-8 text: any character but control
// characters, at most 63 bytes.
func (v *validator) announce(name, mode string) {
	switch {
	case len(name) > maxInstanceName:
		v.add("hub.name", "%d bytes is longer than a DNS-SD name allows (%d)", len(name), maxInstanceName)
	case !utf8.ValidString(name):
		v.add("hub.name", "not UTF-8 text")
	case strings.IndexFunc(name, unicode.IsControl) >= 0:
		v.add("hub.name", "%q holds a control character", name)
	case name != "" && strings.TrimSpace(name) != name:
		v.add("hub.name", "%q begins or ends with a space", name)
	}
	if !slices.Contains(AnnounceModes, mode) {
		v.add("hub.announce", "unknown mode %q (want %s)", mode, strings.Join(AnnounceModes, ", "))
	}
}
