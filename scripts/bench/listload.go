package main

// The list suite's loaders: each creates, in a company of its own, size
// items of one or more lists through the store's write paths: the create
// functions the handlers call, run concurrently, or the bulk helpers whose
// store tests compare their items with the create path's (teams,
// integrations), or the upload path's own calls (a scan's findings).

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"
	"time"

	"github.com/google/uuid"
	"golang.org/x/sync/errgroup"

	"github.com/acme/codescan-api/shared/auth"
	"github.com/acme/codescan-api/shared/ingest"
	"github.com/acme/codescan-api/shared/reportfinding"
	"github.com/acme/codescan-api/shared/store"
	"github.com/acme/codescan-api/shared/store/bulkload"
	"github.com/acme/codescan-api/shared/store/catalog"
	"github.com/acme/codescan-api/shared/store/ddb"
	"github.com/acme/codescan-api/shared/store/delivery"
	"github.com/acme/codescan-api/shared/store/ledger"
	"github.com/acme/codescan-api/shared/store/scans"
	"github.com/acme/codescan-api/shared/store/schema"
)

// listTenant is one company holding the lists of one loader at one size.
type listTenant struct {
	size    int
	company int64
	admin   int64
	apiKey  string
	// Set by the loaders that make them: the project of the scan loader
	// (by name), its scan, and the webhook endpoint whose deliveries are
	// logged.
	project   string
	scanID    string
	webhookID string
	// cursor100 is the token of the 100th page of 5, by route.
	cursor100 map[string]string
}

// loader fills a tenant with t.size items of its lists.
type loader func(ctx context.Context, st *store.Store, t *listTenant, workers int) error

var loaders = map[string]loader{
	"teams":        loadTeams,
	"integrations": loadIntegrations,
	"webhooks":     loadWebhooks,
	"keys":         loadKeys,
	"users":        loadUsers,
	"projects":     loadProjects,
	"scans":        loadScans,
	"policies":     loadPolicies,
	"rules":        loadRules,
	"scan":         loadScan,
}

// newListTenant creates a company with an admin and the admin's API key.
func newListTenant(ctx context.Context, st *store.Store, name string, size int) (*listTenant, error) {
	id, err := st.Ledger.NextID(ctx, "company")
	if err != nil {
		return nil, err
	}
	if err := bulkload.PutCompany(ctx, st, schema.Company{ID: id, Name: fmt.Sprintf("Lists %s %d", name, size)}); err != nil {
		return nil, err
	}
	uid, err := st.Ledger.NextID(ctx, "user")
	if err != nil {
		return nil, err
	}
	admin := schema.User{ID: uid, CompanyID: id, Email: fmt.Sprintf("admin-%s-%d@lists.test", name, size), FirstName: "A", LastName: "Admin", Active: true, IsAdmin: true}
	if err := bulkload.PutUser(ctx, st, admin); err != nil {
		return nil, err
	}
	t := &listTenant{size: size, company: id, admin: uid, apiKey: auth.NewAPIKey(), cursor100: map[string]string{}}
	return t, bulkload.PutAPIKey(ctx, st, id, uid, t.apiKey)
}

// parallel runs fn for 0..n-1 on workers goroutines and stops at the first
// error.
func parallel(ctx context.Context, n, workers int, fn func(ctx context.Context, k int) error) error {
	g, ctx := errgroup.WithContext(ctx)
	g.SetLimit(max(workers, 1))
	var failed atomic.Bool
	for k := range n {
		if failed.Load() {
			break
		}
		g.Go(func() error {
			err := fn(ctx, k)
			if err != nil {
				failed.Store(true)
			}
			return err
		})
	}
	return g.Wait()
}

