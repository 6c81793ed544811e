package prdecor_test

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/acme/codescan-api/internal/githost"
	"github.com/acme/codescan-api/internal/registry"
	"github.com/acme/codescan-api/internal/testenv"
	"github.com/acme/codescan-api/shared/deliveryengine"
	"github.com/acme/codescan-api/shared/outbound"
	"github.com/acme/codescan-api/shared/prdecor"
	"github.com/acme/codescan-api/shared/pullrequest"
	"github.com/acme/codescan-api/shared/scmhost"
	"github.com/acme/codescan-api/shared/secrets"
	"github.com/acme/codescan-api/shared/store/catalog"
	"github.com/acme/codescan-api/shared/store/delivery"
	"github.com/acme/codescan-api/shared/store/page"
	"github.com/acme/codescan-api/shared/store/schema"
)

const (
	owner, repo = "acme", "payments"
	prNumber    = 7
	headSHA     = "9fceb02d0ae598e95dc970b74767f19372d61af8"
	token       = "ghp-test-token"
	// malloryToken is a user of the host who is not the integration's.
	malloryToken = "ghp-mallory-token"
)

func TestMain(m *testing.M) { testenv.Main(m) }

// world is a company with a source-code-host integration pointing at a
// loopback GitHub, a CI blocking rule, and the dispatcher that decorates.
type world struct {
	env    *testenv.Env
	mux    http.Handler
	host   *githost.Server
	engine *deliveryengine.Engine
	dec    *prdecor.Decorator
	acme   *testenv.Company
	key    []string
}

func newWorld(t *testing.T) *world { return newWorldWith(t, nil) }

// newWorldWith is newWorld whose integration has the inline comments
// setting inline (nil: none).
func newWorldWith(t *testing.T, inline *schema.InlineComments) *world {
	t.Helper()
	env := testenv.New(t)
	w := &world{env: env, mux: registry.Mux(env.Deps), host: githost.New(t, githost.WithToken(token, "codescan-bot"), githost.WithToken(malloryToken, "mallory"))}
	w.acme = env.Company(t, "Acme")
	w.key = testenv.Key(w.acme.Admin)
	w.host.AddPullRequest(owner, repo, githost.PullRequest{Number: prNumber, HeadSHA: headSHA})
	sealer := testenv.Sealer(t)
	w.integration(t, sealer, inline)
	w.dec = &prdecor.Decorator{Store: prdecor.StoreOf(env.Store), Sealer: sealer, Host: scmhost.New(scmhost.Options{AllowLoopback: true, Timeout: 5 * time.Second})}
	w.engine = &deliveryengine.Engine{Store: deliveryengine.StoreOf(env.Store), Sealer: sealer, Log: slog.New(slog.NewTextHandler(io.Discard, nil)),
		Backoff:  deliveryengine.Backoff{Base: 20 * time.Millisecond, Max: 100 * time.Millisecond, Horizon: time.Hour},
		Outbound: []outbound.Channel{w.dec}}
	res := testenv.Do(t, w.mux, "POST", "/blocking-rules", `{"slug":"no-new-criticals","name":"No new criticals","ci":true,"conditions":{"min_urgency":"CR"}}`, w.key...)
	if res.Status != http.StatusCreated {
		t.Fatalf("blocking rule: %d %s", res.Status, res.Body)
	}
	return w
}

// integration stores the company's integration with the host, its token
// sealed as the integrations routes seal it.
func (w *world) integration(t *testing.T, sealer secrets.Sealer, inline *schema.InlineComments) {
	ctx := context.Background()
	in := schema.Integration{CompanyID: w.acme.ID, UUID: catalog.NewIntegrationUUID(), Name: "GitHub", AccountID: fmt.Sprint(w.host.AccountID(token)), AccountName: "codescan-bot",
		OrgAllowlist: []string{"ACME"}, BaseURL: w.host.HostURL(), GatewayPrefix: w.host.Prefix(), InlineComments: inline}
	sealed, err := sealer.Seal(ctx, token, catalog.IntegrationTokenRecord(w.acme.ID, in.UUID))
	if err != nil {
		t.Fatal(err)
	}
	in.SealedToken = sealed
	if _, err := w.env.Store.Catalog.CreateIntegration(ctx, in); err != nil {
		t.Fatal(err)
	}
}

