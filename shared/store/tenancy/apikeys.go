package tenancy

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/acme/codescan-api/shared/store/ddb"
	"github.com/acme/codescan-api/shared/store/ledger"
	"github.com/acme/codescan-api/shared/store/page"
	"github.com/acme/codescan-api/shared/store/schema"
	"github.com/acme/codescan-api/shared/tabledef"
)

// KeyPrefixLength is how much of a key (its "csk_" and 8 more characters,
// 48 of its 256 bits) lists show to recognise it.
const KeyPrefixLength = 12

// LastUseResolution is how stale an API key's last_used_at may get: it is
// written at most once per key in this time, not on every request.
const LastUseResolution = 5 * time.Minute

// CreateAPIKey stores the record and the look-up item of a new key of
// k.UserID (name and ExpiresAt from k; the id the next of the company's
// key sequence), with the company's and the owner's key counters and the
// audit entry, in one transaction.
func (s *Tenancy) CreateAPIKey(ctx context.Context, k schema.APIKey, key string) (schema.APIKey, error) {
	for attempt := 0; ; attempt++ {
		id, err := s.nextAPIKeyID(ctx, k.CompanyID)
		if err != nil {
			return schema.APIKey{}, err
		}
		k.ID = id
		items, err := s.txCreateAPIKey(ctx, k, key)
		if err != nil {
			return schema.APIKey{}, err
		}
		err = s.t.Transact(ctx, items)
		if ddb.ConditionFailedAt(err, 1) && attempt < ddb.MaxTxAttempts {
			continue // the id is an older key's (see ledger.NextCompanyID): take the next
		}
		if err != nil {
			return schema.APIKey{}, err
		}
		return s.apiKeyRecord(k, key), nil
	}
}

// nextAPIKeyID is the company's next key id, above its highest one.
func (s *Tenancy) nextAPIKeyID(ctx context.Context, companyID int64) (int64, error) {
	return s.l.NextCompanyID(ctx, companyID, "apikey", schema.APIKeyRecordPrefix)
}

func (s *Tenancy) apiKeyRecord(k schema.APIKey, key string) schema.APIKey {
	k.Key = schema.APIKeyRecordKey(k.CompanyID, k.ID)
	k.GSI1PK, k.GSI1SK = schema.APIKeyOwnerPK(k.CompanyID, k.UserID), fmt.Sprintf("%012d", k.ID)
	k.Prefix = key[:min(KeyPrefixLength, len(key))]
	if k.CreatedAt == "" {
		k.CreatedAt = s.t.Stamp()
	}
	k.Hash = HashAPIKey(key)
	return k
}

func (s *Tenancy) txCreateAPIKey(ctx context.Context, k schema.APIKey, key string) ([]types.TransactWriteItem, error) {
	k = s.apiKeyRecord(k, key)
	ref := schema.CredentialRef{Key: schema.APIKeyHashKey(k.Hash), CompanyID: k.CompanyID, UserID: k.UserID, KeyID: k.ID, CreatedAt: k.CreatedAt}
	if k.ExpiresAt != "" {
		exp, err := time.Parse(time.RFC3339, k.ExpiresAt)
		if err != nil {
			return nil, fmt.Errorf("key expiry: %w", err)
		}
		ref.ExpiresAt = exp.Unix()
	}
	var items []types.TransactWriteItem
	for _, it := range []any{ref, k} {
		put, err := s.t.TxPutNew(it)
		if err != nil {
			return nil, err
		}
		items = append(items, put)
	}
	for _, owner := range []int64{0, k.UserID} {
		it, err := s.l.TxAdd(schema.APIKeyCountKey(k.CompanyID, owner), 1, nil)
		if err != nil {
			return nil, err
		}
		items = append(items, it)
	}
	audit, err := s.l.TxAudit(ctx, k.CompanyID, ledger.AuditEntry{
		Action: "api_key.create", TargetType: "api_key", TargetID: strconv.FormatInt(k.ID, 10),
		Changes: map[string]ledger.Change{
			"name": {After: k.Name}, "user_id": {After: k.UserID}, "prefix": {After: k.Prefix},
			"expires_at": {After: ledger.Nullable(k.ExpiresAt)},
		},
	})
	return append(items, audit...), err
}

