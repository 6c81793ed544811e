package store_test

import (
	"context"
	"errors"
	"testing"

	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"

	"github.com/acme/codescan-api/internal/testenv"
	"github.com/acme/codescan-api/shared/store"
	"github.com/acme/codescan-api/shared/store/ddb"
	"github.com/acme/codescan-api/shared/store/schema"
)

func TestMain(m *testing.M) { testenv.Main(m) }

func TestProjectsAndErrors(t *testing.T) {
	t.Parallel()
	st := testenv.NewStore(t)
	ctx := context.Background()
	p, err := st.Catalog.CreateProject(ctx, schema.Project{CompanyID: 1, Name: "Web", RepoURL: "https://git.example/acme/web"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := st.Catalog.CreateProject(ctx, schema.Project{CompanyID: 1, Name: "web"}); !errors.Is(err, ddb.ErrConflict) {
		t.Fatalf("duplicate name: %v", err)
	}
	if _, err := st.Catalog.CreateProject(ctx, schema.Project{CompanyID: 2, Name: "Web"}); err != nil {
		t.Fatalf("same name in another company: %v", err)
	}
	if got, err := st.Catalog.ProjectByName(ctx, 1, "WEB"); err != nil || got.ID != p.ID {
		t.Fatalf("by name: %+v %v", got, err)
	}
	if _, err := st.Catalog.GetProject(ctx, 2, p.ID); !errors.Is(err, ddb.ErrNotFound) {
		t.Fatalf("another company's id must be not found: %v", err)
	}
	list, err := st.Catalog.AllProjects(ctx, 1)
	if err != nil || len(list) != 1 {
		t.Fatalf("list: %v %v", list, err)
	}
	if err := store.Update(st, ctx, ddb.Key{PK: schema.CompanyPK(1), SK: "PROJECT#nope"}, expression.Set(expression.Name("x"), expression.Value(1)), nil, nil); !errors.Is(err, ddb.ErrNotFound) {
		t.Fatalf("update of a missing item: %v", err)
	}
	cond := expression.Name("name").Equal(expression.Value("Other"))
	if err := store.Update(st, ctx, p.Key, expression.Set(expression.Name("x"), expression.Value(1)), &cond, nil); !errors.Is(err, ddb.ErrConflict) {
		t.Fatalf("failed extra condition: %v", err)
	}
}

func TestMeterAddsUpConsumedCapacity(t *testing.T) {
	t.Parallel()
	st := testenv.NewStore(t)
	var m ddb.Meter
	ctx := ddb.WithMeter(context.Background(), &m)
	if _, err := st.Catalog.CreateProject(ctx, schema.Project{CompanyID: 1, Name: "Web"}); err != nil {
		t.Fatal(err)
	}
	if _, err := st.Catalog.ProjectByName(ctx, 1, "Web"); err != nil {
		t.Fatal(err)
	}
	// Creating: id, projects revision, transaction, teams' selectors; by
	// name: guard and project.
	req, rcu, wcu := m.Snapshot()
	if req != 6 || rcu <= 0 || wcu <= 0 {
		t.Fatalf("requests %d rcu %.1f wcu %.1f", req, rcu, wcu)
	}
}
