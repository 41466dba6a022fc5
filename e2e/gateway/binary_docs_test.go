package gateway_test

import (
	"bufio"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// Docs that run as written (issue 32): the shell snippets of the README
// and docs/ that a reader would paste, run against a sim gateway, so that
// a command the docs show and the binary no longer takes fails here.
//
// A page marks a snippet with an HTML comment (invisible on GitHub) on
// the line before its fence:
//
//   - `<!-- doc-test -->` before a ```sh block of commands: each runs, and
//     must exit 0;
//   - `<!-- doc-test: transcript -->` before a block of `$ command`
//     lines, each followed by what it prints: each command runs, exits 1
//     when what it shows starts `gateway: ` (an error) and 0 otherwise,
//     and its output's first line begins as shown, up to the first digit
//     or `…` (times, seqs and ids differ run to run).
//
// Each page gets a gateway of its own, on free ports, run as a reader
// runs it: bin/gateway of a checkout (a copy of the binary under test in
// a directory with the gateway's go.mod, so that its state is ./state),
// with no --state-dir, and the commands run from that checkout with
// `gateway` on PATH. A `gw_…` in a command stands for the token the
// last `token add` printed, as a reader would paste it. A command whose
// line says `until Ctrl-C` does not end by itself and is not run.
func TestBinaryDocsRunAsWritten(t *testing.T) {
	t.Parallel()
	root := filepath.Join("..", "..")
	pages, err := filepath.Glob(filepath.Join(root, "docs", "*.md"))
	if err != nil {
		t.Fatal(err)
	}
	pages = append([]string{filepath.Join(root, "README.md")}, pages...)
	marked := 0
	for _, page := range pages {
		snips := docSnippets(t, page)
		if len(snips) == 0 {
			continue
		}
		marked += len(snips)
		name, _ := filepath.Rel(root, page)
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			checkout := docCheckout(t)
			var token string
			for _, s := range snips {
				for _, c := range s.cmds {
					token = runDocCommand(t, checkout, name, s, c, token)
				}
			}
		})
	}
	if marked < 5 {
		t.Errorf("only %d snippets are marked doc-test in README.md and docs/", marked)
	}
}

// docSnippet is a marked block of a page.
type docSnippet struct {
	line       int // of its fence
	transcript bool
	cmds       []docCommand
}

// docCommand is one command of a snippet, with what a transcript shows
// it print (nil for a plain block).
type docCommand struct {
	text  string
	shown []string
}

var docMark = regexp.MustCompile(`^<!-- doc-test(: transcript)? -->$`)

// docSnippets reads the marked blocks of a page.
func docSnippets(t *testing.T, page string) []docSnippet {
	t.Helper()
	f, err := os.Open(page)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []docSnippet
	sc := bufio.NewScanner(f)
	n := 0
	next := func() (string, bool) {
		if !sc.Scan() {
			return "", false
		}
		n++
		return sc.Text(), true
	}
	for line, ok := next(); ok; line, ok = next() {
		m := docMark.FindStringSubmatch(line)
		if m == nil {
			continue
		}
		fence, ok := next()
		if !ok || !strings.HasPrefix(fence, "```") {
			t.Fatalf("%s:%d: a doc-test mark not followed by a fenced block", page, n)
		}
		s := docSnippet{line: n, transcript: m[1] != ""}
		var body []string
		for l, ok := next(); ok && !strings.HasPrefix(l, "```"); l, ok = next() {
			body = append(body, l)
		}
		s.cmds = parseDocBlock(body, s.transcript)
		out = append(out, s)
	}
	return out
}