// loadTeams: 50 users, 20 projects (half tagged), size teams of 3 members,
// every tenth with project selectors (bulkload.Teams).
func loadTeams(ctx context.Context, st *store.Store, t *listTenant, workers int) error {
	users := []int64{t.admin}
	for k := 1; k < 50; k++ {
		u, err := st.Tenancy.CreateUser(ctx, schema.User{CompanyID: t.company, Email: fmt.Sprintf("u%d@teams.test", k), FirstName: "U", LastName: fmt.Sprint(k), Active: true})
		if err != nil {
			return err
		}
		users = append(users, u.ID)
	}
	for k := range 20 {
		p := schema.Project{CompanyID: t.company, Name: fmt.Sprintf("svc-%02d", k), RepoURL: fmt.Sprintf("https://github.com/lists/svc-%02d", k)}
		if k%2 == 0 {
			p.Tags = []string{"backend"}
		}
		if _, err := st.Catalog.CreateProject(ctx, p); err != nil {
			return err
		}
	}
	ts := make([]schema.Team, t.size)
	for k := range t.size {
		ts[k] = schema.Team{Name: fmt.Sprintf("team-%06d", k), MemberIDs: []int64{users[k%50], users[(k+1)%50], users[(k+7)%50]}}
		if k%10 == 0 {
			ts[k].ProjectTags, ts[k].RepoURLPatterns = []string{"backend"}, []string{"svc-1"}
		}
	}
	_, err := bulkload.Teams(ctx, st, t.company, ts, workers, nil)
	return err
}

// loadIntegrations: size GitHub integrations (bulkload.Integrations).
func loadIntegrations(ctx context.Context, st *store.Store, t *listTenant, workers int) error {
	ins := make([]schema.Integration, t.size)
	for k := range t.size {
		ins[k] = schema.Integration{UUID: catalog.NewIntegrationUUID(), Name: fmt.Sprintf("gh-%06d", k), AccountID: fmt.Sprint(k),
			AccountName: "bot", BaseURL: "https://api.github.com", SealedToken: "not-a-real-sealed-token-but-of-a-realistic-length-0123456789abcdef"}
	}
	_, err := bulkload.Integrations(ctx, st, t.company, ins, workers, nil)
	return err
}

// loadWebhooks: as many endpoints as a company may have (at most
// MaxWebhooksPerCompany, CreateWebhook) and size delivered attempts logged
// on the first (ClaimDelivery then FinishAttempt, as the dispatcher does).
func loadWebhooks(ctx context.Context, st *store.Store, t *listTenant, workers int) error {
	for k := range min(t.size, delivery.MaxWebhooksPerCompany) {
		ep, err := st.Deliveries.CreateWebhook(ctx, schema.WebhookEndpoint{ID: delivery.NewWebhookID(), CompanyID: t.company,
			URL: fmt.Sprintf("https://hooks.lists.test/%d", k), Types: []string{"scan_completed"}, Description: "bench",
			Active: true, SealedSecret: "not-a-real-sealed-secret-but-of-a-realistic-length-0123456789abcdef"})
		if err != nil {
			return err
		}
		if k == 0 {
			t.webhookID = ep.ID
		}
	}
	base := time.Now().Add(-time.Duration(t.size) * time.Second)
	return parallel(ctx, t.size, workers, func(ctx context.Context, k int) error {
		at := base.Add(time.Duration(k) * time.Second)
		event := uuid.NewString()
		d := schema.Delivery{ID: delivery.DeliveryID(event, delivery.ChannelWebhook, t.webhookID), CompanyID: t.company, EventID: event,
			EventType: "scan_completed", Channel: delivery.ChannelWebhook, Recipient: t.webhookID,
			Payload: fmt.Sprintf(`{"type":"scan_completed","id":%q,"company_id":%d,"data":{}}`, event, t.company)}
		d, ok, err := st.Deliveries.ClaimDelivery(ctx, d, at, time.Minute)
		if err != nil || !ok {
			return fmt.Errorf("claim delivery %d: %v %w", k, ok, err)
		}
		_, err = st.Deliveries.FinishAttempt(ctx, d, delivery.Attempt{At: at, StatusCode: 200, Latency: 40 * time.Millisecond, Delivered: true})
		return err
	})
}

// asAdmin is ctx with the tenant's admin as the audit actor, as the auth
// layer sets it for the admin's requests.
func asAdmin(ctx context.Context, t *listTenant) context.Context {
	return ledger.WithAuditActor(ctx, ledger.AuditActor{UserID: t.admin, Via: ledger.ViaAPIKey})
}

