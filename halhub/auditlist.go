package halhub

import (
	"context"
	"encoding/json"

	"gateway/jsonrpc"
	"gateway/openhal"
)

// maxAuditList bounds one hal/audit/list answer.
const maxAuditList = 1000

// serveAuditList answers hal/audit/list: entries after since, by seq.
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
	return openhal.AuditListResult{Entries: entries, Skipped: skipped}, nil
}
