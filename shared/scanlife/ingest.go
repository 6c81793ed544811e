package scanlife

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	storecomponents "github.com/acme/codescan-api/shared/components"
	"github.com/acme/codescan-api/shared/ingest"
	"github.com/acme/codescan-api/shared/reportfinding"
	"github.com/acme/codescan-api/shared/reports"
	"github.com/acme/codescan-api/shared/reportstore"
	"github.com/acme/codescan-api/shared/store"
	"github.com/acme/codescan-api/shared/store/components"
	"github.com/acme/codescan-api/shared/store/findings"
	"github.com/acme/codescan-api/shared/store/quality"
	"github.com/acme/codescan-api/shared/store/sca"
	"github.com/acme/codescan-api/shared/store/scans"
	"github.com/acme/codescan-api/shared/store/schema"
)

// Ingesting is what ingesting a scan reads and writes: per area of the
// store, the calls it makes and no others (its report's findings and
// components written, or the scan failed); IngestingOf composes it from
// the store's areas.
type Ingesting struct {
	Catalog interface {
		GetProject(ctx context.Context, companyID int64, projectID int64) (schema.Project, error)
	}
	Components interface {
		HoldersOf(ctx context.Context, companyID int64, pkg string, version string, limit int) ([]components.Holder, bool, error)
		PackageVersions(ctx context.Context, companyID int64, pkg string) ([]components.VersionCount, error)
		ReplaceComponents(ctx context.Context, ref components.SetRef, list []storecomponents.Component) (components.Changes, error)
	}
	Findings interface {
		ApplyScan(ctx context.Context, companyID int64, sc scans.Scan, found []findings.Issue) (findings.ApplyResult, error)
		SettleScanJournal(ctx context.Context, companyID int64, sc scans.Scan) error
	}
	Ledger interface {
		RecordEventOnce(ctx context.Context, e schema.Event) (bool, error)
	}
	Quality interface {
		PutQualityIssues(ctx context.Context, companyID int64, issues []quality.Issue) error
	}
	SCA interface {
		PutScanSCAIssues(ctx context.Context, companyID int64, sc scans.Scan, found []sca.Issue) error
	}
	Scans interface {
		FailScan(ctx context.Context, sc scans.Scan, reason string, problems []scans.ScanError, ev *schema.Event) (bool, error)
		SettleCounted(ctx context.Context, companyID int64, scanID string) error
	}
}

// IngestingOf is the areas of st that Ingesting touches: its composition.
func IngestingOf(st *store.Store) Ingesting {
	return Ingesting{Catalog: st.Catalog, Components: st.Components, Findings: st.Findings, Ledger: st.Ledger,
		Quality: st.Quality, SCA: st.SCA, Scans: st.Scans}
}

// Ingestion is what ingesting a scan works with: the store's areas, the
// report bucket (the report and the run's source files), the log, and the
// clock of the events it records (time.Now when nil).
type Ingestion struct {
	Store   Ingesting
	Reports reportstore.Store
	Log     *slog.Logger
	Now     func() time.Time
}

// ErrIncomplete is Ingest's answer for a scan it ended incomplete: done,
// not to be retried.
var ErrIncomplete = errors.New("scan ended incomplete")

// levelError is the problem level of scan_errors, as the real client
// reads them.
const levelError = "error"

// Ingest ingests sc, a scan still processing, and returns how many results
// its report had. It reads the stored report back and checks it (Check,
// the upload's own path), gives its findings the code of the source files
// the run uploaded (ingest.Sources), keeps the components it lists, then
// writes its findings (Write), whose SAST apply completes the scan (the
// scans area's CompletionItems, in the transaction that moves the branch's
// head to it). A report that retrying cannot fix (missing, unreadable,
// invalid, too large) ends the scan incomplete (Fail) and answers
// ErrIncomplete; another error is one a retry may fix. Every step is
// idempotent: writing the same findings again changes nothing.
func Ingest(ctx context.Context, in Ingestion, sc scans.Scan) (int, error) {
	raw, err := in.Reports.Get(ctx, reportstore.ReportKey(sc.CompanyID, sc.ID, sc.ReportSHA256), ingest.MaxReportBytes)
	switch {
	case errors.Is(err, reportstore.ErrNotFound):
		return 0, in.fail(ctx, sc, ReasonUnreadable, "the stored report is missing (reports expire after %d days)", reportstore.ReportDays)
	case errors.Is(err, reportstore.ErrTooLarge):
		return 0, in.fail(ctx, sc, ReasonTooLarge, "the stored report exceeds %d MiB", ingest.MaxReportBytes>>20)
	case err != nil:
		return 0, err
	}
	checked, err := Check(sc.Engine, raw)
	if err != nil {
		return 0, in.refused(ctx, sc, err)
	}
	fs := checked.Parsed.Findings
	n := len(fs)
	if err := ingest.Sources(ctx, in.Reports, sc.CompanyID, sc.RunID, fs); err != nil {
		return n, err
	}
	proj, err := in.Store.Catalog.GetProject(ctx, sc.CompanyID, sc.ProjectID)
	if err != nil {
		return n, err
	}
	if err := in.components(ctx, sc, proj, checked); err != nil {
		return n, err
	}
	st := Writing{Findings: in.Store.Findings, Quality: in.Store.Quality, SCA: in.Store.SCA}
	if err := Write(ctx, st, sc, proj, fs); err != nil {
		in.Log.Error("ingest: write findings", "company_id", sc.CompanyID, "scan_id", sc.ID, "error", err.Error())
		return n, err
	}
	in.Log.Info("ingest: scan complete", "company_id", sc.CompanyID, "scan_id", sc.ID, "findings", n)
	return n, nil
}

