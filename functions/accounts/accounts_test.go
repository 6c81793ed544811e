package accounts_test

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/acme/codescan-api/functions/accounts"
	"github.com/acme/codescan-api/internal/testenv"
	"github.com/acme/codescan-api/shared/auth"
	"github.com/acme/codescan-api/shared/routes"
	"github.com/acme/codescan-api/shared/store/bulkload"
	"github.com/acme/codescan-api/shared/store/ddb"
	"github.com/acme/codescan-api/shared/store/page"
	"github.com/acme/codescan-api/shared/store/schema"
	"github.com/acme/codescan-api/shared/store/tenancy"
)

func TestMain(m *testing.M) { testenv.Main(m) }

type apiKey struct {
	ID         int64   `json:"id"`
	Name       string  `json:"name"`
	Prefix     string  `json:"prefix"`
	UserID     int64   `json:"user_id"`
	CreatedAt  string  `json:"created_at"`
	LastUsedAt *string `json:"last_used_at"`
	ExpiresAt  *string `json:"expires_at"`
	RevokedAt  *string `json:"revoked_at"`
}

type keyList struct {
	Page          *int     `json:"page"`
	TotalPages    int      `json:"total_pages"`
	Total         int64    `json:"total_api_keys"`
	Keys          []apiKey `json:"api_keys"`
	NextPageToken *string  `json:"next_page_token"`
}

type user struct {
	ID          int64    `json:"id"`
	Email       string   `json:"email"`
	Permissions []string `json:"permissions"`
	IsAdmin     bool     `json:"is_admin"`
	Active      bool     `json:"active"`
	Subject     *string  `json:"subject"`
}

type userList struct {
	Page          *int    `json:"page"`
	Total         int64   `json:"total_users"`
	Users         []user  `json:"users"`
	NextPageToken *string `json:"next_page_token"`
}

type entry struct {
	ID    string `json:"id"`
	At    string `json:"at"`
	Actor struct {
		UserID *int64 `json:"user_id"`
		Via    string `json:"via"`
		KeyID  *int64 `json:"key_id"`
	} `json:"actor"`
	Action  string                                 `json:"action"`
	Target  struct{ Type, ID string }              `json:"target"`
	Changes map[string]struct{ Before, After any } `json:"changes"`
}

type auditPage struct {
	Entries       []entry `json:"entries"`
	NextPageToken *string `json:"next_page_token"`
}

type world struct {
	env *testenv.Env
	h   http.Handler
}

func newWorld(t *testing.T) *world {
	env := testenv.New(t)
	return &world{env: env, h: accounts.New(env.Deps)}
}

func (w *world) do(t *testing.T, method, path, body string, header []string, want int) *testenv.Response {
	t.Helper()
	res := testenv.Do(t, w.h, method, path, body, header...)
	if res.Status != want {
		t.Fatalf("%s %s: status %d, want %d: %s", method, path, res.Status, want, res.Body)
	}
	return res
}

// createKey makes a key through the API and returns it with its record.
func (w *world) createKey(t *testing.T, as []string, body string) (string, apiKey) {
	t.Helper()
	var out struct {
		Key    string `json:"key"`
		APIKey apiKey `json:"api_key"`
	}
	w.do(t, "POST", "/api-keys", body, as, http.StatusCreated).Decode(t, &out)
	return out.Key, out.APIKey
}

