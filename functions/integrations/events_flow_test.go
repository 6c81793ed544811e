package integrations_test

import (
	"context"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/acme/codescan-api/functions/integrations"
	"github.com/acme/codescan-api/internal/githost"
	"github.com/acme/codescan-api/internal/testenv"
	"github.com/acme/codescan-api/shared/prtriage"
	"github.com/acme/codescan-api/shared/routes"
	"github.com/acme/codescan-api/shared/store/catalog"
	"github.com/acme/codescan-api/shared/store/page"
	"github.com/acme/codescan-api/shared/store/schema"
	"github.com/acme/codescan-api/shared/store/tenancy"
)

// A linked triager's `/codescan ignore <ref> <reason>` triages the finding
// once: through the issue write path (history naming the pull request and
// the login, the audit log the user by way of the comment, counters
// exact), acknowledged with a reaction. The same delivery again, the same
// signed body under a new delivery id, and the same command in a new
// comment change nothing more.
func TestIgnoreFromTheReview(t *testing.T) {
	t.Parallel()
	w := newHookWorld(t)
	ref := w.refs[0]
	before, hist0 := w.issue(t, ref)
	if before.Status != "open" {
		t.Fatalf("the finding starts %s", before.Status)
	}
	payload := w.comment(t, "Octo-Dev", "/codescan ignore "+ref+" test fixture, never deployed\nThanks for the scan!")
	body, h := githost.SignedEvent([]byte(acmeSecret), "issue_comment", payload)
	if res := w.post(t, w.in.UUID, body, h); res.Status != http.StatusOK || !strings.Contains(string(res.Body), `"result":"triaged"`) {
		t.Fatalf("command: %d %s", res.Status, res.Body)
	}
	after, hist := w.issue(t, ref)
	const why = "test fixture, never deployed (from pull request #7 by Octo-Dev)"
	if after.Status != "false_positive" || after.Reason != why {
		t.Fatalf("issue after the command: %s %q", after.Status, after.Reason)
	}
	if len(hist) != len(hist0)+1 {
		t.Fatalf("%d history entries, want %d", len(hist), len(hist0)+1)
	}
	last := hist[len(hist)-1]
	if last.By.UserID != w.triager.ID || last.From != "open" || last.To != "false_positive" || last.Reason != why {
		t.Fatalf("history entry %+v", last)
	}
	testenv.Recount(t, w.env.Store, w.acme.ID)
	w.auditedOnce(t, after.ID)
	w.reacted(t, payload, 1)
	if r := w.replies(); len(r) != 0 {
		t.Fatalf("a carried-out command got a reply: %+v", r)
	}

	// A replayed delivery, and the same signed body under a new delivery id.
	if res := w.post(t, w.in.UUID, body, h); !strings.Contains(string(res.Body), `"result":"duplicate"`) {
		t.Fatalf("replay: %d %s", res.Status, res.Body)
	}
	if got := w.deliver(t, w.in.UUID, acmeSecret, "issue_comment", payload); got != "duplicate" {
		t.Fatalf("the same comment under a new delivery id: %s", got)
	}
	// The same command in a new comment: already so, nothing changes.
	again := w.comment(t, "Octo-Dev", "/codescan ignore "+ref+" test fixture, never deployed")
	if got := w.deliver(t, w.in.UUID, acmeSecret, "issue_comment", again); got != prtriage.Unchanged {
		t.Fatalf("the command again: %s", got)
	}
	w.lastReply(t, "already `false_positive`")
	if _, h2 := w.issue(t, ref); len(h2) != len(hist) {
		t.Fatalf("%d history entries after the repeats, want %d", len(h2), len(hist))
	}
	w.reacted(t, payload, 1)
	w.auditedOnce(t, after.ID)
	testenv.Recount(t, w.env.Store, w.acme.ID)
}

