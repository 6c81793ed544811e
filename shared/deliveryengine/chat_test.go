package deliveryengine_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/acme/codescan-api/internal/testenv"
	"github.com/acme/codescan-api/shared/chatmsg/chattest"
	"github.com/acme/codescan-api/shared/deliveryengine"
	"github.com/acme/codescan-api/shared/store/delivery"
	"github.com/acme/codescan-api/shared/store/findings"
	"github.com/acme/codescan-api/shared/store/scans"
	"github.com/acme/codescan-api/shared/store/schema"
	"github.com/acme/codescan-api/shared/webhook"
)

func TestMain(m *testing.M) { testenv.Main(m) }

type clock struct {
	mu sync.Mutex
	at time.Time
}

func (c *clock) now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.at }
func (c *clock) add(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.at = c.at.Add(d)
}

type world struct {
	env  *testenv.Env
	d    *deliveryengine.Engine
	clk  *clock
	acme *testenv.Company
}

func newWorld(t *testing.T) *world {
	env := testenv.New(t)
	// The engine's clock runs an hour ahead: every receiver the test
	// stores exists when its events are recorded.
	clk := &clock{at: time.Now().UTC().Truncate(time.Second).Add(time.Hour)}
	return &world{env: env, clk: clk, acme: env.Company(t, "Acme"), d: &deliveryengine.Engine{
		Store:    deliveryengine.StoreOf(env.Store),
		Webhooks: webhook.New(webhook.Options{AllowLoopback: true, Timeout: 2 * time.Second}),
		Sealer:   testenv.Sealer(t), AppURL: "https://app.codescan.test",
		Backoff: deliveryengine.Backoff{Base: time.Minute, Max: time.Hour, Horizon: 24 * time.Hour},
		Log:     slog.New(slog.NewTextHandler(io.Discard, nil)),
		Now:     clk.now,
	}}
}

// chat stores a chat endpoint of kind at the loopback server's URL, its URL
// sealed and shown masked, as the webhooks routes store one.
func (w *world) chat(t *testing.T, kind string, srv *chattest.Server, filter string, types ...string) schema.WebhookEndpoint {
	t.Helper()
	ctx := context.Background()
	raw := srv.URL + "/services/T0001/B0001/abcdefSECRET"
	clean, err := w.d.Webhooks.CheckKindURL(kind, raw)
	if err != nil {
		t.Fatal(err)
	}
	id := delivery.NewWebhookID()
	sealed, err := w.d.Sealer.Seal(ctx, clean, delivery.WebhookSecretRecord(w.acme.ID, id))
	if err != nil {
		t.Fatal(err)
	}
	ep, err := w.env.Store.Deliveries.CreateWebhook(ctx, schema.WebhookEndpoint{ID: id, CompanyID: w.acme.ID, URL: webhook.Mask(clean), Types: types,
		Active: true, SealedSecret: sealed, Kind: kind, Filter: filter})
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(ep.URL, "SECRET") {
		t.Fatalf("stored URL not masked: %s", ep.URL)
	}
	return ep
}

type issue struct {
	fp, urgency, title string
}