func TestAPIKeyLifecycle(t *testing.T) {
	w := newWorld(t)
	acme := w.env.Company(t, "Acme")
	member := w.env.User(t, acme, testenv.UserSpec{Email: "m@acme.test"})
	other := w.env.User(t, acme, testenv.UserSpec{Email: "o@acme.test"})

	key, rec := w.createKey(t, testenv.Key(member), `{"name":"  CI  ","expires_in_days":30}`)
	if !strings.HasPrefix(key, auth.APIKeyPrefix) || rec.Name != "CI" || rec.UserID != member.ID ||
		rec.Prefix != key[:tenancy.KeyPrefixLength] || rec.ExpiresAt == nil || rec.RevokedAt != nil || rec.LastUsedAt != nil {
		t.Fatalf("created %+v for %q", rec, key)
	}
	exp, _ := time.Parse(time.RFC3339, *rec.ExpiresAt)
	if d := time.Until(exp); d < 29*24*time.Hour || d > 30*24*time.Hour+time.Minute {
		t.Fatalf("expires in %v, want 30 days", d)
	}

	// The new key works, and its first use is recorded.
	var own keyList
	w.do(t, "GET", "/api-keys", "", []string{auth.APIKeyHeader, key}, http.StatusOK).Decode(t, &own)
	if own.Total != 2 || len(own.Keys) != 2 { // testenv's default key and the new one
		t.Fatalf("own keys %+v", own)
	}
	got, err := w.env.Store.Tenancy.GetAPIKey(context.Background(), acme.ID, rec.ID)
	if err != nil || got.LastUsedAt == "" {
		t.Fatalf("last_used_at not recorded: %+v %v", got, err)
	}

	// Lists: a member sees only their own keys, an admin every key, or one
	// user's with user_id.
	var all keyList
	w.do(t, "GET", "/api-keys", "", testenv.Key(acme.Admin), http.StatusOK).Decode(t, &all)
	if all.Total != 4 || len(all.Keys) != 4 {
		t.Fatalf("admin sees %d of %d keys, want 4", len(all.Keys), all.Total)
	}
	var filtered keyList
	w.do(t, "GET", fmt.Sprintf("/api-keys?user_id=%d", other.ID), "", testenv.Key(acme.Admin), http.StatusOK).Decode(t, &filtered)
	if filtered.Total != 1 || len(filtered.Keys) != 1 || filtered.Keys[0].UserID != other.ID {
		t.Fatalf("filtered %+v", filtered)
	}
	w.do(t, "GET", fmt.Sprintf("/api-keys?user_id=%d", other.ID), "", testenv.Key(member), http.StatusForbidden)
	w.do(t, "GET", "/api-keys?user_id=x", "", testenv.Key(member), http.StatusBadRequest)

	// A member cannot create keys for others, nor revoke them.
	w.do(t, "POST", "/api-keys", fmt.Sprintf(`{"name":"x","user_id":%d}`, other.ID), testenv.Key(member), http.StatusForbidden)
	otherKeys, _ := w.env.Store.Tenancy.ListAPIKeys(context.Background(), acme.ID, other.ID, page.Request{Limit: 10})
	w.do(t, "DELETE", fmt.Sprintf("/api-keys/%d", otherKeys.Items[0].ID), "", testenv.Key(member), http.StatusNotFound)

	// Revocation: the next request with the key is 401; revoking again
	// returns the record unchanged.
	var revoked struct {
		APIKey apiKey `json:"api_key"`
	}
	w.do(t, "DELETE", fmt.Sprintf("/api-keys/%d", rec.ID), "", testenv.Key(member), http.StatusOK).Decode(t, &revoked)
	if revoked.APIKey.RevokedAt == nil {
		t.Fatalf("revoked %+v", revoked.APIKey)
	}
	w.do(t, "GET", "/api-keys", "", []string{auth.APIKeyHeader, key}, http.StatusUnauthorized)
	var again struct {
		APIKey apiKey `json:"api_key"`
	}
	w.do(t, "DELETE", fmt.Sprintf("/api-keys/%d", rec.ID), "", testenv.Key(acme.Admin), http.StatusOK).Decode(t, &again)
	if *again.APIKey.RevokedAt != *revoked.APIKey.RevokedAt {
		t.Fatal("revoking twice changed revoked_at")
	}
	w.do(t, "DELETE", "/api-keys/999999", "", testenv.Key(acme.Admin), http.StatusNotFound)
	w.do(t, "DELETE", "/api-keys/abc", "", testenv.Key(acme.Admin), http.StatusBadRequest)

	// An admin creates a key for an active user of the company only.
	_, forOther := w.createKey(t, testenv.Key(acme.Admin), fmt.Sprintf(`{"name":"for o","user_id":%d}`, other.ID))
	if forOther.UserID != other.ID {
		t.Fatalf("key for %d", forOther.UserID)
	}
	gone := w.env.User(t, acme, testenv.UserSpec{Email: "gone@acme.test", Inactive: true})
	w.do(t, "POST", "/api-keys", fmt.Sprintf(`{"name":"x","user_id":%d}`, gone.ID), testenv.Key(acme.Admin), http.StatusConflict)
	w.do(t, "POST", "/api-keys", `{"name":"x","user_id":999999}`, testenv.Key(acme.Admin), http.StatusNotFound)

	for name, body := range map[string]string{
		"no name":        `{}`,
		"blank name":     `{"name":"   "}`,
		"long name":      fmt.Sprintf(`{"name":%q}`, strings.Repeat("n", 101)),
		"control char":   `{"name":"a\u0007b"}`,
		"zero days":      `{"name":"x","expires_in_days":0}`,
		"too many days":  `{"name":"x","expires_in_days":3651}`,
		"string days":    `{"name":"x","expires_in_days":"3"}`,
		"unknown member": `{"name":"x","scopes":["all"]}`,
		"not JSON":       `name=x`,
	} {
		t.Run(name, func(t *testing.T) {
			w.do(t, "POST", "/api-keys", body, testenv.Key(member), http.StatusBadRequest)
		})
	}
}

func TestExpiredKeyIsRefused(t *testing.T) {
	w := newWorld(t)
	acme := w.env.Company(t, "Acme")
	key := auth.NewAPIKey()
	ctx := context.Background()
	exp := time.Now().Add(time.Hour).UTC().Format(time.RFC3339)
	if _, err := w.env.Store.Tenancy.CreateAPIKey(ctx, schema.APIKey{CompanyID: acme.ID, UserID: acme.Admin.ID, Name: "short", ExpiresAt: exp}, key); err != nil {
		t.Fatal(err)
	}
	if _, err := w.env.Store.Tenancy.CredentialByAPIKey(ctx, key, time.Now()); err != nil {
		t.Fatalf("before expiry: %v", err)
	}
	if _, err := w.env.Store.Tenancy.CredentialByAPIKey(ctx, key, time.Now().Add(time.Hour+time.Second)); err != ddb.ErrNotFound {
		t.Fatalf("after expiry: %v, want ErrNotFound", err)
	}
}

