package issues_test

import (
	"fmt"
	"testing"

	"github.com/acme/codescan-api/internal/testenv"
	"github.com/acme/codescan-api/shared/trend"
)

type trendBody struct {
	Status    string  `json:"status"`
	ProjectID *int64  `json:"project_id"`
	Days      int     `json:"days"`
	Urgency   *string `json:"urgency"`
	Series    []struct {
		Date                               string
		Opened, Fixed, Reopened, Dismissed int64
		Open                               map[string]int64
	} `json:"series"`
	TimeToFix map[string]struct {
		Fixed int64 `json:"fixed"`
	} `json:"time_to_fix"`
	SLA map[string]struct {
		Open        int64  `json:"open"`
		OpenPastSLA *int64 `json:"open_past_sla"`
	} `json:"sla"`
}

// TestTrendRoute reads the trend of issues written today (the store's own
// clock) and checks today's point against the issues as written, for the
// company and one project (first detected in March 2025, every issue
// whose SLA clock runs is past its SLA); bad input is 400 and another company's project
// 404 like a missing one.
func TestTrendRoute(t *testing.T) {
	t.Parallel()
	env := testenv.New(t)
	w := newWorld(t, env, "Acme", 60, 9)
	other := newWorld(t, env, "Other", 1, 10)
	for _, scope := range []int64{0, w.projects[2].ID} {
		var wantOpen trend.ByUrgency
		var opened, fixed, dismissed, pastSLA int64
		for _, i := range w.issues {
			if scope != 0 && i.ProjectID != scope {
				continue
			}
			if i.Status == "open" {
				pastSLA++ // the SLA clock runs for open ones only
			}
			class, err := trend.ClassOf(i.Status)
			if err != nil {
				t.Fatal(err)
			}
			switch class {
			case trend.Open:
				opened++
				for u, code := range trend.Urgencies {
					if code == i.Urgency {
						wantOpen[u]++
					}
				}
			case trend.Fixed:
				fixed++
			case trend.Dismissed:
				dismissed++
			}
		}
		q := vals("days", "7")
		if scope != 0 {
			q.Set("project", fmt.Sprint(scope))
		}
		var body trendBody
		w.get(t, "/metrics/trend", q).Decode(t, &body)
		if body.Status != "ok" || body.Days != 7 || len(body.Series) != 7 || (scope == 0) != (body.ProjectID == nil) {
			t.Fatalf("scope %d: %+v", scope, body)
		}
		today := body.Series[6]
		if today.Opened != opened || today.Fixed != fixed || today.Dismissed != dismissed || today.Reopened != 0 {
			t.Errorf("scope %d today: %+v, want opened %d fixed %d dismissed %d", scope, today, opened, fixed, dismissed)
		}
		for u, code := range trend.Urgencies {
			if today.Open[code] != wantOpen[u] || body.Series[0].Open[code] != 0 {
				t.Errorf("scope %d open %s: %d (first day %d), want %d", scope, code, today.Open[code], body.Series[0].Open[code], wantOpen[u])
			}
		}
		if body.TimeToFix["all"].Fixed != fixed || body.SLA["all"].Open != wantOpen.Sum() || body.SLA["all"].OpenPastSLA == nil || *body.SLA["all"].OpenPastSLA != pastSLA {
			t.Errorf("scope %d: time to fix %+v, sla %+v", scope, body.TimeToFix, body.SLA)
		}
	}
	var one trendBody
	w.get(t, "/metrics/trend", vals("urgency", "critical")).Decode(t, &one)
	if one.Days != 30 || one.Urgency == nil || *one.Urgency != "CR" || len(one.Series[29].Open) != 1 || len(one.SLA) != 2 {
		t.Errorf("urgency critical: %+v", one)
	}
	for _, q := range []string{"project=" + fmt.Sprint(other.projects[0].ID), "project=999999"} {
		res := testenv.Do(t, w.h, "GET", "/metrics/trend?"+q, "", testenv.Key(w.company.Admin)...)
		if res.Status != 404 || res.JSON(t)["error"] != "Project not found" {
			t.Fatalf("%s: %d %s", q, res.Status, res.Body)
		}
	}
	for _, q := range []string{"days=0", "days=366", "days=abc", "days=-1", "urgency=urgent", "project=abc", "project=0"} {
		res := testenv.Do(t, w.h, "GET", "/metrics/trend?"+q, "", testenv.Key(w.company.Admin)...)
		if res.Status != 400 {
			t.Fatalf("%s: %d %s", q, res.Status, res.Body)
		}
	}
	if res := testenv.Do(t, w.h, "GET", "/metrics/trend", ""); res.Status != 401 {
		t.Fatalf("without credential: %d", res.Status)
	}
}
