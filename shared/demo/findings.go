package demo

import (
	"context"
	"fmt"
	"math/rand/v2"
	"strconv"
	"time"

	"github.com/google/uuid"

	"github.com/acme/codescan-api/shared/store"
	"github.com/acme/codescan-api/shared/store/findings"
	"github.com/acme/codescan-api/shared/store/quality"
	"github.com/acme/codescan-api/shared/store/sca"
	storescans "github.com/acme/codescan-api/shared/store/scans"
	"github.com/acme/codescan-api/shared/store/schema"
	"github.com/acme/codescan-api/shared/store/triage"
)

func init() { register(10, seedFindings) }

// rule is a SAST rule the generator draws findings from.
type rule struct {
	id, title string
	cwe       int
	weight    int
}

// rules are weighted roughly like the findings of real code bases; the
// titles are ours, the CWE names come from the catalogue at read time.
var rules = []rule{
	{"xss-reflected", "User input reflected into HTML", 79, 14},
	{"sql-injection", "SQL query built from user input", 89, 10},
	{"path-traversal", "File path built from user input", 22, 8},
	{"command-injection", "Shell command built from user input", 78, 5},
	{"hardcoded-secret", "Hard-coded credential", 798, 9},
	{"weak-crypto", "Broken or risky cryptographic algorithm", 327, 7},
	{"insecure-deserialization", "Deserialization of untrusted data", 502, 4},
	{"xxe", "XML parser resolves external entities", 611, 3},
	{"ssrf", "Server-side request to a user-chosen URL", 918, 4},
	{"csrf", "State change without CSRF protection", 352, 5},
	{"open-redirect", "Redirect to a user-chosen URL", 601, 4},
	{"missing-authz", "Missing authorization check", 862, 5},
	{"info-exposure", "Sensitive data in error message", 200, 6},
	{"regex-dos", "Regular expression with exponential backtracking", 1333, 3},
	{"code-injection", "Dynamic code evaluation of user input", 94, 2},
	{"unrestricted-upload", "Upload without file type checks", 434, 2},
	{"weak-hash", "Password hashed without salt", 916, 2},
	{"style-lint", "Generic security lint (no CWE)", findings.NoCWE, 3},
}

var (
	ruleWeights = func() int {
		n := 0
		for _, r := range rules {
			n += r.weight
		}
		return n
	}()
	dirs  = []string{"src/api", "src/auth", "src/db", "src/handlers", "src/util", "lib/core", "lib/io", "internal/service", "web/views", "cmd/server"}
	files = []string{"server", "routes", "user", "session", "query", "upload", "render", "config", "crypto", "client", "report", "admin"}
	exts  = []string{".go", ".py", ".ts", ".java"}
)

func pickRule(r *rand.Rand) rule {
	n := r.IntN(ruleWeights)
	for _, ru := range rules {
		if n < ru.weight {
			return ru
		}
		n -= ru.weight
	}
	return rules[0]
}

// SASTIssues generates n plausible SAST issues spread over projects (each
// on one of its project's branches, weighted towards the first), with
// skewed CWEs, files, urgencies and statuses. It is deterministic: the same
// seed gives the same issues with the same ids, so writing them twice
// creates nothing new. The demo seed and the benchmark use it.
func SASTIssues(seed uint64, projects []schema.Project, n int) []findings.Issue {
	r := rand.New(rand.NewPCG(seed, 0x5eed))
	ns := uuid.NewSHA1(uuid.NameSpaceOID, []byte("codescan-demo-"+strconv.FormatUint(seed, 10)))
	out := make([]findings.Issue, n)
	for k := range out {
		p := projects[r.IntN(len(projects))]
		branch := "main"
		if len(p.Branches) > 0 && r.IntN(2) == 0 {
			branch = p.Branches[r.IntN(len(p.Branches))]
		}
		ru := pickRule(r)
		ext := exts[int(p.ID)%len(exts)]
		status := "open"
		if x := r.IntN(100); x >= 60 {
			status = findings.ManualStatuses[1+x%(len(findings.ManualStatuses)-1)]
		}
		out[k] = findings.Issue{
			ID:          uuid.NewSHA1(ns, []byte(strconv.Itoa(k))).String(),
			ProjectID:   p.ID,
			ProjectName: p.Name,
			Branch:      branch,
			CWE:         ru.cwe,
			FilePath:    dirs[r.IntN(len(dirs))] + "/" + files[min(r.IntN(len(files)), r.IntN(len(files)))] + ext,
			Line:        1 + r.IntN(800),
			Urgency:     findings.Urgencies[min(r.IntN(4), r.IntN(4)+1)],
			Status:      status,
			RuleID:      ru.id,
			Title:       ru.title,
			CreatedAt:   fmt.Sprintf("2025-%02d-%02dT%02d:%02d:00Z", 1+r.IntN(9), 1+r.IntN(28), r.IntN(24), r.IntN(60)),
		}
	}
	return out
}

