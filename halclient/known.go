package halclient

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/openhal/gateway/internal/filelock"
	"github.com/openhal/gateway/internal/tlscert"
)

// The known-gateways file is to gateways what SSH's known_hosts is to
// hosts: the certificates this user trusts, each under the gateway id its
// certificate carries (or, for a certificate without one, the host:port
// it was reached at), with the names and addresses it was reached as.
// One gateway a line:
//
//	KEY FINGERPRINT [SEEN-AS,...]
//
// KEY is the gateway id (32 hex digits) or host:port; FINGERPRINT the
// SHA-256 of the certificate in lowercase hex; SEEN-AS the names and
// host:ports, comma-separated, each with space, comma, '%' and control
// characters written %XX. Blank lines and lines starting with # are
// kept as they are. The Python client reads and writes the same file.

// KnownGatewaysEnv names the file instead of the default place.
const KnownGatewaysEnv = "GATEWAY_KNOWN_GATEWAYS"

// KnownGatewaysFile returns the user's known-gateways file:
// $GATEWAY_KNOWN_GATEWAYS, else known_gateways in the folder gateway of
// os.UserConfigDir ($XDG_CONFIG_HOME/gateway/known_gateways, by default
// ~/.config/gateway/known_gateways on Linux).
func KnownGatewaysFile() (string, error) {
	if p := os.Getenv(KnownGatewaysEnv); p != "" {
		return p, nil
	}
	dir, err := os.UserConfigDir()
	if err != nil {
		return "", fmt.Errorf("find the known-gateways file: %w (set $%s)", err, KnownGatewaysEnv)
	}
	return filepath.Join(dir, "gateway", "known_gateways"), nil
}

const knownHeader = `# gateway known_gateways: the gateways this user trusts, one a line:
#   KEY FINGERPRINT [SEEN-AS,...]
# KEY is the gateway id the certificate carries, or host:port for a
# certificate without one; FINGERPRINT its SHA-256; SEEN-AS the names and
# addresses it was reached as. Remove a line to meet that gateway anew.
`

// knownEntry is one gateway in the file.
type knownEntry struct {
	key         string   // gateway id, or host:port
	fingerprint string   // lowercase hex
	seenAs      []string // names and host:ports
	line        int      // 1-based; 0 for one not yet written
}

// knownGateways is the file's content: its lines as they are, and the
// entries among them.
type knownGateways struct {
	path    string
	lines   []string
	entries []*knownEntry
}

// parseKnown reads the file's text. A line that is neither blank, a
// comment nor an entry is an error naming it: a record that cannot be
// read must not read as no record.
func parseKnown(path string, data []byte) (*knownGateways, error) {
	k := &knownGateways{path: path}
	text := strings.TrimSuffix(string(data), "\n")
	if text == "" {
		return k, nil
	}
	for i, line := range strings.Split(text, "\n") {
		k.lines = append(k.lines, line)
		f := strings.Fields(line)
		if len(f) == 0 || strings.HasPrefix(f[0], "#") {
			continue
		}
		e, err := parseEntry(f)
		if err != nil {
			return nil, fmt.Errorf("%s line %d: %w (fix or remove the line)", path, i+1, err)
		}
		e.line = i + 1
		k.entries = append(k.entries, e)
	}
	return k, nil
}

func parseEntry(f []string) (*knownEntry, error) {
	if len(f) < 2 || len(f) > 3 {
		return nil, errors.New("want KEY FINGERPRINT [SEEN-AS,...]")
	}
	fp, err := tlscert.ParsePin(f[1])
	if err != nil {
		return nil, err
	}
	e := &knownEntry{key: f[0], fingerprint: fp}
	if len(f) == 3 {
		for _, s := range strings.Split(f[2], ",") {
			name, err := url.PathUnescape(s)
			if err != nil || name == "" {
				return nil, fmt.Errorf("seen-as %q: not a %%-escaped name", s)
			}
			e.seenAs = append(e.seenAs, name)
		}
	}
	return e, nil
}

// format is the entry's line.
func (e *knownEntry) format() string {
	s := e.key + " " + e.fingerprint
	if len(e.seenAs) > 0 {
		names := make([]string, len(e.seenAs))
		for i, n := range e.seenAs {
			names[i] = escapeSeen(n)
		}
		s += " " + strings.Join(names, ",")
	}
	return s
}

