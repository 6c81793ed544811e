package catalog_test

import (
	"context"
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/acme/codescan-api/internal/testenv"
	"github.com/acme/codescan-api/shared/routes"
	"github.com/acme/codescan-api/shared/store"
	"github.com/acme/codescan-api/shared/store/catalog"
	"github.com/acme/codescan-api/shared/store/ddb"
	storedelivery "github.com/acme/codescan-api/shared/store/delivery"
	"github.com/acme/codescan-api/shared/store/ledger"
	"github.com/acme/codescan-api/shared/store/page"
	"github.com/acme/codescan-api/shared/store/schema"
	"github.com/acme/codescan-api/shared/store/tenancy"
)

func TestMain(m *testing.M) { testenv.Main(m) }

func integration(t *testing.T, st *store.Store, companyID int64, id string) schema.Integration {
	t.Helper()
	in, err := st.Catalog.CreateIntegration(context.Background(), schema.Integration{CompanyID: companyID, UUID: id, Name: "GitHub", SealedToken: "sealed"})
	if err != nil {
		t.Fatal(err)
	}
	return in
}

func setSecret(st *store.Store, in schema.Integration, sealed string) (schema.Integration, error) {
	cur, err := st.Catalog.GetIntegration(context.Background(), in.CompanyID, in.UUID)
	if err != nil {
		return schema.Integration{}, err
	}
	return st.Catalog.UpdateIntegration(context.Background(), in.CompanyID, in.UUID, cur.Revision, catalog.IntegrationChange{SealedWebhookSecret: &sealed})
}

// The inbound route finds an integration by uuid only once its webhook
// secret is set, and only its own company's: a second company's
// integration under the same uuid cannot take the look-up over.
func TestIntegrationByHookIsOneCompanys(t *testing.T) {
	env := testenv.New(t)
	ctx := context.Background()
	acme, globex := env.Company(t, "Acme"), env.Company(t, "Globex")
	id := catalog.NewIntegrationUUID()
	mine := integration(t, env.Store, acme.ID, id)
	if _, err := env.Store.Catalog.IntegrationByHook(ctx, id); !errors.Is(err, ddb.ErrNotFound) {
		t.Fatalf("before a secret: %v", err)
	}
	if _, err := setSecret(env.Store, mine, "sealed-acme"); err != nil {
		t.Fatal(err)
	}
	got, err := env.Store.Catalog.IntegrationByHook(ctx, id)
	if err != nil || got.CompanyID != acme.ID || got.SealedWebhookSecret != "sealed-acme" {
		t.Fatalf("look-up: %+v %v", got, err)
	}
	// Another company's integration with the very same uuid.
	theirs := integration(t, env.Store, globex.ID, id)
	if _, err := setSecret(env.Store, theirs, "sealed-globex"); !errors.Is(err, catalog.ErrHookTaken) {
		t.Fatalf("a second company's secret under the uuid: %v", err)
	}
	if after, _ := env.Store.Catalog.GetIntegration(ctx, globex.ID, id); after.SealedWebhookSecret != "" || after.Revision != theirs.Revision {
		t.Fatalf("the refused update was written: %+v", after)
	}
	if got, err := env.Store.Catalog.IntegrationByHook(ctx, id); err != nil || got.CompanyID != acme.ID {
		t.Fatalf("look-up after the refusal: %+v %v", got, err)
	}
	// A new secret of the owner keeps the look-up.
	if _, err := setSecret(env.Store, mine, "sealed-acme-2"); err != nil {
		t.Fatal(err)
	}
	if got, err := env.Store.Catalog.IntegrationByHook(ctx, id); err != nil || got.SealedWebhookSecret != "sealed-acme-2" {
		t.Fatalf("after rotation: %+v %v", got, err)
	}
	if _, err := env.Store.Catalog.IntegrationByHook(ctx, catalog.NewIntegrationUUID()); !errors.Is(err, ddb.ErrNotFound) {
		t.Fatalf("unknown uuid: %v", err)
	}
}

