package tickets

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"regexp"
	"strings"
	"time"

	"github.com/acme/codescan-api/shared/httpapi"
	"github.com/acme/codescan-api/shared/routes"
	"github.com/acme/codescan-api/shared/store/catalog"
	"github.com/acme/codescan-api/shared/store/ddb"
	storetickets "github.com/acme/codescan-api/shared/store/tickets"
	ticketing "github.com/acme/codescan-api/shared/tickets"
)

// The headers of the trackers' deliveries.
const (
	JiraSignatureHeader   = "X-Hub-Signature"                // sha256=<hex HMAC-SHA256 of the body>
	JiraDeliveryHeader    = "X-Atlassian-Webhook-Identifier" // unchanged across retries
	GitHubSignatureHeader = "X-Hub-Signature-256"
	GitHubEventHeader     = "X-GitHub-Event"
	GitHubDeliveryHeader  = "X-GitHub-Delivery"
)

// EventTTL is how long a delivery id is remembered against replays.
const EventTTL = 7 * 24 * time.Hour

// errForged is every refusal of a delivery's origin (no or bad signature,
// no such integration, no secret): one answer, so uuids cannot be probed.
var errForged = httpapi.ErrUnauthenticated

type eventAnswer struct {
	Status string `json:"status"`
	Result string `json:"result"`
}

// Results besides shared/tickets'.
const (
	resultDuplicate = "duplicate" // a delivery already received
	resultEcho      = "echo"      // caused by our own account
	resultIgnored   = "ignored"   // not a ticket state change
	resultPong      = "pong"
)

var deliveryPattern = regexp.MustCompile(`^[A-Za-z0-9-]{1,64}$`)

// signed reports whether sig ("sha256=<hex>", the only value) is body's
// HMAC-SHA256 with secret, compared in constant time.
func signed(values []string, secret string, body []byte) bool {
	if len(values) != 1 {
		return false
	}
	hexSig, ok := strings.CutPrefix(strings.TrimSpace(values[0]), "sha256=")
	if !ok || len(hexSig) != 2*sha256.Size {
		return false
	}
	sig, err := hex.DecodeString(hexSig)
	if err != nil {
		return false
	}
	mac := hmac.New(sha256.New, []byte(secret))
	mac.Write(body)
	return hmac.Equal(mac.Sum(nil), sig)
}

// verify checks a delivery's signature (header) over body with the
// integration's webhook secret, sealed to record: errForged without a
// secret, when it cannot be opened (logged by record, never the value),
// or when the signature does not hold.
func (h handlers) verify(r *http.Request, header string, body []byte, sealed, record string) error {
	if sealed == "" {
		return errForged
	}
	secret, err := h.sealer.Open(r.Context(), sealed, record)
	if err != nil {
		h.log.Warn("webhook secret cannot be opened", "record", record)
		return errForged
	}
	if !signed(r.Header.Values(header), secret, body) {
		return errForged
	}
	return nil
}

// jiraEvents answers POST /integrations/jira/{integration_uuid}/events: a
// Jira Cloud admin webhook's delivery, signed with the integration's
// secret (X-Hub-Signature). Checked before anything of the body is read;
// remembered by its identifier; an issue's change by another account is
// carried to the findings.
func (h handlers) jiraEvents(w http.ResponseWriter, r *http.Request) error {
	body, err := httpapi.ReadBody(r, routes.MaxSCMEventBytes)
	if err != nil {
		return err
	}
	ctx := r.Context()
	in, err := h.tickets.JiraByHook(ctx, r.PathValue("integration_uuid"))
	if errors.Is(err, ddb.ErrNotFound) {
		return errForged
	} else if err != nil {
		return err
	}
	if err := h.verify(r, JiraSignatureHeader, body, in.SealedWebhookSecret, storetickets.JiraSecretRecord(in.CompanyID, in.UUID)); err != nil {
		return err
	}
	var ev struct {
		WebhookEvent string `json:"webhookEvent"`
		User         struct {
			AccountID string `json:"accountId"`
		} `json:"user"`
		Issue *ticketing.JiraIssue `json:"issue"`
	}
	if err := json.Unmarshal(body, &ev); err != nil {
		return bad("the event is not JSON")
	}
	if ev.WebhookEvent != "jira:issue_updated" || ev.Issue == nil || ev.Issue.Key == "" {
		return answer(w, resultIgnored)
	}
	if ev.User.AccountID != "" && ev.User.AccountID == in.AccountID {
		return answer(w, resultEcho)
	}
	ch := ticketing.Change{CompanyID: in.CompanyID, Integration: in.UUID, TicketKey: ev.Issue.Key,
		Remote: ticketing.JiraRemote(*ev.Issue, in), Source: "Jira " + ev.Issue.Key}
	return h.deliver(w, r, in.CompanyID, in.UUID, r.Header.Get(JiraDeliveryHeader), body, ch)
}