// `/codescan accept-risk <ref> <days> <reason>` accepts the risk for that
// many days, owned by the linked user (the login matched ignoring case).
func TestAcceptRiskFromTheReview(t *testing.T) {
	t.Parallel()
	w := newHookWorld(t)
	ref := w.refs[1]
	_, hist0 := w.issue(t, ref)
	payload := w.comment(t, "octo-dev", "/codescan accept-risk "+ref+" 30 only reachable from the VPN")
	start := time.Now()
	if got := w.deliver(t, w.in.UUID, acmeSecret, "issue_comment", payload); got != prtriage.Triaged {
		t.Fatalf("command: %s", got)
	}
	i, hist := w.issue(t, ref)
	end, err := time.Parse(time.RFC3339, i.ExpiresAt)
	want := start.AddDate(0, 0, 30)
	if i.Status != "accepted_risk" || err != nil || end.Before(want.Add(-2*time.Second)) || end.After(want.Add(time.Minute)) || i.Owner != w.triager.ID {
		t.Fatalf("accepted risk: %s until %s (want ~%s) owner %d: %v", i.Status, i.ExpiresAt, want.UTC().Format(time.RFC3339), i.Owner, err)
	}
	last := hist[len(hist)-1]
	if len(hist) != len(hist0)+1 || last.To != "accepted_risk" || last.AcceptedUntil != i.ExpiresAt ||
		last.Reason != "only reachable from the VPN (from pull request #7 by octo-dev)" {
		t.Fatalf("history %+v", hist)
	}
	w.reacted(t, payload, 1)
	testenv.Recount(t, w.env.Store, w.acme.ID)
}

// Commands the service does not carry out change no issue and are
// answered on the pull request with why.
func TestRefusedCommandsChangeNothing(t *testing.T) {
	t.Parallel()
	w := newHookWorld(t)
	ref := w.refs[0]
	inactive := w.env.User(t, w.acme, testenv.UserSpec{Email: "gone@acme.test", Permissions: []string{routes.PermTriageIssue}, Inactive: true})
	w.link(t, w.acme, inactive, "gone-gary")
	before, hist0 := w.issue(t, ref)
	cases := []struct{ login, body, reply string }{
		{"stranger", "/codescan ignore " + ref + " not mine to say", "`stranger` is not linked"},
		{"gone-gary", "/codescan ignore " + ref + " I left", "`gone-gary` is not linked"},
		{"read-only-rita", "/codescan ignore " + ref + " looks fine to me", "may not triage findings (`issues.triage_issue`)"},
		{"Octo-Dev", "/codescan ignore deadbeefdead not in the summary", "no finding of this pull request's Codescan summary has the reference `deadbeefdead`"},
		{"Octo-Dev", "/codescan ignore " + ref, "A reason is required"},
		{"Octo-Dev", "/codescan accept-risk " + ref + " 400 too long", "1 to 365"},
		{"Octo-Dev", "/codescan snooze " + ref + " later", "Unknown command"},
	}
	for n, c := range cases {
		if got := w.deliver(t, w.in.UUID, acmeSecret, "issue_comment", w.comment(t, c.login, c.body)); got != prtriage.Refused {
			t.Fatalf("%q by %s: %s", c.body, c.login, got)
		}
		w.lastReply(t, c.reply)
		if r := w.replies(); len(r) != n+1 {
			t.Fatalf("%d replies after %d refusals", len(r), n+1)
		}
	}
	after, hist := w.issue(t, ref)
	if after.Status != before.Status || after.Reason != before.Reason || len(hist) != len(hist0) {
		t.Fatalf("a refused command changed the issue: %s %q, %d history entries", after.Status, after.Reason, len(hist))
	}
	if n := len(w.host.RequestsFor("reactions/create-for-issue-comment")); n != 0 {
		t.Fatalf("%d reactions to refused commands", n)
	}
	testenv.Recount(t, w.env.Store, w.acme.ID)
}