// GetAPIKey reads a key record of a company.
func (s *Tenancy) GetAPIKey(ctx context.Context, companyID, keyID int64) (schema.APIKey, error) {
	var k schema.APIKey
	err := s.t.GetItemConsistent(ctx, schema.APIKeyRecordKey(companyID, keyID), &k)
	return k, err
}

// RevokeAPIKey revokes a key: its look-up item is deleted (so the next
// request with it fails), its record keeps revoked_at and loses the hash,
// and the audit entry is written, in one transaction. Revoking a revoked
// key returns it unchanged. ddb.ErrNotFound for another company's key.
func (s *Tenancy) RevokeAPIKey(ctx context.Context, companyID, keyID int64) (schema.APIKey, error) {
	k, err := s.GetAPIKey(ctx, companyID, keyID)
	if err != nil || k.RevokedAt != "" {
		return k, err
	}
	k.RevokedAt = s.t.Stamp()
	cond := expression.AttributeNotExists(expression.Name("revoked_at")).And(expression.AttributeExists(expression.Name(tabledef.PK)))
	upd := expression.Set(expression.Name("revoked_at"), expression.Value(k.RevokedAt)).Remove(expression.Name("key_hash"))
	rec, err := s.t.TxUpdate(k.Key, upd, &cond)
	if err != nil {
		return schema.APIKey{}, err
	}
	ref := schema.APIKeyHashKey(k.Hash)
	items := []types.TransactWriteItem{rec, s.t.TxDeleteKey(ref)}
	audit, err := s.l.TxAudit(ctx, companyID, ledger.AuditEntry{
		Action: "api_key.revoke", TargetType: "api_key", TargetID: strconv.FormatInt(k.ID, 10),
		Changes: map[string]ledger.Change{"revoked_at": {Before: nil, After: k.RevokedAt}},
	})
	if err != nil {
		return schema.APIKey{}, err
	}
	err = s.t.Transact(ctx, append(items, audit...))
	if errors.Is(err, ddb.ErrConflict) {
		return s.GetAPIKey(ctx, companyID, keyID) // revoked meanwhile
	}
	k.Hash = ""
	return k, err
}

// ListAPIKeys returns one page of a company's keys (of one user when
// userID is not 0), by id, with the total.
func (s *Tenancy) ListAPIKeys(ctx context.Context, companyID, userID int64, q page.Request) (page.Page[schema.APIKey], error) {
	l := page.List{Partition: schema.CompanyPK(companyID), Range: page.Prefix(schema.APIKeyRecordPrefix), Forward: true}
	if userID != 0 {
		l = page.List{Index: tabledef.GSI1, Partition: schema.APIKeyOwnerPK(companyID, userID), Range: page.Digits, Forward: true}
	}
	p, err := page.ReadPage[schema.APIKey](ctx, s.t, l, q)
	if err != nil {
		return page.Page[schema.APIKey]{}, err
	}
	n, err := s.l.CounterValue(ctx, schema.APIKeyCountKey(companyID, userID))
	return p.Counted(n), err
}

// Credential is what authentication learns from a credential: its user and
// company, and for an API key the key's id and last use.
type Credential struct {
	User    schema.User
	Company schema.Company
	KeyID   int64
	// lastUsedAt and hash are the API key's, for TouchAPIKey.
	lastUsedAt string
	hash       string
}

// CredentialByAPIKey finds the owner of an unexpired, unrevoked key: one
// read of the look-up item and one batch read of the user and company,
// both strongly consistent, so a revocation or deactivation holds from the
// next request. ddb.ErrNotFound for any key that does not authenticate.
func (s *Tenancy) CredentialByAPIKey(ctx context.Context, key string, at time.Time) (Credential, error) {
	hash := HashAPIKey(key)
	var ref schema.CredentialRef
	err := s.t.GetItemConsistent(ctx, schema.APIKeyHashKey(hash), &ref)
	if err != nil && !errors.Is(err, ddb.ErrNotFound) {
		// Not getItemConsistent's message: it names the key (the hash).
		return Credential{}, fmt.Errorf("API key look-up: %w", errors.Unwrap(err))
	}
	if err != nil {
		return Credential{}, err
	}
	if ref.ExpiresAt != 0 && at.Unix() >= ref.ExpiresAt {
		return Credential{}, ddb.ErrNotFound
	}
	c, err := s.credential(ctx, ref)
	c.lastUsedAt, c.hash = ref.LastUsedAt, hash
	return c, err
}

