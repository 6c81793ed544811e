package prdecor

import (
	"context"
	"encoding/json"

	"github.com/acme/codescan-api/shared/notify"
	"github.com/acme/codescan-api/shared/outbound"
	"github.com/acme/codescan-api/shared/pullrequest"
	storedelivery "github.com/acme/codescan-api/shared/store/delivery"
	"github.com/acme/codescan-api/shared/store/schema"
)

// The Decorator is the outbound channel pull_request (shared/outbound).

// Name is the delivery channel of decorations.
func (d *Decorator) Name() string { return storedelivery.ChannelPullRequest }

// jobPayload is what a decoration's delivery keeps: its scan.
type jobPayload struct {
	ScanID string `json:"scan_id"`
}

// Jobs asks one decoration per integration that decorates the event's
// scan. The job's key names the scan, not the event: the scan's completion
// and its late CI metadata ask for one decoration.
func (d *Decorator) Jobs(ctx context.Context, ev schema.Event) ([]outbound.Job, error) {
	if ev.Type != notify.TypeScanCompleted && ev.Type != pullrequest.EventType {
		return nil, nil
	}
	scanID, integrations, err := d.Targets(ctx, ev)
	if err != nil || len(integrations) == 0 {
		return nil, err
	}
	payload, err := json.Marshal(jobPayload{ScanID: scanID})
	if err != nil {
		return nil, err
	}
	jobs := make([]outbound.Job, 0, len(integrations))
	for _, in := range integrations {
		jobs = append(jobs, outbound.Job{Key: "pr-" + scanID, Recipient: in, Payload: payload})
	}
	return jobs, nil
}

// Attempt decorates the job's pull request through its integration once.
func (d *Decorator) Attempt(ctx context.Context, companyID int64, integration string, payload json.RawMessage) outbound.Outcome {
	var p jobPayload
	if json.Unmarshal(payload, &p) != nil || p.ScanID == "" {
		return outbound.Outcome{Err: "the delivery names no scan", Gone: true}
	}
	return d.Decorate(ctx, companyID, p.ScanID, integration)
}