// escapeSeen writes as %XX what would break the line's fields: space,
// comma, '%' and control characters.
func escapeSeen(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c <= ' ' || c == ',' || c == '%' || c == 0x7f {
			fmt.Fprintf(&b, "%%%02X", c)
			continue
		}
		b.WriteByte(c)
	}
	return b.String()
}

// render is the file's text, with each entry's line as it now is; a new
// entry gets its line at the end.
func (k *knownGateways) render() []byte {
	for _, e := range k.entries {
		if e.line == 0 {
			k.lines = append(k.lines, e.format())
			e.line = len(k.lines)
			continue
		}
		k.lines[e.line-1] = e.format()
	}
	if len(k.lines) == 0 {
		return nil
	}
	return []byte(strings.Join(k.lines, "\n") + "\n")
}

// seen reports whether e was reached as name (a name on the LAN, case
// aside, or a host:port).
func (e *knownEntry) seen(name string) bool {
	return slices.ContainsFunc(e.seenAs, func(s string) bool { return strings.EqualFold(s, name) })
}

// conflict returns the first entry that claims the key or one of names
// for another fingerprint than fp: the certificate presented is not the
// one this user trusted there.
func (k *knownGateways) conflict(key string, names []string, fp string) *knownEntry {
	for _, e := range k.entries {
		if e.fingerprint == fp {
			continue
		}
		if strings.EqualFold(e.key, key) || slices.ContainsFunc(names, func(n string) bool { return strings.EqualFold(e.key, n) || e.seen(n) }) {
			return e
		}
	}
	return nil
}

// byFingerprint returns the entry of the certificate fp, if any.
func (k *knownGateways) byFingerprint(fp string) *knownEntry {
	for _, e := range k.entries {
		if e.fingerprint == fp {
			return e
		}
	}
	return nil
}

// add files fp under key, or notes names on the entry that has fp
// already; it reports whether the file changed.
func (k *knownGateways) add(key, fp string, names []string) bool {
	e := k.byFingerprint(fp)
	if e == nil {
		if len(k.lines) == 0 {
			k.lines = strings.Split(strings.TrimSuffix(knownHeader, "\n"), "\n")
		}
		k.entries = append(k.entries, &knownEntry{key: key, fingerprint: fp, seenAs: slices.Clone(names)})
		return true
	}
	changed := false
	for _, n := range names {
		if !e.seen(n) && !strings.EqualFold(e.key, n) {
			e.seenAs = append(e.seenAs, n)
			changed = true
		}
	}
	return changed
}

// readKnown reads the file; a missing file is an empty one.
func readKnown(path string) (*knownGateways, error) {
	f, err := os.Open(path)
	if errors.Is(err, fs.ErrNotExist) {
		return &knownGateways{path: path}, nil
	}
	if err != nil {
		return nil, fmt.Errorf("read the known-gateways file: %w", err)
	}
	defer f.Close()
	if err := filelock.Lock(f, filelock.Shared); err != nil {
		return nil, fmt.Errorf("lock %s: %w", path, err)
	}
	data, err := io.ReadAll(f)
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", path, err)
	}
	return parseKnown(path, data)
}

// updateKnown changes the file under an exclusive lock: change gets what
// the file holds now and reports whether it changed anything. The file is
// rewritten in place (a rename would leave a waiting writer the old
// file), made mode 0600 in a folder 0700 when it is new.
func updateKnown(path string, change func(*knownGateways) (bool, error)) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return fmt.Errorf("create the known-gateways folder: %w", err)
	}
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return fmt.Errorf("open the known-gateways file: %w", err)
	}
	defer f.Close()
	if err := filelock.Lock(f, filelock.Exclusive); err != nil {
		return fmt.Errorf("lock %s: %w", path, err)
	}
	data, err := io.ReadAll(f)
	if err != nil {
		return fmt.Errorf("read %s: %w", path, err)
	}
	k, err := parseKnown(path, data)
	if err != nil {
		return err
	}
	changed, err := change(k)
	if err != nil || !changed {
		return err
	}
	out := k.render()
	if bytes.Equal(out, data) {
		return nil
	}
	if err := f.Truncate(0); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	if _, err := f.WriteAt(out, 0); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	if err := f.Sync(); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	return nil
}
