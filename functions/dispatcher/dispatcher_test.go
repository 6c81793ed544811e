package dispatcher_test

import (
	"context"
	"crypto/rand"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	standardwebhooks "github.com/standard-webhooks/standard-webhooks/libraries/go"

	"github.com/acme/codescan-api/internal/localstream"
	"github.com/acme/codescan-api/internal/testenv"
	"github.com/acme/codescan-api/shared/deliveryengine"
	"github.com/acme/codescan-api/shared/deployspec"
	"github.com/acme/codescan-api/shared/mail"
	"github.com/acme/codescan-api/shared/maildev"
	"github.com/acme/codescan-api/shared/netguard"
	"github.com/acme/codescan-api/shared/notify"
	"github.com/acme/codescan-api/shared/store"
	"github.com/acme/codescan-api/shared/store/delivery"
	"github.com/acme/codescan-api/shared/store/findings"
	"github.com/acme/codescan-api/shared/store/page"
	"github.com/acme/codescan-api/shared/store/scans"
	"github.com/acme/codescan-api/shared/store/schema"
	"github.com/acme/codescan-api/shared/store/triage"
	"github.com/acme/codescan-api/shared/webhook"
)

func TestMain(m *testing.M) { testenv.MainOwnDynamoDB(m) } // its tables have streams

// world is one test's table, mail catcher, dispatcher (on a clock the
// test moves) and stream poller.
type world struct {
	env     *testenv.Env
	d       *deliveryengine.Engine
	clk     *clock
	mailWeb string
	stop    func()
	// rounds follows the running poller's caught-up rounds.
	rounds *testenv.Rounds
}

// clock is the dispatcher's clock: it stands still until the test moves it.
type clock struct {
	mu sync.Mutex
	at time.Time
}

func (c *clock) now() time.Time  { c.mu.Lock(); defer c.mu.Unlock(); return c.at }
func (c *clock) set(t time.Time) { c.mu.Lock(); defer c.mu.Unlock(); c.at = t }

func newWorld(t *testing.T) *world {
	t.Helper()
	env := testenv.NewStreaming(t) // few enough to afford the stream each
	smtpAddr, web := testenv.Mail(t)
	sealer := testenv.Sealer(t)
	clk := &clock{at: time.Now().UTC().Truncate(time.Second)}
	w := &world{env: env, clk: clk, mailWeb: web, d: &deliveryengine.Engine{
		Store:    deliveryengine.StoreOf(env.Store),
		Webhooks: webhook.New(webhook.Options{AllowLoopback: true, Timeout: 2 * time.Second}),
		Mail:     &mail.SMTP{Addr: smtpAddr, From: "notifications@codescan.test"},
		Sealer:   sealer, AppURL: "http://app.test",
		Backoff: deliveryengine.Backoff{Base: 20 * time.Millisecond, Max: 100 * time.Millisecond, Horizon: time.Hour},
		Log:     slog.New(slog.NewTextHandler(io.Discard, nil)),
		Now:     clk.now,
	}}
	w.stop = func() {}
	t.Cleanup(func() { w.stop() })
	return w
}

// startPoller runs the stream poller until stopped (or the test ends).
func (w *world) startPoller(t *testing.T) {
	t.Helper()
	streams, err := localstream.NewClient(context.Background(), testenv.Endpoint())
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	w.rounds = testenv.NewRounds()
	p := &localstream.Poller{Dispatcher: w.d, DB: w.env.Store.Client(), Table: w.env.Store.TableName(), Streams: streams, Idle: 50 * time.Millisecond,
		Caught: w.rounds.Caught}
	go func() { defer close(done); _ = p.Run(ctx) }()
	w.stop = func() { cancel(); <-done }
}

// receiver is a loopback webhook receiver answering from a script of
// status codes (the last one repeats).
type receiver struct {
	*httptest.Server
	mu       sync.Mutex
	statuses []int
	got      []received
}

type received struct {
	header http.Header
	body   []byte
}

func newReceiver(t *testing.T, statuses ...int) *receiver {
	r := &receiver{statuses: statuses}
	r.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		body, _ := io.ReadAll(req.Body)
		r.mu.Lock()
		r.got = append(r.got, received{req.Header.Clone(), body})
		status := http.StatusOK
		if len(r.statuses) > 0 {
			status = r.statuses[0]
			if len(r.statuses) > 1 {
				r.statuses = r.statuses[1:]
			}
		}
		r.mu.Unlock()
		w.WriteHeader(status)
	}))
	t.Cleanup(r.Close)
	return r
}