// A key made with expires_in_days expires that many days after its
// creation to the second: it works in its last second and is refused from
// the next on, on the groups' and the authenticator's controlled clock.
func TestKeyExpiresOnTheClock(t *testing.T) {
	env := testenv.New(t)
	at := time.Date(2031, 5, 1, 9, 30, 0, 0, time.UTC)
	clock := func() time.Time { return at }
	env.Deps.Now, env.Deps.Server.Auth.Now = clock, clock
	w := &world{env: env, h: accounts.New(env.Deps)}
	acme := w.env.Company(t, "Acme")
	key, rec := w.createKey(t, testenv.Key(acme.Admin), `{"name":"CI","expires_in_days":2}`)
	expires := at.Add(48 * time.Hour)
	if rec.ExpiresAt == nil || *rec.ExpiresAt != expires.Format(time.RFC3339) {
		t.Fatalf("expires_at %v, want %s", rec.ExpiresAt, expires.Format(time.RFC3339))
	}
	at = expires.Add(-time.Second)
	w.do(t, "GET", "/api-keys", "", []string{auth.APIKeyHeader, key}, http.StatusOK)
	at = expires
	w.do(t, "GET", "/api-keys", "", []string{auth.APIKeyHeader, key}, http.StatusUnauthorized)
	w.do(t, "GET", "/api-keys", "", testenv.Key(acme.Admin), http.StatusOK) // a key without expiry
}

// TestAuthReadBudget measures what authentication costs: two reads (the
// key's look-up item, then user and company in one batch), plus one write
// to record the key's use at most once per five minutes.
func TestAuthReadBudget(t *testing.T) {
	w := newWorld(t)
	acme := w.env.Company(t, "Acme")
	measure := func(header ...string) int {
		var m ddb.Meter
		r, _ := http.NewRequestWithContext(ddb.WithMeter(context.Background(), &m), "GET", "/", nil)
		r.Header.Set(header[0], header[1])
		if _, err := w.env.Deps.Server.Auth.Authenticate(r); err != nil {
			t.Fatal(err)
		}
		n, _, _ := m.Snapshot()
		return n
	}
	if n := measure(testenv.Key(acme.Admin)...); n != 3 {
		t.Fatalf("first use: %d requests, want 3 (2 reads + the last-use write)", n)
	}
	for i := 0; i < 3; i++ {
		if n := measure(testenv.Key(acme.Admin)...); n != 2 {
			t.Fatalf("later use: %d requests, want 2 reads", n)
		}
	}
	if n := measure(testenv.Bearer(w.env.Token(t, acme.Admin))...); n != 2 {
		t.Fatalf("bearer: %d requests, want 2 reads", n)
	}
}

