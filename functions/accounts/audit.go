package accounts

import (
	"net/http"
	"regexp"
	"strconv"
	"time"

	"github.com/acme/codescan-api/shared/auth"
	"github.com/acme/codescan-api/shared/httpapi"
	"github.com/acme/codescan-api/shared/store/ledger"
	storepage "github.com/acme/codescan-api/shared/store/page"
	"github.com/acme/codescan-api/shared/store/tenancy"
)

// actionPattern is the form of audit actions ("api_key.revoke").
var actionPattern = regexp.MustCompile(`^[a-z][a-z_]{0,40}\.[a-z][a-z_]{0,40}$`)

func (h handlers) listAudit(w http.ResponseWriter, r *http.Request) error {
	p := auth.FromContext(r.Context())
	pr, pg, err := pageRequest(r)
	if err != nil {
		return err
	}
	q := r.URL.Query()
	var f tenancy.AuditFilter
	if a := q.Get("actor"); a != "" {
		f.Actor = a
		if a != ledger.ViaOperator {
			id, err := strconv.ParseInt(a, 10, 64)
			if err != nil || id < 1 {
				return httpapi.Invalid("actor must be a user id or %q", ledger.ViaOperator)
			}
			f.Actor = strconv.FormatInt(id, 10) // "007" is user 7
		}
	}
	if a := q.Get("action"); a != "" {
		if !actionPattern.MatchString(a) {
			return httpapi.Invalid("action must look like api_key.revoke")
		}
		f.Action = a
	}
	for name, t := range map[string]*time.Time{"from": &f.From, "to": &f.To} {
		if raw := q.Get(name); raw != "" {
			if *t, err = time.Parse(time.RFC3339, raw); err != nil {
				return httpapi.Invalid("%s must be an RFC 3339 date-time", name)
			}
		}
	}
	if !f.From.IsZero() && !f.To.IsZero() && f.To.Before(f.From) {
		return httpapi.Invalid("to must not be before from")
	}
	entries, err := h.store.ListAudit(r.Context(), p.CompanyID, f, pr)
	if err != nil {
		return err
	}
	return httpapi.WriteList(w, pg, httpapi.List{Rows: "entries", Page: true, PageSize: true, NullNext: true}, storepage.Map(entries, entryView))
}

type actorJSON struct {
	UserID any    `json:"user_id"`
	Via    string `json:"via"`
	KeyID  any    `json:"key_id"`
}

type entryJSON struct {
	ID      string                   `json:"id"`
	At      string                   `json:"at"`
	Actor   actorJSON                `json:"actor"`
	Action  string                   `json:"action"`
	Target  map[string]string        `json:"target"`
	Changes map[string]ledger.Change `json:"changes"`
}

func entryView(e tenancy.AuditRecord) entryJSON {
	a := actorJSON{Via: e.Actor.Via}
	if e.Actor.Via != ledger.ViaOperator {
		a.UserID = e.Actor.UserID
	}
	if e.Actor.KeyID != 0 {
		a.KeyID = e.Actor.KeyID
	}
	changes := e.Changes
	if changes == nil {
		changes = map[string]ledger.Change{}
	}
	return entryJSON{
		ID: e.ID, At: e.At, Actor: a, Action: e.Action,
		Target: map[string]string{"type": e.TargetType, "id": e.TargetID}, Changes: changes,
	}
}
