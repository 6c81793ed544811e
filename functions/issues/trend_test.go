package issues_test

import (
	"bytes"
	"context"
	"fmt"
	"testing"

	"github.com/acme/codescan-api/internal/testenv"
	"github.com/acme/codescan-api/shared/store/schema"
	"github.com/acme/codescan-api/shared/trendmath"
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
// company and one project named in any case (first detected in March 2025,
// every issue whose SLA clock runs is past its SLA); bad input is 400.
func TestTrendRoute(t *testing.T) {
	t.Parallel()
	env := testenv.New(t)
	w := newWorld(t, env, "Acme", 60, 9)
	for _, scope := range []int64{0, w.projects[2].ID} {
		var wantOpen trendmath.ByUrgency
		var opened, fixed, dismissed, pastSLA int64
		for _, i := range w.issues {
			if scope != 0 && i.ProjectID != scope {
				continue
			}
			if i.Status == "open" {
				pastSLA++ // the SLA clock runs for open ones only
			}
			class, err := trendmath.ClassOf(i.Status)
			if err != nil {
				t.Fatal(err)
			}
			switch class {
			case trendmath.Open:
				opened++
				for u, code := range trendmath.Urgencies {
					if code == i.Urgency {
						wantOpen[u]++
					}
				}
			case trendmath.Fixed:
				fixed++
			case trendmath.Dismissed:
				dismissed++
			}
		}
		q := vals("days", "7")
		if scope != 0 {
			q.Set("project", "lib") // w.projects[2], "Lib"
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
		for u, code := range trendmath.Urgencies {
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
	for _, q := range []string{"days=0", "days=366", "days=abc", "days=-1", "urgency=urgent", "project_id=abc", "project_id=0",
		"project=Lib&project_id=" + fmt.Sprint(w.projects[2].ID)} {
		res := testenv.Do(t, w.h, "GET", "/metrics/trend?"+q, "", testenv.Key(w.company.Admin)...)
		if res.Status != 400 {
			t.Fatalf("%s: %d %s", q, res.Status, res.Body)
		}
	}
	if res := testenv.Do(t, w.h, "GET", "/metrics/trend", ""); res.Status != 401 {
		t.Fatalf("without credential: %d", res.Status)
	}
}

// `project` is a project's name, as in every other findings filter: the
// name and the id (project_id) read the same trend; a name the company
// does not have, another company's included, answers no_project_found as
// GET /issues does, and an id it does not have 404. Each company's name
// reads its own project.
func TestTrendProjectByName(t *testing.T) {
	t.Parallel()
	env := testenv.New(t)
	w := newWorld(t, env, "Acme", 40, 11)
	other := newWorld(t, env, "Other", 30, 12)
	if _, err := env.Store.Catalog.CreateProject(context.Background(), schema.Project{CompanyID: other.company.ID, Name: "Globex-Only"}); err != nil {
		t.Fatal(err)
	}
	lib := w.projects[2]
	byName := w.get(t, "/metrics/trend", vals("project", " LIB ", "days", "3"))
	byID := w.get(t, "/metrics/trend", vals("project_id", fmt.Sprint(lib.ID), "days", "3"))
	var body trendBody
	byName.Decode(t, &body)
	if byName.Status != 200 || body.ProjectID == nil || *body.ProjectID != lib.ID || !bytes.Equal(byName.Body, byID.Body) {
		t.Fatalf("by name %d %s\nby id %d %s", byName.Status, byName.Body, byID.Status, byID.Body)
	}
	var theirs trendBody
	other.get(t, "/metrics/trend", vals("project", "Lib", "days", "3")).Decode(t, &theirs)
	if theirs.ProjectID == nil || *theirs.ProjectID != other.projects[2].ID || *theirs.ProjectID == lib.ID {
		t.Fatalf("the other company's Lib: %+v", theirs)
	}
	issuesAnswer := w.get(t, "/issues", vals("project", "Nope"))
	for _, name := range []string{"Nope", "Globex-Only", fmt.Sprint(lib.ID)} {
		res := w.get(t, "/metrics/trend", vals("project", name))
		if res.Status != issuesAnswer.Status || !bytes.Equal(res.Body, issuesAnswer.Body) || res.JSON(t)["status"] != "no_project_found" {
			t.Errorf("project=%s: %d %s, want GET /issues's %d %s", name, res.Status, res.Body, issuesAnswer.Status, issuesAnswer.Body)
		}
	}
	for _, id := range []int64{other.projects[0].ID, 999999} {
		res := w.get(t, "/metrics/trend", vals("project_id", fmt.Sprint(id)))
		if res.Status != 404 || res.JSON(t)["error"] != "Project not found" {
			t.Errorf("project_id=%d: %d %s", id, res.Status, res.Body)
		}
	}
}