// The secret's change is audited as a change, never as a value.
func TestWebhookSecretIsAuditedAsChanged(t *testing.T) {
	env := testenv.New(t)
	acme := env.Company(t, "Acme")
	in := integration(t, env.Store, acme.ID, catalog.NewIntegrationUUID())
	ctx := ledger.WithAuditActor(context.Background(), ledger.AuditActor{UserID: acme.Admin.ID, Via: ledger.ViaBearer})
	sealed := "sealed-value"
	if _, err := env.Store.Catalog.UpdateIntegration(ctx, acme.ID, in.UUID, in.Revision, catalog.IntegrationChange{SealedWebhookSecret: &sealed}); err != nil {
		t.Fatal(err)
	}
	entriesPage, err := env.Store.Tenancy.ListAudit(context.Background(), acme.ID, tenancy.AuditFilter{Action: "integration.update"}, page.Request{Limit: 10})
	entries := entriesPage.Items
	if err != nil || len(entries) != 1 {
		t.Fatalf("audit: %+v %v", entries, err)
	}
	c := entries[0].Changes["webhook_secret"]
	if c.Before != nil || c.After != ledger.Secret {
		t.Fatalf("webhook_secret change %+v", c)
	}
}

// A command is acted on once: its comment claimed again (a replayed
// delivery, or the same body under another delivery id) is seen; a claim given back after a failure,
// or left unfinished past its lease, is taken again.
func TestClaimSCMCommandOnce(t *testing.T) {
	env := testenv.New(t)
	ctx := context.Background()
	acme := env.Company(t, "Acme")
	c := catalog.SCMCommand{CompanyID: acme.ID, Integration: catalog.NewIntegrationUUID(), CommentID: 1001}
	now := time.Now()
	if err := env.Store.Catalog.ClaimSCMCommand(ctx, c, now, time.Hour); err != nil {
		t.Fatal(err)
	}
	if err := env.Store.Catalog.ClaimSCMCommand(ctx, c, now, time.Hour); !errors.Is(err, catalog.ErrSeen) {
		t.Fatalf("the same comment again: %v", err)
	}
	other := c
	other.CommentID = 1002
	if err := env.Store.Catalog.ClaimSCMCommand(ctx, other, now, time.Hour); err != nil {
		t.Fatalf("another comment: %v", err)
	}
	if err := env.Store.Catalog.FailSCMCommand(ctx, c); err != nil {
		t.Fatal(err)
	}
	if err := env.Store.Catalog.ClaimSCMCommand(ctx, c, now, time.Hour); err != nil {
		t.Fatalf("a failed claim taken again: %v", err)
	}
	// A claim left unfinished is taken once its lease ran out; a done one
	// never.
	if err := env.Store.Catalog.ClaimSCMCommand(ctx, c, now.Add(catalog.SCMClaimLease-time.Second), time.Hour); !errors.Is(err, catalog.ErrSeen) {
		t.Fatalf("an unfinished claim inside its lease: %v", err)
	}
	if err := env.Store.Catalog.ClaimSCMCommand(ctx, c, now.Add(catalog.SCMClaimLease+time.Second), time.Hour); err != nil {
		t.Fatalf("an unfinished claim past its lease: %v", err)
	}
	if err := env.Store.Catalog.CompleteSCMCommand(ctx, c); err != nil {
		t.Fatal(err)
	}
	if err := env.Store.Catalog.ClaimSCMCommand(ctx, c, now.Add(time.Hour), 2*time.Hour); !errors.Is(err, catalog.ErrSeen) {
		t.Fatalf("a done claim: %v", err)
	}
	if err := env.Store.Catalog.FailSCMCommand(ctx, catalog.SCMCommand{CompanyID: acme.ID, Integration: c.Integration, CommentID: 9}); err == nil {
		t.Fatal("failing a claim that does not exist wrote it")
	}
}

// PRProjects reads exactly the links the decoration writes for one pull
// request (store/delivery's keys), not those of a pull request whose
// number starts alike.
func TestPRProjectsReadsTheDecorationsLinks(t *testing.T) {
	env := testenv.New(t)
	ctx := context.Background()
	acme := env.Company(t, "Acme")
	in := catalog.NewIntegrationUUID()
	link := func(number string, project int64) {
		t.Helper()
		p := storedelivery.PRTarget{CompanyID: acme.ID, Integration: in, Repo: "acme/payments", Number: number, ProjectID: project}
		if _, err := env.Store.Deliveries.ClaimPRLink(ctx, p, "test", time.Now(), time.Minute); err != nil {
			t.Fatal(err)
		}
	}
	link("7", 3)
	link("7", 12)
	link("70", 4)
	link("8", 5)
	got, err := env.Store.Catalog.PRProjects(ctx, acme.ID, in, "acme/payments", "7")
	slices.Sort(got)
	if err != nil || !slices.Equal(got, []int64{3, 12}) {
		t.Fatalf("projects of #7: %v %v", got, err)
	}
	if got, err := env.Store.Catalog.PRProjects(ctx, acme.ID, catalog.NewIntegrationUUID(), "acme/payments", "7"); err != nil || len(got) != 0 {
		t.Fatalf("another integration's: %v %v", got, err)
	}
}

