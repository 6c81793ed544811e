package policies_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"reflect"
	"strings"
	"testing"

	"github.com/acme/codescan-api/functions/policies"
	"github.com/acme/codescan-api/internal/testenv"
	"github.com/acme/codescan-api/shared/routes"
	"github.com/acme/codescan-api/shared/store/schema"
)

func TestMain(m *testing.M) { testenv.Main(m) }

func ptr(n int64) *int64 { return &n }

type world struct {
	env     *testenv.Env
	h       http.Handler
	acme    *testenv.Company
	manager testenv.User
	plain   testenv.User
	other   *testenv.Company
}

func setup(t *testing.T) *world {
	env := testenv.New(t)
	w := &world{env: env, h: policies.New(env.Deps)}
	w.acme = env.Company(t, "Acme")
	w.manager = env.User(t, w.acme, testenv.UserSpec{Email: "sec@acme.test", Permissions: []string{routes.PermManagePolicy}})
	w.plain = env.User(t, w.acme, testenv.UserSpec{Email: "dev@acme.test", Permissions: []string{routes.PermChangeContentAccess, routes.PermManageIntegration}})
	w.other = env.Company(t, "Other")
	return w
}

func (w *world) policy(t *testing.T, p schema.Policy) schema.Policy {
	t.Helper()
	p, err := w.env.Store.Catalog.CreatePolicy(context.Background(), p)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func (w *world) stored(t *testing.T, p schema.Policy) schema.Policy {
	t.Helper()
	got, err := w.env.Store.Catalog.GetPolicy(context.Background(), p.CompanyID, p.ID)
	if err != nil {
		t.Fatal(err)
	}
	return got
}

func (w *world) del(t *testing.T, id any, header ...string) *testenv.Response {
	t.Helper()
	return testenv.Do(t, w.h, "DELETE", fmt.Sprintf("/policies/%v", id), "", header...)
}

func full(companyID int64) schema.Policy {
	return schema.Policy{
		CompanyID: companyID, PolicyType: "BLAST", Name: "No SQL injection in payments",
		Description: "Blocks merges that add SQL injection sinks", GuidanceText: "Use parameterised queries.",
		CWEs: []string{"CWE-89", "CWE-564"}, Excludes: []string{"test/**"}, Projects: []string{"payments-api"},
		GlobPattern: "src/**/*.go", SourceType: "Web", InstructionType: "overwrite",
		Active: true, Approved: true, ApprovedBy: ptr(7), RepoPolicyFile: ptr(31), ParentPolicy: ptr(12),
		Version: 3, ReadOnly: true, CreatedByService: true, CreatedAt: "2025-03-01T09:30:00Z",
	}
}

func TestDeactivate(t *testing.T) {
	w := setup(t)
	p := w.policy(t, full(w.acme.ID))
	r := w.del(t, p.ID, testenv.Key(w.manager)...)
	if r.Status != 200 {
		t.Fatalf("deactivate: %d %s", r.Status, r.Body)
	}
	want := fmt.Sprintf(`{"status":"ok","policy":{"id":%d,"policy_type":"BLAST","description":"Blocks merges that add SQL injection sinks",`+
		`"cwes":["CWE-89","CWE-564"],"excludes":["test/**"],"projects":["payments-api"],"company":%d,"active":false,"approved":true,`+
		`"approved_by":7,"created_at":"2025-03-01T09:30:00Z","glob_pattern":"src/**/*.go","source_type":"Web","repo_policy_file":31,`+
		`"name":"No SQL injection in payments","guidance_text":"Use parameterised queries.","version":3,"archived":false,`+
		`"parent_policy":12,"instruction_type":"overwrite","read_only":true,"created_by_service":true}}`, p.ID, w.acme.ID)
	if strings.TrimSpace(string(r.Body)) != want {
		t.Fatalf("body\n got %s\nwant %s", r.Body, want)
	}
	// The record is kept; only active changed.
	expect := p
	expect.Active = false
	if got := w.stored(t, p); !reflect.DeepEqual(got, expect) {
		t.Fatalf("stored\n got %+v\nwant %+v", got, expect)
	}
	// Idempotent: a second call answers the same and changes nothing.
	again := w.del(t, p.ID, testenv.Bearer(w.env.Token(t, w.manager))...)
	if again.Status != 200 || string(again.Body) != string(r.Body) {
		t.Fatalf("second deactivate: %d %s", again.Status, again.Body)
	}
	if got := w.stored(t, p); !reflect.DeepEqual(got, expect) {
		t.Fatalf("stored after second call: %+v", got)
	}
	// Company admins hold the permission.
	if r := w.del(t, w.policy(t, full(w.acme.ID)).ID, testenv.Key(w.acme.Admin)...); r.Status != 200 {
		t.Fatalf("admin: %d %s", r.Status, r.Body)
	}
}

func TestSparsePolicy(t *testing.T) {
	w := setup(t)
	p := w.policy(t, schema.Policy{CompanyID: w.acme.ID, PolicyType: "BLAST", Name: "Draft", Active: false, Version: 1})
	r := w.del(t, p.ID, testenv.Key(w.manager)...)
	var body struct {
		Policy map[string]json.RawMessage `json:"policy"`
	}
	r.Decode(t, &body)
	if r.Status != 200 || len(body.Policy) != 22 {
		t.Fatalf("%d, %d fields: %s", r.Status, len(body.Policy), r.Body)
	}
	for field, want := range map[string]string{"approved_by": "null", "repo_policy_file": "null", "parent_policy": "null", "cwes": "[]", "excludes": "[]", "projects": "[]", "active": "false"} {
		if got := string(body.Policy[field]); got != want {
			t.Errorf("%s = %s, want %s", field, got, want)
		}
	}
	if !reflect.DeepEqual(w.stored(t, p), p) {
		t.Fatal("an inactive policy changed")
	}
}

func TestAccessAndBadInput(t *testing.T) {
	w := setup(t)
	p := w.policy(t, full(w.acme.ID))
	cases := []struct {
		name   string
		id     any
		header []string
		status int
		want   string
	}{
		{"no credential", p.ID, nil, 401, `{"error":"Missing or invalid authorization header"}`},
		{"without permission", p.ID, testenv.Key(w.plain), 403, `{"error":"Permission denied"}`},
		{"other company's admin", p.ID, testenv.Key(w.other.Admin), 404, `{"error":"Policy not found"}`},
		{"unknown id", 987654, testenv.Key(w.manager), 404, `{"error":"Policy not found"}`},
		{"negative id", -3, testenv.Key(w.manager), 400, `{"error":"policy_id must be a positive integer id (digits, no sign or leading zero)"}`},
		{"leading zero", "05", testenv.Key(w.manager), 400, `{"error":"policy_id must be a positive integer id (digits, no sign or leading zero)"}`},
		{"zero", 0, testenv.Key(w.manager), 400, `{"error":"policy_id must be a positive integer id (digits, no sign or leading zero)"}`},
		{"not an integer", "abc", testenv.Key(w.manager), 400, `{"error":"policy_id must be a positive integer id (digits, no sign or leading zero)"}`},
		{"fraction", "1.5", testenv.Key(w.manager), 400, `{"error":"policy_id must be a positive integer id (digits, no sign or leading zero)"}`},
		{"exponent", "1e3", testenv.Key(w.manager), 400, `{"error":"policy_id must be a positive integer id (digits, no sign or leading zero)"}`},
		{"overflow", "99999999999999999999", testenv.Key(w.manager), 400, `{"error":"policy_id must be a positive integer id (digits, no sign or leading zero)"}`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := w.del(t, c.id, c.header...)
			if r.Status != c.status || strings.TrimSpace(string(r.Body)) != c.want {
				t.Fatalf("%d %s, want %d %s", r.Status, r.Body, c.status, c.want)
			}
		})
	}
	if !reflect.DeepEqual(w.stored(t, p), p) {
		t.Fatal("a rejected request changed the policy")
	}
	// The other company's own policy with the same shape is its own business.
	op := w.policy(t, full(w.other.ID))
	if r := w.del(t, op.ID, testenv.Key(w.manager)...); r.Status != 404 {
		t.Fatalf("acme deactivated the other company's policy: %d", r.Status)
	}
	if !w.stored(t, op).Active {
		t.Fatal("the other company's policy changed")
	}
}