func TestUsers(t *testing.T) {
	w := newWorld(t)
	acme := w.env.Company(t, "Acme")
	admin := testenv.Key(acme.Admin)

	var created struct {
		User user `json:"user"`
	}
	w.do(t, "POST", "/users", `{"email":"dev@acme.test","first_name":"Dev","last_name":"One",`+
		`"permissions":["scans.upload_scan","integrations.view_integration","scans.upload_scan"],"subject":"idp|dev1"}`,
		admin, http.StatusCreated).Decode(t, &created)
	u := created.User
	if u.Email != "dev@acme.test" || !u.Active || u.IsAdmin || len(u.Permissions) != 2 || u.Subject == nil || *u.Subject != "idp|dev1" {
		t.Fatalf("created %+v", u)
	}
	w.do(t, "POST", "/users", `{"email":"DEV@acme.test","first_name":"D","last_name":"O"}`, admin, http.StatusConflict)
	w.do(t, "POST", "/users", `{"email":"dev2@acme.test","first_name":"D","last_name":"O","subject":"idp|dev1"}`, admin, http.StatusConflict)
	for name, body := range map[string]string{
		"no email":           `{"first_name":"a","last_name":"b"}`,
		"bad email":          `{"email":"not an email","first_name":"a","last_name":"b"}`,
		"named email":        `{"email":"A <a@b.test>","first_name":"a","last_name":"b"}`,
		"no first name":      `{"email":"a@b.test","last_name":"b"}`,
		"unknown permission": `{"email":"a@b.test","first_name":"a","last_name":"b","permissions":["root"]}`,
		"unknown member":     `{"email":"a@b.test","first_name":"a","last_name":"b","role":"admin"}`,
		"long subject":       fmt.Sprintf(`{"email":"a@b.test","first_name":"a","last_name":"b","subject":%q}`, strings.Repeat("s", 256)),
	} {
		t.Run(name, func(t *testing.T) { w.do(t, "POST", "/users", body, admin, http.StatusBadRequest) })
	}

	// The new user's bearer token works (subject mapping).
	dev := testenv.User{User: schema.User{ID: u.ID, Subject: "idp|dev1"}}
	bearer := testenv.Bearer(w.env.Token(t, dev))
	w.do(t, "GET", "/api-keys", "", bearer, http.StatusOK)

	// Filters and totals.
	list := func(q string) userList {
		var l userList
		w.do(t, "GET", "/users"+q, "", admin, http.StatusOK).Decode(t, &l)
		return l
	}
	if l := list(""); l.Total != 2 || len(l.Users) != 2 {
		t.Fatalf("all users %+v", l)
	}
	if l := list("?role=admin"); l.Total != 1 || l.Users[0].ID != acme.Admin.ID {
		t.Fatalf("admins %+v", l)
	}
	if l := list("?permission=scans.upload_scan"); l.Total != 1 || l.Users[0].ID != u.ID {
		t.Fatalf("uploaders %+v", l)
	}
	w.do(t, "GET", "/users?role=owner", "", admin, http.StatusBadRequest)
	w.do(t, "GET", "/users?permission=root", "", admin, http.StatusBadRequest)
	w.do(t, "GET", "/users?role=admin&permission=scans.upload_scan", "", admin, http.StatusBadRequest)

	// PATCH: permissions, admin flag; the filters follow.
	var patched struct {
		User user `json:"user"`
	}
	w.do(t, "PATCH", fmt.Sprintf("/users/%d", u.ID), `{"permissions":["policies.manage_policy"],"is_admin":true}`, admin, http.StatusOK).Decode(t, &patched)
	if !patched.User.IsAdmin || len(patched.User.Permissions) != 1 {
		t.Fatalf("patched %+v", patched.User)
	}
	if l := list("?permission=scans.upload_scan"); l.Total != 0 || len(l.Users) != 0 {
		t.Fatalf("uploaders after patch %+v", l)
	}
	if l := list("?role=admin"); l.Total != 2 || len(l.Users) != 2 {
		t.Fatalf("admins after patch %+v", l)
	}
	if l := list("?role=member"); l.Total != 0 {
		t.Fatalf("members after patch %+v", l)
	}
	w.do(t, "PATCH", fmt.Sprintf("/users/%d", u.ID), `{}`, admin, http.StatusBadRequest)
	w.do(t, "PATCH", fmt.Sprintf("/users/%d", u.ID), `{"permissions":["root"]}`, admin, http.StatusBadRequest)
	w.do(t, "PATCH", fmt.Sprintf("/users/%d", u.ID), `{"active":"no"}`, admin, http.StatusBadRequest)
	w.do(t, "PATCH", "/users/999999", `{"active":false}`, admin, http.StatusNotFound)

	// Deactivation refuses the user's keys and bearer tokens at once.
	devKey, _ := w.createKey(t, admin, fmt.Sprintf(`{"name":"dev","user_id":%d}`, u.ID))
	w.do(t, "GET", "/api-keys", "", []string{auth.APIKeyHeader, devKey}, http.StatusOK)
	w.do(t, "PATCH", fmt.Sprintf("/users/%d", u.ID), `{"active":false}`, admin, http.StatusOK)
	w.do(t, "GET", "/api-keys", "", []string{auth.APIKeyHeader, devKey}, http.StatusUnauthorized)
	w.do(t, "GET", "/api-keys", "", bearer, http.StatusUnauthorized)

	// The last active admin cannot demote or deactivate themselves.
	w.do(t, "PATCH", fmt.Sprintf("/users/%d", acme.Admin.ID), `{"is_admin":false}`, admin, http.StatusConflict)
	w.do(t, "PATCH", fmt.Sprintf("/users/%d", acme.Admin.ID), `{"active":false}`, admin, http.StatusConflict)
	// Reactivating the second admin lets the first step down.
	w.do(t, "PATCH", fmt.Sprintf("/users/%d", u.ID), `{"active":true}`, admin, http.StatusOK)
	w.do(t, "PATCH", fmt.Sprintf("/users/%d", acme.Admin.ID), `{"is_admin":false}`, admin, http.StatusOK)
	w.do(t, "GET", "/users", "", admin, http.StatusForbidden) // no longer an admin

	// Non-admins reach none of the admin routes.
	member := w.env.User(t, acme, testenv.UserSpec{Email: "m@acme.test", Permissions: routes.AllPermissions})
	for _, rt := range []struct{ method, path, body string }{
		{"GET", "/users", ""}, {"POST", "/users", `{}`}, {"PATCH", fmt.Sprintf("/users/%d", member.ID), `{"is_admin":true}`}, {"GET", "/audit-log", ""},
	} {
		w.do(t, rt.method, rt.path, rt.body, testenv.Key(member), http.StatusForbidden)
	}
}

// TestLastAdminGuardUnderConcurrency: five admins deactivate themselves at
// once; exactly one must remain.
func TestLastAdminGuardUnderConcurrency(t *testing.T) {
	w := newWorld(t)
	acme := w.env.Company(t, "Acme")
	admins := []testenv.User{acme.Admin}
	for i := range 4 {
		admins = append(admins, w.env.User(t, acme, testenv.UserSpec{Email: fmt.Sprintf("a%d@acme.test", i), IsAdmin: true}))
	}
	statuses := make([]int, len(admins))
	var wg sync.WaitGroup
	for i, a := range admins {
		wg.Add(1)
		go func() {
			defer wg.Done()
			res := testenv.Do(t, w.h, "PATCH", fmt.Sprintf("/users/%d", a.ID), `{"active":false}`, testenv.Key(a)...)
			statuses[i] = res.Status
		}()
	}
	wg.Wait()
	ok, conflict := 0, 0
	for _, s := range statuses {
		switch s {
		case http.StatusOK:
			ok++
		case http.StatusConflict:
			conflict++
		default:
			t.Fatalf("status %d", s)
		}
	}
	if ok != 4 || conflict != 1 {
		t.Fatalf("%d succeeded, %d refused; want 4 and 1", ok, conflict)
	}
	users, err := w.env.Store.Tenancy.AllUsers(context.Background(), acme.ID)
	if err != nil {
		t.Fatal(err)
	}
	active := 0
	for _, u := range users {
		if u.Active && u.IsAdmin {
			active++
		}
	}
	if active != 1 {
		t.Fatalf("%d active admins remain, want 1", active)
	}
}

