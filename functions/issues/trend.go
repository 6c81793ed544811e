package issues

import (
	"context"
	"errors"
	"net/http"
	"net/url"
	"strconv"
	"strings"

	"github.com/acme/codescan-api/shared/auth"
	"github.com/acme/codescan-api/shared/httpapi"
	"github.com/acme/codescan-api/shared/sla"
	"github.com/acme/codescan-api/shared/store/ddb"
	"github.com/acme/codescan-api/shared/store/issuelists"
	"github.com/acme/codescan-api/shared/trendmath"
)

// defaultTrendDays is the window of GET /metrics/trend without `days`.
const defaultTrendDays = 30

var (
	errProjectNotFound = httpapi.NotFound("Project not found")
	// A trend has one scope: a name and an id could name two projects.
	errProjectAndID = httpapi.Invalid("Give project (a name) or project_id, not both")
)

type trendPoint struct {
	Date      string           `json:"date"`
	Opened    int64            `json:"opened"`
	Fixed     int64            `json:"fixed"`
	Reopened  int64            `json:"reopened"`
	Dismissed int64            `json:"dismissed"`
	Open      map[string]int64 `json:"open"`
}

type fixTimes struct {
	Fixed      int64 `json:"fixed"`
	MedianDays *int  `json:"median_days"`
	P90Days    *int  `json:"p90_days"`
}

type slaFigures struct {
	Fixed               int64    `json:"fixed"`
	FixedWithinSLA      int64    `json:"fixed_within_sla"`
	FixedWithinSLAShare *float64 `json:"fixed_within_sla_share"`
	Open                int64    `json:"open"`
	OpenPastSLA         int64    `json:"open_past_sla"`
	OpenPastSLAShare    *float64 `json:"open_past_sla_share"`
}

type trendAnswer struct {
	Status    string                `json:"status"`
	ProjectID *int64                `json:"project_id"`
	Urgency   *string               `json:"urgency"`
	Days      int                   `json:"days"`
	From      string                `json:"from"`
	To        string                `json:"to"`
	Series    []trendPoint          `json:"series"`
	TimeToFix map[string]fixTimes   `json:"time_to_fix"`
	SLA       map[string]slaFigures `json:"sla"`
}

// trend answers GET /metrics/trend: the company's (or one project's, see
// trendProject) daily series of the last `days`, time to fix and SLA
// compliance, from the trend records kept on write (the window's day
// records and the totals, never the issues).
func (h handlers) trend(w http.ResponseWriter, r *http.Request) error {
	ctx := r.Context()
	companyID := auth.FromContext(ctx).CompanyID
	q := r.URL.Query()
	days := defaultTrendDays
	if v := q.Get("days"); v != "" {
		n, err := strconv.Atoi(strings.TrimSpace(v))
		if err != nil || n < trendmath.MinDays || n > trendmath.MaxDays {
			return httpapi.Invalid("%s", trendmath.ErrDays.Error())
		}
		days = n
	}
	var only *string
	if v := q.Get("urgency"); v != "" {
		u, ok := sla.Urgency(v)
		if !ok {
			return httpapi.Invalid("urgency must be one of CR, HI, ME, LO")
		}
		only = &u
	}
	projectID, err := h.trendProject(ctx, companyID, q)
	if errors.Is(err, errNoProject) {
		return httpapi.WriteJSON(w, http.StatusOK, noProjectFound)
	}
	if err != nil {
		return err
	}
	var scope int64
	if projectID != nil {
		scope = *projectID
	}
	tw, err := h.store.Lists.Trend(ctx, companyID, scope, days)
	if err != nil {
		return err
	}
	return httpapi.WriteJSON(w, http.StatusOK, trendView(tw, projectID, only))
}