// deliver remembers a verified delivery and applies its change; a failed
// change is forgotten, so the tracker's retry is applied.
func (h handlers) deliver(w http.ResponseWriter, r *http.Request, companyID int64, integration, deliveryID string, body []byte, ch ticketing.Change) error {
	ctx := r.Context()
	if !deliveryPattern.MatchString(deliveryID) {
		sum := sha256.Sum256(body)
		deliveryID = hex.EncodeToString(sum[:16])
	}
	if err := h.tickets.RememberEvent(ctx, companyID, integration, deliveryID, h.now(), EventTTL); errors.Is(err, storetickets.ErrReplay) {
		return answer(w, resultDuplicate)
	} else if err != nil {
		return err
	}
	res, err := h.ticketer.Apply(ctx, ch)
	if err != nil {
		_ = h.tickets.ForgetEvent(ctx, companyID, integration, deliveryID)
		return err
	}
	return answer(w, res)
}

func answer(w http.ResponseWriter, result string) error {
	return httpapi.WriteJSON(w, http.StatusOK, eventAnswer{Status: "ok", Result: result})
}

// githubEvents answers POST
// /integrations/scm-provider/{integration_uuid}/ticket-events: GitHub
// issues events of the repositories tickets go to, signed with the
// source-code-host integration's webhook secret (X-Hub-Signature-256).
func (h handlers) githubEvents(w http.ResponseWriter, r *http.Request) error {
	body, err := httpapi.ReadBody(r, routes.MaxSCMEventBytes)
	if err != nil {
		return err
	}
	ctx := r.Context()
	in, err := h.store.Catalog.IntegrationByHook(ctx, r.PathValue("integration_uuid"))
	if errors.Is(err, ddb.ErrNotFound) {
		return errForged
	} else if err != nil {
		return err
	}
	if err := h.verify(r, GitHubSignatureHeader, body, in.SealedWebhookSecret, catalog.IntegrationWebhookRecord(in.CompanyID, in.UUID)); err != nil {
		return err
	}
	switch r.Header.Get(GitHubEventHeader) {
	case "ping":
		return answer(w, resultPong)
	case "issues":
	default:
		return answer(w, resultIgnored)
	}
	var ev struct {
		Action string `json:"action"`
		Issue  struct {
			Number      int    `json:"number"`
			State       string `json:"state"`
			StateReason string `json:"state_reason"`
		} `json:"issue"`
		Repository struct {
			FullName string `json:"full_name"`
		} `json:"repository"`
		Sender struct {
			Login string `json:"login"`
		} `json:"sender"`
	}
	if err := json.Unmarshal(body, &ev); err != nil {
		return bad("the event is not JSON")
	}
	if ev.Action != "closed" && ev.Action != "reopened" {
		return answer(w, resultIgnored)
	}
	if strings.EqualFold(ev.Sender.Login, in.AccountName) {
		return answer(w, resultEcho)
	}
	key := fmt.Sprintf("%s#%d", ev.Repository.FullName, ev.Issue.Number)
	ch := ticketing.Change{CompanyID: in.CompanyID, Integration: in.UUID, TicketKey: key,
		Remote: ticketing.GitHubRemote(ev.Issue.State, ev.Issue.StateReason), Source: "GitHub issue " + key}
	return h.deliver(w, r, in.CompanyID, in.UUID, r.Header.Get(GitHubDeliveryHeader), body, ch)
}
