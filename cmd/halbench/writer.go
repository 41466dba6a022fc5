package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strconv"
	"time"

	"github.com/openhal/gateway/halclient"
)

// The fan-out's writer runs in a process of its own (halbench writer), so
// that its latency is the gateway's and the machine's, not a wait behind
// 250 watchers in halbench's own Go runtime, which the writer would share
// with them.

// writerTokenEnv carries the token to the writer process: not on its
// command line, which every user of the machine can read.
const writerTokenEnv = "HALBENCH_TOKEN"

// writerReport is what the writer process prints: writeResult on the wire.
type writerReport struct {
	Seqs      []uint64        `json:"seqs"`
	Latencies []time.Duration `json:"latencies"`
	Errors    int             `json:"errors"`
	Elapsed   time.Duration   `json:"elapsed"`
	Err       string          `json:"err,omitempty"`
}

// cmdWriter runs the fan-out's writer against --url and prints its
// report as JSON on stdout.
func cmdWriter(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("halbench writer", flag.ContinueOnError)
	fs.SetOutput(stderr)
	url := fs.String("url", "", "the gateway's WebSocket `URL`")
	s := &settings{}
	fs.IntVar(&s.writeRate, "rate", 1000, "writes a second")
	fs.DurationVar(&s.fanout, "duration", 10*time.Second, "how long to write")
	fs.IntVar(&s.window, "window", 8, "writes in flight at most")
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return err
		}
		return errUsage
	}
	c, err := halclient.Dial(ctx, *url, halclient.Options{Token: os.Getenv(writerTokenEnv), ClientName: "halbench-write"})
	if err != nil {
		return fmt.Errorf("fan-out: writer: %w", err)
	}
	defer c.Close()
	wr := write(ctx, c, s)
	rep := writerReport{Seqs: wr.seqs, Latencies: wr.lat, Errors: wr.errors, Elapsed: wr.elapsed}
	if wr.err != nil {
		rep.Err = wr.err.Error()
	}
	return json.NewEncoder(stdout).Encode(rep)
}

// runWriter runs the fan-out's writer process against srv's gateway.
func runWriter(ctx context.Context, s *settings, srv servers) writeResult {
	self, err := os.Executable()
	if err != nil {
		return writeResult{err: fmt.Errorf("fan-out: find halbench's own binary for the writer: %w", err)}
	}
	cmd := exec.CommandContext(ctx, self, "writer", "--url", srv.gateway[transportWS],
		"--rate", strconv.Itoa(s.writeRate), "--duration", s.fanout.String(), "--window", strconv.Itoa(s.window))
	cmd.Env = append(os.Environ(), writerTokenEnv+"="+srv.token)
	cmd.SysProcAttr = childAttr()
	var stderr limitedBuffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return writeResult{err: fmt.Errorf("fan-out: the writer process: %w: %s", err, stderr.String())}
	}
	var rep writerReport
	if err := json.Unmarshal(out, &rep); err != nil {
		return writeResult{err: fmt.Errorf("fan-out: the writer's report: %w", err)}
	}
	wr := writeResult{seqs: rep.Seqs, lat: rep.Latencies, errors: rep.Errors, elapsed: rep.Elapsed}
	if rep.Err != "" {
		wr.err = errors.New(rep.Err)
	}
	return wr
}

// limitedBuffer keeps the first 4 KiB written to it: a child's stderr, to
// explain its failure.
type limitedBuffer struct{ b []byte }

func (l *limitedBuffer) Write(p []byte) (int, error) {
	if room := 4<<10 - len(l.b); room > 0 {
		l.b = append(l.b, p[:min(len(p), room)]...)
	}
	return len(p), nil
}

func (l *limitedBuffer) String() string { return string(l.b) }