// A host login is one user's in a company, shown on every list copy of
// the user, and free again once that user moves to another login.
func TestSCMLoginLinksOneUser(t *testing.T) {
	env := testenv.New(t)
	ctx := context.Background()
	acme, globex := env.Company(t, "Acme"), env.Company(t, "Globex")
	dev := env.User(t, acme, testenv.UserSpec{Email: "dev@acme.test", Permissions: []string{routes.PermTriageIssue}})
	ops := env.User(t, acme, testenv.UserSpec{Email: "ops@acme.test"})
	before, after, err := env.Store.Catalog.SetUserSCMLogin(ctx, acme.ID, dev.ID, "octo-dev")
	if err != nil || after.SCMLogin != "octo-dev" || after.Revision != before.Revision+1 || before.SCMLogin != "" {
		t.Fatalf("link: %+v %v", after, err)
	}
	if u, err := env.Store.Catalog.UserBySCMLogin(ctx, acme.ID, "octo-dev"); err != nil || u.ID != dev.ID {
		t.Fatalf("look-up: %+v %v", u, err)
	}
	for _, facet := range []string{tenancy.FacetAll, tenancy.FacetMember, tenancy.FacetPermission(routes.PermTriageIssue)} {
		usersPage, err := env.Store.Tenancy.ListUsers(ctx, acme.ID, facet, page.Request{Limit: 10})
		users := usersPage.Items
		i := slices.IndexFunc(users, func(u schema.User) bool { return u.ID == dev.ID })
		if err != nil || i < 0 || users[i].SCMLogin != "octo-dev" {
			t.Fatalf("list %s does not show the login: %+v %v", facet, users, err)
		}
	}
	if _, _, err := env.Store.Catalog.SetUserSCMLogin(ctx, acme.ID, ops.ID, "octo-dev"); !errors.Is(err, tenancy.ErrSCMLoginTaken) {
		t.Fatalf("a second user of the company: %v", err)
	}
	// Another company's user may have the same login: it is theirs.
	if _, _, err := env.Store.Catalog.SetUserSCMLogin(ctx, globex.ID, globex.Admin.ID, "octo-dev"); err != nil {
		t.Fatalf("another company: %v", err)
	}
	if u, err := env.Store.Catalog.UserBySCMLogin(ctx, acme.ID, "octo-dev"); err != nil || u.ID != dev.ID {
		t.Fatalf("acme's login after globex linked theirs: %+v %v", u, err)
	}
	if _, _, err := env.Store.Catalog.SetUserSCMLogin(ctx, acme.ID, dev.ID, "octo-dev-2"); err != nil {
		t.Fatal(err)
	}
	if _, err := env.Store.Catalog.UserBySCMLogin(ctx, acme.ID, "octo-dev"); !errors.Is(err, ddb.ErrNotFound) {
		t.Fatalf("the old login still finds a user: %v", err)
	}
	if _, _, err := env.Store.Catalog.SetUserSCMLogin(ctx, acme.ID, ops.ID, "octo-dev"); err != nil {
		t.Fatalf("the freed login: %v", err)
	}
	if _, after, err := env.Store.Catalog.SetUserSCMLogin(ctx, acme.ID, dev.ID, ""); err != nil || after.SCMLogin != "" {
		t.Fatalf("unlink: %+v %v", after, err)
	}
	if _, err := env.Store.Catalog.UserBySCMLogin(ctx, acme.ID, "octo-dev-2"); !errors.Is(err, ddb.ErrNotFound) {
		t.Fatalf("an unlinked login still finds a user: %v", err)
	}
	if _, _, err := env.Store.Catalog.SetUserSCMLogin(ctx, acme.ID, dev.ID, "Octo"); !errors.Is(err, ddb.ErrInvalid) {
		t.Fatalf("a login not lower case: %v", err)
	}
	if _, _, err := env.Store.Catalog.SetUserSCMLogin(ctx, acme.ID, 999, "nobody"); !errors.Is(err, ddb.ErrNotFound) {
		t.Fatalf("no such user: %v", err)
	}
}