// Deliveries that are not the host's are refused before anything is
// read, with one answer whatever is wrong, and nothing is written nor
// posted: a forged or missing signature, a body changed after signing,
// an unknown uuid, and another company's integration signed with ours.
func TestForgedDeliveriesAreRefused(t *testing.T) {
	t.Parallel()
	w := newHookWorld(t)
	globex := w.env.Company(t, "Globex")
	theirs := w.integration(t, globex, globexToken, fmt.Sprint(w.host.AccountID(globexToken)), "acme")
	w.setSecret(t, globex, theirs, globexSecret)
	payload := w.comment(t, "Octo-Dev", "/codescan ignore "+w.refs[0]+" forged")
	snapshot := w.table(t)
	requests := len(w.host.Requests())

	signed, h := githost.SignedEvent([]byte(acmeSecret), "issue_comment", payload)
	tampered := []byte(strings.Replace(string(signed), "forged", "FORGED", 1))
	wrong, wrongH := githost.SignedEvent([]byte("not-the-secret-0123456789"), "issue_comment", payload)
	unsigned, unsignedH := githost.SignedEvent(nil, "issue_comment", payload)
	garbled := h.Clone()
	garbled.Set("X-Hub-Signature-256", "sha256=zz"+strings.TrimPrefix(h.Get("X-Hub-Signature-256"), "sha256=")[2:])
	sha1Only := h.Clone()
	sha1Only.Del("X-Hub-Signature-256")
	cases := []struct {
		name, uuid string
		body       []byte
		h          map[string][]string
	}{
		{"wrong secret", w.in.UUID, wrong, wrongH},
		{"no signature", w.in.UUID, unsigned, unsignedH},
		{"legacy SHA-1 signature only", w.in.UUID, signed, sha1Only},
		{"not hex", w.in.UUID, signed, garbled},
		{"body changed after signing", w.in.UUID, tampered, h},
		{"unknown integration", catalog.NewIntegrationUUID(), signed, h},
		{"another company's integration, our secret", theirs.UUID, signed, h},
	}
	for _, c := range cases {
		res := w.post(t, c.uuid, c.body, c.h)
		if res.Status != http.StatusUnauthorized || strings.TrimSpace(string(res.Body)) != `{"error":"Missing or invalid authorization header"}` {
			t.Errorf("%s: %d %s", c.name, res.Status, res.Body)
		}
	}
	if after := w.table(t); !slices.Equal(after, snapshot) {
		t.Fatalf("refused deliveries changed the table: %d items before, %d after", len(snapshot), len(after))
	}
	if n := len(w.host.Requests()); n != requests {
		t.Fatalf("refused deliveries sent %d requests to the host", n-requests)
	}
	if strings.Contains(w.env.Logs.String(), acmeSecret) || strings.Contains(w.env.Logs.String(), h.Get("X-Hub-Signature-256")) {
		t.Fatal("a secret or signature reached the log")
	}
}

// Another company's integration, signed with its own secret, reaches
// only its own company: its users, links and summaries. Acme's finding,
// named by Acme's ref from Acme's pull request, is out of its reach.
func TestAnotherCompanysIntegrationReachesOnlyItsOwn(t *testing.T) {
	t.Parallel()
	w := newHookWorld(t)
	globex := w.env.Company(t, "Globex")
	theirs := w.integration(t, globex, globexToken, fmt.Sprint(w.host.AccountID(globexToken)), "acme")
	w.setSecret(t, globex, theirs, globexSecret)
	mallory := w.env.User(t, globex, testenv.UserSpec{Email: "mallory@globex.test", IsAdmin: true})
	w.link(t, globex, mallory, "Octo-Dev") // the same login, linked in their company
	ref := w.refs[0]
	before, hist0 := w.issue(t, ref)
	payload := w.comment(t, "Octo-Dev", "/codescan ignore "+ref+" through another company's hook")
	if got := w.deliver(t, theirs.UUID, globexSecret, "issue_comment", payload); got != prtriage.Refused {
		t.Fatalf("through globex's integration: %s", got)
	}
	w.lastReply(t, "no finding of this pull request's Codescan summary")
	after, hist := w.issue(t, ref)
	if after.Status != before.Status || len(hist) != len(hist0) {
		t.Fatalf("another company's integration changed acme's issue: %s, %d history entries", after.Status, len(hist))
	}
	// Globex's integration under acme's uuid cannot take the webhook over.
	ctx := context.Background()
	clash := schema.Integration{CompanyID: globex.ID, UUID: w.in.UUID, Name: "GitHub", AccountID: "1002", BaseURL: w.host.HostURL(), SealedToken: "x"}
	if _, err := w.env.Store.Catalog.CreateIntegration(ctx, clash); err != nil {
		t.Fatal(err)
	}
	res := testenv.Do(t, w.h, "PATCH", "/integrations/scm-provider/"+w.in.UUID, `{"webhook_secret":"`+globexSecret+`"}`, testenv.Key(globex.Admin)...)
	if res.Status != http.StatusConflict {
		t.Fatalf("a second company's secret under acme's uuid: %d %s", res.Status, res.Body)
	}
	if got, err := w.env.Store.Catalog.IntegrationByHook(ctx, w.in.UUID); err != nil || got.CompanyID != w.acme.ID {
		t.Fatalf("the look-up after the clash: %+v %v", got, err)
	}
	body, h := githost.SignedEvent([]byte(globexSecret), "issue_comment", w.comment(t, "Octo-Dev", "/codescan ignore "+ref+" clash"))
	if res := w.post(t, w.in.UUID, body, h); res.Status != http.StatusUnauthorized {
		t.Fatalf("globex's secret on acme's uuid: %d %s", res.Status, res.Body)
	}
}

