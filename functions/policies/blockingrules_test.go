package policies_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/acme/codescan-api/internal/testenv"
)

type ruleBody struct {
	Status string
	Rule   struct {
		ID         string
		Slug       string
		Name       string
		Active     bool
		CI         bool
		Conditions struct {
			MinUrgency *string `json:"min_urgency"`
			CWEs       []string
			Paths      []string
			Statuses   []string
			OnlyNew    bool `json:"only_new"`
		}
	}
}

func TestBlockingRules(t *testing.T) {
	w := setup(t)
	key := testenv.Key(w.manager)
	res := testenv.Do(t, w.h, "POST", "/blocking-rules", `{"slug":"No-Secrets","name":" Secrets ","conditions":{"cwes":["798"],"paths":["src/**"],"only_new":true}}`, key...)
	var r ruleBody
	res.Decode(t, &r)
	if res.Status != 201 || r.Rule.Slug != "no-secrets" || r.Rule.Name != "Secrets" || !r.Rule.Active || !r.Rule.CI ||
		r.Rule.Conditions.CWEs[0] != "CWE-798" || !r.Rule.Conditions.OnlyNew || r.Rule.Conditions.MinUrgency != nil {
		t.Fatalf("%d %s", res.Status, res.Body)
	}
	id := r.Rule.ID
	if res := testenv.Do(t, w.h, "POST", "/blocking-rules", `{"slug":"no-secrets","name":"again"}`, key...); res.Status != 409 {
		t.Fatalf("duplicate slug: %d %s", res.Status, res.Body)
	}
	for _, body := range []string{`{"name":"x"}`, `{"slug":"-x","name":"x"}`, `{"slug":"x","name":""}`, `{"slug":"x","name":"x","conditions":{"min_urgency":"XX"}}`,
		`{"slug":"x","name":"x","conditions":{"paths":["[a"]}}`, `{"slug":"x","name":"x","extra":1}`, `{"slug":"x","name":"x","conditions":{"cwes":[79]}}`,
		// A glob whose expansion doubled per group, and a CWE MITRE never named.
		`{"slug":"x","name":"x","conditions":{"paths":["` + strings.Repeat("{*,*}", 22) + `"]}}`, `{"slug":"x","name":"x","conditions":{"cwes":["CWE-99999"]}}`} {
		if res := testenv.Do(t, w.h, "POST", "/blocking-rules", body, key...); res.Status != 400 {
			t.Errorf("%s: %d %s", body, res.Status, res.Body)
		}
	}
	if res := testenv.Do(t, w.h, "POST", "/blocking-rules", `{"slug":"x","name":"x"}`, testenv.Key(w.plain)...); res.Status != 403 {
		t.Fatalf("without permission: %d", res.Status)
	}
	// PATCH: rename the slug, the old one becomes free.
	res = testenv.Do(t, w.h, "PATCH", "/blocking-rules/"+id, `{"slug":"secrets","active":false,"conditions":{"min_urgency":"hi"}}`, key...)
	res.Decode(t, &r)
	if res.Status != 200 || r.Rule.Slug != "secrets" || r.Rule.Active || *r.Rule.Conditions.MinUrgency != "HI" || len(r.Rule.Conditions.CWEs) != 0 {
		t.Fatalf("%d %s", res.Status, res.Body)
	}
	other := testenv.Do(t, w.h, "POST", "/blocking-rules", `{"slug":"no-secrets","name":"reuses the old slug"}`, key...)
	if other.Status != 201 {
		t.Fatalf("old slug not freed: %d %s", other.Status, other.Body)
	}
	if res := testenv.Do(t, w.h, "PATCH", "/blocking-rules/"+id, `{"slug":"no-secrets"}`, key...); res.Status != 409 {
		t.Fatalf("taken slug: %d %s", res.Status, res.Body)
	}
	// List by cursor.
	var l struct {
		Rules         []struct{ ID string }
		TotalRules    int    `json:"total_rules"`
		TotalPages    int    `json:"total_pages"`
		NextPageToken string `json:"next_page_token"`
	}
	testenv.Do(t, w.h, "GET", "/blocking-rules?page_size=1", "", key...).Decode(t, &l)
	if len(l.Rules) != 1 || l.Rules[0].ID != id || l.TotalRules != 2 || l.TotalPages != 2 || l.NextPageToken == "" {
		t.Fatalf("%+v", l)
	}
	tok := l.NextPageToken
	l.NextPageToken = ""
	testenv.Do(t, w.h, "GET", "/blocking-rules?page_size=1&next_page_token="+tok, "", key...).Decode(t, &l)
	if len(l.Rules) != 1 || l.Rules[0].ID == id || l.NextPageToken != "" {
		t.Fatalf("page 2 %+v", l)
	}
	if res := testenv.Do(t, w.h, "GET", "/blocking-rules?page_token="+tok, "", testenv.Key(w.other.Admin)...); res.Status != 400 {
		t.Fatalf("foreign token: %d", res.Status)
	}
	// Tenant isolation: another company's rule answers like a missing one.
	for _, m := range []string{"GET", "PATCH", "DELETE"} {
		foreign := testenv.Do(t, w.h, m, "/blocking-rules/"+id, `{"name":"x"}`, testenv.Key(w.other.Admin)...)
		missing := testenv.Do(t, w.h, m, "/blocking-rules/999999", `{"name":"x"}`, testenv.Key(w.other.Admin)...)
		if foreign.Status != 404 || string(foreign.Body) != string(missing.Body) {
			t.Errorf("%s: %d %s / %s", m, foreign.Status, foreign.Body, missing.Body)
		}
	}
	if res := testenv.Do(t, w.h, "DELETE", "/blocking-rules/"+id, "", key...); res.Status != 200 {
		t.Fatalf("delete: %d", res.Status)
	}
	if res := testenv.Do(t, w.h, "GET", "/blocking-rules/"+id, "", key...); res.Status != 404 {
		t.Fatalf("after delete: %d", res.Status)
	}
	testenv.Do(t, w.h, "GET", "/blocking-rules", "", key...).Decode(t, &l)
	if l.TotalRules != 1 {
		t.Fatalf("count after delete: %+v", l)
	}
	if res := testenv.Do(t, w.h, "POST", "/blocking-rules", `{"slug":"secrets","name":"slug free again"}`, key...); res.Status != 201 {
		t.Fatalf("slug of a deleted rule: %d", res.Status)
	}
}

