package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	"github.com/openhal/gateway/adapter"
)

// adapterVersion is the version of halbench's idle adapters.
const adapterVersion = "0.1.0"

// cmdAdapter runs an idle service adapter named args[0]: it answers the
// handshake and the gateway's pings and does nothing else, so that the
// gateway's CPU while supervising it is supervision alone.
func cmdAdapter(ctx context.Context, args []string, stderr io.Writer) error {
	if len(args) != 1 {
		fmt.Fprintln(stderr, "usage: halbench adapter NAME (the gateway starts it; halbench installs it)")
		return errUsage
	}
	return adapter.Adapter{Name: args[0], Version: adapterVersion}.Run(ctx, os.Stdin, os.Stdout)
}

// idleAdapterName is the name of the i-th idle adapter.
func idleAdapterName(i int) string { return fmt.Sprintf("idle%02d", i+1) }

// installIdleAdapters installs n idle adapters into the gateway's state
// directory, each a folder with its manifest and a copy of halbench
// (whose adapter subcommand it runs), with the gateway's own install
// command, as an operator would install one. It returns their names.
func installIdleAdapters(ctx context.Context, gateway, state, work string, n int) ([]string, error) {
	self, err := os.Executable()
	if err != nil {
		return nil, fmt.Errorf("idle adapters: find halbench's own binary: %w", err)
	}
	var names []string
	for i := range n {
		name := idleAdapterName(i)
		src := filepath.Join(work, "adapter-"+name)
		if err := writeIdleAdapter(src, name, self); err != nil {
			return nil, err
		}
		out, err := exec.CommandContext(ctx, gateway, "adapter", "install", src, "--state-dir", state, "--hub", "tcp://127.0.0.1:1").CombinedOutput()
		if err != nil {
			return nil, fmt.Errorf("install idle adapter %s: %w: %s", name, err, strings.TrimSpace(string(out)))
		}
		os.RemoveAll(src)
		names = append(names, name)
	}
	return names, nil
}

// writeIdleAdapter writes an adapter folder: the manifest of a service
// that reads, and halbench itself as its executable.
func writeIdleAdapter(dir, name, self string) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("idle adapter %s: %w", name, err)
	}
	man, err := json.Marshal(map[string]any{
		"name": name, "version": adapterVersion, "kind": "service",
		"exec": "halbench", "args": []string{"adapter", name}, "env_pass": []string{},
		"grant": map[string]string{"level": "read", "scope": "all"}, "devices": []any{},
	})
	if err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(dir, "adapter.json"), man, 0o644); err != nil {
		return fmt.Errorf("idle adapter %s: %w", name, err)
	}
	return copyFile(self, filepath.Join(dir, "halbench"), 0o755)
}

func copyFile(from, to string, mode os.FileMode) error {
	in, err := os.Open(from)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.OpenFile(to, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, mode)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return fmt.Errorf("copy %s: %w", from, err)
	}
	return out.Close()
}