func (r *receiver) received() []received {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.got)
}

// endpoint stores a webhook endpoint of c for types, with a fresh secret.
func (w *world) endpoint(t *testing.T, c *testenv.Company, url string, types ...string) (schema.WebhookEndpoint, string) {
	t.Helper()
	ctx := context.Background()
	secret, err := webhook.NewSecret()
	if err != nil {
		t.Fatal(err)
	}
	id := delivery.NewWebhookID()
	sealed, err := w.d.Sealer.Seal(ctx, secret, delivery.WebhookSecretRecord(c.ID, id))
	if err != nil {
		t.Fatal(err)
	}
	ep, err := w.env.Store.Deliveries.CreateWebhook(ctx, schema.WebhookEndpoint{ID: id, CompanyID: c.ID, URL: url, Types: types, Active: true, SealedSecret: sealed})
	if err != nil {
		t.Fatal(err)
	}
	return ep, secret
}

func setting(t *testing.T, st *store.Store, companyID, userID int64, code, channel string, v bool) {
	t.Helper()
	if err := st.Deliveries.UpdateNotificationSetting(context.Background(), companyID, userID, code, []delivery.ChannelChange{{Channel: channel, Value: &v}}); err != nil {
		t.Fatal(err)
	}
}

// inbox returns the caught emails addressed to to.
func (w *world) inbox(t *testing.T, to string) []maildev.Email {
	t.Helper()
	all, err := maildev.Inbox(context.Background(), w.mailWeb)
	if err != nil {
		t.Fatal(err)
	}
	var out []maildev.Email
	for _, m := range all {
		for _, a := range m.To {
			if strings.EqualFold(a.Address, to) {
				out = append(out, m)
			}
		}
	}
	return out
}

// eventually waits until cond holds, checking it again after every round
// of the running poller that caught up with the stream, for up to 10
// seconds.
func (w *world) eventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	w.rounds.Until(t, what, 10*time.Second, cond)
}

// settled waits until the running poller has handed over, and the
// dispatcher delivered, everything written before: then what has not
// arrived will not.
func (w *world) settled(t *testing.T) {
	t.Helper()
	w.rounds.Settled(t, 10*time.Second)
}

func scanCompleted(companyID int64, scanID string) schema.Event {
	return schema.Event{
		ID: "scan_completed-" + scanID, CompanyID: companyID, Type: "scan_completed", CreatedAt: time.Now(),
		Data: json.RawMessage(fmt.Sprintf(`{"scan_id":%q,"project_id":7,"project_name":"payments","branch":"main","tool":"semgrep","findings":3,"completed_at":"2026-11-23T08:00:00Z"}`, scanID)),
	}
}