func TestCreateListGetPolicies(t *testing.T) {
	w := setup(t)
	key := testenv.Key(w.manager)
	res := testenv.Do(t, w.h, "POST", "/policies", `{"name":" SQL ","cwes":["89","CWE-79"],"glob_pattern":"**/*.py","excludes":["tests/"]}`, key...)
	var p struct {
		Policy struct {
			ID                         int64
			Name                       string
			PolicyType                 string `json:"policy_type"`
			CWEs                       []string
			Active, Approved, Archived bool
			Version                    int64
			SourceType                 string `json:"source_type"`
			InstructionType            string `json:"instruction_type"`
			Company                    int64
		}
	}
	res.Decode(t, &p)
	if res.Status != 201 || p.Policy.PolicyType != "BLAST" || p.Policy.CWEs[0] != "CWE-79" || !p.Policy.Active || p.Policy.Approved ||
		p.Policy.Version != 1 || p.Policy.SourceType != "Web" || p.Policy.InstructionType != "overwrite" || p.Policy.Company != w.acme.ID {
		t.Fatalf("%d %s", res.Status, res.Body)
	}
	for _, body := range []string{`{}`, `{"name":""}`, `{"name":"x","cwes":["sql"]}`, `{"name":"x","glob_pattern":"[a"}`, `{"name":"x","approved":true}`,
		`{"name":"` + strings.Repeat("n", 201) + `"}`} {
		if res := testenv.Do(t, w.h, "POST", "/policies", body, key...); res.Status != 400 {
			t.Errorf("%s: %d %s", body, res.Status, res.Body)
		}
	}
	for n := range 3 {
		testenv.Do(t, w.h, "POST", "/policies", fmt.Sprintf(`{"name":"p%d"}`, n), key...)
	}
	testenv.Do(t, w.h, "POST", "/policies", `{"name":"theirs"}`, testenv.Key(w.other.Admin)...)
	var l struct {
		Policies      []struct{ ID int64 }
		TotalPolicies int    `json:"total_policies"`
		NextPageToken string `json:"next_page_token"`
	}
	var seen []int64
	tok := ""
	for range 3 {
		l.NextPageToken = ""
		testenv.Do(t, w.h, "GET", "/policies?page_size=2&page_token="+tok, "", key...).Decode(t, &l)
		for _, x := range l.Policies {
			seen = append(seen, x.ID)
		}
		if tok = l.NextPageToken; tok == "" {
			break
		}
	}
	if len(seen) != 4 || l.TotalPolicies != 4 {
		t.Fatalf("%v %+v", seen, l)
	}
	got := testenv.Do(t, w.h, "GET", fmt.Sprintf("/policies/%d", p.Policy.ID), "", key...)
	if got.Status != 200 || !strings.Contains(string(got.Body), `"name":"SQL"`) {
		t.Fatalf("%d %s", got.Status, got.Body)
	}
	foreign := testenv.Do(t, w.h, "GET", fmt.Sprintf("/policies/%d", p.Policy.ID), "", testenv.Key(w.other.Admin)...)
	missing := testenv.Do(t, w.h, "GET", "/policies/999999", "", testenv.Key(w.other.Admin)...)
	if foreign.Status != 404 || string(foreign.Body) != string(missing.Body) {
		t.Fatalf("foreign %d %s", foreign.Status, foreign.Body)
	}
	if res := testenv.Do(t, w.h, "GET", "/policies", "", testenv.Key(w.plain)...); res.Status != 403 {
		t.Fatalf("without permission: %d", res.Status)
	}
}
