// Package exportjob is the asynchronous half of POST /exports: the request
// stores an export item (queued) with the issue list's filters resolved;
// the new item reaches this worker through the table's stream (in AWS the
// ingester's event source mapping, whose filter also selects such items,
// locally the same stream poller), and the worker reads the issues page
// by page through the list's own paging and streams them, in the export's
// format, into one object of the report bucket (uploaded in parts as they
// fill, so memory holds one page of issues and one part, whatever the
// number of rows). It records the rows read as it goes and, at the end,
// the rows written and the object's key and size.
//
// At-least-once: every delivery is an attempt (store/exports); a done or
// failed export is left alone, and each attempt rewrites the same object
// key, so a retry replaces a half-written attempt's work. An error a retry
// may fix (throttling, the bucket unavailable) fails the stream record, so
// Lambda delivers it again; the last attempt, or an error no retry fixes,
// ends the export failed with its reason.
package exportjob

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/acme/codescan-api/shared/attempt"
	"github.com/acme/codescan-api/shared/exportformat"
	"github.com/acme/codescan-api/shared/reportstore"
	"github.com/acme/codescan-api/shared/store/ddb"
	"github.com/acme/codescan-api/shared/store/exports"
	"github.com/acme/codescan-api/shared/store/issuelists"
	storepage "github.com/acme/codescan-api/shared/store/page"
	"github.com/acme/codescan-api/shared/store/schema"
	"github.com/acme/codescan-api/shared/streamimage"
)

// MaxAttempts bounds the worker's attempts at one export.
const MaxAttempts = 3

// Defaults of a Worker.
const (
	// DefaultPageSize is the issues read per query page: the list's largest.
	DefaultPageSize = 1000
	// progressEvery is how many rows pass between progress writes.
	progressEvery = 10_000
)

// Worker writes exports.
type Worker struct {
	Store  Store
	Bucket reportstore.Exports
	Log    *slog.Logger
	// PageSize is the issues read per page (DefaultPageSize when 0).
	PageSize int
	// Now stamps VEX documents (time.Now when nil).
	Now func() time.Time
}

// Job names one export.
type Job struct {
	CompanyID int64
	ID        string
}

// JobOf reads a new item's image: an export item is a job, anything else
// is not. It mirrors deployspec.ExportFilter, which selects the same items
// in AWS.
func JobOf(get streamimage.Get) (Job, bool) {
	company, id, ok := streamimage.Entity(get, schema.ExportEntity)
	return Job{CompanyID: company, ID: id}, ok
}

// errSuperseded: a later attempt took the export over.
var errSuperseded = errors.New("export attempt superseded")

// Run runs one attempt at an export. It returns an error only for what
// a retry may fix, and not on the last attempt, which ends the export
// failed instead.
func (x *Worker) Run(ctx context.Context, job Job) error {
	e, ok, err := x.Store.Exports.StartExport(ctx, job.CompanyID, job.ID, MaxAttempts)
	if errors.Is(err, ddb.ErrNotFound) {
		x.Log.Warn("export: not found", "company_id", job.CompanyID, "export_id", job.ID)
		return nil
	}
	if err != nil || !ok {
		return err
	}
	if err = x.run(ctx, e); errors.Is(err, errSuperseded) {
		return nil
	}
	return attempt.End(err, attempt.Job{What: "export", Noun: "the export", N: e.Attempt, Max: MaxAttempts,
		LogAttr: []any{"company_id", e.CompanyID, "export_id", e.ID}}, x.Log, func(reason string) error {
		return x.Store.Exports.FailExport(ctx, e.CompanyID, e.ID, reason)
	})
}