func TestEventReachesWebhookAndEmailOnceEach(t *testing.T) {
	w := newWorld(t)
	c := w.env.Company(t, "Deliver"+randomSuffix())
	member := w.env.User(t, c, testenv.UserSpec{Email: "member-" + randomSuffix() + "@deliver.test"})
	setting(t, w.env.Store, c.ID, 0, "scan_completed", delivery.ChannelEmail, true) // platform default is off
	rcv := newReceiver(t)
	ep, secret := w.endpoint(t, c, rcv.URL+"/hook", "scan_completed")
	w.endpoint(t, c, rcv.URL+"/other", "scan_failed") // not subscribed: gets nothing
	w.startPoller(t)

	ev := scanCompleted(c.ID, "6b1f8f2e-1d7e-4a53-9b8e-1c2d3e4f5a6b")
	if err := w.env.Store.Ledger.RecordEvent(context.Background(), ev); err != nil {
		t.Fatal(err)
	}
	w.eventually(t, "the webhook and both emails", func() bool {
		return len(rcv.received()) >= 1 && len(w.inbox(t, c.Admin.Email)) >= 1 && len(w.inbox(t, member.Email)) >= 1
	})
	// The same event written again (a retried transaction) sends nothing new.
	if err := w.env.Store.Ledger.RecordEvent(context.Background(), ev); err != nil {
		t.Fatal(err)
	}
	w.settled(t)
	got := rcv.received()
	if len(got) != 1 || len(w.inbox(t, c.Admin.Email)) != 1 || len(w.inbox(t, member.Email)) != 1 {
		t.Fatalf("deliveries: %d webhooks, %d + %d emails; want exactly one each", len(got), len(w.inbox(t, c.Admin.Email)), len(w.inbox(t, member.Email)))
	}

	// Any receiver verifies the signature with the Standard Webhooks library.
	wh, err := standardwebhooks.NewWebhook(secret)
	if err != nil {
		t.Fatal(err)
	}
	if err := wh.Verify(got[0].body, got[0].header); err != nil {
		t.Fatalf("signature does not verify: %v", err)
	}
	if got[0].header.Get("webhook-id") != ev.ID {
		t.Errorf("webhook-id %q, want the event id %q", got[0].header.Get("webhook-id"), ev.ID)
	}
	other, _ := webhook.NewSecret()
	if wh2, _ := standardwebhooks.NewWebhook(other); wh2.Verify(got[0].body, got[0].header) == nil {
		t.Error("another secret verifies the signature")
	}
	var p notify.Payload
	if err := json.Unmarshal(got[0].body, &p); err != nil || p.Type != "scan_completed" || p.ID != ev.ID || p.CompanyID != c.ID {
		t.Fatalf("payload %s (%v)", got[0].body, err)
	}
	if !strings.Contains(string(p.Data), `"findings":3`) {
		t.Errorf("payload data %s", p.Data)
	}
	if strings.Contains(string(got[0].body), secret) {
		t.Error("the secret is in the payload")
	}

	m := w.inbox(t, member.Email)[0]
	if !strings.Contains(m.Subject, "Scan completed: payments (main)") ||
		!strings.Contains(m.Text, "http://app.test/scans/6b1f8f2e-1d7e-4a53-9b8e-1c2d3e4f5a6b") ||
		!strings.Contains(m.HTML, `href="http://app.test/scans/6b1f8f2e-1d7e-4a53-9b8e-1c2d3e4f5a6b"`) {
		t.Errorf("email: subject %q\ntext %q\nhtml %q", m.Subject, m.Text, m.HTML)
	}
	_ = ep
}

func TestSettingsChooseExactlyTheRecipients(t *testing.T) {
	w := newWorld(t)
	c := w.env.Company(t, "Recipients"+randomSuffix())
	quiet := w.env.User(t, c, testenv.UserSpec{Email: "quiet-" + randomSuffix() + "@rcpt.test"})
	loud := w.env.User(t, c, testenv.UserSpec{Email: "loud-" + randomSuffix() + "@rcpt.test"})
	gone := w.env.User(t, c, testenv.UserSpec{Email: "gone-" + randomSuffix() + "@rcpt.test", Inactive: true})
	// scan_failed: email and webhook on by platform default.
	setting(t, w.env.Store, c.ID, quiet.ID, "scan_failed", delivery.ChannelEmail, false)
	rcv := newReceiver(t)
	w.endpoint(t, c, rcv.URL+"/hook", "scan_failed")
	w.startPoller(t)

	record := func(id string) {
		ev := schema.Event{ID: id, CompanyID: c.ID, Type: "scan_failed", CreatedAt: time.Now(),
			Data: json.RawMessage(`{"scan_id":"` + id + `","project_id":1,"project_name":"api","branch":"dev","tool":"gosec","failed_reason":"report truncated"}`)}
		if err := w.env.Store.Ledger.RecordEvent(context.Background(), ev); err != nil {
			t.Fatal(err)
		}
	}
	record("a3c1e7d0-0000-4000-8000-000000000001")
	w.eventually(t, "first deliveries", func() bool {
		return len(rcv.received()) == 1 && len(w.inbox(t, loud.Email)) == 1 && len(w.inbox(t, c.Admin.Email)) == 1
	})
	w.settled(t)
	if n := len(w.inbox(t, quiet.Email)); n != 0 {
		t.Errorf("user with email off got %d emails", n)
	}
	if n := len(w.inbox(t, gone.Email)); n != 0 {
		t.Errorf("inactive user got %d emails", n)
	}

	// The company turns webhooks off for the type: emails continue.
	setting(t, w.env.Store, c.ID, 0, "scan_failed", delivery.ChannelWebhook, false)
	record("a3c1e7d0-0000-4000-8000-000000000002")
	w.eventually(t, "second emails", func() bool {
		return len(w.inbox(t, loud.Email)) == 2 && len(w.inbox(t, c.Admin.Email)) == 2
	})
	w.settled(t)
	if n := len(rcv.received()); n != 1 {
		t.Errorf("webhook turned off, yet %d deliveries", n)
	}
}