// refundPy is api/refund.py: its line 12 builds SQL from input.
var refundPy = strings.Repeat("# refunds\n", 11) + "    db.execute(\"SELECT * FROM t WHERE id=\" + id)\n" + "    return done()\n"

// refundFix is the scanner's own fix of line 12 (SARIF fixes: the line's
// text replaced).
const refundFix = `,"fixes":[{"description":{"text":"Pass the id as a query parameter"},"artifactChanges":[{"artifactLocation":{"uri":"api/refund.py"},` +
	`"replacements":[{"deletedRegion":{"startLine":12,"startColumn":5,"endLine":12,"endColumn":49},` +
	`"insertedContent":{"text":"db.execute(\"SELECT * FROM t WHERE id=%s\", (id,))"}}]}]}]`

// sarif is a Semgrep SARIF report of critical SQL injections, one per
// file named; api/refund.py's comes with the scanner's fix.
func sarif(files ...string) string {
	var results []string
	for _, f := range files {
		fix := ""
		if f == "api/refund.py" {
			fix = refundFix
		}
		results = append(results, fmt.Sprintf(`{"ruleId":"sqli","message":{"text":"Raw SQL in %s"},`+
			`"locations":[{"physicalLocation":{"artifactLocation":{"uri":%q},"region":{"startLine":12}}}]%s}`, f, f, fix))
	}
	return `{"version":"2.1.0","runs":[{"tool":{"driver":{"name":"Semgrep OSS","rules":[{"id":"sqli","shortDescription":{"text":"Raw SQL"},` +
		`"properties":{"security-severity":"9.8","tags":["CWE-89"]}}]}},"results":[` + strings.Join(results, ",") + `]}]}`
}

func files(n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = fmt.Sprintf("legacy/q%02d.py", i)
	}
	return out
}

// scan uploads a report of branch as the real client does (the report,
// then the CI's variables when ciVars is set), ingests it and returns
// its id.
func (w *world) scan(t *testing.T, branch, report string, ciVars string) string {
	t.Helper()
	run := uuid.NewString()
	if strings.Contains(report, "api/refund.py") { // the client sends the flagged file first
		res := testenv.Do(t, w.mux, "POST", "/code-upload?path=api/refund.py&run_id="+run, refundPy, append(w.key, "Content-Type", "application/octet-stream")...)
		if res.Status != 200 {
			t.Fatalf("code-upload: %d %s", res.Status, res.Body)
		}
	}
	res := testenv.Do(t, w.mux, "POST", "/scan-upload?engine=sarif&project=payments&branch="+branch+"&run_id="+run, report, w.key...)
	var up struct {
		ScanID string `json:"sast_scan_id"`
	}
	res.Decode(t, &up)
	if res.Status != 200 || up.ScanID == "" {
		t.Fatalf("upload: %d %s", res.Status, res.Body)
	}
	if ciVars != "" {
		if res := testenv.Do(t, w.mux, "POST", "/ci-data-upload?platform=github&run_id="+run, ciVars, w.key...); res.Status != 200 {
			t.Fatalf("ci-data: %d %s", res.Status, res.Body)
		}
	}
	w.env.Ingest(t, w.acme.ID, up.ScanID)
	return up.ScanID
}

// pullRequestVars are a GitHub Actions pull_request job's variables.
func (w *world) pullRequestVars() string {
	return fmt.Sprintf(`{"GITHUB_EVENT_NAME":"pull_request","GITHUB_REF":"refs/pull/%d/merge","GITHUB_HEAD_REF":"fix/refund",`+
		`"GITHUB_BASE_REF":"main","GITHUB_REPOSITORY":"%s/%s","GITHUB_SERVER_URL":%q,"GITHUB_SHA":%q}`,
		prNumber, owner, repo, w.host.HostURL(), headSHA)
}

