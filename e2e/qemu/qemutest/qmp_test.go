package qemutest

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"net"
	"path/filepath"
	"testing"
	"time"
)

// fakeQEMU serves one QMP session on a Unix socket: it sends the
// greeting, then answers each command with answers[execute] (lines sent
// in order, events included) and records what it received.
func fakeQEMU(t *testing.T, answers map[string][]string) (path string, got <-chan map[string]any) {
	t.Helper()
	path = filepath.Join(t.TempDir(), "qmp.sock")
	ln, err := net.Listen("unix", path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	ch := make(chan map[string]any, 10)
	go func() {
		c, err := ln.Accept()
		if err != nil {
			return
		}
		defer c.Close()
		c.Write([]byte(`{"QMP": {"version": {"qemu": {"major": 7}}, "capabilities": []}}` + "\n"))
		sc := bufio.NewScanner(c)
		for sc.Scan() {
			var req map[string]any
			if err := json.Unmarshal(sc.Bytes(), &req); err != nil {
				return
			}
			ch <- req
			cmd, _ := req["execute"].(string)
			for _, line := range answers[cmd] {
				if _, err := c.Write([]byte(line + "\n")); err != nil {
					return
				}
			}
		}
	}()
	return path, ch
}

func TestQMP(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	path, got := fakeQEMU(t, map[string][]string{
		"qmp_capabilities": {`{"return": {}}`},
		"qom-get":          {`{"event": "X", "data": {}}`, `{"return": 23125}`},
		"device_del": {
			`{"event": "DEVICE_DELETED", "data": {"device": "other"}}`,
			`{"return": {}}`,
			`{"event": "DEVICE_DELETED", "data": {"device": "usbser"}}`,
		},
		"device_add": {`{"error": {"class": "GenericError", "desc": "Bus 'i2c' does not support hotplugging"}}`},
	})
	q, err := DialQMP(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	defer q.Close()
	if req := <-got; req["execute"] != "qmp_capabilities" || req["arguments"] != nil {
		t.Errorf("first command %v, want qmp_capabilities without arguments", req)
	}

	ret, err := q.Run(ctx, "qom-get", map[string]any{"path": "/machine/peripheral/tmp0", "property": "temperature"})
	if err != nil || string(ret) != "23125" {
		t.Errorf("qom-get = %s, %v; want 23125 past the event", ret, err)
	}
	req := <-got
	if args, _ := req["arguments"].(map[string]any); args["path"] != "/machine/peripheral/tmp0" {
		t.Errorf("qom-get sent %v", req)
	}

	if _, err := q.Run(ctx, "device_del", map[string]any{"id": "usbser"}); err != nil {
		t.Fatalf("device_del: %v", err)
	}
	<-got
	// DEVICE_DELETED of "other" came before the answer and is not it;
	// the one of usbser comes after and is read from the socket.
	if err := q.WaitEvent(ctx, "DEVICE_DELETED", "usbser"); err != nil {
		t.Errorf("WaitEvent: %v", err)
	}

	_, err = q.Run(ctx, "device_add", map[string]any{"driver": "tmp105"})
	var qe *Error
	if !errors.As(err, &qe) || qe.Class != "GenericError" || qe.Desc != "Bus 'i2c' does not support hotplugging" {
		t.Errorf("device_add error = %v, want the QMP error", err)
	}
	<-got

	short, cancelShort := context.WithTimeout(ctx, 100*time.Millisecond)
	defer cancelShort()
	if err := q.WaitEvent(short, "DEVICE_DELETED", "never"); !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("WaitEvent for an event that never comes = %v, want the deadline", err)
	}
}

// TestDialQMPWaitsForTheSocket: QEMU makes its socket as it starts, so
// dialing before it exists retries until ctx ends.
func TestDialQMPWaitsForTheSocket(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	_, err := DialQMP(ctx, filepath.Join(t.TempDir(), "none.sock"))
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("DialQMP of a missing socket = %v, want the deadline", err)
	}
}
