package accounts_test

import (
	"context"
	"errors"
	"net/http"
	"strconv"
	"testing"

	"github.com/acme/codescan-api/internal/testenv"
	"github.com/acme/codescan-api/shared/store/ddb"
	"github.com/acme/codescan-api/shared/store/ledger"
	"github.com/acme/codescan-api/shared/store/page"
	"github.com/acme/codescan-api/shared/store/tenancy"
)

type linkedUser struct {
	ID       int64   `json:"id"`
	SCMLogin *string `json:"scm_login"`
}

// A company admin links a user's host login: stored lower case, shown on
// the user and in the list, one user's in the company (another
// company's user may have it), unlinked by null, audited.
func TestSCMLogin(t *testing.T) {
	w := newWorld(t)
	acme, globex := w.env.Company(t, "Acme"), w.env.Company(t, "Globex")
	dev := w.env.User(t, acme, testenv.UserSpec{Email: "dev@acme.test"})
	ops := w.env.User(t, acme, testenv.UserSpec{Email: "ops@acme.test"})
	admin := testenv.Key(acme.Admin)
	path := func(u testenv.User) string { return "/users/" + strconv.FormatInt(u.ID, 10) }

	var out struct{ User linkedUser }
	w.do(t, "PATCH", path(dev), `{"scm_login":" Octo-Dev "}`, admin, http.StatusOK).Decode(t, &out)
	if out.User.SCMLogin == nil || *out.User.SCMLogin != "octo-dev" {
		t.Fatalf("linked: %+v", out.User)
	}
	var list struct{ Users []linkedUser }
	w.do(t, "GET", "/users?page_size=100", "", admin, http.StatusOK).Decode(t, &list)
	for _, u := range list.Users {
		if linked := u.SCMLogin != nil && *u.SCMLogin == "octo-dev"; linked != (u.ID == dev.ID) {
			t.Fatalf("the list shows %+v", list.Users)
		}
	}
	// One user's in the company, whatever the case it is written in.
	w.do(t, "PATCH", path(ops), `{"scm_login":"OCTO-DEV","permissions":["scans.upload_scan"]}`, admin, http.StatusConflict)
	if u, err := w.env.Store.Tenancy.GetUser(context.Background(), acme.ID, ops.ID); err != nil || len(u.Permissions) != 0 || u.SCMLogin != "" {
		t.Fatalf("a refused link changed the user: %+v %v", u, err)
	}
	w.do(t, "PATCH", "/users/"+strconv.FormatInt(globex.Admin.ID, 10), `{"scm_login":"octo-dev"}`, testenv.Key(globex.Admin), http.StatusOK)
	// Other members with it, then unlink.
	w.do(t, "PATCH", path(dev), `{"scm_login":"octo-dev","active":true}`, admin, http.StatusOK)
	w.do(t, "PATCH", path(dev), `{"scm_login":null}`, admin, http.StatusOK).Decode(t, &out)
	if out.User.SCMLogin != nil {
		t.Fatalf("unlinked: %+v", out.User)
	}
	w.do(t, "PATCH", path(ops), `{"scm_login":"octo-dev"}`, admin, http.StatusOK)
	for _, body := range []string{`{"scm_login":""}`, `{"scm_login":"with space"}`, `{"scm_login":"a."}`, `{"scm_login":"x.git"}`, `{"scm_login":7}`,
		`{"scm_login":"-lead"}`, `{"scm_login":["octo"]}`} {
		w.do(t, "PATCH", path(dev), body, admin, http.StatusBadRequest)
	}
	// A member may not link anyone.
	w.do(t, "PATCH", path(dev), `{"scm_login":"mine"}`, testenv.Key(dev), http.StatusForbidden)

	entriesPage, err := w.env.Store.Tenancy.ListAudit(context.Background(), acme.ID, tenancy.AuditFilter{Action: "user.update"}, page.Request{Limit: 50})

	entries := entriesPage.Items
	if err != nil {
		t.Fatal(err)
	}
	var links []ledger.Change
	for _, e := range entries {
		if c, ok := e.Changes["scm_login"]; ok {
			links = append(links, c)
		}
	}
	// Newest first: ops linked, dev unlinked, dev linked.
	if len(links) != 3 || links[0].After != "octo-dev" || links[1].Before != "octo-dev" || links[1].After != nil || links[2].Before != nil {
		t.Fatalf("audit of the links: %+v", links)
	}
}

