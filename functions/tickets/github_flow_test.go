package tickets_test

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/acme/codescan-api/internal/testenv"
	"github.com/acme/codescan-api/internal/trackerhost"
	"github.com/acme/codescan-api/shared/store/catalog"
	"github.com/acme/codescan-api/shared/store/schema"
	storetickets "github.com/acme/codescan-api/shared/store/tickets"
	ticketing "github.com/acme/codescan-api/shared/tickets"
)

const (
	ghToken  = "ghp-tickets-token"
	ghLogin  = "codescan-bot"
	ghSecret = "github-webhook-secret-0123"
	ghRepo   = "acme/payments"
)

// scmIntegration stores a source-code-host integration with host, its
// token and webhook secret sealed as the integrations routes seal them.
func (w *world) scmIntegration(t *testing.T, host *trackerhost.GitHub) schema.Integration {
	t.Helper()
	ctx := context.Background()
	in := schema.Integration{CompanyID: w.acme.ID, UUID: catalog.NewIntegrationUUID(), Name: "GitHub", AccountID: "1", AccountName: ghLogin, BaseURL: host.URL()}
	var err error
	if in.SealedToken, err = w.sealer.Seal(ctx, ghToken, catalog.IntegrationTokenRecord(w.acme.ID, in.UUID)); err != nil {
		t.Fatal(err)
	}
	if in, err = w.env.Store.Catalog.CreateIntegration(ctx, in); err != nil {
		t.Fatal(err)
	}
	secret, err := w.sealer.Seal(ctx, ghSecret, catalog.IntegrationWebhookRecord(w.acme.ID, in.UUID))
	if err != nil {
		t.Fatal(err)
	}
	if in, err = w.env.Store.Catalog.UpdateIntegration(ctx, w.acme.ID, in.UUID, in.Revision, catalog.IntegrationChange{SealedWebhookSecret: &secret}); err != nil {
		t.Fatal(err)
	}
	return in
}

// One GitHub issue per finding, once: the host answers 502 to a create
// after making the issue, and the retry finds it by its hidden marker
// (issue search) instead of opening another. Closed as not planned
// through a signed issues event, the finding's risk is accepted; the
// event of our own account is an echo; a person's triage shows as a
// comment. Every request is validated against GitHub's description.
func TestGitHubIssuesOnceAndBack(t *testing.T) {
	w := newWorld(t)
	host := trackerhost.NewGitHub(t, ghToken, ghLogin)
	in := w.scmIntegration(t, host)
	w.rule(t, `{"matcher":{"cwe":"CWE-89"},"destination":{"kind":"github","integration_uuid":"`+in.UUID+`","repository":"`+ghRepo+`"},"grouping":"finding","labels":["security"]}`)
	host.FailAfter("issues/create", 1)
	w.dispatch(t, w.scan(t, report(18))) // 3 CWE-89 findings
	w.retry(t)
	issues := host.Issues(ghRepo)
	if len(issues) != 3 || host.Count("issues/create") != 3 || len(w.links(t)) != 3 {
		t.Fatalf("%d issues, %d creates, %d links; want 3", len(issues), host.Count("issues/create"), len(w.links(t)))
	}
	for _, i := range issues {
		if !strings.HasPrefix(i.Body, "<!-- codescan:ticket rule=") || len(i.Labels) != 1 || i.Labels[0] != "security" {
			t.Fatalf("issue %d: %q %v", i.Number, i.Body, i.Labels)
		}
	}
	if host.Count("search/issues-and-pull-requests") != 4 {
		t.Fatalf("%d marker searches, want one per group and one for the retry", host.Count("search/issues-and-pull-requests"))
	}
	events := "/integrations/scm-provider/" + in.UUID + "/ticket-events"
	key := ghRepo + "#1"
	l := w.linkOf(t, key)

	// A person triages the finding in our API: a comment on its issue.
	res := testenv.Do(t, w.mux, "PATCH", "/issue/"+l.IssueIDs[0], `{"status":"false_positive","reason":"test fixture"}`, w.key...)
	if res.Status != 200 || !strings.Contains(string(res.Body), `"tickets":[{"system":"github","key":"`+key+`"`) {
		t.Fatalf("triage: %d %s", res.Status, res.Body)
	}
	ev := schema.Event{ID: fmt.Sprintf("issue_status_changed-%s-v2", l.IssueIDs[0]), CompanyID: w.acme.ID, Type: "issue_status_changed",
		Data: []byte(fmt.Sprintf(`{"issue_id":%q,"status":"false_positive","changed_by":%d}`, l.IssueIDs[0], w.acme.Admin.ID))}
	if failed := w.engine.Dispatch(context.Background(), []schema.Event{ev}); len(failed) > 0 {
		t.Fatal(failed)
	}
	if c := host.Issues(ghRepo)[0].Comments; len(c) != 1 || !strings.Contains(c[0], "false_positive") || !strings.HasPrefix(c[0], ticketing.ReplyMarker) {
		t.Fatalf("triage comment: %q", c)
	}

	// Closed as not planned by a person: the second finding's risk accepted.
	key2 := ghRepo + "#2"
	host.SetState(ghRepo, 2, "closed", "not_planned")
	body := host.IssuesEvent("closed", ghRepo, 2, "octo-dev")
	res = w.postSigned(t, events, "X-Hub-Signature-256", ghSecret, "X-GitHub-Delivery", "g-1", body, "X-GitHub-Event", "issues")
	if res.Status != http.StatusOK || !strings.Contains(string(res.Body), `"applied"`) {
		t.Fatalf("closed: %d %s", res.Status, res.Body)
	}
	if got := w.statuses(t, w.linkOf(t, key2), "from GitHub issue "+key2); got["accepted_risk"] != 1 {
		t.Fatalf("finding of %s: %v", key2, got)
	}
	// Closed as completed by a person: left open until a scan confirms it.
	host.SetState(ghRepo, 3, "closed", "completed")
	body = host.IssuesEvent("closed", ghRepo, 3, "octo-dev")
	w.postSigned(t, events, "X-Hub-Signature-256", ghSecret, "X-GitHub-Delivery", "g-2", body, "X-GitHub-Event", "issues")
	l3 := w.linkOf(t, ghRepo+"#3")
	if got := w.statuses(t, l3, ""); got["open"] != 1 || storetickets.View(l3).State != "fix_in_progress" {
		t.Fatalf("closed as completed: %v %+v", got, storetickets.View(l3))
	}
	// Our own account's change, and a forged delivery: nothing.
	host.SetState(ghRepo, 1, "closed", "not_planned")
	echo := host.IssuesEvent("closed", ghRepo, 1, ghLogin)
	if res := w.postSigned(t, events, "X-Hub-Signature-256", ghSecret, "X-GitHub-Delivery", "g-3", echo, "X-GitHub-Event", "issues"); !strings.Contains(string(res.Body), `"echo"`) {
		t.Fatalf("echo: %s", res.Body)
	}
	forged := host.IssuesEvent("closed", ghRepo, 1, "octo-dev")
	if res := w.postSigned(t, events, "X-Hub-Signature-256", "another-secret-000000", "X-GitHub-Delivery", "g-4", forged, "X-GitHub-Event", "issues"); res.Status != 401 {
		t.Fatalf("forged: %d %s", res.Status, res.Body)
	}
	if got := w.statuses(t, w.linkOf(t, key), ""); got["false_positive"] != 1 {
		t.Fatalf("finding of %s after an echo and a forgery: %v", key, got)
	}
	testenv.Recount(t, w.env.Store, w.acme.ID)
}