// completed is the scan_completed event the scan's completion recorded.
func (w *world) completed(scanID string) schema.Event {
	return schema.Event{ID: "scan_completed-" + scanID, CompanyID: w.acme.ID, Type: "scan_completed", CreatedAt: time.Now(),
		Data: []byte(fmt.Sprintf(`{"scan_id":%q}`, scanID))}
}

func (w *world) dispatch(t *testing.T, ev schema.Event) {
	t.Helper()
	if failed := w.engine.Dispatch(context.Background(), []schema.Event{ev}); len(failed) > 0 {
		t.Fatalf("dispatch: %v", failed)
	}
}

func lastStatus(t *testing.T, h *githost.Server) githost.Status {
	t.Helper()
	st := h.Statuses(owner, repo, headSHA)
	if len(st) == 0 {
		t.Fatal("no status on the head commit")
	}
	return st[len(st)-1]
}

// A pull request that adds one critical finding to a project with twenty
// on main: a failing status on the head commit and one comment listing
// exactly that finding; the same delivery again posts nothing; a second
// scan after the fix edits the same comment, shows the finding fixed on
// the branch, and the status passes.
func TestDecoratesThePullRequest(t *testing.T) {
	w := newWorld(t)
	w.scan(t, "main", sarif(files(20)...), "")
	first := w.scan(t, "fix-refund", sarif(append(files(20), "api/refund.py")...), w.pullRequestVars())
	w.dispatch(t, w.completed(first))

	comments := w.host.IssueComments(owner, repo, prNumber)
	if len(comments) != 1 {
		t.Fatalf("%d comments, want 1", len(comments))
	}
	body := comments[0].Body
	t.Logf("the comment on pull request #%d:\n%s", prNumber, body)
	if !strings.HasPrefix(body, prdecor.Marker(1)) || !strings.Contains(body, "api/refund.py:12") || strings.Contains(body, "legacy/q") ||
		!strings.Contains(body, "**1 new**, 20 already on the base branch") || !strings.Contains(body, "no-new-criticals") ||
		!strings.Contains(body, "Suggested fix for ` api/refund.py:12 `") || !strings.Contains(body, "Pass the id as a query parameter") ||
		!strings.Contains(body, "-    db.execute(\"SELECT * FROM t WHERE id=\" + id)\n+    db.execute(\"SELECT * FROM t WHERE id=%s\", (id,))") {
		t.Fatalf("comment:\n%s", body)
	}
	if st := lastStatus(t, w.host); st.State != "failure" || st.Context != "codescan/payments" {
		t.Fatalf("status: %+v", st)
	}

	// The same event again (a redelivery): nothing is posted twice.
	requests := len(w.host.Requests())
	w.dispatch(t, w.completed(first))
	if n := len(w.host.Requests()); n != requests {
		t.Fatalf("a redelivered event sent %d more requests", n-requests)
	}

	second := w.scan(t, "fix-refund", sarif(files(20)...), w.pullRequestVars())
	w.dispatch(t, w.completed(second))
	comments = w.host.IssueComments(owner, repo, prNumber)
	t.Logf("the comment after the fix:\n%s", comments[0].Body)
	if len(comments) != 1 || !strings.Contains(comments[0].Body, "**Fixed on this branch**\n\n- ~~CR ` sqli ` ` api/refund.py:12 `~~") {
		t.Fatalf("after the fix: %d comments:\n%v", len(comments), comments)
	}
	if !strings.Contains(comments[0].Body, "**0 new**") {
		t.Fatalf("after the fix the comment still lists new findings:\n%s", comments[0].Body)
	}
	if st := lastStatus(t, w.host); st.State != "success" {
		t.Fatalf("status after the fix: %+v", st)
	}
	if n := len(w.host.RequestsFor("issues/create-comment")); n != 1 {
		t.Fatalf("%d comments created, want 1", n)
	}
}

