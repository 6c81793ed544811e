package integrations_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/google/uuid"

	"github.com/acme/codescan-api/functions/integrations"
	"github.com/acme/codescan-api/internal/githost"
	"github.com/acme/codescan-api/internal/registry"
	"github.com/acme/codescan-api/internal/testenv"
	"github.com/acme/codescan-api/shared/deliveryengine"
	"github.com/acme/codescan-api/shared/outbound"
	"github.com/acme/codescan-api/shared/prdecor"
	"github.com/acme/codescan-api/shared/prtriage"
	"github.com/acme/codescan-api/shared/routes"
	"github.com/acme/codescan-api/shared/scmhost"
	"github.com/acme/codescan-api/shared/secrets"
	"github.com/acme/codescan-api/shared/store/catalog"
	"github.com/acme/codescan-api/shared/store/findings"
	"github.com/acme/codescan-api/shared/store/schema"
)

const (
	hookOwner, hookRepo = "acme", "payments"
	hookPR              = 7
	hookHeadSHA         = "9fceb02d0ae598e95dc970b74767f19372d61af8"
	acmeToken           = "ghp_AcmeBotT0ken000000000000000000000001"
	globexToken         = "ghp_GlobexBotT0ken00000000000000000000002"
	acmeSecret          = "whsec-acme-0123456789abcdef"
	globexSecret        = "whsec-globex-0123456789abcdef"
)

// hookWorld is a company whose pull request #7 was scanned and decorated
// through its integration with a loopback GitHub, the integration's
// webhook secret set, and users linked to host logins.
type hookWorld struct {
	env      *testenv.Env
	mux      http.Handler // every group, for uploads and users
	h        http.Handler // the integrations group, with the test's sealer
	host     *githost.Server
	sealer   secrets.Sealer
	acme     *testenv.Company
	in       schema.Integration
	triager  testenv.User // issues.triage_issue, linked as Octo-Dev
	reader   testenv.User // no triage, linked as read-only-rita
	refs     []string     // the summary's refs, urgent first
	nextUser int64
}

func newHookWorld(t *testing.T) *hookWorld {
	t.Helper()
	env := testenv.New(t)
	w := &hookWorld{env: env, mux: registry.Mux(env.Deps), sealer: testenv.Sealer(t), nextUser: 5000,
		host: githost.New(t, githost.WithToken(acmeToken, "acme-bot"), githost.WithToken(globexToken, "globex-bot"))}
	w.h = integrations.NewWithOptions(env.Deps, integrations.Options{Sealer: w.sealer,
		Host: scmhost.New(scmhost.Options{AllowLoopback: true, Timeout: 5 * time.Second})})
	w.acme = env.Company(t, "Acme")
	w.host.AddPullRequest(hookOwner, hookRepo, githost.PullRequest{Number: hookPR, HeadSHA: hookHeadSHA})
	w.in = w.integration(t, w.acme, acmeToken, fmt.Sprint(w.host.AccountID(acmeToken)), "acme")
	w.setSecret(t, w.acme, w.in, acmeSecret)
	w.triager = env.User(t, w.acme, testenv.UserSpec{Email: "dev@acme.test", Permissions: []string{routes.PermTriageIssue}})
	w.reader = env.User(t, w.acme, testenv.UserSpec{Email: "rita@acme.test", Permissions: []string{routes.PermViewIntegration}})
	w.link(t, w.acme, w.triager, "Octo-Dev")
	w.link(t, w.acme, w.reader, "read-only-rita")
	w.decorate(t)
	return w
}

// integration stores an integration with the loopback host, its token
// sealed as the integrations routes seal it.
func (w *hookWorld) integration(t *testing.T, co *testenv.Company, token, accountID, org string) schema.Integration {
	t.Helper()
	return w.storeIntegration(t, schema.Integration{CompanyID: co.ID, Name: "GitHub", AccountID: accountID, AccountName: org + "-bot",
		OrgAllowlist: []string{org}, BaseURL: w.host.HostURL(), GatewayPrefix: w.host.Prefix()}, token)
}

// storeIntegration stores in under a new uuid, token sealed to it.
func (w *hookWorld) storeIntegration(t *testing.T, in schema.Integration, token string) schema.Integration {
	t.Helper()
	ctx := context.Background()
	in.UUID = catalog.NewIntegrationUUID()
	sealed, err := w.sealer.Seal(ctx, token, catalog.IntegrationTokenRecord(in.CompanyID, in.UUID))
	if err != nil {
		t.Fatal(err)
	}
	in.SealedToken = sealed
	if in, err = w.env.Store.Catalog.CreateIntegration(ctx, in); err != nil {
		t.Fatal(err)
	}
	return in
}