func TestPaging(t *testing.T) {
	w := newWorld(t)
	acme := w.env.Company(t, "Acme")
	admin := testenv.Key(acme.Admin)
	for i := range 6 {
		w.env.User(t, acme, testenv.UserSpec{Email: fmt.Sprintf("u%d@acme.test", i)})
	}
	// By token: pages of 3 over 7 users (admin + 6).
	var seen []int64
	path := "/users?page_size=3"
	for pages := 0; ; pages++ {
		var l userList
		w.do(t, "GET", path, "", admin, http.StatusOK).Decode(t, &l)
		if l.Total != 7 || l.Page == nil || *l.Page != pages+1 {
			t.Fatalf("total %d, page %v (page %d read by token)", l.Total, l.Page, pages+1)
		}
		for _, u := range l.Users {
			seen = append(seen, u.ID)
		}
		if l.NextPageToken == nil {
			break
		}
		if pages > 5 {
			t.Fatal("paging does not end")
		}
		path = "/users?page_size=3&next_page_token=" + *l.NextPageToken
	}
	if len(seen) != 7 {
		t.Fatalf("saw %v", seen)
	}
	for i := 1; i < len(seen); i++ {
		if seen[i] <= seen[i-1] {
			t.Fatalf("not in id order: %v", seen)
		}
	}
	// By number: page 2 is what the first token gave; past the end is empty.
	var p2, p9 userList
	w.do(t, "GET", "/users?page_size=3&page=2", "", admin, http.StatusOK).Decode(t, &p2)
	if len(p2.Users) != 3 || p2.Users[0].ID != seen[3] || *p2.Page != 2 {
		t.Fatalf("page 2 %+v", p2)
	}
	w.do(t, "GET", "/users?page_size=3&page=9", "", admin, http.StatusOK).Decode(t, &p9)
	if len(p9.Users) != 0 || p9.NextPageToken != nil {
		t.Fatalf("page 9 %+v", p9)
	}
	var p3 userList
	w.do(t, "GET", "/users?page_size=3&page=3", "", admin, http.StatusOK).Decode(t, &p3)
	if len(p3.Users) != 1 || p3.Users[0].ID != seen[6] {
		t.Fatalf("page 3 %+v", p3)
	}

	// Tampered and foreign tokens are 400.
	var first userList
	w.do(t, "GET", "/users?page_size=3", "", admin, http.StatusOK).Decode(t, &first)
	globex := w.env.Company(t, "Globex")
	for _, tc := range []struct {
		as    []string
		path  string
		token string
	}{
		{admin, "/users", "garbage"},
		{admin, "/users", (*first.NextPageToken)[:len(*first.NextPageToken)-2]},
		{testenv.Key(globex.Admin), "/users", *first.NextPageToken},
		{admin, "/api-keys", *first.NextPageToken}, // another list's token is refused too
		{admin, "/audit-log", *first.NextPageToken},
	} {
		w.do(t, "GET", tc.path+"?next_page_token="+tc.token, "", tc.as, http.StatusBadRequest)
	}
}

// TestPageTokensRefused: the three lists answer every token they did not
// issue — garbage, edited, another company's, another list's or filter's —
// with one 400, under either parameter name; their own tokens work under
// both.
func TestPageTokensRefused(t *testing.T) {
	w := newWorld(t)
	acme, globex := w.env.Company(t, "Acme"), w.env.Company(t, "Globex")
	admin := testenv.Key(acme.Admin)
	for i := range 3 {
		w.createKey(t, admin, fmt.Sprintf(`{"name":"k%d"}`, i))
		w.env.User(t, acme, testenv.UserSpec{Email: fmt.Sprintf("u%d@acme.test", i), IsAdmin: true})
	}
	token := func(path string) string {
		var l struct {
			Next *string `json:"next_page_token"`
		}
		w.do(t, "GET", path, "", admin, http.StatusOK).Decode(t, &l)
		if l.Next == nil {
			t.Fatalf("%s: no next page", path)
		}
		return *l.Next
	}
	lists := []string{"/api-keys", "/users", "/audit-log"}
	tokens := map[string]string{}
	for _, path := range lists {
		tokens[path] = token(path + "?page_size=1")
	}
	admins := token("/users?page_size=1&role=admin")
	for _, path := range lists {
		own := tokens[path]
		edited := []byte(own)
		edited[len(edited)/3] ^= 2
		bad := map[string]struct {
			token string
			as    []string
		}{
			"garbage":              {"garbage", admin},
			"edited":               {string(edited), admin},
			"without its checksum": {own[:strings.LastIndex(own, ".")], admin},
			"another company's":    {own, testenv.Key(globex.Admin)},
			"of another list":      {tokens[lists[(slices.Index(lists, path)+1)%len(lists)]], admin},
			"of another filter":    {admins, admin},
			"long garbage":         {strings.Repeat("a", 2000), admin},
		}
		if path == "/users" {
			bad["of another filter"] = struct {
				token string
				as    []string
			}{own, admin}
		}
		for name, tc := range bad {
			for _, param := range []string{"next_page_token", "page_token"} {
				q := path + "?" + param + "=" + url.QueryEscape(tc.token)
				if name == "of another filter" && path == "/users" {
					q += "&role=admin"
				}
				res := testenv.Do(t, w.h, "GET", q, "", tc.as...)
				if res.Status != http.StatusBadRequest || strings.TrimSpace(string(res.Body)) != `{"error":"Invalid page token"}` {
					t.Errorf("%s token %s as %s: %d %s", path, name, param, res.Status, res.Body)
				}
			}
		}
		for _, param := range []string{"next_page_token", "page_token"} {
			w.do(t, "GET", path+"?page_size=1&"+param+"="+url.QueryEscape(own), "", admin, http.StatusOK)
		}
	}
}

