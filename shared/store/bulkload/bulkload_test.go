package bulkload_test

import (
	"context"
	"fmt"
	"reflect"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/acme/codescan-api/internal/testenv"
	"github.com/acme/codescan-api/shared/store"
	"github.com/acme/codescan-api/shared/store/bulkload"
	"github.com/acme/codescan-api/shared/store/catalog"
	"github.com/acme/codescan-api/shared/store/ddb"
	"github.com/acme/codescan-api/shared/store/findings"
	"github.com/acme/codescan-api/shared/store/schema"
	"github.com/acme/codescan-api/shared/tabledef"
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
	for _, pk := range []string{schema.CompanyPK(1), schema.CompanyPK(1) + "#TEAMSEL"} {
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
	project := schema.Project{CompanyID: 1, Name: "api", RepoURL: "https://x.test/acme/api", Tags: []string{"pci"}}
	teams := []schema.Team{
		{CompanyID: 1, Name: "Plain", MemberIDs: []int64{7}},
		{CompanyID: 1, Name: "Payments", ProjectTags: []string{"PCI"}, RepoURLPatterns: []string{"acme"}},
	}
	uuids := []string{catalog.NewIntegrationUUID(), catalog.NewIntegrationUUID()}
	ins := []schema.Integration{
		{CompanyID: 1, UUID: uuids[0], Name: "GH", BaseURL: "https://api.github.com", SealedToken: "sealed"},
		{CompanyID: 1, UUID: uuids[1], Name: "GL", BaseURL: "https://gitlab.com", OrgAllowlist: []string{"acme"}},
	}

	created := testenv.NewStore(t)
	if _, err := created.Catalog.CreateProject(ctx, project); err != nil {
		t.Fatal(err)
	}
	for _, tm := range teams {
		if _, err := created.Catalog.CreateTeam(ctx, tm); err != nil {
			t.Fatal(err)
		}
	}
	for _, in := range ins {
		if _, err := created.Catalog.CreateIntegration(ctx, in); err != nil {
			t.Fatal(err)
		}
	}

	loaded := testenv.NewStore(t)
	if _, err := loaded.Catalog.CreateProject(ctx, project); err != nil {
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
	if n, err := loaded.Catalog.TeamCount(ctx, 1); err != nil || n != 2 {
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
	if err := bulkload.PutCompany(ctx, st, schema.Company{ID: 9, Name: "Loaded"}); err != nil {
		t.Fatal(err)
	}
	if err := bulkload.PutUser(ctx, st, schema.User{ID: 3, CompanyID: 9, Email: "u@loaded.test", Active: true, IsAdmin: true}); err != nil {
		t.Fatal(err)
	}
	if err := bulkload.PutAPIKey(ctx, st, 9, 3, "csk_loaded-key"); err != nil {
		t.Fatal(err)
	}
	if c, err := st.Tenancy.GetCompany(ctx, 9); err != nil || c.Name != "Loaded" {
		t.Fatalf("company %+v %v", c, err)
	}
	cred, err := st.Tenancy.CredentialByAPIKey(ctx, "csk_loaded-key", time.Now())
	if err != nil || cred.Company.ID != 9 || cred.User.ID != 3 || cred.User.CompanyID != 9 {
		t.Fatalf("credential %+v %v", cred, err)
	}
	if err := bulkload.CreateTable(ctx, st, false); err != nil {
		t.Fatalf("CreateTable of an existing table: %v", err)
	}
	if u, err := st.Tenancy.GetUser(ctx, 9, 3); err != nil || u.Email != "u@loaded.test" {
		t.Fatalf("after CreateTable again: %+v %v", u, err)
	}
}

// someIssues makes n issues spread over projects, three branches, CWEs,
// files, urgencies and statuses, with deterministic ids.
func someIssues(n int, projects ...int64) []findings.Issue {
	var out []findings.Issue
	for k := 0; k < n; k++ {
		out = append(out, findings.Issue{
			ID:        fmt.Sprintf("00000000-0000-4000-8000-%012d", k),
			ProjectID: projects[k%len(projects)], ProjectName: "p", Branch: []string{"main", "dev", "feat/#1"}[k%3],
			CWE: []int{79, 89, 0, 22, 79}[k%5], FilePath: fmt.Sprintf("src/f%d.go", k%7),
			Urgency: findings.Urgencies[k%4], Status: findings.Statuses[k%6], Title: "t",
			CreatedAt: fmt.Sprintf("2025-01-%02dT10:00:00Z", 1+k%28),
		})
	}
	return out
}

// companyPartitions are the partitions holding a company's findings: its
// own and its issues' shards.
func companyPartitions(companyID int64) []string {
	out := []string{schema.CompanyPK(companyID)}
	for shard := range 256 {
		out = append(out, schema.IssueShardPK(companyID, fmt.Sprintf("%02x", shard)))
	}
	return out
}

// trendPartitions are the trend records' partitions of the company and
// of projects.
func trendPartitions(company int64, projects ...int64) []string {
	out := []string{schema.TrendPK(company, 0)}
	for _, p := range projects {
		out = append(out, schema.TrendPK(company, p))
	}
	return out
}

// pendingIDs are the ids EachPendingDue returns for every first detection
// up to by.
func pendingIDs(t *testing.T, st *store.Store, companyID int64, urgency string, by time.Time) []string {
	t.Helper()
	var out []string
	if err := st.Lists.EachPendingDue(context.Background(), companyID, urgency, by, func(i findings.Issue) error {
		out = append(out, i.ID)
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	return out
}

func TestBulkLoaderWritesWhatTheWritePathWrites(t *testing.T) {
	t.Parallel()
	// One clock for both: the trend records are by day.
	clock := store.WithClock(func() time.Time { return time.Date(2025, 2, 1, 9, 0, 0, 0, time.UTC) })
	x, y := testenv.NewStore(t), testenv.NewStore(t)
	viaWritePath, viaLoader := store.New(x.Client(), x.TableName(), clock), store.New(y.Client(), y.TableName(), clock)
	ctx := context.Background()
	const company = 5
	issues := someIssues(230, 1, 2, 3)
	if _, err := bulkload.CreateIssues(ctx, viaWritePath, company, issues); err != nil {
		t.Fatal(err)
	}
	loaded := 0
	if err := bulkload.Issues(ctx, viaLoader, company, issues, 4, func(n, _ int) { loaded += n }); err != nil {
		t.Fatal(err)
	}
	var a, b []map[string]any
	for _, pk := range append(companyPartitions(company), trendPartitions(company, 1, 2, 3)...) {
		x, err := partitionItems(viaWritePath, pk)
		if err != nil {
			t.Fatal(err)
		}
		y, err := partitionItems(viaLoader, pk)
		if err != nil {
			t.Fatal(err)
		}
		a, b = append(a, x...), append(b, y...)
	}
	if len(a) != len(b) || loaded != len(b) || len(a) < 230+6 {
		t.Fatalf("write path stored %d items, loader %d (reported %d)", len(a), len(b), loaded)
	}
	for n := range a {
		// Versions count writes: the write path wrote some counters more
		// than once.
		delete(a[n], "ver")
		delete(b[n], "ver")
		// seq counts the transactions that moved a trend scope: the
		// loader's one, the write path's several.
		delete(a[n], "seq")
		delete(b[n], "seq")
		if !reflect.DeepEqual(a[n], b[n]) {
			t.Fatalf("item %d differs:\n write path %v\n loader     %v", n, a[n], b[n])
		}
	}
	testenv.Recount(t, viaLoader, company)
}

// TestCreateTableAddsMissingIndex opens a table created before the due
// index existed (as a `make run` data directory keeps it): CreateTable adds
// the index, and the items written before are in it.
func TestCreateTableAddsMissingIndex(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	base := testenv.NewStore(t)
	old := store.New(base.Client(), base.TableName()+"_old")
	var attrs []types.AttributeDefinition
	var gsis []types.GlobalSecondaryIndex
	for _, ix := range tabledef.Indexes {
		if ix == tabledef.Due {
			continue
		}
		for _, a := range []string{ix.PK, ix.SK} {
			attrs = append(attrs, types.AttributeDefinition{AttributeName: aws.String(a), AttributeType: types.ScalarAttributeTypeS})
		}
		gsis = append(gsis, types.GlobalSecondaryIndex{IndexName: aws.String(ix.Name),
			KeySchema:  []types.KeySchemaElement{{AttributeName: aws.String(ix.PK), KeyType: types.KeyTypeHash}, {AttributeName: aws.String(ix.SK), KeyType: types.KeyTypeRange}},
			Projection: &types.Projection{ProjectionType: types.ProjectionType(ix.Projection)}})
	}
	attrs = append(attrs, types.AttributeDefinition{AttributeName: aws.String("PK"), AttributeType: types.ScalarAttributeTypeS},
		types.AttributeDefinition{AttributeName: aws.String("SK"), AttributeType: types.ScalarAttributeTypeS})
	if _, err := base.Client().CreateTable(ctx, &dynamodb.CreateTableInput{TableName: aws.String(old.TableName()), AttributeDefinitions: attrs,
		KeySchema:              []types.KeySchemaElement{{AttributeName: aws.String("PK"), KeyType: types.KeyTypeHash}, {AttributeName: aws.String("SK"), KeyType: types.KeyTypeRange}},
		GlobalSecondaryIndexes: gsis, BillingMode: types.BillingModePayPerRequest}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_, _ = base.Client().DeleteTable(context.Background(), &dynamodb.DeleteTableInput{TableName: aws.String(old.TableName())})
	})
	company, err := old.Ledger.NextID(ctx, "company")
	if err != nil {
		t.Fatal(err)
	}
	detected := time.Date(2026, 2, 1, 0, 0, 0, 0, time.UTC)
	if _, err := bulkload.CreateIssues(ctx, old, company, []findings.Issue{{ProjectID: 1, ProjectName: "p", Branch: "main", CWE: 89, FilePath: "db.go",
		Urgency: "HI", Status: "open", CreatedAt: detected.Format(time.RFC3339)}}); err != nil {
		t.Fatal(err)
	}
	for range 2 { // adds the index, then finds nothing to add
		if err := bulkload.CreateTable(ctx, old, false); err != nil {
			t.Fatal(err)
		}
		desc, err := base.Client().DescribeTable(ctx, &dynamodb.DescribeTableInput{TableName: aws.String(old.TableName())})
		if err != nil {
			t.Fatal(err)
		}
		if n := len(desc.Table.GlobalSecondaryIndexes); n != len(tabledef.Indexes) {
			t.Fatalf("%d indexes, want %d", n, len(tabledef.Indexes))
		}
	}
	if got := pendingIDs(t, old, company, "HI", detected); len(got) != 1 {
		t.Fatalf("the issue written before the index: %v", got)
	}
	// The table was not created with the index: its backfill is owed.
	if done, _, err := old.Lists.BackfillDueIndex(ctx, time.Now().Add(-time.Second)); done || err != nil {
		t.Fatalf("backfill of an upgraded table: done %v (%v)", done, err)
	}
}