// scan completes a scan of project with new issues and returns its
// events as the outbox holds them.
func (w *world) scan(t *testing.T, project schema.Project, issues ...issue) []schema.Event {
	t.Helper()
	ctx := context.Background()
	st := w.env.Store
	sc, err := st.Scans.CreateScan(ctx, scans.Scan{CompanyID: w.acme.ID, ProjectID: project.ID, Branch: "main", Engine: "sarif", Tool: "semgrep",
		Status: scans.ScanProcessing, CreatedAt: w.clk.now().Format(time.RFC3339)})
	if err != nil {
		t.Fatal(err)
	}
	var found []findings.Issue
	for n, i := range issues {
		found = append(found, findings.Issue{ID: findings.IssueID(w.acme.ID, project.ID, "main", "semgrep", i.fp), ProjectID: project.ID,
			ProjectName: project.Name, Branch: "main", Tool: "semgrep", Fingerprint: i.fp, CWE: 89, FilePath: "src/" + i.fp + ".go",
			Line: n + 10, Urgency: i.urgency, RuleID: "rule-" + i.fp, Title: i.title, CreatedAt: sc.CreatedAt})
	}
	if _, err := st.Findings.ApplyScan(ctx, w.acme.ID, sc, found); err != nil {
		t.Fatal(err)
	}
	var out []schema.Event
	for _, typ := range []string{"scan_completed", "new_critical_issue", "new_high_issue"} {
		data, ok := testenv.OutboxEvent(t, st, w.acme.ID, typ+"-"+sc.ID)
		if !ok {
			continue
		}
		b, _ := json.Marshal(data)
		w.clk.add(time.Second)
		out = append(out, schema.Event{ID: typ + "-" + sc.ID, CompanyID: w.acme.ID, Type: typ, CreatedAt: w.clk.now(), Data: b})
	}
	return out
}