// TestNoTenantHints: another company's use of a subject or an email is
// answered like a never-seen one, a bearer token stands for one user
// (the oldest active mapping), and user ids count one company's users.
func TestNoTenantHints(t *testing.T) {
	w := newWorld(t)
	acme, globex := w.env.Company(t, "Acme"), w.env.Company(t, "Globex")
	create := func(as testenv.User, body string, want int) user {
		var out struct {
			User user `json:"user"`
		}
		w.do(t, "POST", "/users", body, testenv.Key(as), want).Decode(t, &out)
		return out.User
	}
	shape := func(u user) string {
		u.ID, u.Subject = 0, nil
		return fmt.Sprintf("%+v", u)
	}
	acmeDev := create(acme.Admin, `{"email":"dev@shared.test","first_name":"D","last_name":"V","subject":"idp|shared"}`, http.StatusCreated)
	// Globex: the taken subject and email, and never-seen ones, answer alike.
	taken := create(globex.Admin, `{"email":"dev@shared.test","first_name":"D","last_name":"V","subject":"idp|shared"}`, http.StatusCreated)
	fresh := create(globex.Admin, `{"email":"new@shared.test","first_name":"D","last_name":"V","subject":"idp|fresh"}`, http.StatusCreated)
	if shape(taken) != strings.Replace(shape(fresh), "new@", "dev@", 1) {
		t.Errorf("a taken subject answers %+v, a fresh one %+v", taken, fresh)
	}
	// Inside one company they stay unique.
	create(globex.Admin, `{"email":"other@shared.test","first_name":"D","last_name":"V","subject":"idp|shared"}`, http.StatusConflict)

	// Ids count the company's own users: Globex's admin is 1, its users 2
	// and 3, whatever Acme did.
	if taken.ID != 2 || fresh.ID != 3 || acmeDev.ID != 2 {
		t.Errorf("ids: acme's user %d, globex's %d and %d", acmeDev.ID, taken.ID, fresh.ID)
	}
	mark := create(globex.Admin, `{"email":"m@globex.test","first_name":"M","last_name":"M"}`, http.StatusCreated)
	for i := range 3 {
		create(acme.Admin, fmt.Sprintf(`{"email":"a%d@acme.test","first_name":"A","last_name":"A"}`, i), http.StatusCreated)
	}
	if next := create(globex.Admin, `{"email":"n@globex.test","first_name":"N","last_name":"N"}`, http.StatusCreated); next.ID != mark.ID+1 {
		t.Errorf("globex's next user after acme's activity: %d, after %d", next.ID, mark.ID)
	}

	// The shared subject's bearer token stands for Acme's user (mapped
	// first), and for Globex's once Acme's is inactive.
	bearer := testenv.Bearer(w.env.Token(t, testenv.User{User: schema.User{Subject: "idp|shared"}}))
	owner := func() (companyID, userID int64) {
		_, k := w.createKey(t, bearer, `{"name":"probe"}`)
		for _, c := range []*testenv.Company{acme, globex} {
			if got, err := w.env.Store.Tenancy.GetAPIKey(context.Background(), c.ID, k.ID); err == nil && got.UserID == k.UserID && got.Name == "probe" && got.RevokedAt == "" {
				w.do(t, "DELETE", fmt.Sprintf("/api-keys/%d", k.ID), "", bearer, http.StatusOK)
				return c.ID, k.UserID
			}
		}
		t.Fatalf("probe key %+v in neither company", k)
		return 0, 0
	}
	if c, u := owner(); c != acme.ID || u != acmeDev.ID {
		t.Errorf("bearer: company %d user %d, want acme's %d", c, u, acmeDev.ID)
	}
	w.do(t, "PATCH", fmt.Sprintf("/users/%d", acmeDev.ID), `{"active":false}`, testenv.Key(acme.Admin), http.StatusOK)
	if c, u := owner(); c != globex.ID || u != taken.ID {
		t.Errorf("bearer after acme's user left: company %d user %d, want globex's %d", c, u, taken.ID)
	}
	w.do(t, "PATCH", fmt.Sprintf("/users/%d", taken.ID), `{"active":false}`, testenv.Key(globex.Admin), http.StatusOK)
	w.do(t, "GET", "/api-keys", "", bearer, http.StatusUnauthorized)
}

