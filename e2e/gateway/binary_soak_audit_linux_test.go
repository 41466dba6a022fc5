package gateway_test

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/openhal/gateway/internal/halhub/audit"
)

// checkSoakAudit reads the node's audit log on disk, while no gateway
// writes it: every file ends with a whole line, every line is an entry
// with a seq of its own, growing within its file; every write a client
// was answered "applied" has its line (found by its reason), and every
// approval answered a line naming its confirmation. It returns the number of entries.
func checkSoakAudit(t testing.TB, n *soakNode, ledger *soakLedger, when string) int {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(n.dir, "audit", "*.log"))
	if err != nil || len(files) == 0 {
		t.Errorf("%s %s: no audit log in %s (%v)", n.name, when, filepath.Join(n.dir, "audit"), err)
		return 0
	}
	seen := map[uint64]string{}
	applied, approved := map[string]bool{}, map[string]bool{}
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatalf("read %s: %v", f, err)
		}
		if len(b) > 0 && b[len(b)-1] != '\n' {
			t.Errorf("%s %s: %s ends in a torn line: %q", n.name, when, f, b[bytes.LastIndexByte(b, '\n')+1:])
		}
		var last uint64
		for i, line := range strings.Split(strings.TrimSuffix(string(b), "\n"), "\n") {
			if line == "" && len(b) == 0 {
				break
			}
			var e audit.Entry
			if err := json.Unmarshal([]byte(line), &e); err != nil || e.Seq == 0 {
				t.Errorf("%s %s: %s line %d is not an entry (%v): %q", n.name, when, filepath.Base(f), i+1, err, line)
				continue
			}
			if other, dup := seen[e.Seq]; dup {
				t.Errorf("%s %s: seq %d in %s and %s", n.name, when, e.Seq, other, filepath.Base(f))
			}
			if e.Seq <= last {
				t.Errorf("%s %s: %s line %d: seq %d after %d", n.name, when, filepath.Base(f), i+1, e.Seq, last)
			}
			seen[e.Seq], last = filepath.Base(f), e.Seq
			if e.Action == "write" && e.Outcome == "applied" {
				applied[e.Reason] = true
			}
			// An approval has its own line up to a rate (10 per 10
			// minutes per admin), and is counted past it (docs/protocol.md,
			// "Audit log"); the write it applied always has its line,
			// naming the confirmation.
			if e.Confirmation != "" && (e.Action == "approve" || e.Action == "write") {
				approved[e.Confirmation] = true
			}
		}
	}
	writes, approvals := ledger.answers(n.name)
	missing := func(what string, answered []string, logged map[string]bool) {
		var lost []string
		for _, k := range answered {
			if !logged[k] {
				lost = append(lost, k)
			}
		}
		if len(lost) > 0 {
			t.Errorf("%s %s: %d of %d %s answered have no audit line: %s", n.name, when, len(lost), len(answered), what, strings.Join(lost[:min(len(lost), 10)], ", "))
		}
	}
	missing("writes", writes, applied)
	missing("approvals", approvals, approved)
	return len(seen)
}
