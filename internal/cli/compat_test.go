package cli

import (
	"bufio"
	"encoding/json"
	"net"
	"testing"

	"github.com/openhal/gateway/jsonrpc"
	"github.com/openhal/gateway/openhal"
)

// olderHub is a hub from before hal/write's replyWithinMs, over TCP: it
// refuses the unknown param as the Hub refuses any (INVALID_PARAMS
// unknown_param, data.param), and applies writes without it. It serves
// connections until the test ends, and sends the params of each write it
// receives on writes.
func olderHub(t *testing.T) (url string, writes <-chan map[string]any) {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	got := make(chan map[string]any, 16)
	answer := func(id json.RawMessage, method string, params map[string]any) []byte {
		switch {
		case method == openhal.MethodInitialize:
			b, _ := jsonrpc.AppendResult(nil, id, openhal.InitializeResult{ProtocolVersion: openhal.Version, Conformance: openhal.LevelFull})
			return b
		case method != openhal.MethodWrite:
			return jsonrpc.AppendError(nil, id, &jsonrpc.Error{Code: openhal.CodeMethodNotFound, Message: "no"})
		}
		got <- params
		if _, ok := params["replyWithinMs"]; ok {
			return jsonrpc.AppendError(nil, id, &jsonrpc.Error{Code: openhal.CodeInvalidParams, Message: `params: unknown param "replyWithinMs"`,
				Data: map[string]any{"reason": "unknown_param", "param": "replyWithinMs"}})
		}
		b, _ := jsonrpc.AppendResult(nil, id, openhal.WriteResult{Status: openhal.StatusApplied, Device: "bench.meter", Value: params["value"], Seq: 7})
		return b
	}
	go func() {
		for {
			nc, err := l.Accept()
			if err != nil {
				return
			}
			go func() {
				defer nc.Close()
				sc := bufio.NewScanner(nc)
				for sc.Scan() {
					var m struct {
						ID     json.RawMessage `json:"id"`
						Method string          `json:"method"`
						Params map[string]any  `json:"params"`
					}
					if json.Unmarshal(sc.Bytes(), &m) != nil {
						return
					}
					if m.ID != nil {
						nc.Write(append(answer(m.ID, m.Method, m.Params), '\n'))
					}
				}
			}()
		}
	}()
	return "tcp://" + l.Addr().String(), got
}

// `gateway write` against a gateway from before replyWithinMs: the write
// is refused for the param alone, so it goes again without it, once.
func TestWriteToOlderGateway(t *testing.T) {
	noEnv(t)
	url, writes := olderHub(t)
	out, _, err := runClient(t, cliApp.cmdWrite, "bench.meter", "HELLO", "--hub", url, "--token", "gw_x")
	if err != nil || out != "bench.meter = \"HELLO\" (seq 7)\n" {
		t.Errorf("write to an older gateway: %q, %v", out, err)
	}
	first, second := <-writes, <-writes
	if first["replyWithinMs"] != 500.0 || second["replyWithinMs"] != nil || len(writes) != 0 {
		t.Errorf("the writes sent: %v then %v (and %d more)", first, second, len(writes))
	}
	// --reply-within 0 sends no replyWithinMs: one write.
	if _, _, err := runClient(t, cliApp.cmdWrite, "bench.meter", "HELLO", "--hub", url, "--token", "gw_x", "--reply-within", "0"); err != nil {
		t.Errorf("write --reply-within 0: %v", err)
	}
	if p := <-writes; p["replyWithinMs"] != nil || len(writes) != 0 {
		t.Errorf("write --reply-within 0 sent %v", p)
	}
}
