package halhub

import (
	"context"
	"encoding/json"

	"github.com/openhal/gateway/internal/halhub/audit"
	"github.com/openhal/gateway/internal/halhub/token"
	"github.com/openhal/gateway/jsonrpc"
	"github.com/openhal/gateway/openhal"
)

// maxAuditList bounds one hal/audit/list answer.
const maxAuditList = 1000

// auditListEnvelope is an answer to hal/audit/list without its entries,
// at its longest (pageRoom).
const auditListEnvelope = `{"entries":[],"skipped":18446744073709551615,"next":18446744073709551615}`

// serveAuditList answers hal/audit/list: entries after since, by seq, as
// many as fit in one message of the Hub's limit (with next when more
// remain), and for a token limited to some devices only the entries it
// may see (auditVisible).
func serveAuditList(s *session, ctx context.Context, params json.RawMessage) (any, *jsonrpc.Error) {
	var p openhal.AuditListParams
	if err := decodeParams(params, &p); err != nil {
		return nil, err
	}
	limit := 100
	if p.Limit != nil {
		if *p.Limit < 1 || *p.Limit > maxAuditList {
			return nil, errParam("out_of_range", "limit", "params.limit must be between 1 and %d", maxAuditList)
		}
		limit = *p.Limit
	}
	var since uint64
	if p.Since != nil {
		since = *p.Since
	}
	log := s.hub.opt.Audit
	if log == nil {
		return openhal.AuditListResult{Entries: []json.RawMessage{}}, nil
	}
	opt := audit.ListOptions{Limit: limit, MaxBytes: s.pageRoom(ctx, auditListEnvelope)}
	if _, tok := s.who(); len(tok.Devices) > 0 {
		opt.Keep = func(e *audit.Entry) bool { return auditVisible(tok, e) }
	}
	var pg audit.Page
	if _, err := s.buildPage(ctx, func() (any, *jsonrpc.Error) {
		var err error
		if pg, err = log.List(since, opt); err != nil {
			return nil, errInternal(err)
		}
		return nil, nil
	}); err != nil {
		return nil, err
	}
	res := openhal.AuditListResult{Entries: pg.Entries, Skipped: pg.Skipped}
	if res.Entries == nil {
		res.Entries = []json.RawMessage{}
	}
	if pg.Next != 0 {
		res.Next = &pg.Next
	}
	return res, nil
}

// auditVisible reports whether a token may see an entry (spec §10): a
// token limited to some devices sees the entries of its devices and the
// Hub-wide ones — stops and resumes, and the count entries that count
// nothing but those — and nothing of other devices nor of other
// principals' requests without a device (their refusals, token changes,
// failed logins).
func auditVisible(tok token.Entry, e *audit.Entry) bool {
	if len(tok.Devices) == 0 {
		return true
	}
	switch e.Action {
	case "stop", "resume":
		return true
	case audit.ActionCount:
		for _, t := range e.By {
			if t.Action != "stop" && t.Action != "resume" {
				return false
			}
		}
		return len(e.By) > 0
	}
	return e.Device != "" && tok.Visible(e.Device)
}