// setSecret sets the integration's webhook secret through the API.
func (w *hookWorld) setSecret(t *testing.T, co *testenv.Company, in schema.Integration, secret string) {
	t.Helper()
	res := testenv.Do(t, w.h, "PATCH", "/integrations/scm-provider/"+in.UUID, fmt.Sprintf(`{"webhook_secret":%q}`, secret), testenv.Key(co.Admin)...)
	if res.Status != http.StatusOK || !strings.Contains(string(res.Body), `"webhook_secret_set":true`) || strings.Contains(string(res.Body), secret) {
		t.Fatalf("webhook secret: %d %s", res.Status, res.Body)
	}
}

// link sets a user's scm_login through the API.
func (w *hookWorld) link(t *testing.T, co *testenv.Company, u testenv.User, login string) {
	t.Helper()
	res := testenv.Do(t, w.mux, "PATCH", "/users/"+strconv.FormatInt(u.ID, 10), fmt.Sprintf(`{"scm_login":%q}`, login), testenv.Key(co.Admin)...)
	if res.Status != http.StatusOK || !strings.Contains(string(res.Body), `"scm_login":"`+strings.ToLower(login)+`"`) {
		t.Fatalf("link %s: %d %s", login, res.Status, res.Body)
	}
}

func hookSARIF(files ...string) string {
	var results []string
	for _, f := range files {
		results = append(results, fmt.Sprintf(`{"ruleId":"sqli","message":{"text":"Raw SQL in %s"},`+
			`"locations":[{"physicalLocation":{"artifactLocation":{"uri":%q},"region":{"startLine":12}}}]}`, f, f))
	}
	return `{"version":"2.1.0","runs":[{"tool":{"driver":{"name":"Semgrep OSS","rules":[{"id":"sqli","shortDescription":{"text":"Raw SQL"},` +
		`"properties":{"security-severity":"9.8","tags":["CWE-89"]}}]}},"results":[` + strings.Join(results, ",") + `]}]}`
}

// scan uploads a report of branch (with the pull request's CI variables
// when pr), ingests it and returns its id.
func (w *hookWorld) scan(t *testing.T, branch, report string, pr bool) string {
	t.Helper()
	run := uuid.NewString()
	key := testenv.Key(w.acme.Admin)
	res := testenv.Do(t, w.mux, "POST", "/scan-upload?engine=sarif&project=payments&branch="+branch+"&run_id="+run, report, key...)
	var up struct {
		ScanID string `json:"sast_scan_id"`
	}
	res.Decode(t, &up)
	if res.Status != 200 || up.ScanID == "" {
		t.Fatalf("upload: %d %s", res.Status, res.Body)
	}
	if pr {
		vars := fmt.Sprintf(`{"GITHUB_EVENT_NAME":"pull_request","GITHUB_REF":"refs/pull/%d/merge","GITHUB_HEAD_REF":"fix/refund",`+
			`"GITHUB_BASE_REF":"main","GITHUB_REPOSITORY":"%s/%s","GITHUB_SERVER_URL":%q,"GITHUB_SHA":%q}`, hookPR, hookOwner, hookRepo, w.host.HostURL(), hookHeadSHA)
		if res := testenv.Do(t, w.mux, "POST", "/ci-data-upload?platform=github&run_id="+run, vars, key...); res.Status != 200 {
			t.Fatalf("ci-data: %d %s", res.Status, res.Body)
		}
	}
	w.env.Ingest(t, w.acme.ID, up.ScanID)
	return up.ScanID
}

var refCell = regexp.MustCompile("(?m)^\\| ` ([0-9a-f]{8}) ` \\|")

// decorate scans main and the pull request's branch (two new findings),
// has the dispatcher decorate the pull request, and reads the refs of the
// summary comment it posted.
func (w *hookWorld) decorate(t *testing.T) {
	t.Helper()
	w.scan(t, "main", hookSARIF("legacy/q1.py"), false)
	id := w.scan(t, "fix-refund", hookSARIF("legacy/q1.py", "api/refund.py", "api/charge.py"), true)
	engine := &deliveryengine.Engine{Store: deliveryengine.StoreOf(w.env.Store), Sealer: w.sealer, Log: slog.New(slog.NewTextHandler(io.Discard, nil)),
		Backoff: deliveryengine.Backoff{Base: 20 * time.Millisecond, Max: 100 * time.Millisecond, Horizon: time.Hour},
		Outbound: []outbound.Channel{&prdecor.Decorator{Store: prdecor.StoreOf(w.env.Store), Sealer: w.sealer,
			Host: scmhost.New(scmhost.Options{AllowLoopback: true, Timeout: 5 * time.Second})}}}
	ev := schema.Event{ID: "scan_completed-" + id, CompanyID: w.acme.ID, Type: "scan_completed", CreatedAt: time.Now(), Data: []byte(fmt.Sprintf(`{"scan_id":%q}`, id))}
	if failed := engine.Dispatch(context.Background(), []schema.Event{ev}); len(failed) > 0 {
		t.Fatalf("dispatch: %v", failed)
	}
	comments := w.host.IssueComments(hookOwner, hookRepo, hookPR)
	if len(comments) != 1 {
		t.Fatalf("%d comments after the decoration, want the summary", len(comments))
	}
	for _, m := range refCell.FindAllStringSubmatch(comments[0].Body, -1) {
		w.refs = append(w.refs, m[1])
	}
	if len(w.refs) != 2 {
		t.Fatalf("refs %v in the summary:\n%s", w.refs, comments[0].Body)
	}
}