// trendProject is the project a trend is about (nil: the whole company).
// `project` names it as every other findings filter does (any case), so
// an unknown name is errNoProject, answered as GET /issues answers it;
// `project_id` gives its id, and an id the company does not have is 404.
func (h handlers) trendProject(ctx context.Context, companyID int64, q url.Values) (*int64, error) {
	name, rawID := q.Get("project"), q.Get("project_id")
	switch {
	case name != "" && rawID != "":
		return nil, errProjectAndID
	case name != "":
		p, err := h.store.Catalog.ProjectByName(ctx, companyID, strings.TrimSpace(name))
		if errors.Is(err, ddb.ErrNotFound) {
			return nil, errNoProject
		}
		if err != nil {
			return nil, err
		}
		return &p.ID, nil
	case rawID != "":
		id, err := httpapi.ParseID("project_id", rawID)
		if err != nil {
			return nil, err
		}
		if _, err := h.store.Catalog.GetProject(ctx, companyID, id); errors.Is(err, ddb.ErrNotFound) {
			return nil, errProjectNotFound
		} else if err != nil {
			return nil, err
		}
		return &id, nil
	}
	return nil, nil
}

// trendView is the answer for a window; only narrows the open counts, time
// to fix and SLA figures to one urgency (the day's opened, fixed, reopened
// and dismissed count every urgency: the records keep them per scope).
func trendView(tw issuelists.TrendWindow, projectID *int64, only *string) trendAnswer {
	shown := func(u string) bool { return only == nil || *only == u }
	out := trendAnswer{Status: "ok", ProjectID: projectID, Urgency: only, Days: tw.Days,
		Series: make([]trendPoint, len(tw.Points)), TimeToFix: map[string]fixTimes{}, SLA: map[string]slaFigures{}}
	for n, p := range tw.Points {
		tp := trendPoint{Date: p.Date, Opened: p.Opened, Fixed: p.Fixed, Reopened: p.Reopened, Dismissed: p.Dismissed, Open: map[string]int64{}}
		for k, u := range trendmath.Urgencies {
			if shown(u) {
				tp.Open[u] = p.Open[k]
			}
		}
		out.Series[n] = tp
	}
	if len(tw.Points) > 0 {
		out.From, out.To = tw.Points[0].Date, tw.Points[len(tw.Points)-1].Date
	}
	by, all := trendmath.SLACompliance(tw.Fixes, tw.Open, tw.PastDue)
	var sumFixes trendmath.Fixes
	var sumOpen int64
	var sumSLA trendmath.Compliance
	for k, u := range trendmath.Urgencies {
		if !shown(u) {
			continue
		}
		f := tw.Fixes.ByUrgency[k]
		out.TimeToFix[u] = fixView(f)
		out.SLA[u] = slaView(f, tw.Open[k], by[k])
		sumFixes, sumOpen, sumSLA = f, tw.Open[k], by[k]
	}
	if only == nil {
		sumFixes, sumOpen, sumSLA = tw.Fixes.All, tw.Open.Sum(), all
	}
	out.TimeToFix["all"] = fixView(sumFixes)
	out.SLA["all"] = slaView(sumFixes, sumOpen, sumSLA)
	return out
}

func fixView(f trendmath.Fixes) fixTimes {
	out := fixTimes{Fixed: f.Fixed}
	if m, ok := f.Median(); ok {
		out.MedianDays = &m.Days
	}
	if p, ok := f.P90(); ok {
		out.P90Days = &p.Days
	}
	return out
}

func slaView(f trendmath.Fixes, open int64, c trendmath.Compliance) slaFigures {
	out := slaFigures{Fixed: f.Fixed, FixedWithinSLA: f.WithinSLA, Open: open, OpenPastSLA: c.OpenPastSLA.Part}
	if r, ok := c.FixedWithinSLA.Ratio(); ok {
		out.FixedWithinSLAShare = &r
	}
	if r, ok := c.OpenPastSLA.Ratio(); ok {
		out.OpenPastSLAShare = &r
	}
	return out
}
