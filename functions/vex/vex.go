// Package vex is the VEX import group: POST /vex reads a CycloneDX or
// OpenVEX document (shared/vex: schema-checked, statements matched to SCA
// findings by advisory id and package) and applies each statement to the
// company's matching SCA findings through the store's SCA status path
// (each finding written conditional on what was read, one audit entry),
// or with dry_run=true answers exactly what an apply would change and
// writes nothing. docs/vex.md describes it.
package vex

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net/http"
	"slices"

	"github.com/acme/codescan-api/shared/auth"
	"github.com/acme/codescan-api/shared/config"
	"github.com/acme/codescan-api/shared/httpapi"
	"github.com/acme/codescan-api/shared/routes"
	"github.com/acme/codescan-api/shared/store"
	"github.com/acme/codescan-api/shared/store/ddb"
	"github.com/acme/codescan-api/shared/store/ledger"
	"github.com/acme/codescan-api/shared/store/page"
	"github.com/acme/codescan-api/shared/store/sca"
	"github.com/acme/codescan-api/shared/store/schema"
	vexdoc "github.com/acme/codescan-api/shared/vex"
)

// Store is what the import reads and writes.
type Store struct {
	Catalog interface {
		GetProject(ctx context.Context, companyID int64, projectID int64) (schema.Project, error)
	}
	SCA interface {
		ListSCAIssues(ctx context.Context, companyID int64, projectID int64, q page.Request) (page.Page[sca.Issue], error)
		SetSCAStatuses(ctx context.Context, companyID int64, ids []string, decide sca.Decide, e ledger.AuditEntry) ([]string, error)
	}
}

// StoreOf is the areas of st that Store touches: its composition.
func StoreOf(st *store.Store) Store {
	return Store{Catalog: st.Catalog, SCA: st.SCA}
}

// Bounds of one import.
const (
	// MaxFindings bounds the SCA findings an import reads: there is no
	// index by advisory id, so the company's (or the project's) findings
	// are read through their list, a page of readPage at a time. Past it
	// the import is refused (413) and may be sent per project.
	MaxFindings = 50_000
	readPage    = 1000
)

type handlers struct{ store Store }

// New returns the group's http.Handler.
func New(d config.Deps) http.Handler {
	h := handlers{store: StoreOf(d.Store)}
	return d.Server.Group(routes.GroupVEX, map[string]httpapi.HandlerFunc{
		"POST /vex": h.importVEX,
	})
}

var errProjectNotFound = httpapi.NotFound("Project not found")

// request is what POST /vex was asked.
type request struct {
	doc       vexdoc.Document
	projectID int64
	dryRun    bool
}

// importVEX answers POST /vex.
func (h handlers) importVEX(w http.ResponseWriter, r *http.Request) error {
	ctx := r.Context()
	p := auth.FromContext(ctx)
	req, err := h.read(r, p.CompanyID)
	if err != nil {
		return err
	}
	idx := vexdoc.NewIndex(req.doc)
	plan, read, err := h.plan(ctx, p.CompanyID, req.projectID, idx)
	if err != nil {
		return err
	}
	if !req.dryRun {
		if plan, err = h.apply(ctx, p.CompanyID, idx, plan); err != nil {
			return err
		}
	}
	return httpapi.WriteJSON(w, http.StatusOK, answer(req, idx, plan, read))
}

// read checks the request: its parameters, the body as JSON, the
// document against its schema, and the project (another company's answers
// as a missing one).
func (h handlers) read(r *http.Request, companyID int64) (request, error) {
	var req request
	var err error
	if req.dryRun, err = httpapi.BoolParam(r, "dry_run"); err != nil {
		return req, err
	}
	if v := r.URL.Query().Get("project_id"); v != "" {
		if req.projectID, err = httpapi.ParseID("project_id", v); err != nil {
			return req, err
		}
	}
	body, err := httpapi.ReadBody(r, vexdoc.MaxDocumentBytes)
	if err != nil {
		return req, err
	}
	r.Body = io.NopCloser(bytes.NewReader(body))
	if _, err := httpapi.DecodeJSONObject(r); err != nil {
		return req, err
	}
	if req.doc, err = vexdoc.Parse(body, r.URL.Query().Get("format")); err != nil {
		return req, refusal(err)
	}
	if req.projectID != 0 {
		_, err := h.store.Catalog.GetProject(r.Context(), companyID, req.projectID)
		if errors.Is(err, ddb.ErrNotFound) {
			return req, errProjectNotFound
		}
		if err != nil {
			return req, err
		}
	}
	return req, nil
}