type demoProject struct{ name, repo string }

// projectsOf differ between the two demo companies; two of the first
// company's projects share a repository (a monorepo split in two projects).
var projectsOf = [][]demoProject{
	{
		{"payments-api", "https://github.com/acme-demo/payments-api"},
		{"web-frontend", "https://github.com/acme-demo/web"},
		{"web-admin", "git@github.com:acme-demo/web.git"},
		{"mobile-backend", "https://gitlab.com/acme-demo/mobile-backend"},
	},
	{
		{"globex-portal", "https://github.com/globex-demo/portal"},
		{"globex-billing", "https://bitbucket.org/globex-demo/billing"},
	},
}

var demoBranches = []string{"main", "develop", "release/2.4", "feature/login"}

// seedFindings writes projects, scans (one of them a third-party upload
// with a run id), SAST issues through the counting write path, code
// quality findings and SCA findings.
func seedFindings(ctx context.Context, st *store.Store, c *Company) error {
	var projects []schema.Project
	var names, repos []string
	for _, dp := range projectsOf[c.Index()] {
		p, err := st.Catalog.CreateProject(ctx, schema.Project{CompanyID: c.ID, Name: dp.name, RepoURL: dp.repo,
			Branches: demoBranches, Tags: []string{"demo"}})
		if err != nil {
			return err
		}
		projects = append(projects, p)
		names, repos = append(names, p.Name), append(repos, p.RepoURL)
	}
	issues := SASTIssues(uint64(c.ID), projects, []int{400, 150}[c.Index()])
	times := scanTimes(time.Now())
	scanIDs, issueIDs, err := seedLifecycle(ctx, st, c, projects, issues, times)
	if err != nil {
		return err
	}
	third, err := st.Scans.CreateScan(ctx, storescans.Scan{CompanyID: c.ID, ProjectID: projects[0].ID, Branch: "main",
		Engine: "sarif", RunID: uuid.NewString(), RepoURL: projects[0].RepoURL, Status: storescans.ScanComplete})
	if err != nil {
		return err
	}

	var qualityScans []string
	for _, at := range times[1:3] {
		at := at.Format(time.RFC3339)
		sc, err := st.Scans.CreateScan(ctx, storescans.Scan{CompanyID: c.ID, ProjectID: projects[0].ID, Branch: "main", Engine: "golangci-lint",
			Tool: "golangci-lint", RepoURL: projects[0].RepoURL, CreatedAt: at, Status: storescans.ScanComplete})
		if err != nil {
			return err
		}
		qualityScans = append(qualityScans, sc.ID)
	}
	for _, scanID := range qualityScans {
		admin := c.UserByRole("admin")
		assignee := quality.Assignee{ID: strconv.FormatInt(admin.ID, 10), Email: admin.Email, Name: "Admin"}
		if err := st.Quality.PutQualityIssues(ctx, c.ID, qualityIssues(uint64(c.ID), scanID, projects[0], assignee, 35)); err != nil {
			return err
		}
	}
	var scaIDs []string
	for _, s := range scaIssues(projects[0].ID) {
		stored, err := st.SCA.PutSCAIssue(ctx, c.ID, s)
		if err != nil {
			return err
		}
		scaIDs = append(scaIDs, stored.ID)
	}

	var cwes, paths []string
	for _, i := range issues[:8] {
		paths = append(paths, i.FilePath)
	}
	for _, ru := range rules[:6] {
		cwes = append(cwes, "CWE-"+strconv.Itoa(ru.cwe))
	}
	c.Resources["project_names"] = names
	c.Resources["repository_urls"] = repos
	c.Resources["branches"] = demoBranches
	c.Resources["scan_ids_with_quality_issues"] = qualityScans
	c.Resources["sca_issue_ids"] = scaIDs
	c.Resources["third_party_run_ids"] = []string{third.RunID}
	c.Resources["third_party_scan_ids"] = []string{third.ID}
	c.Resources["scan_ids"] = scanIDs
	c.Resources["sast_issue_ids"] = issueIDs
	c.Resources["cwe_ids"] = append(cwes, "unknown")
	c.Resources["file_paths"] = paths
	return nil
}