// TestIDsAboveOlderOnes: a company whose users were numbered by the global
// sequence keeps their ids, and its own sequence starts above them.
func TestIDsAboveOlderOnes(t *testing.T) {
	w := newWorld(t)
	ctx := context.Background()
	id, err := w.env.Store.Ledger.NextID(ctx, "company")
	if err != nil {
		t.Fatal(err)
	}
	if err := bulkload.PutCompany(ctx, w.env.Store, schema.Company{ID: id, Name: "Initech"}); err != nil {
		t.Fatal(err)
	}
	old := schema.User{ID: 500, CompanyID: id, Email: "old@initech.test", FirstName: "O", LastName: "L", IsAdmin: true, Active: true}
	if err := bulkload.PutUser(ctx, w.env.Store, old); err != nil {
		t.Fatal(err)
	}
	key := auth.NewAPIKey()
	if err := bulkload.PutAPIKey(ctx, w.env.Store, id, old.ID, key); err != nil {
		t.Fatal(err)
	}
	var out struct {
		User user `json:"user"`
	}
	w.do(t, "POST", "/users", `{"email":"new@initech.test","first_name":"N","last_name":"W"}`, []string{auth.APIKeyHeader, key}, http.StatusCreated).Decode(t, &out)
	if out.User.ID != 501 {
		t.Errorf("new user %d, want 501 (above the older 500)", out.User.ID)
	}
	if u, err := w.env.Store.Tenancy.GetUser(ctx, id, 500); err != nil || u.Email != old.Email {
		t.Errorf("older user: %+v %v", u, err)
	}
}

func TestTenantIsolation(t *testing.T) {
	w := newWorld(t)
	acme, globex := w.env.Company(t, "Acme"), w.env.Company(t, "Globex")
	acmeUser := w.env.User(t, acme, testenv.UserSpec{Email: "u@acme.test"})
	_, acmeKey := w.createKey(t, testenv.Key(acmeUser), `{"name":"acme"}`)
	g := testenv.Key(globex.Admin)

	// Another company's ids answer like missing ones.
	w.do(t, "DELETE", fmt.Sprintf("/api-keys/%d", acmeKey.ID), "", g, http.StatusNotFound)
	w.do(t, "PATCH", fmt.Sprintf("/users/%d", acmeUser.ID), `{"active":false}`, g, http.StatusNotFound)
	w.do(t, "POST", "/api-keys", fmt.Sprintf(`{"name":"x","user_id":%d}`, acmeUser.ID), g, http.StatusNotFound)
	var keys keyList
	w.do(t, "GET", fmt.Sprintf("/api-keys?user_id=%d", acmeUser.ID), "", g, http.StatusOK).Decode(t, &keys)
	if keys.Total != 0 || len(keys.Keys) != 0 {
		t.Fatalf("globex sees acme's keys: %+v", keys)
	}
	// Lists hold only the caller's company.
	w.do(t, "GET", "/api-keys", "", g, http.StatusOK).Decode(t, &keys)
	for _, k := range keys.Keys {
		if k.UserID != globex.Admin.ID {
			t.Fatalf("globex lists key %+v", k)
		}
	}
	var users userList
	w.do(t, "GET", "/users", "", g, http.StatusOK).Decode(t, &users)
	if users.Total != 1 || len(users.Users) != 1 || users.Users[0].ID != globex.Admin.ID {
		t.Fatalf("globex users %+v", users)
	}
	var log auditPage
	w.do(t, "GET", "/audit-log", "", g, http.StatusOK).Decode(t, &log)
	if len(log.Entries) != 0 {
		t.Fatalf("globex sees audit entries %+v", log.Entries)
	}
	w.do(t, "GET", fmt.Sprintf("/audit-log?actor=%d", acmeUser.ID), "", g, http.StatusOK).Decode(t, &log)
	if len(log.Entries) != 0 {
		t.Fatalf("globex sees acme's actor %+v", log.Entries)
	}
	// Acme's key still works and was not revoked.
	if k, err := w.env.Store.Tenancy.GetAPIKey(context.Background(), acme.ID, acmeKey.ID); err != nil || k.RevokedAt != "" {
		t.Fatalf("acme key %+v %v", k, err)
	}
	if u, err := w.env.Store.Tenancy.GetUser(context.Background(), acme.ID, acmeUser.ID); err != nil || !u.Active {
		t.Fatalf("acme user %+v %v", u, err)
	}
}