// refusal is a document's error as the client's: 413 past a limit, 400
// otherwise, naming the field.
func refusal(err error) error {
	var ve *vexdoc.Error
	if !errors.As(err, &ve) {
		return err
	}
	if ve.TooLarge {
		return httpapi.TooLarge("%s", ve.Error())
	}
	return httpapi.Invalid("%s", ve.Error())
}

// plan reads the SCA findings of the company (or of one project), a page
// at a time, and keeps the outcome of every statement that applies to
// one; it answers how many findings it read.
func (h handlers) plan(ctx context.Context, companyID, projectID int64, idx *vexdoc.Index) ([]vexdoc.Outcome, int, error) {
	var out []vexdoc.Outcome
	read := 0
	q := page.Request{Limit: readPage}
	for {
		foundPage, err := h.store.SCA.ListSCAIssues(ctx, companyID, projectID, q)
		found, res, total := foundPage.Items, foundPage, foundPage.Count()
		if err != nil {
			return nil, 0, err
		}
		if total > MaxFindings {
			return nil, 0, httpapi.TooLarge(
				"An import reads at most %d SCA findings and %d are in scope; send project_id to import per project", MaxFindings, total)
		}
		fs := make([]vexdoc.Finding, len(found))
		for n, i := range found {
			fs[n] = findingOf(i)
		}
		planned, err := idx.Plan(fs)
		if err != nil {
			return nil, 0, refusal(err)
		}
		out = append(out, planned...)
		read += len(found)
		if res.Next == "" || read >= MaxFindings {
			return out, read, nil
		}
		q.Token = res.Next
	}
}

// findingOf is what matching reads of an SCA finding.
func findingOf(i sca.Issue) vexdoc.Finding {
	return vexdoc.Finding{
		ID: i.ID, ProjectID: i.ProjectID, Branch: i.Branch, Tool: i.Tool,
		Advisories: slices.Compact(append([]string{i.Classification, i.CVE}, i.IDs...)),
		Ecosystem:  i.Package.Ecosystem, Name: i.Package.Name, Version: i.Package.Version,
		Status: i.Status, Reason: i.Reason,
	}
}

// apply writes the planned changes through the store's SCA status path:
// each finding is decided again as it is read (a concurrent change is
// read again), and the outcomes of findings that did not change after all
// say so. One audit entry (vex.import) goes with the first write.
func (h handlers) apply(ctx context.Context, companyID int64, idx *vexdoc.Index, plan []vexdoc.Outcome) ([]vexdoc.Outcome, error) {
	var ids []string
	for _, o := range plan {
		if o.Result == vexdoc.Changed {
			ids = append(ids, o.Finding.ID)
		}
	}
	if len(ids) == 0 {
		return plan, nil
	}
	doc := idx.Document()
	decide := func(i sca.Issue) (string, string, bool) {
		o, ok := idx.Decide(findingOf(i))
		return o.To, o.Reason, ok && o.Result == vexdoc.Changed
	}
	audit := ledger.AuditEntry{Action: "vex.import", TargetType: "vex_document", TargetID: doc.ID,
		Changes: map[string]ledger.Change{"format": {After: doc.Format}, "sca_findings_changed": {After: len(ids)}}}
	done, err := h.store.SCA.SetSCAStatuses(ctx, companyID, ids, decide, audit)
	if err != nil {
		return nil, err
	}
	changed := make(map[string]bool, len(done))
	for _, id := range done {
		changed[id] = true
	}
	for n, o := range plan {
		if o.Result == vexdoc.Changed && !changed[o.Finding.ID] {
			plan[n].Result, plan[n].To, plan[n].Reason = vexdoc.Skipped, o.Finding.Status, o.Finding.Reason
			plan[n].Why = "changed by another request meanwhile; left as it is"
		}
	}
	return plan, nil
}