// The CI metadata came after the scan completed: the completion finds no
// pull request, the metadata's pull_request_scan event decorates, once.
func TestLateMetadataDecoratesOnce(t *testing.T) {
	w := newWorld(t)
	id := w.scan(t, "fix-refund", sarif("api/refund.py"), "")
	w.dispatch(t, w.completed(id))
	if n := len(w.host.Requests()); n != 0 {
		t.Fatalf("a scan without a pull request sent %d requests", n)
	}
	// The client's late upload (the scan is complete): its event.
	run := w.runOf(t, id)
	if res := testenv.Do(t, w.mux, "POST", "/ci-data-upload?platform=github&run_id="+run, w.pullRequestVars(), w.key...); res.Status != 200 {
		t.Fatalf("ci-data: %d %s", res.Status, res.Body)
	}
	late := schema.Event{ID: pullrequest.EventID(id), CompanyID: w.acme.ID, Type: pullrequest.EventType, CreatedAt: time.Now(),
		Data: []byte(fmt.Sprintf(`{"scan_id":%q}`, id))}
	w.dispatch(t, late)
	w.dispatch(t, w.completed(id)) // the completion redelivered: the same delivery
	if n := len(w.host.RequestsFor("issues/create-comment")); n != 1 || lastStatus(t, w.host).State != "failure" {
		t.Fatalf("%d comments created, status %+v", n, w.host.Statuses(owner, repo, headSHA))
	}
}

func (w *world) runOf(t *testing.T, scanID string) string {
	t.Helper()
	sc, err := w.env.Store.Scans.GetScan(context.Background(), w.acme.ID, scanID)
	if err != nil {
		t.Fatal(err)
	}
	return sc.RunID
}

// The host's secondary rate limit: the attempt is scheduled at its
// Retry-After, nothing is dropped, and the retry posts one comment.
func TestRateLimitIsWaitedOut(t *testing.T) {
	w := newWorld(t)
	id := w.scan(t, "fix-refund", sarif("api/refund.py"), w.pullRequestVars())
	now := time.Now()
	w.engine.Now = func() time.Time { return now }
	w.host.SecondaryRateLimit(1)
	w.dispatch(t, w.completed(id))
	if n := len(w.host.IssueComments(owner, repo, prNumber)); n != 0 {
		t.Fatalf("%d comments while limited", n)
	}
	ran, err := w.engine.RunDue(context.Background())
	if err != nil || ran != 0 {
		t.Fatalf("a retry ran before the host's Retry-After: %d %v", ran, err)
	}
	now = now.Add(2 * time.Second) // GitHub's Retry-After: 1
	if ran, err := w.engine.RunDue(context.Background()); err != nil || ran != 1 {
		t.Fatalf("retry: %d %v", ran, err)
	}
	if n := len(w.host.IssueComments(owner, repo, prNumber)); n != 1 || lastStatus(t, w.host).State != "failure" {
		t.Fatalf("after the retry: %d comments", n)
	}
	// The integration's delivery log: the limited attempt, then the one
	// that went through, newest first.
	ins, err := w.env.Store.Catalog.AllIntegrations(context.Background(), w.acme.ID)
	if err != nil || len(ins) != 1 {
		t.Fatalf("integrations: %v %v", ins, err)
	}
	logPage, err := w.env.Store.Deliveries.ListAttempts(context.Background(), w.acme.ID, ins[0].UUID, "", page.Request{Limit: 10})
	log := logPage.Items
	if err != nil || len(log) != 2 || log[0].Outcome != delivery.AttemptSucceeded || log[1].Outcome != delivery.AttemptFailed ||
		log[1].StatusCode != http.StatusForbidden || log[1].NextRetryAt == "" {
		t.Fatalf("delivery log: %+v %v", log, err)
	}
}

