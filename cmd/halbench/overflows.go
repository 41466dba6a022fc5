package main

import (
	"bufio"
	"context"
	"fmt"
	"net/http"
	"strconv"
	"strings"
)

// overflowMetric counts the connections the gateway closed because their
// queue could not take a message (docs/protocol.md, "Transports and
// limits"): a client that reads must never be one of them.
const overflowMetric = "gateway_hal_queue_overflows_total"

// queueOverflows reads overflowMetric from the gateway's /metrics, on the
// HTTP listener of its WebSocket URL, with the benchmark's token.
func queueOverflows(ctx context.Context, srv servers) (uint64, error) {
	ws := srv.gateway[transportWS]
	base, ok := strings.CutPrefix(ws, "ws://")
	if !ok {
		return 0, fmt.Errorf("/metrics of %s: only a ws:// gateway is read", ws)
	}
	host, _, _ := strings.Cut(base, "/")
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, "http://"+host+"/metrics", nil)
	if err != nil {
		return 0, err
	}
	req.Header.Set("Authorization", "Bearer "+srv.token)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return 0, fmt.Errorf("/metrics: %w", err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return 0, fmt.Errorf("/metrics: %s", resp.Status)
	}
	sc := bufio.NewScanner(resp.Body)
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), overflowMetric+" "); ok {
			return strconv.ParseUint(v, 10, 64)
		}
	}
	if err := sc.Err(); err != nil {
		return 0, fmt.Errorf("/metrics: %w", err)
	}
	return 0, fmt.Errorf("/metrics has no %s", overflowMetric)
}
