package issues

import (
	"encoding/json"
	"errors"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/acme/codescan-api/shared/httpapi"
	"github.com/acme/codescan-api/shared/store/ddb"
	"github.com/acme/codescan-api/shared/store/findings"
	"github.com/acme/codescan-api/shared/store/schema"
)

// acceptInput is what a triage may say about an accepted risk beside its
// status and reason.
type acceptInput struct {
	ExpiresAt *string         `json:"expires_at"`
	Owner     json.RawMessage `json:"owner"`
}

// terms reads an acceptance's terms for a change to status with reason:
// accepted_risk needs a reason and takes an end (RFC 3339, in the future,
// at most schema.MaxAcceptanceDays days ahead) and an owner (an active user of
// the company; null or absent: the author); other statuses take neither.
// Members left out are zero (see store.IssueUpdate.Terms).
func (h handlers) terms(r *http.Request, companyID int64, status string, reason *string, in acceptInput) (schema.Terms, error) {
	var t schema.Terms
	if status != "accepted_risk" {
		if in.ExpiresAt != nil || in.Owner != nil {
			return t, httpapi.Invalid("expires_at and owner apply only with status accepted_risk")
		}
		return t, nil
	}
	if reason == nil || strings.TrimSpace(*reason) == "" {
		return t, httpapi.Invalid("reason is required with status accepted_risk")
	}
	if in.ExpiresAt != nil {
		end, err := time.Parse(time.RFC3339, strings.TrimSpace(*in.ExpiresAt))
		if err != nil {
			return t, httpapi.Invalid("expires_at must be an RFC 3339 date-time")
		}
		end = end.Truncate(time.Second)
		if err := schema.CheckAcceptanceEnd(end, h.now()); err != nil {
			return t, httpapi.Invalid("%s", err.Error())
		}
		t.ExpiresAt = end.UTC().Format(time.RFC3339)
	}
	if in.Owner != nil && string(in.Owner) != "null" {
		var id int64
		if err := json.Unmarshal(in.Owner, &id); err != nil || id <= 0 {
			return t, httpapi.Invalid("owner must be a user id or null")
		}
		u, err := h.store.Tenancy.GetUser(r.Context(), companyID, id)
		if errors.Is(err, ddb.ErrNotFound) || (err == nil && !u.Active) {
			return t, httpapi.Invalid("owner: no active user %d in the company", id)
		}
		if err != nil {
			return t, err
		}
		t.Owner = id
	}
	return t, nil
}

// riskAcceptanceJSON is an accepted risk's terms as an issue shows them.
type riskAcceptanceJSON struct {
	ExpiresAt  string  `json:"expires_at"`
	Owner      *string `json:"owner"`
	AcceptedBy *string `json:"accepted_by"`
	AcceptedAt string  `json:"accepted_at"`
}

// riskAcceptance is the issue's terms while it is an accepted risk with
// an end, else nil.
func riskAcceptance(i findings.Issue) *riskAcceptanceJSON {
	if i.Status != "accepted_risk" || i.ExpiresAt == "" {
		return nil
	}
	return &riskAcceptanceJSON{ExpiresAt: i.ExpiresAt, Owner: userID(i.Owner), AcceptedBy: userID(i.AcceptedBy), AcceptedAt: i.AcceptedAt}
}

// userID is a user id as issues show them (assigned_to's form), nil for
// none.
func userID(id int64) *string {
	if id == 0 {
		return nil
	}
	s := strconv.FormatInt(id, 10)
	return &s
}
