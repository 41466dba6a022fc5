package reference

import (
	"bytes"
	"os"
	"path/filepath"
	"regexp"
	"testing"
)

func TestFileWellFormed(t *testing.T) {
	frames, err := parse(framesTxt)
	if err != nil {
		t.Fatal(err)
	}
	if len(frames) == 0 {
		t.Fatal("no frames")
	}
	seen := map[string]bool{}
	for _, f := range frames {
		if seen[f.Name] {
			t.Errorf("frame %q twice", f.Name)
		}
		seen[f.Name] = true
		if bytes.ContainsAny(f.Bytes, "\r\n\t") {
			t.Errorf("frame %q has a tab or line break", f.Name)
		}
	}
}

func TestParseRejects(t *testing.T) {
	for _, text := range []string{
		"name\tdaemon",
		"name\tsomeone\t{}",
		"\tdaemon\t{}",
		"name\tadapter\t",
	} {
		if frames, err := parse(text); err == nil || len(frames) != 0 {
			t.Errorf("parse(%q) = %v, %v; want an error and no frame", text, frames, err)
		}
	}
}

func TestBytes(t *testing.T) {
	want := `{"jsonrpc":"2.0","id":2,"result":{}}`
	if got := Bytes("ping_result"); string(got) != want {
		t.Errorf("Bytes(ping_result) = %s, want %s", got, want)
	}
	if got := Bytes("no such frame"); got != nil {
		t.Errorf("Bytes(no such frame) = %q, want nil", got)
	}
	// Copies: changing one does not change the next.
	Bytes("ping_result")[0] = 'X'
	if got := Bytes("ping_result"); string(got) != want {
		t.Errorf("Bytes returned shared memory: %s", got)
	}
}

// TestFramesInSeeds checks both ways that the file holds exactly the seed
// pages' frames, byte for byte, when the seeds are at hand.
func TestFramesInSeeds(t *testing.T) {
	seeds := seedDir(t)
	files, err := filepath.Glob(filepath.Join(seeds, "*.txt"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no seed pages in %s: %v", seeds, err)
	}
	lineRE := regexp.MustCompile(`^(daemon|adapter):[ ]+(.*)$`)
	type key struct{ from, frame string }
	inSeeds := map[key]bool{}
	for _, file := range files {
		text, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		for _, line := range bytes.Split(text, []byte("\n")) {
			if m := lineRE.FindSubmatch(line); m != nil {
				inSeeds[key{string(m[1]), string(m[2])}] = true
			}
		}
	}
	inFile := map[key]bool{}
	for _, f := range Frames() {
		k := key{f.From, string(f.Bytes)}
		inFile[k] = true
		if !inSeeds[k] {
			t.Errorf("frame %q (%s) is not in the seed pages verbatim: %s", f.Name, f.From, f.Bytes)
		}
	}
	for k := range inSeeds {
		if !inFile[k] {
			t.Errorf("seed frame missing from frames.txt: %s: %s", k.from, k.frame)
		}
	}
}

func seedDir(t *testing.T) string {
	for _, dir := range []string{"../../../shared/seeds", "/work/shared/seeds"} {
		if st, err := os.Stat(dir); err == nil && st.IsDir() {
			return dir
		}
	}
	t.Skip("seed pages not found")
	return ""
}
