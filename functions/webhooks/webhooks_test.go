package webhooks_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	standardwebhooks "github.com/standard-webhooks/standard-webhooks/libraries/go"

	"github.com/acme/codescan-api/functions/webhooks"
	"github.com/acme/codescan-api/internal/testenv"
	"github.com/acme/codescan-api/shared/deliveryengine"
	"github.com/acme/codescan-api/shared/secrets"
	"github.com/acme/codescan-api/shared/store/delivery"
	"github.com/acme/codescan-api/shared/store/schema"
	"github.com/acme/codescan-api/shared/webhook"
)

func TestMain(m *testing.M) { testenv.Main(m) }

type fixture struct {
	env    *testenv.Env
	h      http.Handler
	sealer secrets.Sealer
	acme   *testenv.Company
	other  *testenv.Company
	member testenv.User
	// at is the group's clock; zero: the wall clock.
	at time.Time
}

func newFixture(t *testing.T) *fixture {
	t.Helper()
	env := testenv.New(t)
	sealer := testenv.Sealer(t)
	f := &fixture{env: env, sealer: sealer}
	env.Deps.Now = func() time.Time {
		if f.at.IsZero() {
			return time.Now()
		}
		return f.at
	}
	f.h = webhooks.NewWithOptions(env.Deps, webhooks.Options{Sealer: sealer, Webhooks: webhook.New(webhook.Options{AllowLoopback: true, Timeout: 2 * time.Second})})
	f.acme = env.Company(t, "Acme")
	f.other = env.Company(t, "Other")
	f.member = env.User(t, f.acme, testenv.UserSpec{Email: "member@acme.test", Permissions: []string{"integrations.manage_integration"}})
	return f
}

type webhookView struct {
	ID                   string   `json:"id"`
	URL                  string   `json:"url"`
	Types                []string `json:"types"`
	Description          string   `json:"description"`
	Active               bool     `json:"active"`
	PreviousSecretExpiry *string  `json:"previous_secret_expires_at"`
}

type created struct {
	Webhook webhookView `json:"webhook"`
	Secret  string      `json:"secret"`
}

func (f *fixture) create(t *testing.T, c *testenv.Company, url string, types ...string) created {
	t.Helper()
	b, _ := json.Marshal(map[string]any{"url": url, "types": types, "description": "intake"})
	res := testenv.Do(t, f.h, "POST", "/webhooks", string(b), testenv.Key(c.Admin)...)
	if res.Status != http.StatusCreated {
		t.Fatalf("create: %d %s", res.Status, res.Body)
	}
	var out created
	res.Decode(t, &out)
	return out
}

type recorder struct {
	*httptest.Server
	mu  sync.Mutex
	got []*http.Request
	bod [][]byte
}

func newRecorder(t *testing.T, status int) *recorder {
	r := &recorder{}
	r.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		b, _ := io.ReadAll(req.Body)
		r.mu.Lock()
		r.got, r.bod = append(r.got, req), append(r.bod, b)
		r.mu.Unlock()
		w.WriteHeader(status)
	}))
	t.Cleanup(r.Close)
	return r
}

func TestCreateShowsTheSecretOnceAndStoresItSealed(t *testing.T) {
	f := newFixture(t)
	c := f.create(t, f.acme, "https://hooks.example.com/codescan", "scan_completed", "new_critical_issue", "scan_completed")
	if !strings.HasPrefix(c.Secret, "whsec_") || c.Webhook.URL != "https://hooks.example.com/codescan" ||
		len(c.Webhook.Types) != 2 || !c.Webhook.Active || c.Webhook.Description != "intake" {
		t.Fatalf("created %+v", c)
	}
	ep, err := f.env.Store.Deliveries.GetWebhook(context.Background(), f.acme.ID, c.Webhook.ID)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(ep.SealedSecret, strings.TrimPrefix(c.Secret, "whsec_")) {
		t.Error("secret stored in plain text")
	}
	if got, err := f.sealer.Open(context.Background(), ep.SealedSecret, delivery.WebhookSecretRecord(f.acme.ID, ep.ID)); err != nil || got != c.Secret {
		t.Errorf("sealed secret does not open to the shown one: %v", err)
	}
	for _, path := range []string{"/webhooks/" + c.Webhook.ID, "/webhooks"} {
		res := testenv.Do(t, f.h, "GET", path, "", testenv.Key(f.acme.Admin)...)
		if res.Status != http.StatusOK || strings.Contains(string(res.Body), c.Secret) || strings.Contains(string(res.Body), "whsec_") {
			t.Errorf("GET %s: %d, secret shown again: %s", path, res.Status, res.Body)
		}
	}
	if strings.Contains(f.env.Logs.String(), strings.TrimPrefix(c.Secret, "whsec_")) {
		t.Error("secret logged")
	}
}