// Integrations that do not match the repository (another org, another
// host, another company's) decorate nothing.
func TestOnlyTheMatchingIntegrationDecorates(t *testing.T) {
	w := newWorld(t)
	other := w.env.Company(t, "Globex")
	ctx := context.Background()
	in := schema.Integration{CompanyID: other.ID, UUID: catalog.NewIntegrationUUID(), Name: "GitHub", AccountID: "2", AccountName: "globex-bot",
		BaseURL: w.host.HostURL(), GatewayPrefix: w.host.Prefix(), SealedToken: "x"}
	if _, err := w.env.Store.Catalog.CreateIntegration(ctx, in); err != nil {
		t.Fatal(err)
	}
	vars := strings.Replace(w.pullRequestVars(), `"acme/payments"`, `"mallory/payments"`, 1)
	id := w.scan(t, "fix-refund", sarif("api/refund.py"), vars)
	w.dispatch(t, w.completed(id))
	if n := len(w.host.Requests()); n != 0 {
		t.Fatalf("an integration whose allow-list leaves the owner out sent %d requests", n)
	}
	for _, c := range []struct {
		in schema.Integration
		pr pullrequest.PullRequest
	}{
		{schema.Integration{BaseURL: "https://api.github.com"}, pullrequest.PullRequest{Provider: "github", Host: "github.com", Repo: "a/b"}},
		{schema.Integration{BaseURL: "https://ghe.acme.example", OrgAllowlist: []string{"a"}}, pullrequest.PullRequest{Provider: "github", Host: "ghe.acme.example", Repo: "A/b"}},
	} {
		if !prdecor.Matches(c.in, c.pr) {
			t.Errorf("%+v should decorate %+v", c.in, c.pr)
		}
	}
	for _, c := range []struct {
		in schema.Integration
		pr pullrequest.PullRequest
	}{
		{schema.Integration{BaseURL: "https://api.github.com", Expired: true}, pullrequest.PullRequest{Provider: "github", Host: "github.com", Repo: "a/b"}},
		{schema.Integration{BaseURL: "https://evil.example"}, pullrequest.PullRequest{Provider: "github", Host: "github.com", Repo: "a/b"}},
		{schema.Integration{BaseURL: "https://api.github.com", OrgAllowlist: []string{"x"}}, pullrequest.PullRequest{Provider: "github", Host: "github.com", Repo: "a/b"}},
		{schema.Integration{BaseURL: "https://gitlab.com"}, pullrequest.PullRequest{Provider: "gitlab", Host: "gitlab.com", Repo: "a/b"}},
	} {
		if prdecor.Matches(c.in, c.pr) {
			t.Errorf("%+v should not decorate %+v", c.in, c.pr)
		}
	}
}

func (w *world) decorator() *prdecor.Decorator { return w.dec }

// A comment of someone else that starts with the marker is never taken for
// ours (a token that may edit others' comments would overwrite it); a link
// lost finds our comment by marker and author and edits it.
func TestCommentFoundByMarkerAndAuthor(t *testing.T) {
	w := newWorld(t)
	fake := prdecor.Marker(1) + "\nfake summary"
	w.host.AddIssueComment(owner, repo, prNumber, "mallory", fake)
	id := w.scan(t, "fix-refund", sarif("api/refund.py"), w.pullRequestVars())
	w.dispatch(t, w.completed(id))
	comments := w.host.IssueComments(owner, repo, prNumber)
	if len(comments) != 2 || comments[0].Body != fake || comments[1].User != "codescan-bot" ||
		!strings.Contains(comments[1].Body, "api/refund.py:12") {
		t.Fatalf("comments: %+v", comments)
	}
	if n := len(w.host.RequestsFor("issues/update-comment")); n != 0 {
		t.Fatalf("%d comments edited, want none", n)
	}
}

func TestLostLinkEditsOurCommentFoundByMarker(t *testing.T) {
	w := newWorld(t)
	fake := prdecor.Marker(1) + "\nfake summary"
	w.host.AddIssueComment(owner, repo, prNumber, "mallory", fake)
	ours := w.host.AddIssueComment(owner, repo, prNumber, "codescan-bot", prdecor.Marker(1)+"\na summary whose link was lost")
	id := w.scan(t, "fix-refund", sarif("api/refund.py"), w.pullRequestVars())
	w.dispatch(t, w.completed(id))
	comments := w.host.IssueComments(owner, repo, prNumber)
	if len(comments) != 2 || comments[0].Body != fake || comments[1].ID != ours.ID || !strings.Contains(comments[1].Body, "api/refund.py:12") {
		t.Fatalf("comments: %+v", comments)
	}
	if n := len(w.host.RequestsFor("issues/create-comment")); n != 0 {
		t.Fatalf("%d comments created, want ours edited", n)
	}
}
