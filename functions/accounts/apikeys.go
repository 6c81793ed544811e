package accounts

import (
	"errors"
	"net/http"
	"strconv"
	"time"

	"github.com/acme/codescan-api/shared/auth"
	"github.com/acme/codescan-api/shared/cleantext"
	"github.com/acme/codescan-api/shared/httpapi"
	"github.com/acme/codescan-api/shared/store/ddb"
	storepage "github.com/acme/codescan-api/shared/store/page"
	"github.com/acme/codescan-api/shared/store/schema"
)

// Limits of a key's fields.
const (
	MaxKeyNameLength = 100
	MaxKeyLifeDays   = 3650
)

type createKeyRequest struct {
	Name          *string `json:"name"`
	ExpiresInDays *int    `json:"expires_in_days"`
	// UserID (company admins only) creates the key for another user.
	UserID *int64 `json:"user_id"`
}

var (
	errKeyNotFound  = httpapi.NotFound("API key not found")
	errUserNotFound = httpapi.NotFound("User not found")
)

func (h handlers) createKey(w http.ResponseWriter, r *http.Request) error {
	p := auth.FromContext(r.Context())
	var req createKeyRequest
	if err := httpapi.DecodeJSON(r, &req); err != nil {
		return err
	}
	if req.Name == nil {
		return httpapi.Invalid("name is required")
	}
	name, err := cleantext.Name("name", *req.Name, MaxKeyNameLength)
	if err != nil {
		return err
	}
	k := schema.APIKey{CompanyID: p.CompanyID, UserID: p.UserID, Name: name}
	if req.ExpiresInDays != nil {
		if *req.ExpiresInDays < 1 || *req.ExpiresInDays > MaxKeyLifeDays {
			return httpapi.Invalid("expires_in_days must be an integer from 1 to %d", MaxKeyLifeDays)
		}
		k.ExpiresAt = h.now().UTC().Add(time.Duration(*req.ExpiresInDays) * 24 * time.Hour).Format(time.RFC3339)
	}
	if req.UserID != nil && *req.UserID != p.UserID {
		if !p.IsAdmin {
			return httpapi.ErrAdmin
		}
		owner, err := h.store.GetUser(r.Context(), p.CompanyID, *req.UserID)
		if errors.Is(err, ddb.ErrNotFound) {
			return errUserNotFound
		}
		if err != nil {
			return err
		}
		if !owner.Active {
			return httpapi.Conflict("User is not active")
		}
		k.UserID = owner.ID
	}
	key := auth.NewAPIKey()
	created, err := h.store.CreateAPIKey(r.Context(), k, key)
	if err != nil {
		return err
	}
	// The key is in this response only: never cache it.
	w.Header().Set("Cache-Control", "no-store")
	return httpapi.WriteJSON(w, http.StatusCreated, map[string]any{"status": "ok", "key": key, "api_key": keyView(created)})
}

func (h handlers) listKeys(w http.ResponseWriter, r *http.Request) error {
	p := auth.FromContext(r.Context())
	pr, pg, err := pageRequest(r)
	if err != nil {
		return err
	}
	owner := p.UserID
	if p.IsAdmin {
		owner = 0 // every key of the company, unless filtered
	}
	if raw := r.URL.Query().Get("user_id"); raw != "" {
		id, err := strconv.ParseInt(raw, 10, 64)
		if err != nil || id < 1 {
			return httpapi.Invalid("user_id must be a positive integer")
		}
		if id != p.UserID && !p.IsAdmin {
			return httpapi.ErrAdmin
		}
		owner = id
	}
	keys, err := h.store.ListAPIKeys(r.Context(), p.CompanyID, owner, pr)
	if err != nil {
		return err
	}
	return httpapi.WriteList(w, pg, withNullNext(httpapi.Numbered("api_keys", "total_api_keys")), storepage.Map(keys, keyView))
}

func (h handlers) revokeKey(w http.ResponseWriter, r *http.Request) error {
	p := auth.FromContext(r.Context())
	id, err := httpapi.PathInt(r, "key_id")
	if err != nil {
		return err
	}
	k, err := h.store.GetAPIKey(r.Context(), p.CompanyID, id)
	// Another user's key answers like a missing one to a non-admin.
	if errors.Is(err, ddb.ErrNotFound) || (err == nil && k.UserID != p.UserID && !p.IsAdmin) {
		return errKeyNotFound
	}
	if err != nil {
		return err
	}
	k, err = h.store.RevokeAPIKey(r.Context(), p.CompanyID, id)
	if errors.Is(err, ddb.ErrNotFound) {
		return errKeyNotFound
	}
	if err != nil {
		return err
	}
	return httpapi.WriteJSON(w, http.StatusOK, map[string]any{"status": "ok", "api_key": keyView(k)})
}

type keyJSON struct {
	ID         int64  `json:"id"`
	Name       string `json:"name"`
	Prefix     string `json:"prefix"`
	UserID     int64  `json:"user_id"`
	CreatedAt  string `json:"created_at"`
	LastUsedAt any    `json:"last_used_at"`
	ExpiresAt  any    `json:"expires_at"`
	RevokedAt  any    `json:"revoked_at"`
}

// keyView is the API form of a key record: never the key or its hash.
func keyView(k schema.APIKey) keyJSON {
	return keyJSON{
		ID: k.ID, Name: k.Name, Prefix: k.Prefix, UserID: k.UserID, CreatedAt: k.CreatedAt,
		LastUsedAt: nullable(k.LastUsedAt), ExpiresAt: nullable(k.ExpiresAt), RevokedAt: nullable(k.RevokedAt),
	}
}