// loadKeys: size API keys of the admin, created by the admin (CreateAPIKey,
// which also writes their audit entries: the audit log holds size entries).
func loadKeys(ctx context.Context, st *store.Store, t *listTenant, workers int) error {
	ctx = asAdmin(ctx, t)
	return parallel(ctx, t.size, workers, func(ctx context.Context, k int) error {
		_, err := st.Tenancy.CreateAPIKey(ctx, schema.APIKey{CompanyID: t.company, UserID: t.admin, Name: fmt.Sprintf("ci-%06d", k)}, auth.NewAPIKey())
		return err
	})
}

// loadUsers: size users created by the admin (CreateUser), every tenth an
// admin.
func loadUsers(ctx context.Context, st *store.Store, t *listTenant, workers int) error {
	ctx = asAdmin(ctx, t)
	return parallel(ctx, t.size, workers, func(ctx context.Context, k int) error {
		_, err := st.Tenancy.CreateUser(ctx, schema.User{CompanyID: t.company, Email: fmt.Sprintf("user%06d@users.test", k),
			FirstName: "User", LastName: fmt.Sprint(k), Active: true, IsAdmin: k%10 == 0})
		return err
	})
}

// loadProjects: size projects with a repository and a default branch
// (CreateProject). Project writes of a company are serialized (its
// projects revision): a create that lost the race past the store's own
// retries (ErrConflict; names are unique, so nothing else conflicts) is
// tried again.
func loadProjects(ctx context.Context, st *store.Store, t *listTenant, workers int) error {
	return parallel(ctx, t.size, min(workers, 4), func(ctx context.Context, k int) error {
		p := schema.Project{CompanyID: t.company, Name: fmt.Sprintf("svc-%06d", k),
			RepoURL: fmt.Sprintf("https://github.com/lists/svc-%06d", k), DefaultBranch: "main"}
		for attempt := 0; ; attempt++ {
			_, err := st.Catalog.CreateProject(ctx, p)
			if !errors.Is(err, ddb.ErrConflict) || attempt == 20 {
				return err
			}
		}
	})
}

// loadScans: one project and size complete scans of it (CreateScan).
func loadScans(ctx context.Context, st *store.Store, t *listTenant, workers int) error {
	p, err := st.Catalog.CreateProject(ctx, schema.Project{CompanyID: t.company, Name: "svc", RepoURL: "https://github.com/lists/svc", DefaultBranch: "main"})
	if err != nil {
		return err
	}
	base := time.Now().Add(-time.Duration(t.size) * time.Minute)
	return parallel(ctx, t.size, workers, func(ctx context.Context, k int) error {
		_, err := st.Scans.CreateScan(ctx, scans.Scan{CompanyID: t.company, ProjectID: p.ID, Branch: "main", Engine: "sarif",
			RunID: uuid.NewString(), Tool: "semgrep", Status: scans.ScanComplete, Findings: k % 40,
			CreatedAt: base.Add(time.Duration(k) * time.Minute).UTC().Format(time.RFC3339)})
		return err
	})
}

// loadPolicies: size policies (CreatePolicy, as the handler fills them).
func loadPolicies(ctx context.Context, st *store.Store, t *listTenant, workers int) error {
	return parallel(ctx, t.size, workers, func(ctx context.Context, k int) error {
		_, err := st.Catalog.CreatePolicy(ctx, schema.Policy{CompanyID: t.company, Name: fmt.Sprintf("policy-%06d", k),
			Description: "No string-built SQL", PolicyType: "BLAST", SourceType: "Web", InstructionType: "overwrite",
			CWEs: []string{"CWE-89"}, Active: true, Version: 1})
		return err
	})
}