// runDue runs the due deliveries at the world's clock and wants n attempted.
func (w *world) runDue(t *testing.T, n int) {
	t.Helper()
	got, err := w.d.RunDue(context.Background())
	if err != nil || got != n {
		t.Fatalf("at %s: %d deliveries attempted (%v), want %d", w.clk.now().Format(time.RFC3339Nano), got, err, n)
	}
}

// Each retry waits base*2^(attempts so far) with equal jitter (half of it
// fixed), and is attempted from its next_attempt_at on, not a microsecond
// (the stored precision) before.
func TestRetriesUntilTheReceiverAccepts(t *testing.T) {
	w := newWorld(t)
	w.d.Backoff = deliveryengine.Backoff{Base: 30 * time.Second, Max: time.Hour, Horizon: 2 * time.Hour}
	c := w.env.Company(t, "Retry"+randomSuffix())
	rcv := newReceiver(t, 500, 500, 200)
	ep, _ := w.endpoint(t, c, rcv.URL+"/hook", "scan_completed")
	ctx := context.Background()
	ev := scanCompleted(c.ID, "0f0e0d0c-0b0a-4909-8807-060504030201")
	if failed := w.d.Dispatch(ctx, []schema.Event{ev}); len(failed) != 0 {
		t.Fatal(failed)
	}
	id := delivery.DeliveryID(ev.ID, delivery.ChannelWebhook, ep.ID)
	for _, wait := range []time.Duration{30 * time.Second, time.Minute} {
		del, err := w.env.Store.Deliveries.GetDelivery(ctx, c.ID, id)
		if err != nil || del.State != delivery.DeliveryRetrying {
			t.Fatalf("after attempt %d: %+v (%v)", del.Attempts, del, err)
		}
		next, err := time.Parse(time.RFC3339Nano, del.NextAttemptAt)
		if d := next.Sub(w.clk.now()); err != nil || d < wait/2-time.Microsecond || d > wait {
			t.Fatalf("after attempt %d the next is in %s (%v), want %s to %s", del.Attempts, d, err, wait/2, wait)
		}
		w.runDue(t, 0) // at the attempt's own time
		w.clk.set(next.Add(-time.Microsecond))
		w.runDue(t, 0)
		w.clk.set(next)
		w.runDue(t, 1)
	}
	w.clk.set(w.clk.now().Add(24 * time.Hour))
	w.runDue(t, 0) // delivered: nothing left to retry
	got := rcv.received()
	if len(got) != 3 {
		t.Fatalf("receiver got %d requests, want 3", len(got))
	}
	for _, g := range got {
		if g.header.Get("webhook-id") != ev.ID {
			t.Errorf("attempt with webhook-id %q", g.header.Get("webhook-id"))
		}
	}
	logPage, err := w.env.Store.Deliveries.ListAttempts(ctx, c.ID, ep.ID, "", page.Request{Limit: 10})
	log := logPage.Items
	if err != nil {
		t.Fatal(err)
	}
	if len(log) != 3 || log[0].Outcome != delivery.AttemptSucceeded || log[0].StatusCode != 200 ||
		log[1].StatusCode != 500 || log[2].StatusCode != 500 || log[2].NextRetryAt == "" || log[0].NextRetryAt != "" {
		t.Fatalf("attempt log (newest first): %+v", log)
	}
	del, err := w.env.Store.Deliveries.GetDelivery(ctx, c.ID, log[0].DeliveryID)
	if err != nil || del.State != delivery.DeliveryDelivered || del.Attempts != 3 {
		t.Fatalf("delivery %+v (%v)", del, err)
	}
	failedOnlyPage, err := w.env.Store.Deliveries.ListAttempts(ctx, c.ID, ep.ID, delivery.AttemptFailed, page.Request{Limit: 10})
	failedOnly := failedOnlyPage.Items
	if err != nil || len(failedOnly) != 2 {
		t.Fatalf("failed attempts: %d (%v)", len(failedOnly), err)
	}
}