// components keeps the components a report lists (SBOMs, the SCA
// scanners' package lists) as its engine's set on the scan's branch, and
// announces the blast radius of the advisories it brings
// (ingest.WriteComponents); reports of other engines list none.
func (in Ingestion) components(ctx context.Context, sc scans.Scan, proj schema.Project, rep Report) error {
	if !reports.ListsComponents(sc.Engine) {
		return nil
	}
	inv, err := Components(sc.Engine, rep)
	if err != nil {
		return in.refused(ctx, sc, err)
	}
	engine, _ := reports.Canonical(sc.Engine)
	st := ingest.ComponentStore{Components: in.Store.Components, Ledger: in.Store.Ledger}
	if err := ingest.WriteComponents(ctx, st, engine, sc, proj, inv); err != nil {
		in.Log.Error("ingest: write components", "company_id", sc.CompanyID, "scan_id", sc.ID, "error", err.Error())
		return err
	}
	return nil
}

// refused ends the scan incomplete for a report refused (Check: its
// reason, and the message the upload would have answered) or one its
// reader could not read.
func (in Ingestion) refused(ctx context.Context, sc scans.Scan, err error) error {
	var ref *Refused
	if errors.As(err, &ref) {
		return in.fail(ctx, sc, ref.Reason, "%s", ref.Message)
	}
	return in.fail(ctx, sc, ReasonUnreadable, "%s", err.Error())
}

// fail ends the scan incomplete (Fail): reason is its failed_reason, the
// detail its one scan error. It returns ErrIncomplete once that is
// stored.
func (in Ingestion) fail(ctx context.Context, sc scans.Scan, reason, detail string, args ...any) error {
	msg := fmt.Sprintf(detail, args...)
	now := time.Now
	if in.Now != nil {
		now = in.Now
	}
	st := Failing{Catalog: in.Store.Catalog, Findings: in.Store.Findings, Scans: in.Store.Scans}
	changed, err := Fail(ctx, st, sc, reason, []scans.ScanError{{ScanType: sc.Engine, Level: levelError, Location: "report", Message: msg}}, now())
	if err != nil {
		return err
	}
	if changed {
		in.Log.Warn("ingest: scan incomplete", "company_id", sc.CompanyID, "scan_id", sc.ID, "reason", reason, "detail", msg)
	}
	return ErrIncomplete
}

// Writing is what writing a checked report's findings writes: per area of
// the store, the calls it makes and no others.
type Writing struct {
	Findings interface {
		ApplyScan(ctx context.Context, companyID int64, sc scans.Scan, found []findings.Issue) (findings.ApplyResult, error)
	}
	Quality interface {
		PutQualityIssues(ctx context.Context, companyID int64, issues []quality.Issue) error
	}
	SCA interface {
		PutScanSCAIssues(ctx context.Context, companyID int64, sc scans.Scan, found []sca.Issue) error
	}
}

// WritingOf is the areas of st that Writing touches: its composition.
func WritingOf(st *store.Store) Writing {
	return Writing{Findings: st.Findings, Quality: st.Quality, SCA: st.SCA}
}

// Write stores every finding of a checked report (fs, of the project
// proj) as the scan's, through the store's idempotent write paths (issue
// ids derive from the company, the tool and the finding's identity, so
// writing the same report again changes nothing), and so completes the
// scan: its quality issues, its SCA issues, and last its SAST issues,
// whose apply (findings.ApplyScan) ends with the scan's completion in the
// transaction that moves the branch's head to it. Every scan takes that
// last step, one without SAST findings too: it is its tool's new truth on
// the branch (what the tool reported before and not now is fixed), and
// its completion is atomic with the head's move.
func Write(ctx context.Context, st Writing, sc scans.Scan, proj schema.Project, fs []reportfinding.Finding) error {
	if err := st.Quality.PutQualityIssues(ctx, sc.CompanyID, ingest.Quality(sc.CompanyID, sc, proj, fs)); err != nil {
		return err
	}
	if err := st.SCA.PutScanSCAIssues(ctx, sc.CompanyID, sc, ingest.SCA(sc.CompanyID, sc, proj, fs)); err != nil {
		return err
	}
	_, err := st.Findings.ApplyScan(ctx, sc.CompanyID, sc, ingest.Issues(sc.CompanyID, sc, proj, fs))
	return err
}