func TestBadInputIs400AndStoresNothing(t *testing.T) {
	f := newFixture(t)
	for _, body := range []string{
		`{"url":"http://10.0.0.5/hook","types":["scan_completed"]}`,
		`{"url":"https://169.254.169.254/","types":["scan_completed"]}`,
		`{"url":"https://u:p@hooks.example.com/","types":["scan_completed"]}`,
		`{"url":"hooks.example.com","types":["scan_completed"]}`,
		`{"url":"https://hooks.example.com/","types":[]}`,
		`{"url":"https://hooks.example.com/","types":["nope"]}`,
		`{"url":"https://hooks.example.com/","types":"scan_completed"}`,
		`{"url":"https://hooks.example.com/"}`,
		`{"url":"https://hooks.example.com/","types":["scan_completed"],"secret":"x"}`,
		`{"url":null,"types":["scan_completed"]}`,
		`{"url":"https://hooks.example.com/","types":["scan_completed"],"description":"` + strings.Repeat("x", 501) + `"}`,
		`not json`,
	} {
		res := testenv.Do(t, f.h, "POST", "/webhooks", body, testenv.Key(f.acme.Admin)...)
		if res.Status != http.StatusBadRequest {
			t.Errorf("%s: %d %s", body, res.Status, res.Body)
		}
	}
	if n, _ := f.env.Store.Deliveries.WebhookCount(context.Background(), f.acme.ID); n != 0 {
		t.Errorf("%d endpoints stored", n)
	}
	c := f.create(t, f.acme, "https://hooks.example.com/a", "scan_failed")
	for _, body := range []string{`{"active":"yes"}`, `{"types":["nope"]}`, `{"url":"http://192.168.0.1/"}`, `{"secret":"x"}`} {
		res := testenv.Do(t, f.h, "PATCH", "/webhooks/"+c.Webhook.ID, body, testenv.Key(f.acme.Admin)...)
		if res.Status != http.StatusBadRequest {
			t.Errorf("PATCH %s: %d %s", body, res.Status, res.Body)
		}
	}
	for _, q := range []string{"?page_size=0", "?page_size=101", "?next_page_token=garbage", "?page=2"} {
		if res := testenv.Do(t, f.h, "GET", "/webhooks"+q, "", testenv.Key(f.acme.Admin)...); res.Status != http.StatusBadRequest {
			t.Errorf("GET /webhooks%s: %d", q, res.Status)
		}
	}
	// A port is a number from 1 to 65535; the answer names the field.
	for _, port := range []string{"99999", "0", "65536", "4294967297"} {
		body := `{"url":"https://hooks.example.com:` + port + `/","types":["scan_completed"]}`
		for _, req := range []struct{ method, path string }{{"POST", "/webhooks"}, {"PATCH", "/webhooks/" + c.Webhook.ID}} {
			res := testenv.Do(t, f.h, req.method, req.path, body, testenv.Key(f.acme.Admin)...)
			if res.Status != http.StatusBadRequest || !strings.Contains(string(res.Body), "url must have a port from 1 to 65535") {
				t.Errorf("%s port %s: %d %s", req.method, port, res.Status, res.Body)
			}
		}
	}
	if res := testenv.Do(t, f.h, "POST", "/webhooks", `{"url":"https://hooks.example.com:65535/","types":["scan_completed"]}`, testenv.Key(f.acme.Admin)...); res.Status != http.StatusCreated {
		t.Errorf("port 65535: %d %s", res.Status, res.Body)
	}
}