func TestAuditLog(t *testing.T) {
	w := newWorld(t)
	acme := w.env.Company(t, "Acme")
	admin := testenv.Key(acme.Admin)
	member := w.env.User(t, acme, testenv.UserSpec{Email: "m@acme.test"})
	start := time.Now().UTC()
	_, k1 := w.createKey(t, testenv.Key(member), `{"name":"one"}`)
	w.createKey(t, testenv.Key(member), `{"name":"two"}`)
	w.do(t, "DELETE", fmt.Sprintf("/api-keys/%d", k1.ID), "", admin, http.StatusOK)
	w.do(t, "PATCH", fmt.Sprintf("/users/%d", member.ID), `{"permissions":["scans.upload_scan"]}`, testenv.Bearer(w.env.Token(t, acme.Admin)), http.StatusOK)

	get := func(q string) []entry {
		var p auditPage
		w.do(t, "GET", "/audit-log"+q, "", admin, http.StatusOK).Decode(t, &p)
		return p.Entries
	}
	all := get("")
	actions := []string{}
	for _, e := range all {
		actions = append(actions, e.Action)
	}
	if strings.Join(actions, ",") != "user.update,api_key.revoke,api_key.create,api_key.create" {
		t.Fatalf("actions newest first: %v", actions)
	}
	upd := all[0]
	if upd.Actor.Via != "bearer" || *upd.Actor.UserID != acme.Admin.ID || upd.Actor.KeyID != nil ||
		upd.Target.Type != "user" || upd.Target.ID != fmt.Sprint(member.ID) {
		t.Fatalf("update entry %+v", upd)
	}
	if c := upd.Changes["permissions"]; fmt.Sprint(c.Before) != "[]" || fmt.Sprint(c.After) != "[scans.upload_scan]" {
		t.Fatalf("permission change %+v", c)
	}
	rev := all[1]
	if rev.Actor.Via != "api_key" || rev.Actor.KeyID == nil || *rev.Actor.UserID != acme.Admin.ID || rev.Target.ID != fmt.Sprint(k1.ID) {
		t.Fatalf("revoke entry %+v", rev)
	}

	if e := get(fmt.Sprintf("?actor=%d", member.ID)); len(e) != 2 || e[0].Action != "api_key.create" {
		t.Fatalf("by member %+v", e)
	}
	if e := get("?action=api_key.create"); len(e) != 2 {
		t.Fatalf("by action %+v", e)
	}
	if e := get(fmt.Sprintf("?actor=%d&action=api_key.revoke", acme.Admin.ID)); len(e) != 1 || e[0].ID != rev.ID {
		t.Fatalf("by actor and action %+v", e)
	}
	if e := get(fmt.Sprintf("?actor=%d&action=api_key.create", acme.Admin.ID)); len(e) != 0 {
		t.Fatalf("admin created no key: %+v", e)
	}
	if e := get("?from=" + start.Add(time.Hour).Format(time.RFC3339)); len(e) != 0 {
		t.Fatalf("future from %+v", e)
	}
	if e := get("?to=" + start.Add(-time.Hour).Format(time.RFC3339)); len(e) != 0 {
		t.Fatalf("past to %+v", e)
	}
	if e := get("?from=" + start.Add(-time.Minute).Format(time.RFC3339) + "&to=" + time.Now().Add(time.Minute).UTC().Format(time.RFC3339)); len(e) != 4 {
		t.Fatalf("range %+v", e)
	}
	// Paging by token walks the same entries in the same order.
	var ids []string
	path := "/audit-log?page_size=3"
	for {
		var p auditPage
		w.do(t, "GET", path, "", admin, http.StatusOK).Decode(t, &p)
		for _, e := range p.Entries {
			ids = append(ids, e.ID)
		}
		if p.NextPageToken == nil {
			break
		}
		path = "/audit-log?page_size=3&next_page_token=" + *p.NextPageToken
	}
	if len(ids) != 4 || ids[0] != all[0].ID || ids[3] != all[3].ID {
		t.Fatalf("paged %v", ids)
	}
	for _, q := range []string{"?actor=bob", "?actor=0", "?action=DROP", "?from=yesterday", "?to=2020-01-01",
		"?from=2025-01-02T00:00:00Z&to=2025-01-01T00:00:00Z"} {
		w.do(t, "GET", "/audit-log"+q, "", admin, http.StatusBadRequest)
	}
}

func TestDeactivatedCompanyIsRefused(t *testing.T) {
	w := newWorld(t)
	acme := w.env.Company(t, "Acme")
	ctx := context.Background()
	bearer := testenv.Bearer(w.env.Token(t, acme.Admin))
	w.do(t, "GET", "/api-keys", "", testenv.Key(acme.Admin), http.StatusOK)
	if _, changed, err := w.env.Store.Tenancy.SetCompanyActive(ctx, acme.ID, false); err != nil || !changed {
		t.Fatalf("deactivate: %v %v", changed, err)
	}
	w.do(t, "GET", "/api-keys", "", testenv.Key(acme.Admin), http.StatusUnauthorized)
	w.do(t, "GET", "/api-keys", "", bearer, http.StatusUnauthorized)
	if _, changed, err := w.env.Store.Tenancy.SetCompanyActive(ctx, acme.ID, true); err != nil || !changed {
		t.Fatalf("reactivate: %v %v", changed, err)
	}
	w.do(t, "GET", "/api-keys", "", testenv.Key(acme.Admin), http.StatusOK)
	w.do(t, "GET", "/api-keys", "", bearer, http.StatusOK)
}