// CredentialBySubject finds the user a token subject authenticates as.
// Subjects are unique per company, so several companies may map one; the
// token then stands for the oldest mapping whose user and company are
// active (ties broken by company id): one user, always the same, and never
// one of a company that mapped the subject after another. ddb.ErrNotFound
// when no company maps it; an inactive user's credential when none is
// active (the caller refuses it).
func (s *Tenancy) CredentialBySubject(ctx context.Context, sub string) (Credential, error) {
	refs, err := s.subjectRefs(ctx, sub)
	if err != nil {
		return Credential{}, err
	}
	slices.SortFunc(refs, func(a, b schema.CredentialRef) int {
		return cmp.Or(strings.Compare(a.CreatedAt, b.CreatedAt), cmp.Compare(a.CompanyID, b.CompanyID))
	})
	var first Credential
	for _, ref := range refs {
		c, err := s.credential(ctx, ref)
		if errors.Is(err, ddb.ErrNotFound) {
			continue
		}
		if err != nil {
			return Credential{}, err
		}
		if c.User.Active && c.Company.Active() {
			return c, nil
		}
		if first.User.ID == 0 {
			first = c
		}
	}
	if first.User.ID == 0 {
		return Credential{}, ddb.ErrNotFound
	}
	return first, nil
}

// subjectRefs reads every company's mapping of a subject, strongly
// consistent (as the API key look-up), so a new mapping holds at once.
func (s *Tenancy) subjectRefs(ctx context.Context, sub string) ([]schema.CredentialRef, error) {
	var refs []schema.CredentialRef
	err := s.t.QueryAllConsistent(ctx, expression.Key(tabledef.PK).Equal(expression.Value(schema.SubjectPK(sub))), &refs)
	return refs, err
}

func (s *Tenancy) credential(ctx context.Context, ref schema.CredentialRef) (Credential, error) {
	uk, ck := schema.UserKey(ref.CompanyID, ref.UserID), schema.CompanyKey(ref.CompanyID)
	items, err := s.t.BatchGet(ctx, []ddb.Key{uk, ck})
	if err != nil {
		return Credential{}, err
	}
	if items[uk] == nil || items[ck] == nil {
		return Credential{}, ddb.ErrNotFound
	}
	c := Credential{KeyID: ref.KeyID}
	if err := attributevalue.UnmarshalMap(items[uk], &c.User); err != nil {
		return Credential{}, err
	}
	if err := attributevalue.UnmarshalMap(items[ck], &c.Company); err != nil {
		return Credential{}, err
	}
	return c, nil
}

// TouchAPIKey records that c's key was used at at, unless that was
// recorded less than LastUseResolution ago: one conditional transaction
// on the look-up item and the record, which at most one concurrent request
// wins. A key revoked meanwhile is not brought back.
func (s *Tenancy) TouchAPIKey(ctx context.Context, c Credential, at time.Time) error {
	if c.KeyID == 0 || c.hash == "" {
		return nil
	}
	cutoff := at.Add(-LastUseResolution).UTC().Format(time.RFC3339)
	if c.lastUsedAt != "" && c.lastUsedAt > cutoff {
		return nil
	}
	stamp := at.UTC().Format(time.RFC3339)
	upd := expression.Set(expression.Name("last_used_at"), expression.Value(stamp))
	refCond := expression.AttributeExists(expression.Name(tabledef.PK)).And(
		expression.AttributeNotExists(expression.Name("last_used_at")).Or(expression.Name("last_used_at").LessThan(expression.Value(cutoff))))
	ref, err := s.t.TxUpdate(schema.APIKeyHashKey(c.hash), upd, &refCond)
	if err != nil {
		return err
	}
	recCond := expression.AttributeNotExists(expression.Name("revoked_at")).And(expression.AttributeExists(expression.Name(tabledef.PK)))
	rec, err := s.t.TxUpdate(schema.APIKeyRecordKey(c.Company.ID, c.KeyID), upd, &recCond)
	if err != nil {
		return err
	}
	err = s.t.Transact(ctx, []types.TransactWriteItem{ref, rec})
	if errors.Is(err, ddb.ErrConflict) || ddb.IsTransactionConflict(err) {
		return nil // another request recorded it, or the key is gone
	}
	return err
}