// What carries no command for us is answered and left alone: GitHub's
// ping, other events, other actions, issues, plain comments, our own
// replies, comments past MaxCommandAge, an expired integration.
func TestDeliveriesWithoutCommandsAreIgnored(t *testing.T) {
	t.Parallel()
	w := newHookWorld(t)
	ref := w.refs[0]
	if got := w.deliver(t, w.in.UUID, acmeSecret, "ping", map[string]any{"zen": "Keep it logically awesome.", "hook_id": githost.HookID}); got != "pong" {
		t.Fatalf("ping: %s", got)
	}
	command := "/codescan ignore " + ref + " quiet"
	edited := w.comment(t, "Octo-Dev", command)
	edited["action"] = "edited"
	event := func(mod func(*githost.IssueCommentEvent)) map[string]any {
		c := w.host.AddIssueComment(hookOwner, hookRepo, hookPR, "Octo-Dev", command)
		e := githost.IssueCommentEvent{Owner: hookOwner, Repo: hookRepo, RepoID: 77, Number: hookPR, PullRequest: true, CommentID: c.ID,
			Body: command, Login: "Octo-Dev", UserID: 4242, WebURL: w.host.HostURL(), APIURL: strings.TrimSuffix(w.host.URL(), "/")}
		mod(&e)
		return githost.IssueCommentCreated(e)
	}
	snapshot := w.table(t)
	cases := map[string]struct {
		event   string
		payload any
	}{
		"push event":     {"push", map[string]any{"ref": "refs/heads/main"}},
		"edited comment": {"issue_comment", edited},
		"plain comment":  {"issue_comment", w.comment(t, "Octo-Dev", "LGTM, but see /codescan")},
		"on an issue":    {"issue_comment", event(func(e *githost.IssueCommentEvent) { e.PullRequest = false })},
		"our own reply":  {"issue_comment", event(func(e *githost.IssueCommentEvent) { e.UserID, e.Login = 1001, "acme-bot" })},
		"stale comment":  {"issue_comment", event(func(e *githost.IssueCommentEvent) { e.At = time.Now().Add(-integrations.MaxCommandAge - time.Hour) })},
		"another owner":  {"issue_comment", event(func(e *githost.IssueCommentEvent) { e.Owner = "mallory" })},
	}
	for name, c := range cases {
		if got := w.deliver(t, w.in.UUID, acmeSecret, c.event, c.payload); got != prtriage.Ignored {
			t.Errorf("%s: %s", name, got)
		}
	}
	if after := w.table(t); !slices.Equal(after, snapshot) {
		t.Fatal("ignored deliveries wrote to the table")
	}
	// An expired integration acts on nothing (its token could not answer).
	cur, err := w.env.Store.Catalog.GetIntegration(context.Background(), w.acme.ID, w.in.UUID)
	if err != nil {
		t.Fatal(err)
	}
	if err := w.env.Store.Catalog.MarkIntegrationExpired(context.Background(), w.acme.ID, w.in.UUID, cur.Revision, schema.Event{ID: "expired-test", CompanyID: w.acme.ID,
		Type: "integration_expired", CreatedAt: time.Now(), Data: []byte(`{}`)}); err != nil {
		t.Fatal(err)
	}
	if got := w.deliver(t, w.in.UUID, acmeSecret, "issue_comment", w.comment(t, "Octo-Dev", command)); got != prtriage.Ignored {
		t.Fatalf("an expired integration: %s", got)
	}
	if i, _ := w.issue(t, ref); i.Status != "open" || len(w.replies()) != 0 {
		t.Fatalf("ignored deliveries acted: %s, %d replies", i.Status, len(w.replies()))
	}
}