// parseDocBlock splits a block into commands: lines joined where they
// end with a backslash, blank and comment lines dropped; in a transcript,
// only `$ ` lines are commands, and the lines after each are what it
// shows.
func parseDocBlock(body []string, transcript bool) []docCommand {
	var cmds []docCommand
	for i := 0; i < len(body); i++ {
		l := body[i]
		if transcript {
			if cmd, ok := strings.CutPrefix(l, "$ "); ok {
				cmds = append(cmds, docCommand{text: cmd, shown: []string{}})
			} else if len(cmds) > 0 {
				cmds[len(cmds)-1].shown = append(cmds[len(cmds)-1].shown, l)
			}
			continue
		}
		for strings.HasSuffix(l, `\`) && i+1 < len(body) {
			i++
			l = strings.TrimSuffix(l, `\`) + " " + strings.TrimSpace(body[i])
		}
		if t := strings.TrimSpace(l); t != "" && !strings.HasPrefix(t, "#") {
			cmds = append(cmds, docCommand{text: l})
		}
	}
	return cmds
}

// docCheckout makes a checkout as a reader has one after `make build`
// (go.mod and bin/gateway), starts its gateway as `make run` does on free
// ports, and returns the checkout's directory.
func docCheckout(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "go.mod"), "module github.com/openhal/gateway\n\ngo 1.25.0\n")
	bin := filepath.Join(dir, "bin", "gateway")
	if err := os.MkdirAll(filepath.Dir(bin), 0o755); err != nil {
		t.Fatal(err)
	}
	// A link, or a copy by cp: a file this process had open for writing
	// could not be run while a child forked meanwhile (by a parallel
	// test) still held the descriptor ("text file busy").
	if err := os.Link(gatewayBinary(t), bin); err != nil {
		if out, err := exec.Command("cp", gatewayBinary(t), bin).CombinedOutput(); err != nil {
			t.Fatalf("cp the gateway into the checkout: %v\n%s", err, out)
		}
	}
	c := newChild("bin/gateway run (doc checkout)", exec.Command(bin, "run", "--mcp", "--http", "127.0.0.1:0", "--tcp", "127.0.0.1:0"))
	c.cmd.Dir, c.cmd.Env = dir, childEnv()
	c.start(t)
	readyGateway(t, c, filepath.Join(dir, "state"), 7)
	return dir
}

// docTokenLine is what `gateway token add` prints.
var docTokenLine = regexp.MustCompile(`^gw_\S+$`)

// runDocCommand runs one command of a page in the checkout and checks it
// as its snippet says; it returns the token to paste for `gw_…` next.
func runDocCommand(t *testing.T, checkout, page string, s docSnippet, c docCommand, token string) string {
	t.Helper()
	if strings.Contains(c.text, "until Ctrl-C") {
		return token
	}
	text := c.text
	if token != "" {
		text = strings.ReplaceAll(text, "gw_…", token)
	}
	ctx, cancel := context.WithTimeout(context.Background(), waitLong)
	defer cancel()
	cmd := exec.CommandContext(ctx, "sh", "-c", text)
	cmd.Dir = checkout
	cmd.Env = append(childEnv(), "PATH="+filepath.Join(checkout, "bin")+string(os.PathListSeparator)+os.Getenv("PATH"))
	var stdout, stderr strings.Builder
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	code := cmd.ProcessState.ExitCode()
	where := page + ":" + strconv.Itoa(s.line)
	out := stdout.String() + stderr.String()
	wantCode := 0
	if len(c.shown) > 0 && strings.HasPrefix(c.shown[0], "gateway: ") {
		wantCode = 1
	}
	if code != wantCode {
		t.Errorf("%s: %q exits %d (%v), want %d; it printed:\n%s", where, c.text, code, err, wantCode, out)
		return token
	}
	if c.shown != nil {
		first, _, _ := strings.Cut(out, "\n")
		if want := shownPrefix(c.shown); !strings.HasPrefix(oneSpaced(first), want) {
			t.Errorf("%s: %q printed %q first, the page shows %q", where, c.text, first, firstOr(c.shown))
		}
	}
	if line := strings.TrimSpace(stdout.String()); docTokenLine.MatchString(line) {
		token = line
	}
	return token
}

// shownPrefix is what a shown output's first line must begin with: up to
// its first digit or ellipsis, its spaces one (a table's columns are as
// wide as their values).
func shownPrefix(shown []string) string {
	first := oneSpaced(firstOr(shown))
	if i := strings.IndexFunc(first, func(r rune) bool { return r >= '0' && r <= '9' || r == '…' }); i >= 0 {
		return first[:i]
	}
	return first
}

func firstOr(lines []string) string {
	if len(lines) == 0 {
		return ""
	}
	return lines[0]
}

// oneSpaced is s with each run of spaces one space.
func oneSpaced(s string) string {
	lead := len(s) - len(strings.TrimLeft(s, " "))
	return strings.Repeat(" ", min(lead, 1)) + strings.Join(strings.Fields(s), " ")
}

// TestMakeRunPassesArgs: `make run ARGS='...'`, as the README shows it,
// hands ARGS to `gateway run` (make -n prints the recipe, running
// nothing).
func TestMakeRunPassesArgs(t *testing.T) {
	t.Parallel()
	if _, err := exec.LookPath("make"); err != nil {
		t.Skip("no make")
	}
	args := "--http 127.0.0.1:7760 --tcp 127.0.0.1:7761 --state-dir /tmp/gw"
	cmd := exec.Command("make", "-n", "run", "ARGS="+args)
	cmd.Dir = filepath.Join("..", "..")
	out, err := cmd.CombinedOutput()
	if err != nil || !regexp.MustCompile(`(?m)^\./bin/gateway run --mcp `+regexp.QuoteMeta(args)+`$`).Match(out) {
		t.Errorf("make -n run ARGS='%s': %v\n%s", args, err, out)
	}
}