// No retry starts more than the horizon after the first attempt: the
// delivery fails for good instead.
func TestRetriesEndAtTheHorizon(t *testing.T) {
	w := newWorld(t)
	// The first retry comes 15 to 30 minutes after the first attempt, the
	// second 30 to 60 after that: past the 40-minute horizon.
	w.d.Backoff = deliveryengine.Backoff{Base: 30 * time.Minute, Max: 6 * time.Hour, Horizon: 40 * time.Minute}
	c := w.env.Company(t, "Horizon"+randomSuffix())
	rcv := newReceiver(t, 503)
	ep, _ := w.endpoint(t, c, rcv.URL+"/hook", "scan_completed")
	ctx := context.Background()
	ev := scanCompleted(c.ID, "0a0b0c0d-0e0f-4011-8213-141516171819")
	if failed := w.d.Dispatch(ctx, []schema.Event{ev}); len(failed) != 0 {
		t.Fatal(failed)
	}
	id := delivery.DeliveryID(ev.ID, delivery.ChannelWebhook, ep.ID)
	del, err := w.env.Store.Deliveries.GetDelivery(ctx, c.ID, id)
	if err != nil || del.State != delivery.DeliveryRetrying {
		t.Fatalf("after the first attempt: %+v (%v)", del, err)
	}
	next, _ := time.Parse(time.RFC3339Nano, del.NextAttemptAt)
	w.clk.set(next)
	w.runDue(t, 1)
	if del, err = w.env.Store.Deliveries.GetDelivery(ctx, c.ID, id); err != nil || del.State != delivery.DeliveryFailed || del.NextAttemptAt != "" || del.Attempts != 2 {
		t.Fatalf("after the second attempt: %+v (%v), want failed for good", del, err)
	}
	w.clk.set(w.clk.now().Add(24 * time.Hour))
	w.runDue(t, 0)
	if n := len(rcv.received()); n != 2 {
		t.Fatalf("receiver got %d requests, want 2", n)
	}
}

func TestRetryAfterIsHonoured(t *testing.T) {
	w := newWorld(t)
	c := w.env.Company(t, "Later"+randomSuffix())
	srv := httptest.NewServer(http.HandlerFunc(func(rw http.ResponseWriter, _ *http.Request) {
		rw.Header().Set("Retry-After", "120")
		rw.WriteHeader(http.StatusTooManyRequests)
	}))
	defer srv.Close()
	w.endpoint(t, c, srv.URL, "scan_completed")
	ctx := context.Background()
	before := w.clk.now()
	w.d.Dispatch(ctx, []schema.Event{scanCompleted(c.ID, "11111111-2222-4333-8444-555555555555")})
	due, err := w.env.Store.Deliveries.DueDeliveries(ctx, before.Add(time.Hour), 10)
	if err != nil {
		t.Fatal(err)
	}
	var mine []schema.Delivery
	for _, d := range due {
		if d.CompanyID == c.ID {
			mine = append(mine, d)
		}
	}
	if len(mine) != 1 || mine[0].State != delivery.DeliveryRetrying {
		t.Fatalf("due deliveries %+v", mine)
	}
	next, _ := time.Parse(time.RFC3339Nano, mine[0].NextAttemptAt)
	if wait := next.Sub(before); wait != 120*time.Second {
		t.Errorf("next attempt in %s, want Retry-After's 120s", wait)
	}
}