// scanTimes are the demo's scan times: every branch was scanned three
// times over the six weeks before now, so the trend of the report and of
// GET /metrics/trend shows a history; the triage meeting comes last.
func scanTimes(now time.Time) []time.Time {
	day := now.UTC().Truncate(24 * time.Hour).Add(9 * time.Hour)
	return []time.Time{day.AddDate(0, 0, -42), day.AddDate(0, 0, -25), day.AddDate(0, 0, -9), day.AddDate(0, 0, -3)}
}

// demoTool is the scanner of the demo's SAST findings.
const demoTool = "codescan"

// seedLifecycle runs the issues through the findings lifecycle: three scans
// of every branch that has issues, the second leaving out a fifth of them
// (fixed), the third bringing half of those back (reopened); then a
// security lead triages the issues the generator gave another status (with
// history). Each step is written at its time in times (through a store on
// the same table whose clock is set to it), so the trend records fall on
// those days. It returns the scans' ids, latest scan of each branch first,
// and the ids of a few issues, a reopened one first.
func seedLifecycle(ctx context.Context, live *store.Store, c *Company, projects []schema.Project, issues []findings.Issue, times []time.Time) (scans, some []string, err error) {
	var at time.Time
	st := store.New(live.Client(), live.TableName(), store.WithClock(func() time.Time { return at }))
	type branch struct {
		project int64
		name    string
	}
	byID := map[int64]schema.Project{}
	for _, p := range projects {
		byID[p.ID] = p
	}
	var order []branch
	found := map[branch][]findings.Issue{}
	wanted := map[string]string{} // issue id -> status the generator gave it
	for k, i := range issues {
		b := branch{project: i.ProjectID, name: i.Branch}
		if _, ok := found[b]; !ok {
			order = append(order, b)
		}
		if len(found[b]) == 2 && len(some) < 5 { // reopened by the third scan
			some = append(some, findings.IssueID(c.ID, i.ProjectID, i.Branch, demoTool, fmt.Sprintf("demo-%d", k)))
		}
		i.Tool, i.Fingerprint = demoTool, fmt.Sprintf("demo-%d", k)
		i.ID = findings.IssueID(c.ID, i.ProjectID, i.Branch, demoTool, i.Fingerprint)
		wanted[i.ID] = i.Status
		found[b] = append(found[b], i)
	}
	var latest, earlier []string
	scanRounds := times[:3]
	for _, b := range order {
		for round, when := range scanRounds {
			at = when
			stamp := when.Format(time.RFC3339)
			sc, err := st.Scans.CreateScan(ctx, storescans.Scan{CompanyID: c.ID, ProjectID: b.project, Branch: b.name, Engine: demoTool,
				Tool: demoTool, RepoURL: byID[b.project].RepoURL, CreatedAt: stamp, Status: storescans.ScanProcessing, GitSHA: fmt.Sprintf("%040x", round+1)})
			if err != nil {
				return nil, nil, err
			}
			var reported []findings.Issue
			for k, i := range found[b] {
				if (round == 1 && k%5 == 2) || (round == 2 && k%10 == 2) {
					continue
				}
				i.CreatedAt = stamp
				reported = append(reported, i)
			}
			if _, err := st.Findings.ApplyScan(ctx, c.ID, sc, reported); err != nil {
				return nil, nil, err
			}
			if round == len(scanRounds)-1 {
				latest = append(latest, sc.ID)
			} else {
				earlier = append(earlier, sc.ID)
			}
		}
	}
	at = times[3]
	lead := findings.Actor{UserID: c.UserByRole("admin").ID}
	for id, status := range wanted {
		if status == "open" || status == "fixed" {
			continue
		}
		reason := "Reviewed in the demo's triage meeting"
		if _, err := st.Triage.UpdateIssue(ctx, c.ID, id, triage.IssueUpdate{Status: &status, Reason: &reason}, lead); err != nil {
			return nil, nil, err
		}
	}
	return append(latest, earlier...), some, nil
}

var qualityClasses = []quality.Classification{
	{ID: "CQ-DEAD", Name: "Dead Code", Description: "Code that can never run."},
	{ID: "CQ-DUP", Name: "Code Duplication", Description: "A block repeated elsewhere."},
	{ID: "CQ-CPLX", Name: "Cognitive Complexity", Description: "A function too hard to follow."},
	{ID: "CQ-ERR", Name: "Unchecked Error", Description: "An error result is ignored."},
}

