package gateway_test

import (
	"bytes"
	"context"
	"crypto/tls"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/netip"
	"os"
	"sync"
	"time"

	"github.com/openhal/gateway/internal/discovery"
	"github.com/openhal/gateway/internal/tlscert"
)

// A rogue responder is this test binary run again, in a network
// namespace, with rogueEnv set (TestMain sends it here): it announces
// _openhal-ws._tcp under a gateway's name and id, listens, and appends
// every byte a client sends it to a file, so that a test can tell
// whether a token ever reached it. It runs until its standard input
// closes, then withdraws.

// rogueEnv carries the rogue's settings, as JSON.
const rogueEnv = "GATEWAY_TEST_ROGUE"

type rogueConfig struct {
	Name, ID string
	// TLS serves a certificate of its own made for ID in CertDir, and
	// announces it (tls=1, fp); else plain, tls=0.
	TLS     bool
	CertDir string
	Port    int
	Record  string // the file every byte received is appended to
}

// runRogueIfAsked runs the rogue and exits when this process is one.
func runRogueIfAsked() {
	if spec := os.Getenv(rogueEnv); spec != "" {
		if err := runRogue(spec); err != nil {
			fmt.Fprintln(os.Stderr, "rogue:", err)
			os.Exit(1)
		}
		os.Exit(0)
	}
}

func runRogue(spec string) error {
	var rc rogueConfig
	if err := json.Unmarshal([]byte(spec), &rc); err != nil {
		return err
	}
	ln, err := net.Listen("tcp", fmt.Sprintf("0.0.0.0:%d", rc.Port))
	if err != nil {
		return err
	}
	text := map[string]string{
		discovery.KeyProtocol: "openhal/0.1", discovery.KeyLevel: "full", discovery.KeyID: rc.ID,
		discovery.KeyTLS: "0", discovery.KeyPath: discovery.WSPath, discovery.KeyConsole: "1", discovery.KeyMCP: "0",
	}
	if rc.TLS {
		cert, _, err := tlscert.LoadOrCreate(rc.CertDir, "", "", tlscert.Identity{GatewayID: rc.ID})
		if err != nil {
			return err
		}
		ln = tls.NewListener(ln, tlscert.ServerConfig(cert))
		text[discovery.KeyTLS], text[discovery.KeyFingerprint] = "1", tlscert.Fingerprint(cert)
	}
	rec, err := os.OpenFile(rc.Record, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o600)
	if err != nil {
		return err
	}
	defer rec.Close()
	var mu sync.Mutex
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go keep(c, rec, &mu)
		}
	}()
	pub := discovery.NewBuiltin(slog.New(slog.NewTextHandler(os.Stderr, nil)))
	svc := discovery.Service{Name: rc.Name, Type: discovery.TypeWS, Port: rc.Port, Addr: netip.IPv4Unspecified(), Text: text}
	if err := pub.Publish(context.Background(), []discovery.Service{svc}); err != nil {
		return err
	}
	fmt.Printf("rogue: announced %q id=%s tls=%s fp=%s\n", rc.Name, rc.ID, text[discovery.KeyTLS], text[discovery.KeyFingerprint])
	io.Copy(io.Discard, os.Stdin)
	pub.Close()
	return ln.Close()
}

// keep appends what c sends to rec, as it comes, until the end of an
// HTTP request's headers, the client's end or a few seconds.
func keep(c net.Conn, rec *os.File, mu *sync.Mutex) {
	defer c.Close()
	c.SetDeadline(time.Now().Add(5 * time.Second))
	var seen []byte
	buf := make([]byte, 4096)
	for {
		n, err := c.Read(buf) // over TLS, the handshake first
		if n > 0 {
			mu.Lock()
			rec.Write(buf[:n])
			mu.Unlock()
			seen = append(seen, buf[:n]...)
		}
		if err != nil || bytes.Contains(seen, []byte("\r\n\r\n")) {
			return
		}
	}
}