// comment writes a comment as login on the pull request (on the host) and
// returns its issue_comment payload, as GitHub would deliver it.
func (w *hookWorld) comment(t *testing.T, login, body string) map[string]any {
	t.Helper()
	c := w.host.AddIssueComment(hookOwner, hookRepo, hookPR, login, body)
	w.nextUser++
	return githost.IssueCommentCreated(githost.IssueCommentEvent{Owner: hookOwner, Repo: hookRepo, RepoID: 77, Number: hookPR, PullRequest: true,
		CommentID: c.ID, Body: body, Login: login, UserID: w.nextUser, WebURL: w.host.HostURL(), APIURL: strings.TrimSuffix(w.host.URL(), "/")})
}

// post sends a delivery to an integration's events route.
func (w *hookWorld) post(t *testing.T, integrationUUID string, body []byte, h http.Header) *testenv.Response {
	t.Helper()
	var pairs []string
	for k, vs := range h {
		pairs = append(pairs, k, vs[0])
	}
	return testenv.DoBytes(t, w.h, "POST", "/integrations/scm-provider/"+integrationUUID+"/events", body, pairs...)
}

// deliver signs payload with secret as GitHub does and posts it; it
// wants 200 and returns the answer's result.
func (w *hookWorld) deliver(t *testing.T, integrationUUID, secret, event string, payload any) string {
	t.Helper()
	body, h := githost.SignedEvent([]byte(secret), event, payload)
	res := w.post(t, integrationUUID, body, h)
	var out struct {
		Status, Result string
	}
	res.Decode(t, &out)
	if res.Status != http.StatusOK || out.Status != "ok" {
		t.Fatalf("delivery: %d %s", res.Status, res.Body)
	}
	return out.Result
}

// issue reads the issue a ref names, with its history.
func (w *hookWorld) issue(t *testing.T, ref string) (findings.Issue, []findings.HistoryEntry) {
	t.Helper()
	ctx := context.Background()
	var found findings.Issue
	err := w.env.Store.Lists.EachIssue(ctx, w.acme.ID, func(i findings.Issue) error {
		if strings.HasPrefix(i.ID, ref) && i.Branch == "fix-refund" {
			found = i
		}
		return nil
	})
	if err != nil || found.ID == "" {
		t.Fatalf("no issue %s: %v", ref, err)
	}
	i, err := w.env.Store.Lists.GetIssue(ctx, w.acme.ID, found.ID)
	if err != nil {
		t.Fatal(err)
	}
	h, err := w.env.Store.Lists.IssueHistory(ctx, w.acme.ID, found.ID)
	if err != nil {
		t.Fatal(err)
	}
	return i, h
}

// replies are the comments on the pull request after the summary.
func (w *hookWorld) replies() []githost.IssueComment {
	var out []githost.IssueComment
	for _, c := range w.host.IssueComments(hookOwner, hookRepo, hookPR) {
		if strings.HasPrefix(c.Body, prtriage.ReplyMarker) {
			out = append(out, c)
		}
	}
	return out
}

// lastReply is the newest reply, which must say want.
func (w *hookWorld) lastReply(t *testing.T, want string) {
	t.Helper()
	r := w.replies()
	if len(r) == 0 || !strings.Contains(r[len(r)-1].Body, want) {
		t.Fatalf("replies %+v, want the last to say %q", r, want)
	}
}

// table reads every item of the test table, sorted, to compare states.
func (w *hookWorld) table(t *testing.T) []string {
	t.Helper()
	var out []string
	p := dynamodb.NewScanPaginator(w.env.Store.Client(), &dynamodb.ScanInput{TableName: aws.String(w.env.Store.TableName()), ConsistentRead: aws.Bool(true)})
	for p.HasMorePages() {
		page, err := p.NextPage(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		for _, item := range page.Items {
			b, err := json.Marshal(item)
			if err != nil {
				t.Fatal(err)
			}
			out = append(out, string(b))
		}
	}
	slices.Sort(out)
	return out
}
