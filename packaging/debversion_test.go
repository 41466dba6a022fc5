// Package packaging holds the Debian packaging's scripts; its test checks
// that the versions they give sort as the builds were made.
package packaging

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// TestDebVersionsSort builds a history in a scratch repository (commits at
// set dates, tags, a dirty tree) and checks with dpkg itself that each
// build's version sorts after the one before: a later commit after an
// earlier one, a tag after the ~git builds before it, a build after a tag
// above the tag and below the next one.
func TestDebVersionsSort(t *testing.T) {
	if _, err := exec.LookPath("dpkg"); err != nil {
		t.Skip("no dpkg to compare versions with")
	}
	script, err := filepath.Abs("debversion.sh")
	if err != nil {
		t.Fatal(err)
	}
	r := newRepo(t)
	steps := []struct {
		name string
		do   func()
		want string // a regexp the version must match
	}{
		{"first commit", func() { r.commit("2026-12-01T10:00:00Z") }, `^0\.1\.0~git20261201\.100000\.[0-9a-f]{7}$`},
		{"same day, later", func() { r.commit("2026-12-01T10:00:05Z") }, `^0\.1\.0~git20261201\.100005\.[0-9a-f]{7}$`},
		// 23:30 in New York is the next day in UTC: the date is UTC's.
		{"next day (UTC)", func() { r.commit("2026-12-01T23:30:00-05:00") }, `^0\.1\.0~git20261202\.043000\.[0-9a-f]{7}$`},
		{"tag v0.1.0", func() { r.git("tag", "v0.1.0") }, `^0\.1\.0$`},
		{"after the tag", func() { r.commit("2026-12-03T08:00:00Z") }, `^0\.1\.0\+git20261203\.080000\.[0-9a-f]{7}$`},
		{"uncommitted change", func() { r.write("file", "dirty") }, `^0\.1\.0\+git20261203\.080000\.[0-9a-f]{7}\.dirty$`},
		{"tag v0.2.0", func() { r.commit("2026-12-04T08:00:00Z"); r.git("tag", "v0.2.0") }, `^0\.2\.0$`},
	}
	prev := ""
	for _, s := range steps {
		s.do()
		cmd := exec.Command("sh", script)
		cmd.Dir = r.dir
		cmd.Env = append(os.Environ(), "TZ=America/New_York")
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("%s: debversion.sh: %v", s.name, err)
		}
		v := strings.TrimSpace(string(out))
		if !regexp.MustCompile(s.want).MatchString(v) {
			t.Errorf("%s: version %q, want %s", s.name, v, s.want)
		}
		if prev != "" {
			if err := exec.Command("dpkg", "--compare-versions", v, "gt", prev).Run(); err != nil {
				t.Errorf("%s: %q does not sort after the build before it, %q", s.name, v, prev)
			}
		}
		prev = v
	}
}

// repo is a scratch git repository.
type repo struct {
	t   *testing.T
	dir string
	n   int
}

func newRepo(t *testing.T) *repo {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("no git")
	}
	r := &repo{t: t, dir: t.TempDir()}
	r.git("init", "-q")
	return r
}

func (r *repo) git(args ...string) {
	r.t.Helper()
	r.gitAt("", args...)
}

func (r *repo) gitAt(date string, args ...string) {
	r.t.Helper()
	cmd := exec.Command("git", args...)
	cmd.Dir = r.dir
	cmd.Env = append(os.Environ(), "GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@example.com",
		"GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@example.com", "GIT_CONFIG_GLOBAL=/dev/null")
	if date != "" {
		cmd.Env = append(cmd.Env, "GIT_COMMITTER_DATE="+date, "GIT_AUTHOR_DATE="+date)
	}
	if out, err := cmd.CombinedOutput(); err != nil {
		r.t.Fatalf("git %s: %v\n%s", strings.Join(args, " "), err, out)
	}
}

func (r *repo) write(name, body string) {
	r.t.Helper()
	if err := os.WriteFile(filepath.Join(r.dir, name), []byte(body), 0o644); err != nil {
		r.t.Fatal(err)
	}
}

// commit commits a change to file, dated date.
func (r *repo) commit(date string) {
	r.t.Helper()
	r.n++
	r.write("file", strings.Repeat("x", r.n))
	r.gitAt(date, "add", "file")
	r.gitAt(date, "commit", "-q", "-m", "change")
}