func (w *world) project(t *testing.T, name string) schema.Project {
	p, err := w.env.Store.Catalog.CreateProject(context.Background(), schema.Project{CompanyID: w.acme.ID, Name: name})
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// received are the summaries (Slack's fallback text) of the messages a
// server got, in order.
func slackTexts(t *testing.T, srv *chattest.Server) []string {
	var out []string
	for _, b := range srv.Bodies() {
		var m struct{ Text string }
		if err := json.Unmarshal(b, &m); err != nil {
			t.Fatal(err)
		}
		out = append(out, m.Text)
	}
	return out
}

// TestChatDestinationsWithFilters: a Slack and a Teams destination with a
// filter receive exactly the events their filter selects, every payload
// valid against Block Kit's rules and the Adaptive Card schema; a user's
// email filter selects the same way; the recent-event index holds every
// event dispatched.
func TestChatDestinationsWithFilters(t *testing.T) {
	w := newWorld(t)
	ctx := context.Background()
	slackSrv, teamsSrv := chattest.NewSlack(), chattest.NewTeams()
	defer slackSrv.Close()
	defer teamsSrv.Close()
	slackEP := w.chat(t, webhook.KindSlack, slackSrv, `event.type == "scan_completed" && event.new_findings.exists(f, f.urgency == "CR")`,
		"scan_completed", "new_critical_issue")
	teamsEP := w.chat(t, webhook.KindTeams, teamsSrv, `event.project.name.startsWith("payments-")`,
		"scan_completed", "new_critical_issue", "issue_status_changed")
	// The admin wants emails of new criticals of billing only.
	filter := `event.project.name == "billing"`
	if err := w.env.Store.Deliveries.UpdateNotificationSetting(ctx, w.acme.ID, w.acme.Admin.ID, "new_critical_issue",
		[]delivery.ChannelChange{{Channel: "filter", Text: &filter}}); err != nil {
		t.Fatal(err)
	}
	payments, billing := w.project(t, "payments-api"), w.project(t, "billing")
	w.clk.add(time.Second)

	var events []schema.Event
	events = append(events, w.scan(t, payments, issue{"a", "CR", "SQL injection <!channel>"}, issue{"b", "HI", "XSS"}, issue{"c", "LO", "Weak hash"})...)
	events = append(events, w.scan(t, payments, issue{"d", "LO", "Verbose errors"})...)
	events = append(events, w.scan(t, billing, issue{"e", "CR", "Command injection"})...)
	w.clk.add(time.Second)
	status, _ := json.Marshal(map[string]any{"issue_id": "i-1", "project_id": payments.ID, "project_name": "payments-api", "title": "XSS",
		"previous_status": "open", "status": "fixed"})
	events = append(events, schema.Event{ID: "issue_status_changed-i-1-v2", CompanyID: w.acme.ID, Type: "issue_status_changed", CreatedAt: w.clk.now(), Data: status})
	var ids []string
	for _, ev := range events {
		ids = append(ids, ev.ID)
	}
	want := []string{"scan_completed-", "new_critical_issue-", "new_high_issue-", "scan_completed-", "scan_completed-", "new_critical_issue-", "issue_status_changed-"}
	for n, id := range ids {
		if !strings.HasPrefix(id, want[n]) {
			t.Fatalf("events: %v", ids)
		}
	}
	if failed := w.d.Dispatch(ctx, events); len(failed) != 0 {
		t.Fatalf("dispatch: %v", failed)
	}
	// Twice: the stream may deliver again; nothing is sent twice.
	if failed := w.d.Dispatch(ctx, events); len(failed) != 0 {
		t.Fatalf("dispatch again: %v", failed)
	}

	// Slack: the scans with a new critical (payments' first, billing's).
	if got := slackTexts(t, slackSrv); !slices.Equal(got, []string{
		"Scan of payments-api (main) completed with 3 findings", "Scan of billing (main) completed with 1 finding"}) {
		t.Fatalf("slack got %q", got)
	}
	first := strings.NewReplacer(`\u0026`, "&", `\u003c`, "<", `\u003e`, ">").Replace(string(slackSrv.Bodies()[0]))
	for _, part := range []string{"SQL injection &lt;!channel&gt;", "`src/a.go:10`", "*Critical*", "https://app.codescan.test/scans/"} {
		if !strings.Contains(first, part) {
			t.Errorf("slack message lacks %q: %s", part, first)
		}
	}
	// Teams: every subscribed event of payments-*: its two scans, the
	// first one's new critical, the status change.
	var teamsIDs []string
	for _, b := range teamsSrv.Bodies() {
		s := string(b)
		n := strings.Index(s, "scan_completed-")
		for _, typ := range []string{"new_critical_issue-", "issue_status_changed-"} {
			if i := strings.Index(s, typ); i >= 0 {
				n = i
			}
		}
		teamsIDs = append(teamsIDs, s[n:n+strings.IndexByte(s[n:], ' ')])
	}
	if !slices.Equal(teamsIDs, []string{ids[0], ids[1], ids[3], ids[6]}) {
		t.Fatalf("teams got %v, want %v", teamsIDs, []string{ids[0], ids[1], ids[3], ids[6]})
	}
	for _, srv := range []*chattest.Server{slackSrv, teamsSrv} {
		if bad := srv.Invalid(); len(bad) != 0 {
			t.Fatalf("invalid payloads: %v", bad)
		}
	}
	// Deliveries exist exactly for what was selected.
	admin := strconv.FormatInt(w.acme.Admin.ID, 10)
	for n, id := range ids {
		for _, c := range []struct {
			channel, recipient string
			want               bool
		}{
			{delivery.ChannelWebhook, slackEP.ID, n == 0 || n == 4},
			{delivery.ChannelWebhook, teamsEP.ID, n == 0 || n == 1 || n == 3 || n == 6},
			{delivery.ChannelEmail, admin, n == 5}, // billing's new critical (new_high_issue emails are on too, unfiltered)
		} {
			if c.channel == delivery.ChannelEmail && n == 2 {
				c.want = true // new_high_issue: email on by default, no filter
			}
			_, err := w.env.Store.Deliveries.GetDelivery(ctx, w.acme.ID, delivery.DeliveryID(id, c.channel, c.recipient))
			if got := err == nil; got != c.want {
				t.Errorf("event %s to %s %s: delivery %v, want %v (%v)", id, c.channel, c.recipient, got, c.want, err)
			}
		}
	}
	// The recent-event index holds the seven events, newest first.
	recent, err := w.env.Store.Deliveries.RecentEvents(ctx, w.acme.ID, w.clk.now().Add(-time.Hour), nil, 100)
	if err != nil || len(recent) != len(events) || recent[0].ID != ids[6] || recent[6].ID != ids[0] {
		t.Fatalf("recent: %d %v", len(recent), err)
	}
	other := w.env.Company(t, "Other")
	if recent, err := w.env.Store.Deliveries.RecentEvents(ctx, other.ID, w.clk.now().Add(-time.Hour), nil, 100); err != nil || len(recent) != 0 {
		t.Fatalf("another company's recent events: %d %v", len(recent), err)
	}
}

// TestChatAnswers: Slack's 429 is retried after its Retry-After, a 400
// invalid_payload fails at once with its code, a 404 no_service disables
// the destination and tells the admins.
func TestChatAnswers(t *testing.T) {
	w := newWorld(t)
	ctx := context.Background()
	srv := chattest.NewSlack()
	defer srv.Close()
	ep := w.chat(t, webhook.KindSlack, srv, "", "scan_failed")
	event := func(n int) schema.Event {
		data, _ := json.Marshal(map[string]any{"scan_id": fmt.Sprint("s", n), "project_name": "p", "failed_reason": "invalid report"})
		return schema.Event{ID: fmt.Sprint("scan_failed-s", n), CompanyID: w.acme.ID, Type: "scan_failed", CreatedAt: w.clk.now(), Data: data}
	}
	deliveryOf := func(ev schema.Event) schema.Delivery {
		d, err := w.env.Store.Deliveries.GetDelivery(ctx, w.acme.ID, delivery.DeliveryID(ev.ID, delivery.ChannelWebhook, ep.ID))
		if err != nil {
			t.Fatal(err)
		}
		return d
	}
	w.clk.add(time.Second)

	srv.Fail(chattest.Failure{Status: 429, Body: "rate_limited", RetryAfter: "7"})
	ev := event(1)
	if failed := w.d.Dispatch(ctx, []schema.Event{ev}); len(failed) != 0 {
		t.Fatal(failed)
	}
	d := deliveryOf(ev)
	next, _ := time.Parse(time.RFC3339Nano, d.NextAttemptAt)
	if d.State != delivery.DeliveryRetrying || d.LastError != "rate_limited" || next.Sub(w.clk.now()) != 7*time.Second {
		t.Fatalf("after 429: %+v", d)
	}
	w.clk.add(8 * time.Second)
	if n, err := w.d.RunDue(ctx); err != nil || n != 1 {
		t.Fatalf("run due: %d %v", n, err)
	}
	if d := deliveryOf(ev); d.State != delivery.DeliveryDelivered || len(srv.Bodies()) != 2 || string(srv.Bodies()[0]) != string(srv.Bodies()[1]) {
		t.Fatalf("retry: %+v, %d bodies", d, len(srv.Bodies()))
	}

	srv.Fail(chattest.Failure{Status: 400, Body: "invalid_payload"})
	ev = event(2)
	w.d.Dispatch(ctx, []schema.Event{ev})
	if d := deliveryOf(ev); d.State != delivery.DeliveryFailed || d.LastError != "invalid_payload" || d.LastStatus != 400 {
		t.Fatalf("after 400: %+v", d)
	}

	srv.Fail(chattest.Failure{Status: 404, Body: "no_service"})
	ev = event(3)
	w.d.Dispatch(ctx, []schema.Event{ev})
	if d := deliveryOf(ev); d.State != delivery.DeliveryFailed || d.LastError != "no_service" {
		t.Fatalf("after 404: %+v", d)
	}
	got, err := w.env.Store.Deliveries.GetWebhook(ctx, w.acme.ID, ep.ID)
	if err != nil || got.Active || !strings.Contains(got.DisabledReason, "404 no_service") {
		t.Fatalf("endpoint after 404: %+v %v", got, err)
	}
	if _, ok := testenv.OutboxEvent(t, w.env.Store, w.acme.ID, "webhook_disabled-"+ep.ID+"-"+strconv.FormatInt(w.clk.now().Unix(), 10)); !ok {
		t.Fatal("no webhook_disabled event for the admins")
	}
	// Nothing more goes to a disabled destination.
	w.d.Dispatch(ctx, []schema.Event{event(4)})
	if len(srv.Bodies()) != 4 {
		t.Fatalf("bodies: %d", len(srv.Bodies()))
	}
}
