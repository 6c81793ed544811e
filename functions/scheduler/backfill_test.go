package scheduler_test

import (
	"context"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"

	"github.com/acme/codescan-api/functions/scheduler"
	"github.com/acme/codescan-api/internal/testenv"
	"github.com/acme/codescan-api/shared/store/page"
	"github.com/acme/codescan-api/shared/store/schema"
)

// The SLA and digest jobs finish the projects' URL backfill of a table
// written before it: a project without its lower-cased URL is found by
// repo_url again after either job ran.
func TestJobsBackfillProjectURLs(t *testing.T) {
	for name, job := range map[string]func(context.Context, scheduler.Store, time.Time) (int, error){
		"sla": scheduler.SLAChecks, "digest": scheduler.WeeklyDigest,
	} {
		t.Run(name, func(t *testing.T) {
			env := testenv.New(t)
			ctx := context.Background()
			c := env.Company(t, "Old")
			p, err := env.Store.Catalog.CreateProject(ctx, schema.Project{CompanyID: c.ID, Name: "api", RepoURL: "https://GitHub.com/Acme/API"})
			if err != nil {
				t.Fatal(err)
			}
			if err := env.Store.Ledger.T.Update(ctx, p.Key, expression.Remove(expression.Name("repo_url_lower")), nil, nil); err != nil {
				t.Fatal(err)
			}
			if err := env.Store.Ledger.T.DeleteItem(ctx, schema.ProjectRepoBackfillKey); err != nil {
				t.Fatal(err)
			}
			if _, err := job(ctx, scheduler.StoreOf(env.Store), time.Now()); err != nil {
				t.Fatal(err)
			}
			got, err := env.Store.Catalog.ListProjectsByRepo(ctx, c.ID, "acme/api", page.Request{Limit: 10})
			if err != nil || len(got.Items) != 1 || got.Items[0].ID != p.ID {
				t.Fatalf("%+v %v", got, err)
			}
		})
	}
}