func TestAdminsOnlyAndTenantIsolation(t *testing.T) {
	f := newFixture(t)
	c := f.create(t, f.acme, "https://hooks.example.com/a", "scan_failed")
	deliveries := f.deliveryToken(t, c.Webhook.ID) // before other endpoints would be sent to
	if res := testenv.Do(t, f.h, "GET", "/webhooks", "", testenv.Key(f.member)...); res.Status != http.StatusForbidden {
		t.Errorf("member: %d", res.Status)
	}
	missing := "/webhooks/" + delivery.NewWebhookID()
	for _, tc := range []struct{ method, suffix, body string }{
		{"GET", "", ""}, {"PATCH", "", `{"active":false}`}, {"DELETE", "", ""}, {"POST", "/rotate-secret", ""},
		{"POST", "/test", ""}, {"GET", "/deliveries", ""}, {"POST", "/deliveries/0123456789abcdef0123456789abcdef/redeliver", ""},
	} {
		foreign := testenv.Do(t, f.h, tc.method, "/webhooks/"+c.Webhook.ID+tc.suffix, tc.body, testenv.Key(f.other.Admin)...)
		absent := testenv.Do(t, f.h, tc.method, missing+tc.suffix, tc.body, testenv.Key(f.other.Admin)...)
		if foreign.Status != http.StatusNotFound || string(foreign.Body) != string(absent.Body) {
			t.Errorf("%s %s: another company's endpoint answers %d %s, a missing one %d %s", tc.method, tc.suffix, foreign.Status, foreign.Body, absent.Status, absent.Body)
		}
	}
	if res := testenv.Do(t, f.h, "GET", "/webhooks/not-a-uuid", "", testenv.Key(f.acme.Admin)...); res.Status != http.StatusBadRequest {
		t.Errorf("bad id: %d %s", res.Status, res.Body)
	}
	// Another company's page token is refused.
	for range 3 {
		f.create(t, f.acme, "https://hooks.example.com/b", "scan_failed")
	}
	var page struct {
		Webhooks []webhookView `json:"webhooks"`
		Total    int           `json:"total_webhooks"`
		Next     *string       `json:"next_page_token"`
	}
	testenv.Do(t, f.h, "GET", "/webhooks?page_size=2", "", testenv.Key(f.acme.Admin)...).Decode(t, &page)
	if len(page.Webhooks) != 2 || page.Total != 4 || page.Next == nil {
		t.Fatalf("page %+v", page)
	}
	// Every token this list did not issue is the same 400, under either name.
	first := *page.Next
	tampered := []byte(first)
	tampered[len(tampered)/4] ^= 1
	for name, tc := range map[string]struct {
		token string
		by    testenv.User
	}{
		"another company's": {first, f.other.Admin}, "tampered": {string(tampered), f.acme.Admin},
		"garbage": {"garbage", f.acme.Admin}, "another list's": {deliveries, f.acme.Admin},
		"without its checksum": {first[:strings.LastIndex(first, ".")], f.acme.Admin},
	} {
		for _, param := range []string{"next_page_token", "page_token"} {
			res := testenv.Do(t, f.h, "GET", "/webhooks?"+param+"="+url.QueryEscape(tc.token), "", testenv.Key(tc.by)...)
			if res.Status != http.StatusBadRequest || strings.TrimSpace(string(res.Body)) != `{"error":"Invalid page token"}` {
				t.Errorf("%s token as %s: %d %s", name, param, res.Status, res.Body)
			}
		}
	}
	res := testenv.Do(t, f.h, "GET", "/webhooks/"+c.Webhook.ID+"/deliveries?page_token="+url.QueryEscape(first), "", testenv.Key(f.acme.Admin)...)
	if res.Status != http.StatusBadRequest || strings.TrimSpace(string(res.Body)) != `{"error":"Invalid page token"}` {
		t.Errorf("the endpoint list's token on the delivery log: %d %s", res.Status, res.Body)
	}
	seen := map[string]bool{}
	for _, w := range page.Webhooks {
		seen[w.ID] = true
	}
	testenv.Do(t, f.h, "GET", "/webhooks?page_size=2&next_page_token="+*page.Next, "", testenv.Key(f.acme.Admin)...).Decode(t, &page)
	for _, w := range page.Webhooks {
		seen[w.ID] = true
	}
	if len(seen) != 4 || page.Next != nil {
		t.Errorf("two pages gave %d endpoints, next %v", len(seen), page.Next)
	}
}

