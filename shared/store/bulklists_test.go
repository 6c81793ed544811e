package store_test

import (
	"context"
	"reflect"
	"testing"

	"github.com/acme/codescan-api/internal/testenv"
	"github.com/acme/codescan-api/shared/store"
	"github.com/acme/codescan-api/shared/store/bulkload"
)

// companyItems is every item of company 1's partitions, timestamps blanked.
func companyItems(t *testing.T, st *store.Store) []map[string]any {
	t.Helper()
	var out []map[string]any
	for _, pk := range []string{store.CompanyPK(1), store.CompanyPK(1) + "#TEAMSEL"} {
		items, err := store.PartitionItems(context.Background(), st, pk)
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
