package bulkload_test

import (
	"context"
	"reflect"
	"testing"
	"time"

	"github.com/acme/codescan-api/internal/testenv"
	"github.com/acme/codescan-api/shared/store"
	"github.com/acme/codescan-api/shared/store/bulkload"
	"github.com/acme/codescan-api/shared/store/internal/ddb"
)

func TestMain(m *testing.M) { testenv.Main(m) }

// partitionItems reads every item of a partition as plain values, so
// that what two write paths stored compares.
func partitionItems(st *store.Store, pk string) ([]map[string]any, error) {
	var out []map[string]any
	err := ddb.New(st.Client(), st.TableName()).QueryAll(context.Background(), "", ddb.PKBeginsWith(pk, ""), true, &out)
	return out, err
}

// companyItems is every item of company 1's partitions, timestamps blanked.
func companyItems(t *testing.T, st *store.Store) []map[string]any {
	t.Helper()
	var out []map[string]any
	for _, pk := range []string{store.CompanyPK(1), store.CompanyPK(1) + "#TEAMSEL"} {
		items, err := partitionItems(st, pk)
		if err != nil {
			t.Fatal(err)
		}
		for _, it := range items {
			delete(it, "created_at")
			delete(it, "updated_at")
		}
		out = append(out, items...)
	}
	return out
}

func TestBulkListLoadersWriteWhatCreatesWrite(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	project := store.Project{CompanyID: 1, Name: "api", RepoURL: "https://x.test/acme/api", Tags: []string{"pci"}}
	teams := []store.Team{
		{CompanyID: 1, Name: "Plain", MemberIDs: []int64{7}},
		{CompanyID: 1, Name: "Payments", ProjectTags: []string{"PCI"}, RepoURLPatterns: []string{"acme"}},
	}
	uuids := []string{store.NewIntegrationUUID(), store.NewIntegrationUUID()}
	ins := []store.Integration{
		{CompanyID: 1, UUID: uuids[0], Name: "GH", BaseURL: "https://api.github.com", SealedToken: "sealed"},
		{CompanyID: 1, UUID: uuids[1], Name: "GL", BaseURL: "https://gitlab.com", OrgAllowlist: []string{"acme"}},
	}

	created := testenv.NewStore(t)
	if _, err := created.CreateProject(ctx, project); err != nil {
		t.Fatal(err)
	}
	for _, tm := range teams {
		if _, err := created.CreateTeam(ctx, tm); err != nil {
			t.Fatal(err)
		}
	}
	for _, in := range ins {
		if _, err := created.CreateIntegration(ctx, in); err != nil {
			t.Fatal(err)
		}
	}

	loaded := testenv.NewStore(t)
	if _, err := loaded.CreateProject(ctx, project); err != nil {
		t.Fatal(err)
	}
	if _, err := bulkload.Teams(ctx, loaded, 1, teams, 2, nil); err != nil {
		t.Fatal(err)
	}
	if _, err := bulkload.Integrations(ctx, loaded, 1, ins, 2, nil); err != nil {
		t.Fatal(err)
	}
	a, b := companyItems(t, created), companyItems(t, loaded)
	if !reflect.DeepEqual(a, b) {
		t.Fatalf("created:\n%v\nloaded:\n%v", a, b)
	}
	if n, err := loaded.TeamCount(ctx, 1); err != nil || n != 2 {
		t.Fatalf("team count %d %v", n, err)
	}
}

// A bulk-loaded company, user and API key are what the store reads: the
// key authenticates as the user of the company, and a table made again
// by CreateTable is left as it is.
func TestAccountsLoad(t *testing.T) {
	t.Parallel()
	st := testenv.NewStore(t)
	ctx := context.Background()
	if err := bulkload.PutCompany(ctx, st, store.Company{ID: 9, Name: "Loaded"}); err != nil {
		t.Fatal(err)
	}
	if err := bulkload.PutUser(ctx, st, store.User{ID: 3, CompanyID: 9, Email: "u@loaded.test", Active: true, IsAdmin: true}); err != nil {
		t.Fatal(err)
	}
	if err := bulkload.PutAPIKey(ctx, st, 9, 3, "csk_loaded-key"); err != nil {
		t.Fatal(err)
	}
	if c, err := st.GetCompany(ctx, 9); err != nil || c.Name != "Loaded" {
		t.Fatalf("company %+v %v", c, err)
	}
	cred, err := st.CredentialByAPIKey(ctx, "csk_loaded-key", time.Now())
	if err != nil || cred.Company.ID != 9 || cred.User.ID != 3 || cred.User.CompanyID != 9 {
		t.Fatalf("credential %+v %v", cred, err)
	}
	if err := bulkload.CreateTable(ctx, st, false); err != nil {
		t.Fatalf("CreateTable of an existing table: %v", err)
	}
	if u, err := st.GetUser(ctx, 9, 3); err != nil || u.Email != "u@loaded.test" {
		t.Fatalf("after CreateTable again: %+v %v", u, err)
	}
}
