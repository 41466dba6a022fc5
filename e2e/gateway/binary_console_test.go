package gateway_test

import (
	"crypto/tls"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// getPage fetches url and returns the status, the CSP and the body. An
// https URL is the gateway's own self-signed certificate on loopback: not
// verified here (TestBinaryTLS checks the certificate and its pinning).
func getPage(t *testing.T, url string) (int, string, string) {
	t.Helper()
	client := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: true}}}
	defer client.CloseIdleConnections()
	resp, err := client.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, resp.Header.Get("Content-Security-Policy"), string(b)
}

// gateway run serves the embedded console at / on its HTTP and HTTPS
// listeners and logs their URLs; --console-dir serves a folder instead.
func TestBinaryConsole(t *testing.T) {
	g := startGateway(t, t.TempDir(), "--wss", "127.0.0.1:0")
	base := "http://" + g.httpAddr + "/"
	g.err.waitFor(t, 0, `msg=console url=`+regexp.QuoteMeta(base)+`$`, waitLong)
	_, m := g.err.waitFor(t, 0, `msg=console url=(https://\S+)$`, waitLong)
	for _, url := range []string{base, m[1]} {
		status, csp, body := getPage(t, url)
		if status != 200 || !strings.Contains(csp, "default-src 'self'") || !strings.Contains(body, `src="app.js"`) {
			t.Errorf("GET %s: %d, CSP %q, body %q; want the console's index.html under its CSP", url, status, csp, body)
		}
	}
	if status, _, body := getPage(t, base+"healthz"); status != 200 || body != "ok\n" {
		t.Errorf("GET /healthz beside the console: %d %q", status, body)
	}
	g.stop(t)

	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "index.html"), []byte("<p>from disk</p>"), 0o644); err != nil {
		t.Fatal(err)
	}
	g = startGateway(t, t.TempDir(), "--console-dir", dir)
	if status, csp, body := getPage(t, "http://"+g.httpAddr+"/"); status != 200 || body != "<p>from disk</p>" || csp == "" {
		t.Errorf("GET / with --console-dir: %d, CSP %q, body %q; want the folder's index.html under the CSP", status, csp, body)
	}
	g.stop(t)
}

// A --console-dir without index.html is a usage error that names it, and
// nothing starts.
func TestBinaryConsoleDirRefused(t *testing.T) {
	dir := t.TempDir()
	r := gw(t, append(gatewayRunArgs(t.TempDir()), "--console-dir", dir)...)
	first, _, _ := strings.Cut(r.stderr, "\n")
	if r.code != 2 || first != "gateway: run: --console-dir: console folder "+dir+": no index.html (want the folder that holds it, such as internal/console/web)" {
		t.Errorf("gateway run --console-dir %s: exit %d, stderr %q; want 2 and the folder named", dir, r.code, r.stderr)
	}
}
