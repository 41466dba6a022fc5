package console

import (
	"compress/gzip"
	"io/fs"
	"testing"
)

// budget is what the console's files may weigh gzipped, all together
// (issue 14): a phone on a weak Wi-Fi loads the page in about a second.
const budget = 250 << 10

// The embedded files, each gzipped at the best level (as a server or the
// browser's cache would hold them), fit the budget. go test -v prints the
// figure that docs/console.md quotes.
func TestBudget(t *testing.T) {
	files := Files()
	var raw, gzipped int64
	err := fs.WalkDir(files, ".", func(name string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := fs.ReadFile(files, name)
		if err != nil {
			return err
		}
		n, err := gzipSize(b)
		if err != nil {
			return err
		}
		t.Logf("%-36s %7d bytes, %6d gzipped", name, len(b), n)
		raw += int64(len(b))
		gzipped += n
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("console assets: %d bytes, %d gzipped (%.1f KiB of the %d KiB budget)", raw, gzipped, float64(gzipped)/1024, budget>>10)
	if gzipped >= budget {
		t.Errorf("console assets are %d bytes gzipped; the budget is under %d", gzipped, budget)
	}
}

func gzipSize(b []byte) (int64, error) {
	var n countWriter
	z, err := gzip.NewWriterLevel(&n, gzip.BestCompression)
	if err != nil {
		return 0, err
	}
	if _, err := z.Write(b); err != nil {
		return 0, err
	}
	if err := z.Close(); err != nil {
		return 0, err
	}
	return int64(n), nil
}

// countWriter counts the bytes written to it.
type countWriter int64

func (c *countWriter) Write(p []byte) (int, error) {
	*c += countWriter(len(p))
	return len(p), nil
}
