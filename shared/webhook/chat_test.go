package webhook

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// The real forms: Slack incoming webhooks
// (https://hooks.slack.com/services/T…/B…/…), Teams Workflows triggers in
// their Logic Apps form (https://prod-NN.<region>.logic.azure.com:443/workflows/<id>/triggers/manual/paths/invoke?api-version=2016-06-01&sp=…&sv=1.0&sig=…)
// and their Power Platform form
// (https://<env>.NN.environment.api.powerplatform.com:443/powerautomate/automations/direct/workflows/<id>/triggers/manual/paths/invoke?api-version=1&sp=…&sv=1.0&sig=…).
func TestCheckKindURL(t *testing.T) {
	strict, loose := New(Options{}), New(Options{AllowLoopback: true})
	ok := []struct{ kind, url string }{
		{KindSlack, "https://hooks.slack.com/services/T00000000/B00000000/XXXXXXXXXXXXXXXXXXXXXXXX"},
		{KindTeams, "https://prod-27.westeurope.logic.azure.com:443/workflows/0123abcd/triggers/manual/paths/invoke?api-version=2016-06-01&sp=%2Ftriggers%2Fmanual%2Frun&sv=1.0&sig=abc"},
		{KindTeams, "https://default0123.09.environment.api.powerplatform.com:443/powerautomate/automations/direct/workflows/86ff/triggers/manual/paths/invoke?api-version=1&sp=%2Ftriggers%2Fmanual%2Frun&sv=1.0&sig=abc"},
		{KindWebhook, "https://hooks.example.com/x"},
	}
	for _, c := range ok {
		if _, err := strict.CheckKindURL(c.kind, c.url); err != nil {
			t.Errorf("%s %s: %v", c.kind, c.url, err)
		}
	}
	bad := []struct{ kind, url string }{
		{KindSlack, "https://hooks.slack.com.evil.example/services/T0/B0/X"},
		{KindSlack, "https://hooks.slack.com/triggers/T0/1/X"}, // workflow triggers take no Block Kit
		{KindSlack, "https://hooks.slack.com:8443/services/T0/B0/X"},
		{KindSlack, "http://hooks.slack.com/services/T0/B0/X"},
		{KindSlack, "https://hooks.slack.com/services/T0/B0/X/../../../api"},
		{KindTeams, "https://evil.example/workflows/1"},
		{KindTeams, "https://logic.azure.com.evil.example/workflows/1"},
		{KindTeams, "https://outlook.office.com/webhook/1"}, // retired Office 365 connectors
		{KindTeams, "https://x.environment.api.powerplatform.com/other"},
		{KindSlack, "http://127.0.0.1:8080/services/T0/B0/X"}, // loopback without the switch
		{"discord", "https://hooks.example.com/x"},
	}
	for _, c := range bad {
		if _, err := strict.CheckKindURL(c.kind, c.url); err == nil {
			t.Errorf("%s %s accepted", c.kind, c.url)
		}
	}
	if _, err := loose.CheckKindURL(KindTeams, "http://127.0.0.1:8080/anything"); err != nil {
		t.Errorf("loopback with the switch: %v", err)
	}
	if _, err := loose.CheckKindURL(KindSlack, "http://10.0.0.1/services/T0/B0/X"); err == nil {
		t.Error("a private address is never allowed")
	}
}

func TestMask(t *testing.T) {
	for in, want := range map[string]string{
		"https://hooks.slack.com/services/T0/B0/XYZ":                      "https://hooks.slack.com/services/****",
		"https://prod-1.westus.logic.azure.com:443/workflows/1/x?sig=abc": "https://prod-1.westus.logic.azure.com:443/workflows/****",
		"::": "****",
	} {
		if got := Mask(in); got != want {
			t.Errorf("Mask(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestPostReadsTheReason(t *testing.T) {
	answers := []struct {
		status int
		body   string
	}{{200, "ok"}, {404, "no_service"}, {400, "Some <b>html</b> answer"}, {429, "rate_limited"}}
	n := 0
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Content-Type") != "application/json; charset=utf-8" || r.Header.Get("webhook-signature") != "" {
			t.Errorf("headers: %v", r.Header)
		}
		a := answers[n]
		n++
		if a.status == 429 {
			w.Header().Set("Retry-After", "30")
		}
		w.WriteHeader(a.status)
		_, _ = w.Write([]byte(a.body))
	}))
	defer srv.Close()
	c := New(Options{AllowLoopback: true})
	got := []Result{}
	for range answers {
		got = append(got, c.Post(context.Background(), srv.URL+"/services/T/B/X", []byte(`{"text":"x"}`)))
	}
	if !got[0].Delivered() || got[0].Reason != "" {
		t.Errorf("200: %+v", got[0])
	}
	if !got[1].Gone() || got[1].Reason != "no_service" || got[1].Retryable() {
		t.Errorf("404: %+v", got[1])
	}
	if got[2].Reason != "" || got[2].Retryable() || strings.Contains(got[2].Outcome(), "html") {
		t.Errorf("400 with free text: %+v", got[2])
	}
	if !got[3].Retryable() || got[3].RetryAfter.Seconds() != 30 || got[3].Reason != "rate_limited" {
		t.Errorf("429: %+v", got[3])
	}
}