// deliveryToken returns a next_page_token of the endpoint's delivery log
// (the company's only endpoint, moved to a loopback receiver answering 503):
// two failed deliveries, read one a page.
func (f *fixture) deliveryToken(t *testing.T, id string) string {
	t.Helper()
	off := false
	if err := f.env.Store.Deliveries.UpdateNotificationSetting(context.Background(), f.acme.ID, 0, "scan_failed", []delivery.ChannelChange{{Channel: delivery.ChannelEmail, Value: &off}}); err != nil {
		t.Fatal(err)
	}
	rcv := newRecorder(t, http.StatusServiceUnavailable)
	u := rcv.URL + "/hook"
	ep, err := f.env.Store.Deliveries.GetWebhook(context.Background(), f.acme.ID, id)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.env.Store.Deliveries.UpdateWebhook(context.Background(), f.acme.ID, ep.ID, delivery.WebhookChange{URL: &u}); err != nil {
		t.Fatal(err)
	}
	d := &deliveryengine.Engine{Store: deliveryengine.StoreOf(f.env.Store), Sealer: f.sealer, Webhooks: webhook.New(webhook.Options{AllowLoopback: true}),
		Backoff: deliveryengine.DefaultBackoff, Log: f.env.Deps.Server.Log}
	for _, id := range []string{"scan_failed-t1", "scan_failed-t2"} {
		d.Dispatch(context.Background(), []schema.Event{{ID: id, CompanyID: f.acme.ID, Type: "scan_failed", CreatedAt: time.Now(),
			Data: json.RawMessage(`{"scan_id":"s1","project_id":1,"project_name":"p","branch":"main","tool":"t","failed_reason":"r"}`)}})
	}
	var log struct {
		Next *string `json:"next_page_token"`
	}
	testenv.Do(t, f.h, "GET", "/webhooks/"+id+"/deliveries?page_size=1", "", testenv.Key(f.acme.Admin)...).Decode(t, &log)
	if log.Next == nil {
		t.Fatal("no second page of deliveries")
	}
	return *log.Next
}

func TestUpdateDeleteAndCount(t *testing.T) {
	f := newFixture(t)
	c := f.create(t, f.acme, "https://hooks.example.com/a", "scan_failed")
	var one struct {
		Webhook webhookView `json:"webhook"`
	}
	res := testenv.Do(t, f.h, "PATCH", "/webhooks/"+c.Webhook.ID, `{"url":"https://hooks.example.com/b","types":["sla_breach"],"active":false}`, testenv.Key(f.acme.Admin)...)
	res.Decode(t, &one)
	if res.Status != http.StatusOK || one.Webhook.URL != "https://hooks.example.com/b" || one.Webhook.Active || one.Webhook.Types[0] != "sla_breach" || one.Webhook.Description != "intake" {
		t.Fatalf("patch: %d %s", res.Status, res.Body)
	}
	if res := testenv.Do(t, f.h, "DELETE", "/webhooks/"+c.Webhook.ID, "", testenv.Key(f.acme.Admin)...); res.Status != http.StatusOK {
		t.Fatalf("delete: %d", res.Status)
	}
	if res := testenv.Do(t, f.h, "DELETE", "/webhooks/"+c.Webhook.ID, "", testenv.Key(f.acme.Admin)...); res.Status != http.StatusNotFound {
		t.Errorf("second delete: %d", res.Status)
	}
	if n, _ := f.env.Store.Deliveries.WebhookCount(context.Background(), f.acme.ID); n != 0 {
		t.Errorf("count after delete: %d", n)
	}
}

