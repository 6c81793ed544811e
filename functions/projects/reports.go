package projects

import (
	"context"
	"net/http"
	"strconv"
	"strings"

	"github.com/acme/codescan-api/functions/projects/report"
	"github.com/acme/codescan-api/shared/auth"
	"github.com/acme/codescan-api/shared/httpapi"
	"github.com/acme/codescan-api/shared/store/findings"
	"github.com/acme/codescan-api/shared/store/schema"
	"github.com/acme/codescan-api/shared/trendchart"
)

// MaxReportIssues bounds the issues one report renders, so the answer fits
// Lambda's 6 MB response (a scan's findings are bounded by the upload's
// own limit, 5,000).
const MaxReportIssues = 5_000

// ReportCSP is the HTML report's Content-Security-Policy, sent as a header:
// the page's own <meta> policy (no script, no external resource, inline
// style only) plus what only a header can say (no framing).
const ReportCSP = "default-src 'none'; style-src 'unsafe-inline'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'"

// issueJSON is an issue in the JSON report.
type issueJSON struct {
	ID          string  `json:"id"`
	Status      string  `json:"status"`
	Urgency     string  `json:"urgency"`
	CWE         *string `json:"cwe"`
	Title       string  `json:"title"`
	RuleID      string  `json:"rule_id"`
	FilePath    string  `json:"file_path"`
	Line        int     `json:"line"`
	Tool        string  `json:"tool"`
	Fingerprint string  `json:"fingerprint"`
	CreatedAt   string  `json:"created_at"`
}

// report renders the scan's issues: html (the default), sarif, markdown or
// json.
func (h handlers) report(w http.ResponseWriter, r *http.Request) error {
	format := strings.ToLower(strings.TrimSpace(r.URL.Query().Get("format")))
	if format == "" {
		format = "html"
	}
	switch format {
	case "html", "sarif", "markdown", "json":
	default:
		return httpapi.Invalid("format must be one of html, sarif, markdown, json")
	}
	sc, p, err := h.scanOf(r)
	if err != nil {
		return err
	}
	in := report.Input{Scan: sc, Project: p.Name}
	err = h.store.Lists.EachScanIssue(r.Context(), auth.FromContext(r.Context()).CompanyID, sc.ID, func(i findings.Issue) error {
		if len(in.Issues) == MaxReportIssues {
			return httpapi.TooLarge("The scan has more than %d issues; use the issue lists", MaxReportIssues)
		}
		in.Issues = append(in.Issues, i)
		return nil
	})
	if err != nil {
		return err
	}
	var body []byte
	var contentType string
	switch format {
	case "sarif":
		body, err = report.SARIF(in)
		contentType = "application/sarif+json"
	case "markdown":
		body, contentType = report.Markdown(in), "text/markdown; charset=utf-8"
	case "json":
		out := struct {
			Status string      `json:"status"`
			Scan   scanJSON    `json:"scan"`
			Issues []issueJSON `json:"issues"`
		}{Status: "ok", Scan: scanView(sc, p.Name), Issues: []issueJSON{}}
		for _, i := range in.Issues {
			v := issueJSON{ID: i.ID, Status: i.Status, Urgency: i.Urgency, Title: i.Title, RuleID: i.RuleID,
				FilePath: i.FilePath, Line: i.Line, Tool: i.Tool, Fingerprint: i.Fingerprint, CreatedAt: i.CreatedAt}
			if i.CWE != findings.NoCWE {
				c := "CWE-" + strconv.Itoa(i.CWE)
				v.CWE = &c
			}
			out.Issues = append(out.Issues, v)
		}
		return httpapi.WriteJSON(w, http.StatusOK, out)
	default:
		if in.Trend, err = h.reportTrend(r.Context(), p); err != nil {
			return err
		}
		body, err = report.HTML(in)
		contentType = "text/html; charset=utf-8"
		w.Header().Set("Content-Security-Policy", ReportCSP)
	}
	if err != nil {
		return err
	}
	w.Header().Set("Content-Type", contentType)
	w.Header().Set("Content-Length", strconv.Itoa(len(body)))
	w.WriteHeader(http.StatusOK)
	_, err = w.Write(body)
	return err
}

// reportTrendDays is the window of the HTML report's trend chart.
const reportTrendDays = 90

// reportTrend is the project's trend of the last 90 days for the HTML
// report, with its open issues now and those past their SLA.
func (h handlers) reportTrend(ctx context.Context, p schema.Project) (*trendchart.Input, error) {
	tw, err := h.store.Lists.Trend(ctx, p.CompanyID, p.ID, reportTrendDays)
	if err != nil {
		return nil, err
	}
	return &trendchart.Input{Title: "Trend of " + p.Name + ", last " + strconv.Itoa(reportTrendDays) + " days", Points: tw.Points, Fixes: tw.Fixes, Open: tw.Open, PastDue: tw.PastDue}, nil
}