func TestGuardRefusesInternalAddressesAtDialTime(t *testing.T) {
	ctx := context.Background()
	// Loopback allowed (local mode): every other internal address is still
	// refused by the dialer's control hook, before any packet is sent.
	local := webhook.New(webhook.Options{AllowLoopback: true, Timeout: time.Second})
	for _, u := range []string{"http://10.0.0.1:9/hook", "http://169.254.169.254/latest/meta-data", "http://[fd00:ec2::254]/",
		"http://192.168.1.10/", "http://[::ffff:10.1.2.3]/", "http://100.64.0.1/"} {
		res := local.Send(ctx, u, webhook.Message{ID: "x", Payload: []byte("{}")})
		var blocked *netguard.BlockedAddressError
		if !errors.As(res.Err, &blocked) || res.Retryable() {
			t.Errorf("%s: %v (retryable %v), want a refusal at the control hook", u, res.Err, res.Retryable())
		}
	}
	// In AWS mode loopback is refused too, at the hook, and http at all.
	rcv := newReceiver(t)
	aws := webhook.New(webhook.Options{Timeout: time.Second})
	res := aws.Send(ctx, strings.Replace(rcv.URL, "http://", "https://", 1), webhook.Message{ID: "x", Payload: []byte("{}")})
	if !res.Blocked() {
		t.Errorf("loopback in AWS mode: %v", res.Err)
	}
	if res := aws.Send(ctx, rcv.URL, webhook.Message{ID: "x", Payload: []byte("{}")}); res.Err == nil || res.Retryable() {
		t.Errorf("plain http in AWS mode: %+v", res)
	}
	if n := len(rcv.received()); n != 0 {
		t.Errorf("receiver got %d requests", n)
	}
	for _, u := range []string{"http://example.com/", "https://user:pw@example.com/", "https://10.0.0.1/", "https://169.254.169.254/", "ftp://example.com", "/relative"} {
		if _, err := aws.CheckURL(u); err == nil {
			t.Errorf("CheckURL(%q) accepted", u)
		}
	}
	if _, err := aws.CheckURL("https://hooks.example.com/codescan"); err != nil {
		t.Error(err)
	}

	// A delivery to a refused address fails for good: no retry is scheduled.
	w := newWorld(t)
	c := w.env.Company(t, "Guard"+randomSuffix())
	ep, _ := w.endpoint(t, c, "http://169.254.169.254/hook", "scan_completed")
	w.d.Dispatch(ctx, []schema.Event{scanCompleted(c.ID, "99999999-8888-4777-8666-555555555555")})
	logPage, err := w.env.Store.Deliveries.ListAttempts(ctx, c.ID, ep.ID, "", page.Request{Limit: 10})
	log := logPage.Items
	if err != nil || len(log) != 1 || log[0].Outcome != delivery.AttemptFailed || log[0].NextRetryAt != "" ||
		log[0].Error != webhook.OutcomeBlockedAddress {
		t.Fatalf("attempts %+v (%v)", log, err)
	}
}

func TestRedirectsAreNotFollowed(t *testing.T) {
	target := newReceiver(t)
	redirect := httptest.NewServer(http.RedirectHandler(target.URL, http.StatusTemporaryRedirect))
	defer redirect.Close()
	res := webhook.New(webhook.Options{AllowLoopback: true}).Send(context.Background(), redirect.URL, webhook.Message{ID: "x", Payload: []byte("{}")})
	if res.StatusCode != http.StatusTemporaryRedirect || res.Delivered() || len(target.received()) != 0 {
		t.Fatalf("redirect: %+v, target got %d", res, len(target.received()))
	}
}

func TestDispatcherKilledBeforeSendingDeliversOnceAfterRestart(t *testing.T) {
	w := newWorld(t)
	c := w.env.Company(t, "Restart"+randomSuffix())
	rcv := newReceiver(t)
	ep, _ := w.endpoint(t, c, rcv.URL, "scan_completed")
	ctx := context.Background()

	// The change commits while no dispatcher runs.
	ev1 := scanCompleted(c.ID, "aaaaaaaa-0000-4000-8000-000000000001")
	if err := w.env.Store.Ledger.RecordEvent(ctx, ev1); err != nil {
		t.Fatal(err)
	}
	// A second event whose dispatcher claimed the delivery and died before
	// sending it.
	ev2 := scanCompleted(c.ID, "aaaaaaaa-0000-4000-8000-000000000002")
	if err := w.env.Store.Ledger.RecordEvent(ctx, ev2); err != nil {
		t.Fatal(err)
	}
	payload, _ := notify.PayloadOf(ev2)
	if _, claimed, err := w.env.Store.Deliveries.ClaimDelivery(ctx, schema.Delivery{
		ID: delivery.DeliveryID(ev2.ID, delivery.ChannelWebhook, ep.ID), CompanyID: c.ID, EventID: ev2.ID, EventType: ev2.Type,
		Channel: delivery.ChannelWebhook, Recipient: ep.ID, Payload: string(payload),
	}, w.clk.now(), deliveryengine.DefaultLease); err != nil || !claimed {
		t.Fatalf("claim: %v %v", claimed, err)
	}

	// The restarted dispatcher reads the stream from its trim horizon.
	w.startPoller(t)
	w.eventually(t, "the first event", func() bool { return len(rcv.received()) == 1 })
	// The dead claim's lease runs out; the timer picks the delivery up
	// then, not before.
	claimed := w.clk.now()
	w.clk.set(claimed.Add(deliveryengine.DefaultLease - time.Second))
	w.runDue(t, 0)
	w.clk.set(claimed.Add(deliveryengine.DefaultLease + time.Second))
	w.runDue(t, 1)
	if n := len(rcv.received()); n != 2 {
		t.Fatalf("receiver got %d requests after the lease, want 2", n)
	}
	// A second restart sends nothing again.
	w.stop()
	w.startPoller(t)
	w.settled(t)
	if _, err := w.d.RunDue(ctx); err != nil {
		t.Fatal(err)
	}
	got := rcv.received()
	if len(got) != 2 || got[0].header.Get("webhook-id") != ev1.ID || got[1].header.Get("webhook-id") != ev2.ID {
		t.Fatalf("receiver got %d requests", len(got))
	}
}