// run writes the export's object and ends the attempt done.
func (x *Worker) run(ctx context.Context, e schema.ExportItem) error {
	f := exportformat.Format(e.Format)
	if f.Extension() == "" {
		return &attempt.Permanent{Reason: fmt.Sprintf("unknown format %q", e.Format)}
	}
	q, err := issuelists.DecodeFilter(e.Query)
	if err != nil {
		return &attempt.Permanent{Reason: "the export's filters are not readable"}
	}
	p := &progress{x: x, ctx: ctx, e: e}
	src := x.issues(ctx, e, q, p)
	if f == exportformat.VEX {
		src = x.sca(ctx, e, p)
	}
	key := reportstore.ExportKey(e.CompanyID, e.ID, f.Extension())
	w, err := x.Bucket.Create(ctx, key, f.ContentType())
	if err != nil {
		return err
	}
	cw := &countingWriter{w: w}
	n, err := exportformat.Write(cw, f, src, exportformat.Options{Project: e.Project, Time: x.now(), Serial: e.ID})
	if err != nil {
		if aerr := w.Abort(); aerr != nil {
			x.Log.Warn("export: abort upload", "export_id", e.ID, "error", aerr.Error())
		}
		return err
	}
	if err := w.Close(); err != nil {
		return err
	}
	err = x.Store.Exports.FinishExport(ctx, e.CompanyID, e.ID, e.Attempt, exports.Result{Read: p.read, Rows: int64(n), Bytes: cw.n, ObjectKey: key})
	if errors.Is(err, ddb.ErrConflict) {
		return errSuperseded
	}
	if err == nil {
		x.Log.Info("export: done", "company_id", e.CompanyID, "export_id", e.ID, "format", e.Format, "rows", n, "bytes", cw.n)
	}
	return err
}

func (x *Worker) now() time.Time {
	if x.Now == nil {
		return time.Now()
	}
	return x.Now()
}

func (x *Worker) pageSize() int {
	if x.PageSize > 0 {
		return x.PageSize
	}
	return DefaultPageSize
}

// issues reads the issues of q page by page, by the list's tokens. A
// format that reads its source more than once (SARIF: once per tool)
// reads the list again each time.
func (x *Worker) issues(ctx context.Context, e schema.ExportItem, q issuelists.IssueFilter, p *progress) exportformat.Source {
	return func(yield func(exportformat.Row) error) error {
		token := ""
		for {
			listed, err := x.Store.Lists.ListIssues(ctx, e.CompanyID, q, storepage.Request{Limit: x.pageSize(), Token: token})
			if err != nil {
				return err
			}
			for _, i := range listed.Items {
				if err := yield(issueRow(i)); err != nil {
					return err
				}
			}
			if err := p.add(len(listed.Items), listed.Count()); err != nil {
				return err
			}
			if listed.Next == "" {
				return nil
			}
			token = listed.Next
		}
	}
}

// sca reads the SCA findings of the export's project page by page.
func (x *Worker) sca(ctx context.Context, e schema.ExportItem, p *progress) exportformat.Source {
	return func(yield func(exportformat.Row) error) error {
		token := ""
		for {
			listed, err := x.Store.SCA.ListSCAIssues(ctx, e.CompanyID, e.ProjectID, storepage.Request{Limit: x.pageSize(), Token: token})
			page, res, total := listed.Items, listed, listed.Count()
			if err != nil {
				return err
			}
			for _, i := range page {
				if err := yield(scaRow(e.Project, i)); err != nil {
					return err
				}
			}
			if err := p.add(len(page), int64(total)); err != nil {
				return err
			}
			if res.Next == "" {
				return nil
			}
			token = res.Next
		}
	}
}

// progress records the rows read and the list's total: after the first
// page (so the total shows early), then every progressEvery rows.
type progress struct {
	x              *Worker
	ctx            context.Context
	e              schema.ExportItem
	read, recorded int64
	started        bool
}

func (p *progress) add(n int, total int64) error {
	p.read += int64(n)
	if p.started && p.read-p.recorded < progressEvery {
		return nil
	}
	p.recorded, p.started = p.read, true
	err := p.x.Store.Exports.ExportProgress(p.ctx, p.e.CompanyID, p.e.ID, p.e.Attempt, p.read, total)
	if errors.Is(err, ddb.ErrConflict) {
		return errSuperseded
	}
	return err
}

// countingWriter counts the bytes of the object.
type countingWriter struct {
	w reportstore.ObjectWriter
	n int64
}

func (c *countingWriter) Write(b []byte) (int, error) {
	n, err := c.w.Write(b)
	c.n += int64(n)
	return n, err
}
