package halhub

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/openhal/gateway/jsonrpc"
	"github.com/openhal/gateway/openhal"
)

// confirmationsListEnvelope is an answer to hal/confirmations/list
// without its confirmations, at its longest (pageRoom).
const confirmationsListEnvelope = `{"confirmations":[],"next":"c-18446744073709551615"}`

// serveConfirmationsList answers hal/confirmations/list with one page:
// the requests the token may see, by id, after params.after, at most
// params.limit of them and no more than fit in one message of
// MaxMessageBytes (at least one, whatever its size). next names the last
// one when more follow.
func serveConfirmationsList(s *session, ctx context.Context, params json.RawMessage) (any, *jsonrpc.Error) {
	var p openhal.ConfirmationsListParams
	if err := decodeParams(params, &p); err != nil {
		return nil, err
	}
	if p.Status != "" && !slices.Contains(openhal.ConfirmStatuses, p.Status) {
		// A misspelt filter ("approve") must not look like "none of those".
		return nil, newError(openhal.CodeInvalidParams, "not_in_enum",
			fmt.Sprintf("params.status: %q is not one of %s", p.Status, strings.Join(openhal.ConfirmStatuses, ", ")),
			errorData{"param": "status", "allowed": openhal.ConfirmStatuses})
	}
	after, err := parseAfter(p.After)
	if err != nil {
		return nil, err
	}
	limit := openhal.MaxConfirmationsPage
	if p.Limit != nil {
		if *p.Limit < 1 || *p.Limit > openhal.MaxConfirmationsPage {
			return nil, errParam("out_of_range", "limit", "params.limit must be between 1 and %d", openhal.MaxConfirmationsPage)
		}
		limit = *p.Limit
	}
	_, entry := s.who()
	room := s.pageRoom(ctx, confirmationsListEnvelope)
	return s.buildPage(ctx, func() (any, *jsonrpc.Error) {
		all := s.hub.confirms.after(after, func(c *openhal.Confirmation) bool {
			return (p.Status == "" || c.Status == p.Status) && entry.Visible(c.Device)
		})
		for i := range all {
			all[i] = confirmationFor(entry, s.hub.withCurrent(all[i]))
		}
		return page(all, limit, room), nil
	})
}

// page cuts the first page from cs (sorted by id): at most limit of them
// whose JSON fits in room bytes, and at least one.
func page(cs []openhal.Confirmation, limit, room int) openhal.ConfirmationsListResult {
	out := openhal.ConfirmationsListResult{Confirmations: []openhal.Confirmation{}}
	used := 2 // the brackets
	for i, c := range cs {
		b, _ := json.Marshal(c) // an over-estimate: the answer escapes no HTML
		if i == limit || (i > 0 && used+len(b)+1 > room) {
			out.Next = cs[i-1].ID
			break
		}
		used += len(b) + 1
		out.Confirmations = append(out.Confirmations, c)
	}
	return out
}

// after returns copies of the requests numbered after n that keep says
// to keep, by number.
func (cs *confirmations) after(n uint64, keep func(*openhal.Confirmation) bool) []openhal.Confirmation {
	type numbered struct {
		n uint64
		c openhal.Confirmation
	}
	cs.mu.Lock()
	var found []numbered
	for _, pw := range cs.byID {
		if pw.n > n && keep(&pw.c) {
			found = append(found, numbered{pw.n, pw.c})
		}
	}
	cs.mu.Unlock()
	sort.Slice(found, func(i, j int) bool { return found[i].n < found[j].n })
	out := make([]openhal.Confirmation, len(found))
	for i, f := range found {
		out[i] = f.c
	}
	return out
}

// parseAfter reads params.after, a confirmation id ("c-00000042"): the
// page starts after its number, whether or not that request is still
// kept. "" starts from the first.
func parseAfter(id string) (uint64, *jsonrpc.Error) {
	if id == "" {
		return 0, nil
	}
	num, ok := strings.CutPrefix(id, "c-")
	n, err := strconv.ParseUint(num, 10, 64)
	if !ok || err != nil {
		return 0, errParam("bad_id", "after", "params.after: %q is not a confirmation id such as %q", clipNumber(id), confirmationID(42))
	}
	return n, nil
}