// loadRules: size blocking rules (CreateBlockingRule).
func loadRules(ctx context.Context, st *store.Store, t *listTenant, workers int) error {
	return parallel(ctx, t.size, workers, func(ctx context.Context, k int) error {
		_, err := st.Catalog.CreateBlockingRule(ctx, schema.BlockingRule{CompanyID: t.company, Slug: fmt.Sprintf("rule-%06d", k),
			Name: fmt.Sprintf("Rule %d", k), Active: true, CI: true, Conditions: schema.RuleConditions{MinUrgency: "HI", CWEs: []int{89}}})
		return err
	})
}

// loadScan: one project and one uploaded scan reporting size SAST, size
// quality and size SCA findings, stored as POST /scan-upload stores them
// (PutQualityIssues, PutScanSCAIssues, then ApplyScan), the first two in
// concurrent chunks.
func loadScan(ctx context.Context, st *store.Store, t *listTenant, workers int) error {
	p, err := st.Catalog.CreateProject(ctx, schema.Project{CompanyID: t.company, Name: "svc", RepoURL: "https://github.com/lists/svc", DefaultBranch: "main"})
	if err != nil {
		return err
	}
	t.project = p.Name
	var fs []reportfinding.Finding
	for k := range t.size {
		file := k % max(t.size/10, 1) // ten findings to a file
		path := fmt.Sprintf("src/pkg%d/file%d.go", file%17, file)
		fs = append(fs,
			reportfinding.Finding{Kind: reportfinding.SAST, Tool: "semgrep", RuleID: fmt.Sprintf("rule-%d", k%40), CWE: 20 + k%40,
				Path: path, Line: 1 + k%500, Urgency: []string{"CR", "HI", "ME", "LO"}[k%4], Message: fmt.Sprintf("finding %d", k)},
			reportfinding.Finding{Kind: reportfinding.Quality, Tool: "semgrep", RuleID: fmt.Sprintf("q-%d", k%25),
				Classification: []string{"Maintainability", "Reliability", "Style", "Performance"}[k%4],
				Path:           path, Line: 1 + k%700, Urgency: "LO", Message: fmt.Sprintf("quality %d", k)},
			reportfinding.Finding{Kind: reportfinding.SCA, Tool: "semgrep", RuleID: fmt.Sprintf("GHSA-%06d", k), Urgency: "HI",
				SCA: &reportfinding.Dependency{Name: fmt.Sprintf("pkg-%d", k), Version: "1.0.0", Ecosystem: "npm", FixVersion: "1.0.1",
					IDs: []string{fmt.Sprintf("GHSA-%06d", k)}, Severity: "HIGH", CVSS: 7.5, Summary: "Prototype pollution",
					Manifest: "package-lock.json", Reachability: reportfinding.Reachability{Status: reportfinding.NotAnalyzed}}})
	}
	rep := reportfinding.Report{Tools: []string{"semgrep"}, Findings: fs}
	sc, err := st.Scans.CreateScan(ctx, scans.Scan{ID: uuid.NewString(), CompanyID: t.company, ProjectID: p.ID, Branch: "main",
		Engine: "sarif", RunID: uuid.NewString(), Tool: ingest.Tool(rep, "sarif"), Status: scans.ScanProcessing,
		CreatedAt: time.Now().UTC().Format(time.RFC3339)})
	if err != nil {
		return err
	}
	t.scanID = sc.ID
	const chunk = 500
	qs, sca := ingest.Quality(t.company, sc, p, fs), ingest.SCA(t.company, sc, p, fs)
	if err := parallel(ctx, (len(qs)+chunk-1)/chunk, workers, func(ctx context.Context, n int) error {
		return st.Quality.PutQualityIssues(ctx, t.company, qs[n*chunk:min((n+1)*chunk, len(qs))])
	}); err != nil {
		return err
	}
	if err := parallel(ctx, (len(sca)+chunk-1)/chunk, max(workers/4, 1), func(ctx context.Context, n int) error {
		return st.SCA.PutScanSCAIssues(ctx, t.company, sc, sca[n*chunk:min((n+1)*chunk, len(sca))])
	}); err != nil {
		return err
	}
	_, err = st.Findings.ApplyScan(ctx, t.company, sc, ingest.Issues(t.company, sc, p, fs))
	return err
}