func TestRotationSignsWithBothSecretsAndTestSends(t *testing.T) {
	f := newFixture(t)
	rcv := newRecorder(t, http.StatusNoContent)
	c := f.create(t, f.acme, rcv.URL+"/hook", "scan_failed")
	var rot created
	rotated := time.Now().UTC().Truncate(time.Second)
	f.at = rotated
	res := testenv.Do(t, f.h, "POST", "/webhooks/"+c.Webhook.ID+"/rotate-secret", "", testenv.Key(f.acme.Admin)...)
	res.Decode(t, &rot)
	overlapEnds := rotated.Add(webhooks.RotationOverlap)
	if res.Status != http.StatusOK || rot.Secret == c.Secret || !strings.HasPrefix(rot.Secret, "whsec_") ||
		rot.Webhook.PreviousSecretExpiry == nil || *rot.Webhook.PreviousSecretExpiry != overlapEnds.Format(time.RFC3339) {
		t.Fatalf("rotate: %d %s", res.Status, res.Body)
	}
	f.at = overlapEnds.Add(-time.Second) // the overlap's last second
	res = testenv.Do(t, f.h, "POST", "/webhooks/"+c.Webhook.ID+"/test", "", testenv.Key(f.acme.Admin)...)
	var out struct {
		Delivered  bool `json:"delivered"`
		StatusCode *int `json:"status_code"`
	}
	res.Decode(t, &out)
	if !out.Delivered || out.StatusCode == nil || *out.StatusCode != http.StatusNoContent || len(rcv.got) != 1 {
		t.Fatalf("test: %s", res.Body)
	}
	for _, s := range []string{c.Secret, rot.Secret} {
		wh, _ := standardwebhooks.NewWebhook(s)
		if err := wh.Verify(rcv.bod[0], rcv.got[0].Header); err != nil {
			t.Errorf("a receiver with the old or the new secret fails to verify: %v", err)
		}
	}
	if n := len(strings.Fields(rcv.got[0].Header.Get("webhook-signature"))); n != 2 {
		t.Errorf("%d signatures during rotation, want 2", n)
	}
	// From the overlap's end only the new secret signs, and the webhook no
	// longer shows the previous secret's expiry.
	f.at = overlapEnds
	testenv.Do(t, f.h, "POST", "/webhooks/"+c.Webhook.ID+"/test", "", testenv.Key(f.acme.Admin)...)
	var shown struct {
		Webhook webhookView `json:"webhook"`
	}
	testenv.Do(t, f.h, "GET", "/webhooks/"+c.Webhook.ID, "", testenv.Key(f.acme.Admin)...).Decode(t, &shown)
	if shown.Webhook.PreviousSecretExpiry != nil {
		t.Errorf("previous_secret_expires_at %s after the overlap", *shown.Webhook.PreviousSecretExpiry)
	}
	old, _ := standardwebhooks.NewWebhook(c.Secret)
	if err := old.Verify(rcv.bod[1], rcv.got[1].Header); err == nil {
		t.Error("the old secret still verifies after the overlap")
	}
	// A test to a private address is refused at dial time: 200 with the reason.
	ep, _ := f.env.Store.Deliveries.GetWebhook(context.Background(), f.acme.ID, c.Webhook.ID)
	priv := "http://10.1.2.3/hook"
	if _, err := f.env.Store.Deliveries.UpdateWebhook(context.Background(), f.acme.ID, ep.ID, delivery.WebhookChange{URL: &priv}); err != nil {
		t.Fatal(err)
	}
	res = testenv.Do(t, f.h, "POST", "/webhooks/"+c.Webhook.ID+"/test", "", testenv.Key(f.acme.Admin)...)
	if !strings.Contains(string(res.Body), `"outcome":"blocked_address"`) || strings.Contains(string(res.Body), "10.1.2.3") || strings.Contains(string(res.Body), `"delivered":true`) {
		t.Errorf("private test: %s", res.Body)
	}
}