func randomSuffix() string {
	b := make([]byte, 4)
	_, _ = rand.Read(b)
	return fmt.Sprintf("%x", b)
}

// The AWS stream filter passes exactly what the dispatcher reads: new
// outbox items.
func TestStreamFilterSelectsOutboxItems(t *testing.T) {
	if !strings.Contains(deployspec.StreamFilter, `"entity":{"S":["`+schema.EventEntity+`"]}`) || !strings.Contains(deployspec.StreamFilter, `"eventName":["INSERT"]`) {
		t.Errorf("stream filter %s does not select new %q items", deployspec.StreamFilter, schema.EventEntity)
	}
}

// The producers in the issue write paths reach the receivers: a scan that
// finds a new critical issue sends new_critical_issue (webhook and email)
// and scan_completed, and triaging the issue sends issue_status_changed.
func TestWritePathsProduceEvents(t *testing.T) {
	w := newWorld(t)
	ctx := context.Background()
	st := w.env.Store
	c := w.env.Company(t, "Produce"+randomSuffix())
	rcv := newReceiver(t)
	w.endpoint(t, c, rcv.URL+"/hook", "new_critical_issue", "scan_completed", "issue_status_changed")
	w.startPoller(t)

	p, err := st.Catalog.CreateProject(ctx, schema.Project{CompanyID: c.ID, Name: "payments", Branches: []string{"main"}})
	if err != nil {
		t.Fatal(err)
	}
	sc, err := st.Scans.CreateScan(ctx, scans.Scan{CompanyID: c.ID, ProjectID: p.ID, Branch: "main", Engine: "sarif", Tool: "semgrep", Status: scans.ScanProcessing})
	if err != nil {
		t.Fatal(err)
	}
	issue := findings.Issue{ID: findings.IssueID(c.ID, p.ID, "main", "semgrep", "fp-1"), ProjectID: p.ID, ProjectName: p.Name,
		Branch: "main", Tool: "semgrep", Fingerprint: "fp-1", CWE: 89, FilePath: "app/db.py", Line: 12, Urgency: "CR",
		RuleID: "sqli", Title: "SQL injection", CreatedAt: sc.CreatedAt}
	if _, err := st.Findings.ApplyScan(ctx, c.ID, sc, []findings.Issue{issue}); err != nil {
		t.Fatal(err)
	}
	types := func() map[string]int {
		out := map[string]int{}
		for _, r := range rcv.received() {
			var p notify.Payload
			if json.Unmarshal(r.body, &p) == nil {
				out[p.Type]++
			}
		}
		return out
	}
	w.eventually(t, "new_critical_issue and scan_completed", func() bool {
		got := types()
		return got["new_critical_issue"] == 1 && got["scan_completed"] == 1 && len(w.inbox(t, c.Admin.Email)) >= 1
	})
	m := w.inbox(t, c.Admin.Email)[0]
	if !strings.Contains(m.Subject, "1 new critical issue(s) in payments (main)") || !strings.Contains(m.Text, "SQL injection (app/db.py:12)") {
		t.Errorf("email: %q %q", m.Subject, m.Text)
	}
	status := "false_positive"
	if _, err := st.Triage.UpdateIssue(ctx, c.ID, issue.ID, triage.IssueUpdate{Status: &status}, findings.Actor{UserID: c.Admin.ID}); err != nil {
		t.Fatal(err)
	}
	w.eventually(t, "issue_status_changed", func() bool { return types()["issue_status_changed"] == 1 })
	for _, r := range rcv.received() {
		if strings.Contains(string(r.body), `"issue_status_changed"`) &&
			!strings.Contains(string(r.body), `"previous_status":"open"`) {
			t.Errorf("issue_status_changed payload %s", r.body)
		}
	}
}