// The webhook secret is write-only: bounded, sealed for this integration's
// webhook alone, never answered, and shown only as webhook_secret_set.
func TestWebhookSecretIsWriteOnly(t *testing.T) {
	t.Parallel()
	w := newHookWorld(t)
	path := "/integrations/scm-provider/" + w.in.UUID
	for _, body := range []string{`{"webhook_secret":"short"}`, `{"webhook_secret":"` + strings.Repeat("s", 257) + `"}`,
		`{"webhook_secret":"has a space in it ok"}`, `{"webhook_secret":null}`, `{"webhook_secret":1234567890123456}`,
		`{"webhook_secret":"tab\tinside-0123456789"}`} {
		before, _ := w.env.Store.Catalog.GetIntegration(context.Background(), w.acme.ID, w.in.UUID)
		res := testenv.Do(t, w.h, "PATCH", path, body, testenv.Key(w.acme.Admin)...)
		if res.Status != http.StatusBadRequest || !strings.Contains(string(res.Body), "webhook_secret") {
			t.Errorf("%s: %d %s", body, res.Status, res.Body)
		}
		if after, _ := w.env.Store.Catalog.GetIntegration(context.Background(), w.acme.ID, w.in.UUID); after.Revision != before.Revision {
			t.Errorf("%s: a refused secret was stored", body)
		}
	}
	stored, err := w.env.Store.Catalog.GetIntegration(context.Background(), w.acme.ID, w.in.UUID)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	if got, err := w.sealer.Open(ctx, stored.SealedWebhookSecret, catalog.IntegrationWebhookRecord(w.acme.ID, w.in.UUID)); err != nil || got != acmeSecret {
		t.Fatalf("the sealed secret opens to %q: %v", got, err)
	}
	if _, err := w.sealer.Open(ctx, stored.SealedWebhookSecret, catalog.IntegrationTokenRecord(w.acme.ID, w.in.UUID)); err == nil {
		t.Fatal("the webhook secret opens as the integration's token")
	}
	res := testenv.Do(t, w.h, "GET", path, "", testenv.Key(w.acme.Admin)...)
	if !strings.Contains(string(res.Body), `"webhook_secret_set":true`) || strings.Contains(string(res.Body), acmeSecret) ||
		strings.Contains(string(res.Body), stored.SealedWebhookSecret) {
		t.Fatalf("GET: %s", res.Body)
	}
	if strings.Contains(w.env.Logs.String(), acmeSecret) {
		t.Fatal("the secret reached the log")
	}
	// A new secret: the old one no longer signs.
	w.setSecret(t, w.acme, w.in, "whsec-rotated-0123456789")
	body, h := githost.SignedEvent([]byte(acmeSecret), "ping", map[string]any{"zen": "x"})
	if res := w.post(t, w.in.UUID, body, h); res.Status != http.StatusUnauthorized {
		t.Fatalf("the old secret after rotation: %d %s", res.Status, res.Body)
	}
	if got := w.deliver(t, w.in.UUID, "whsec-rotated-0123456789", "ping", map[string]any{"zen": "x"}); got != "pong" {
		t.Fatalf("the new secret: %s", got)
	}
}

// auditedOnce wants exactly one issue.update of the issue, by the linked
// user by way of a pull request comment.
func (w *hookWorld) auditedOnce(t *testing.T, issueID string) {
	t.Helper()
	entriesPage, err := w.env.Store.Tenancy.ListAudit(context.Background(), w.acme.ID, tenancy.AuditFilter{Action: "issue.update"}, page.Request{Limit: 50})
	entries := entriesPage.Items
	if err != nil {
		t.Fatal(err)
	}
	var mine []tenancy.AuditRecord
	for _, e := range entries {
		if e.TargetID == issueID {
			mine = append(mine, e)
		}
	}
	if len(mine) != 1 || mine[0].Actor.UserID != w.triager.ID || mine[0].Actor.Via != prtriage.ViaPullRequest {
		t.Fatalf("audit entries of the issue: %+v", mine)
	}
}

// reacted wants n +1 reactions of the integration's account on the
// command's comment.
func (w *hookWorld) reacted(t *testing.T, payload map[string]any, n int) {
	t.Helper()
	id := payload["comment"].(map[string]any)["id"].(int64)
	for _, c := range w.host.IssueComments(hookOwner, hookRepo, hookPR) {
		if c.ID != id {
			continue
		}
		if len(c.Reactions) != n || (n > 0 && (c.Reactions[0].Content != "+1" || c.Reactions[0].User != "acme-bot")) {
			t.Fatalf("reactions on the command: %+v", c.Reactions)
		}
		return
	}
	t.Fatalf("no comment %d on the host", id)
}
