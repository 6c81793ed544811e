// Package scanlife owns a scan's life from the upload that creates it:
// accepting an upload (the scan's id, the project got or created, a
// repeated or conflicting run), checking a report (one decode, parse and
// limit path, with one set of messages, for the upload's synchronous
// answer and for the ingester alike), ingesting it (Ingest: the stored
// report read back and checked, its findings given their source code,
// its components kept, its findings written in order, quality, SCA, then
// SAST, whose apply completes the scan) and failing a scan (every journal
// its writers left owing settled, then the scan ended incomplete with its
// scan_failed event), for the ingester and the stalled sweep alike. The
// upload handler, the ingester and the sweep call it; it reaches the store
// through the narrow Store, Ingesting, Writing and Failing it declares
// (see docs/architecture.md, "A scan's life"). What completing a scan
// writes (its status, findings count, completed_at, marker and events) is
// the scans area's CompletionItems, which findings.ApplyScan appends to
// the fenced transaction that moves the branch's head to the scan, so the
// two are one write; findings writes issues and nothing of the scan's.
package scanlife

import (
	"context"

	"github.com/acme/codescan-api/shared/store"
	"github.com/acme/codescan-api/shared/store/scans"
	"github.com/acme/codescan-api/shared/store/schema"
)

// Store is what a scan's life reads and writes: per area of the store,
// the calls it makes and no others; StoreOf composes it from the store's
// areas.
type Store struct {
	Catalog interface {
		CreateProject(ctx context.Context, p schema.Project) (schema.Project, error)
		GetProject(ctx context.Context, companyID int64, projectID int64) (schema.Project, error)
		ProjectByName(ctx context.Context, companyID int64, name string) (schema.Project, error)
		SetProjectRepoURLIfEmpty(ctx context.Context, companyID int64, projectID int64, repoURL string) error
	}
	Scans interface {
		CreateScan(ctx context.Context, sc scans.Scan) (scans.Scan, error)
		ScanByRunID(ctx context.Context, companyID int64, runID string) (scans.Scan, error)
	}
}

// StoreOf is the areas of st that Store touches: its composition.
func StoreOf(st *store.Store) Store {
	return Store{Catalog: st.Catalog, Scans: st.Scans}
}