func TestDeliveryLogAndRedeliver(t *testing.T) {
	f := newFixture(t)
	rcv := newRecorder(t, http.StatusServiceUnavailable)
	c := f.create(t, f.acme, rcv.URL+"/hook", "scan_failed")
	d := &deliveryengine.Engine{Store: deliveryengine.StoreOf(f.env.Store), Sealer: f.sealer, Webhooks: webhook.New(webhook.Options{AllowLoopback: true}),
		Backoff: deliveryengine.DefaultBackoff, Log: f.env.Deps.Server.Log}
	off := false
	if err := f.env.Store.Deliveries.UpdateNotificationSetting(context.Background(), f.acme.ID, 0, "scan_failed", []delivery.ChannelChange{{Channel: delivery.ChannelEmail, Value: &off}}); err != nil {
		t.Fatal(err)
	}
	ev := schema.Event{ID: "scan_failed-s1", CompanyID: f.acme.ID, Type: "scan_failed", CreatedAt: time.Now(),
		Data: json.RawMessage(`{"scan_id":"s1","project_id":1,"project_name":"p","branch":"main","tool":"t","failed_reason":"r"}`)}
	d.Dispatch(context.Background(), []schema.Event{ev})

	var log struct {
		Deliveries []struct {
			DeliveryID  string  `json:"delivery_id"`
			EventID     string  `json:"event_id"`
			Outcome     string  `json:"outcome"`
			StatusCode  *int    `json:"status_code"`
			NextRetryAt *string `json:"next_retry_at"`
		} `json:"deliveries"`
	}
	testenv.Do(t, f.h, "GET", "/webhooks/"+c.Webhook.ID+"/deliveries", "", testenv.Key(f.acme.Admin)...).Decode(t, &log)
	if len(log.Deliveries) != 1 || log.Deliveries[0].Outcome != "failed" || *log.Deliveries[0].StatusCode != 503 ||
		log.Deliveries[0].NextRetryAt == nil || log.Deliveries[0].EventID != ev.ID {
		t.Fatalf("log %+v", log)
	}
	id := log.Deliveries[0].DeliveryID
	rcv.Config.Handler = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(http.StatusOK) })
	res := testenv.Do(t, f.h, "POST", "/webhooks/"+c.Webhook.ID+"/deliveries/"+id+"/redeliver", "", testenv.Key(f.acme.Admin)...)
	if res.Status != http.StatusOK || !strings.Contains(string(res.Body), `"state":"delivered"`) || !strings.Contains(string(res.Body), `"attempts":2`) {
		t.Fatalf("redeliver: %d %s", res.Status, res.Body)
	}
	testenv.Do(t, f.h, "GET", "/webhooks/"+c.Webhook.ID+"/deliveries?status=succeeded", "", testenv.Key(f.acme.Admin)...).Decode(t, &log)
	if len(log.Deliveries) != 1 || log.Deliveries[0].Outcome != "succeeded" {
		t.Fatalf("succeeded log %+v", log)
	}
	testenv.Do(t, f.h, "GET", "/webhooks/"+c.Webhook.ID+"/deliveries?page_size=1", "", testenv.Key(f.acme.Admin)...).Decode(t, &log)
	if len(log.Deliveries) != 1 || log.Deliveries[0].Outcome != "succeeded" {
		t.Fatalf("newest first %+v", log)
	}
	for _, bad := range []string{"nothex", "0123456789abcdef0123456789abcdef"} {
		if res := testenv.Do(t, f.h, "POST", "/webhooks/"+c.Webhook.ID+"/deliveries/"+bad+"/redeliver", "", testenv.Key(f.acme.Admin)...); res.Status != http.StatusNotFound {
			t.Errorf("redeliver %s: %d", bad, res.Status)
		}
	}
	// A delivery of another endpoint is not this endpoint's.
	c2 := f.create(t, f.acme, rcv.URL+"/other", "scan_failed")
	if res := testenv.Do(t, f.h, "POST", "/webhooks/"+c2.Webhook.ID+"/deliveries/"+id+"/redeliver", "", testenv.Key(f.acme.Admin)...); res.Status != http.StatusNotFound {
		t.Errorf("other endpoint's delivery: %d", res.Status)
	}
	if res := testenv.Do(t, f.h, "GET", "/webhooks/"+c.Webhook.ID+"/deliveries?status=maybe", "", testenv.Key(f.acme.Admin)...); res.Status != http.StatusBadRequest {
		t.Errorf("bad status filter: %d", res.Status)
	}
}