// A PATCH with the login and other members is one change: one
// transaction, one audit entry naming every member; a taken login refuses
// the whole change in that transaction (the user, its list copies, the
// logins and the audit log as they were).
func TestSCMLoginIsOneChange(t *testing.T) {
	w := newWorld(t)
	acme := w.env.Company(t, "Acme")
	dev := w.env.User(t, acme, testenv.UserSpec{Email: "dev@acme.test"})
	ops := w.env.User(t, acme, testenv.UserSpec{Email: "ops@acme.test"})
	admin := testenv.Key(acme.Admin)
	ctx := context.Background()
	path := func(u testenv.User) string { return "/users/" + strconv.FormatInt(u.ID, 10) }
	updates := func() []tenancy.AuditRecord {
		t.Helper()
		entriesPage, err := w.env.Store.Tenancy.ListAudit(ctx, acme.ID, tenancy.AuditFilter{Action: "user.update"}, page.Request{Limit: 50})
		entries := entriesPage.Items
		if err != nil {
			t.Fatal(err)
		}
		return entries
	}

	w.do(t, "PATCH", path(dev), `{"scm_login":"octo-dev","permissions":["scans.upload_scan"]}`, admin, http.StatusOK)
	entries := updates()
	if len(entries) != 1 {
		t.Fatalf("one PATCH left %d audit entries: %+v", len(entries), entries)
	}
	if c := entries[0].Changes; c["scm_login"].After != "octo-dev" || c["permissions"].After == nil || len(c) != 2 {
		t.Fatalf("the entry's changes: %+v", c)
	}

	// The login is taken: nothing of the change is written.
	was, err := w.env.Store.Tenancy.GetUser(ctx, acme.ID, ops.ID)
	if err != nil {
		t.Fatal(err)
	}
	w.do(t, "PATCH", path(ops), `{"scm_login":"octo-dev","permissions":["scans.upload_scan"],"is_admin":true}`, admin, http.StatusConflict)
	if u, err := w.env.Store.Tenancy.GetUser(ctx, acme.ID, ops.ID); err != nil || len(u.Permissions) != 0 || u.IsAdmin || u.SCMLogin != "" || u.Revision != was.Revision {
		t.Fatalf("a refused change changed the user: %+v %v", u, err)
	}
	if n := len(updates()); n != 1 {
		t.Fatalf("a refused change was audited: %d entries", n)
	}
	if u, err := w.env.Store.Catalog.UserBySCMLogin(ctx, acme.ID, "octo-dev"); err != nil || u.ID != dev.ID {
		t.Fatalf("the login after a refused change: %+v %v", u, err)
	}
	var admins struct{ Users []linkedUser }
	w.do(t, "GET", "/users?role=admin&page_size=100", "", admin, http.StatusOK).Decode(t, &admins)
	for _, u := range admins.Users {
		if u.ID == ops.ID {
			t.Fatalf("a refused change listed the user as an admin: %+v", admins.Users)
		}
	}

	// Moving the login to another user in one change frees the old one.
	w.do(t, "PATCH", path(dev), `{"scm_login":"octo-2","active":false}`, admin, http.StatusOK)
	if _, err := w.env.Store.Catalog.UserBySCMLogin(ctx, acme.ID, "octo-dev"); !errors.Is(err, ddb.ErrNotFound) {
		t.Fatalf("the old login after a move: %v", err)
	}
	w.do(t, "PATCH", path(ops), `{"scm_login":"octo-dev"}`, admin, http.StatusOK)
	if n := len(updates()); n != 3 {
		t.Fatalf("three PATCHes, %d audit entries", n)
	}
}
