package halclient

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/openhal/gateway/openhal"
)

// The safety methods of spec §6, §7 and §10: the emergency stop, the
// Confirmation Requests, and the audit log. Each returns the Hub's answer
// decoded, or its error answer as a *HubError.

// Stop engages the emergency stop. The result lists the devices driven to
// their safe value and those that failed, each with its error. A Hub that
// engaged the stop but could not write it to its state directory says so
// in the result (LatchFailed, AuditFailed); an older Hub answered
// INTERNAL_ERROR (data.reason "latch_failed"). The stop is engaged all the
// same.
func (c *Conn) Stop(ctx context.Context, reason string) (openhal.StopResult, error) {
	var res openhal.StopResult
	err := c.Call(ctx, openhal.MethodStop, openhal.StopParams{Reason: reason}, &res)
	return res, Describe(err, openhal.MethodStop, "")
}

// Resume lifts the emergency stop (admin). It is refused with STOPPED
// (data.reason "stop_button_pressed") while a stop button is held down.
func (c *Conn) Resume(ctx context.Context) error {
	var res openhal.ResumeResult
	return Describe(c.Call(ctx, openhal.MethodResume, nil, &res), openhal.MethodResume, "")
}

// Confirmations lists the Confirmation Requests the token may see, by id;
// status ("pending", "approved", ...) filters them, "" lists them all. It
// follows the Hub's pages: each answer holds what fits in one message.
func (c *Conn) Confirmations(ctx context.Context, status string) ([]openhal.Confirmation, error) {
	all := []openhal.Confirmation{}
	after := ""
	for {
		page, err := c.ConfirmationsPage(ctx, status, after, 0)
		if err != nil {
			return nil, err
		}
		all = append(all, page.Confirmations...)
		if page.Next == "" {
			return all, nil
		}
		if len(page.Confirmations) == 0 || page.Next == after {
			return nil, fmt.Errorf("%s: the hub sent an empty page after %q that says more follow", openhal.MethodConfirmationsList, after)
		}
		after = page.Next
	}
}

// ConfirmationsPage asks for one page of Confirmation Requests: those
// after the id after ("" for the first), at most limit (0 leaves it to
// the Hub, which sends what fits in one message). Next in the result is
// the after of the next page, "" on the last.
func (c *Conn) ConfirmationsPage(ctx context.Context, status, after string, limit int) (openhal.ConfirmationsListResult, error) {
	p := openhal.ConfirmationsListParams{Status: status, After: after}
	if limit != 0 {
		p.Limit = &limit
	}
	var res openhal.ConfirmationsListResult
	if err := c.Call(ctx, openhal.MethodConfirmationsList, p, &res); err != nil {
		return res, Describe(err, openhal.MethodConfirmationsList, "")
	}
	return res, nil
}

// Approve approves a request (admin) and returns it resolved: status
// "approved" with the write's Result, or "failed" with the Error that
// refused the write when it was run again.
func (c *Conn) Approve(ctx context.Context, id string) (openhal.Confirmation, error) {
	return c.resolve(ctx, openhal.MethodConfirmationApprove, openhal.ConfirmationParams{ID: id})
}

// Reject rejects a request (admin); reason tells its creator why.
func (c *Conn) Reject(ctx context.Context, id, reason string) (openhal.Confirmation, error) {
	return c.resolve(ctx, openhal.MethodConfirmationReject, openhal.RejectParams{ID: id, Reason: reason})
}

// Cancel withdraws a request; only its creator may.
func (c *Conn) Cancel(ctx context.Context, id string) (openhal.Confirmation, error) {
	return c.resolve(ctx, openhal.MethodConfirmationCancel, openhal.ConfirmationParams{ID: id})
}

func (c *Conn) resolve(ctx context.Context, method string, params any) (openhal.Confirmation, error) {
	var res openhal.Confirmation
	if err := c.Call(ctx, method, params, &res); err != nil {
		return openhal.Confirmation{}, Describe(err, method, "")
	}
	return res, nil
}

// Audit returns one page of the audit log: up to limit entries (1 to
// 1000; 0 leaves it to the Hub, which sends 100) with a seq after since,
// each as it is stored, and how many unreadable lines the Hub skipped.
// The Hub stops a page before it would pass its message limit, so a page
// may hold fewer than limit; Next, when set, is the since of the next
// page. AuditRange follows the pages.
func (c *Conn) Audit(ctx context.Context, since uint64, limit int) (openhal.AuditListResult, error) {
	p := openhal.AuditListParams{Since: &since}
	if limit != 0 {
		p.Limit = &limit
	}
	var res openhal.AuditListResult
	if err := c.Call(ctx, openhal.MethodAuditList, p, &res); err != nil {
		return res, Describe(err, openhal.MethodAuditList, "")
	}
	return res, nil
}

// auditPage is the most entries one hal/audit/list may ask for.
const auditPage = 1000

// AuditRange returns up to limit entries after since (all of them when
// limit is 0), asking for as many pages as that takes. Skipped is the
// most unreadable lines one page reported (each page counts those it
// passed); Next is set when limit was reached and more entries remain.
func (c *Conn) AuditRange(ctx context.Context, since uint64, limit int) (openhal.AuditListResult, error) {
	if limit < 0 {
		return openhal.AuditListResult{}, fmt.Errorf("audit: limit %d: want 0 (all) or more", limit)
	}
	all := openhal.AuditListResult{Entries: []json.RawMessage{}}
	for {
		want := auditPage
		if limit > 0 {
			want = min(want, limit-len(all.Entries))
		}
		pg, err := c.Audit(ctx, since, want)
		if err != nil {
			return all, err
		}
		all.Entries = append(all.Entries, pg.Entries...)
		all.Skipped = max(all.Skipped, pg.Skipped)
		all.Next = pg.Next
		if pg.Next == nil || (limit > 0 && len(all.Entries) >= limit) {
			return all, nil
		}
		if *pg.Next <= since {
			return all, fmt.Errorf("audit: the hub's next page starts at %d, not after %d", *pg.Next, since)
		}
		since = *pg.Next
	}
}