func qualityIssues(seed uint64, scanID string, project schema.Project, assignee quality.Assignee, n int) []quality.Issue {
	r := rand.New(rand.NewPCG(seed, 0xc0de))
	out := make([]quality.Issue, n)
	for k := range out {
		cls := qualityClasses[r.IntN(len(qualityClasses))]
		line := 1 + r.IntN(400)
		q := quality.Issue{
			ScanID:             scanID,
			ProjectID:          project.ID,
			Classification:     cls,
			Urgency:            findings.Urgencies[1+r.IntN(3)],
			CreatedAt:          fmt.Sprintf("2025-06-%02dT%02d:00:00Z", 1+r.IntN(28), r.IntN(24)),
			FirstDetectionDate: "2025-05-01T09:00:00Z",
			Status:             "open",
			SLAStatus:          []string{"on_track", "overdue"}[r.IntN(2)],
			Location: quality.Location{
				File:       quality.File{Name: "service.go", Language: "go", Path: "internal/service/service.go", GitHash: "9fceb02"},
				Project:    quality.Project{Name: project.Name, Branch: "main", GitSHA: "e83c5163316f89bfbde7d9ab23ca2e25604af290"},
				LineNumber: line, SinkLineNumber: line + r.IntN(20),
			},
			AutoTriage:   quality.AutoTriage{FalsePositiveDetection: quality.FalsePositiveDetection{Status: "valid", Reasoning: "The code path is reachable from a public handler."}},
			Reachability: quality.Reachability{IsReachable: r.IntN(2) == 0, EndpointCount: r.IntN(5)},
		}
		if r.IntN(2) == 0 {
			q.AutoFixSuggestion = &quality.AutoFixSuggestion{ID: uuid.NewString(), Status: "fix_available", Patch: quality.FixPatch{
				Diff: "-\tdo()\n+\tif err := do(); err != nil {\n+\t\treturn err\n+\t}", Explanation: "Return the error instead of dropping it.",
				FullCode: "if err := do(); err != nil {\n\treturn err\n}"}}
			q.AssignedTo = &assignee
		}
		out[k] = q
	}
	return out
}

func scaIssues(projectID int64) []sca.Issue {
	type dep struct{ name, version, eco, fix, cve, class, severity, manifest string }
	deps := []dep{
		{"lodash", "4.17.20", "npm", "4.17.21", "CVE-2021-23337", "Command Injection", "HIGH", "package-lock.json"},
		{"log4j-core", "2.14.1", "maven", "2.17.1", "CVE-2021-44228", "Remote Code Execution", "CRITICAL", "pom.xml"},
		{"jackson-databind", "2.9.8", "maven", "2.9.10.8", "CVE-2020-36518", "Denial of Service", "HIGH", "pom.xml"},
		{"pyyaml", "5.3", "pypi", "5.4", "CVE-2020-14343", "Arbitrary Code Execution", "CRITICAL", "requirements.txt"},
		{"golang.org/x/net", "0.7.0", "go", "0.17.0", "CVE-2023-44487", "Denial of Service", "MEDIUM", "go.mod"},
	}
	var out []sca.Issue
	for k, d := range deps {
		reach := sca.Reachability{Status: "reachable", IsReachable: true, Description: "A vulnerable function is called from the project's code.",
			Usages: []sca.Usage{{ID: uuid.NewString(), Filename: "src/handlers/report.js", CodeLine: "const out = render(input)",
				IsFunctionReachable: "true", Reasoning: "render passes user input to the vulnerable function."}}}
		if k%2 == 1 {
			reach = sca.Reachability{Status: "not_direct_dependency", Description: "Pulled in by another dependency; no call found.",
				Usages: []sca.Usage{}}
		}
		out = append(out, sca.Issue{
			ProjectID: projectID, CreatedAt: fmt.Sprintf("2025-07-0%dT10:00:00Z", 1+k),
			Description: d.class + " in " + d.name, Details: d.name + " " + d.version + " is affected by " + d.cve + "; upgrade to " + d.fix + ".",
			Severity: d.severity, CVSSScore: []float64{7.2, 10.0, 7.5, 9.8, 5.3}[k], Classification: d.class, CVE: d.cve,
			Package:  sca.Package{Name: d.name, Version: d.version, Ecosystem: d.eco, FixVersion: d.fix},
			Location: sca.Location{Path: d.manifest}, Reachability: reach, Status: "open",
		})
	}
	return out
}
