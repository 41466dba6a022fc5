package halhub

import (
	"context"
	"encoding/json"

	"gateway/jsonrpc"
	"gateway/openhal"
)

// maxAuditList bounds one hal/audit/list answer.
const maxAuditList = 1000

// serveAuditList answers hal/audit/list: entries after since, by seq, at
// most limit of them and no more than fit in one message.
func serveAuditList(s *session, _ context.Context, params json.RawMessage) (any, *jsonrpc.Error) {
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
	entries, skipped, err := log.List(since, limit)
	if err != nil {
		return nil, errInternal(err)
	}
	if entries == nil {
		entries = []json.RawMessage{}
	}
	entries = fitEntries(entries, s.hub.opt.Limits.MaxMessageBytes-pageEnvelope)
	return openhal.AuditListResult{Entries: entries, Skipped: skipped}, nil
}

// fitEntries keeps the first entries whose JSON fits in room bytes (at
// least one), so that an answer fits in one message: the client reads on
// after the last seq it got.
func fitEntries(entries []json.RawMessage, room int) []json.RawMessage {
	used := 2 // the brackets
	for i, e := range entries {
		if i > 0 && used+len(e)+1 > room {
			return entries[:i]
		}
		used += len(e) + 1
	}
	return entries
}