// An endpoint receives only the events recorded while it was receiving
// them: none from before it was registered, none recorded while it was
// disabled, none of a type from before it subscribed to it; the events
// after each change are delivered.
func TestNoBacklogForNewReceivers(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	off := false
	if err := f.env.Store.Deliveries.UpdateNotificationSetting(ctx, f.acme.ID, 0, "scan_failed", []delivery.ChannelChange{{Channel: delivery.ChannelEmail, Value: &off}}); err != nil {
		t.Fatal(err)
	}
	d := &deliveryengine.Engine{Store: deliveryengine.StoreOf(f.env.Store), Sealer: f.sealer, Webhooks: webhook.New(webhook.Options{AllowLoopback: true}),
		Backoff: deliveryengine.DefaultBackoff, Log: f.env.Deps.Server.Log}
	event := func(id, typ string, at time.Time) schema.Event {
		data := `{"scan_id":"s1","project_id":1,"project_name":"p","branch":"main","tool":"t","failed_reason":"r"}`
		if typ == "scan_completed" {
			data = `{"scan_id":"s1","project_id":1,"project_name":"p","branch":"main","tool":"t","new_issues":0,"fixed_issues":0}`
		}
		return schema.Event{ID: id, CompanyID: f.acme.ID, Type: typ, CreatedAt: at, Data: json.RawMessage(data)}
	}
	delivered := func(rcv *recorder) []string {
		rcv.mu.Lock()
		defer rcv.mu.Unlock()
		var ids []string
		for _, b := range rcv.bod {
			var p struct {
				ID string `json:"id"`
			}
			_ = json.Unmarshal(b, &p)
			ids = append(ids, p.ID)
		}
		return ids
	}

	before := time.Now().Add(-time.Minute) // recorded, not yet dispatched
	rcv := newRecorder(t, http.StatusNoContent)
	c := f.create(t, f.acme, rcv.URL+"/hook", "scan_failed")
	d.Dispatch(ctx, []schema.Event{event("scan_failed-old", "scan_failed", before), event("scan_failed-new", "scan_failed", time.Now())})
	if got := delivered(rcv); len(got) != 1 {
		t.Fatalf("a new endpoint got %d events (%v), want only the one recorded after it", len(got), got)
	}

	// Disabled, an event recorded; enabled again: that event is not its.
	for _, body := range []string{`{"active":false}`, `{"active":true}`} {
		if res := testenv.Do(t, f.h, "PATCH", "/webhooks/"+c.Webhook.ID, body, testenv.Key(f.acme.Admin)...); res.Status != http.StatusOK {
			t.Fatalf("PATCH %s: %d %s", body, res.Status, res.Body)
		}
		if body == `{"active":false}` {
			before = time.Now()
		}
	}
	d.Dispatch(ctx, []schema.Event{event("scan_failed-while-off", "scan_failed", before)})
	if got := delivered(rcv); len(got) != 1 {
		t.Fatalf("an event recorded while the endpoint was disabled was delivered: %v", got)
	}

	// Subscribed to another type: that type's earlier events are not its.
	before = time.Now()
	if res := testenv.Do(t, f.h, "PATCH", "/webhooks/"+c.Webhook.ID, `{"types":["scan_failed","scan_completed"]}`, testenv.Key(f.acme.Admin)...); res.Status != http.StatusOK {
		t.Fatalf("PATCH types: %d %s", res.Status, res.Body)
	}
	d.Dispatch(ctx, []schema.Event{event("scan_completed-old", "scan_completed", before), event("scan_completed-new", "scan_completed", time.Now())})
	if got := delivered(rcv); len(got) != 2 {
		t.Fatalf("after subscribing: %v, want the new scan_completed only", got)
	}
}
