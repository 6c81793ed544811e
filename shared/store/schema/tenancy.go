package schema

import (
	"crypto/sha256"
	"encoding/base64"
	"fmt"
	"strings"

	"github.com/acme/codescan-api/shared/store/ddb"
)

// The keys of tenancy: companies, users, API keys, subjects, idempotency.

func CompanyKey(id int64) ddb.Key { return ddb.Key{PK: CompanyPK(id), SK: "COMPANY"} }

// CompanyNameKey guards company name uniqueness (ignoring case).
func CompanyNameKey(name string) ddb.Key {
	return ddb.Key{PK: "COMPANYNAME#" + strings.ToLower(strings.TrimSpace(name)), SK: "COMPANYNAME"}
}

// CompanySeqKey holds a company's own sequence of ids of a kind.
func CompanySeqKey(companyID int64, seq string) ddb.Key {
	return ddb.Key{PK: CompanyPK(companyID), SK: "IDSEQ#" + seq}
}

// CompaniesPK is the GSI1 partition listing every company, by id (for the
// operator; no API route reads it).
const CompaniesPK = "COMPANIES"

// UserSKPrefix begins the sort key of every user of a company.
const UserSKPrefix = "USER#"

func UserKey(companyID, userID int64) ddb.Key {
	return ddb.Key{PK: CompanyPK(companyID), SK: fmt.Sprintf("%s%d", UserSKPrefix, userID)}
}

func APIKeyHashKey(hash string) ddb.Key { return ddb.Key{PK: "APIKEY#" + hash, SK: "APIKEY"} }

func SubjectPK(sub string) string { return "SUBJECT#" + sub }

// SubjectKey is a company's mapping of a token subject; its put is the
// guard of the subject's uniqueness inside the company.
func SubjectKey(sub string, companyID int64) ddb.Key {
	return ddb.Key{PK: SubjectPK(sub), SK: fmt.Sprintf("COMPANY#%d", companyID)}
}

// LegacySubjectKey is where a subject's one mapping lived when subjects were
// unique across companies; such items still authenticate.
func LegacySubjectKey(sub string) ddb.Key { return ddb.Key{PK: SubjectPK(sub), SK: "SUBJECT"} }

// UserEmailKey guards email uniqueness inside a company (ignoring case).
func UserEmailKey(companyID int64, email string) ddb.Key {
	return ddb.Key{PK: CompanyPK(companyID), SK: "USEREMAIL#" + strings.ToLower(email)}
}

func UserFacetPrefix(facet string) string { return "USERBY#" + facet + "#" }

func UserFacetKey(companyID int64, facet string, userID int64) ddb.Key {
	return ddb.Key{PK: CompanyPK(companyID), SK: fmt.Sprintf("%s%012d", UserFacetPrefix(facet), userID)}
}

func UserCountKey(companyID int64, facet string) ddb.Key {
	return ddb.Key{PK: CompanyPK(companyID), SK: "USERCOUNT#" + facet}
}

func APIKeyRecordKey(companyID, keyID int64) ddb.Key {
	return ddb.Key{PK: CompanyPK(companyID), SK: fmt.Sprintf("%s%012d", APIKeyRecordPrefix, keyID)}
}

func APIKeyOwnerPK(companyID, userID int64) string {
	return fmt.Sprintf("%s#APIKEYS#U%d", CompanyPK(companyID), userID)
}

func APIKeyCountKey(companyID, userID int64) ddb.Key {
	if userID == 0 {
		return ddb.Key{PK: CompanyPK(companyID), SK: "APIKEYCOUNT"}
	}
	return ddb.Key{PK: CompanyPK(companyID), SK: fmt.Sprintf("APIKEYCOUNT#U%d", userID)}
}

const APIKeyRecordPrefix = "APIKEY#"

// IdempotencyKey is the item of a client's key: the key hashed, so any key of
// the allowed syntax makes a short sort key.
func IdempotencyKey(companyID int64, subject, key string) ddb.Key {
	sum := sha256.Sum256([]byte(key))
	return ddb.Key{PK: CompanyPK(companyID), SK: "IDEM#" + subject + "#" + base64.RawURLEncoding.EncodeToString(sum[:])}
}

// SequenceKey holds the last id of a global sequence (companies, projects,
// teams, ...).
func SequenceKey(seq string) ddb.Key { return ddb.Key{PK: "SEQUENCE", SK: seq} }

// RateSubject names the credential a rate budget belongs to in RateKey:
// an API key, or a user (the bearer tokens of one user share one budget).
func RateSubject(keyID, userID int64) string {
	if keyID != 0 {
		return fmt.Sprintf("key#%d", keyID)
	}
	return fmt.Sprintf("user#%d", userID)
}

// RateKey is a credential's rate window item of the clock hour starting at
// hourStart.
func RateKey(companyID int64, subject, hourStart string) ddb.Key {
	return ddb.Key{PK: CompanyPK(companyID), SK: "RATE#" + subject + "#" + hourStart}
}

// Company is a tenant. A deactivated company's keys and tokens are refused.
type Company struct {
	ddb.Key
	GSI1PK        string `dynamodbav:"GSI1PK,omitempty"`
	GSI1SK        string `dynamodbav:"GSI1SK,omitempty"`
	ID            int64  `dynamodbav:"id"`
	Name          string `dynamodbav:"name"`
	CreatedAt     string `dynamodbav:"created_at,omitempty"`
	DeactivatedAt string `dynamodbav:"deactivated_at,omitempty"`
}

// Active reports whether the company's users may sign in.
func (c Company) Active() bool { return c.DeactivatedAt == "" }

// Item is c as stored: its keys set, created now unless it says when.
func (c Company) Item(now string) Company {
	c.Key = CompanyKey(c.ID)
	c.GSI1PK, c.GSI1SK = CompaniesPK, fmt.Sprintf("%012d", c.ID)
	if c.CreatedAt == "" {
		c.CreatedAt = now
	}
	return c
}

// CompanyNameRef is a company name's guard, pointing at the company.
type CompanyNameRef struct {
	ddb.Key
	CompanyID int64 `dynamodbav:"company_id"`
}

// User belongs to one company.
type User struct {
	ddb.Key
	ID          int64    `dynamodbav:"id"`
	CompanyID   int64    `dynamodbav:"company_id"`
	Email       string   `dynamodbav:"email"`
	FirstName   string   `dynamodbav:"first_name"`
	LastName    string   `dynamodbav:"last_name"`
	Permissions []string `dynamodbav:"permissions,stringset,omitempty"`
	IsAdmin     bool     `dynamodbav:"is_admin"`
	Active      bool     `dynamodbav:"active"`
	Subject     string   `dynamodbav:"subject,omitempty"`
	CreatedAt   string   `dynamodbav:"created_at,omitempty"`
	UpdatedAt   string   `dynamodbav:"updated_at,omitempty"`
	// Revision grows with every update, which is conditional on it.
	Revision int64 `dynamodbav:"revision,omitempty"`
	// SCMLogin is the user's login on the company's source-code host,
	// lower case, unique in the company (SCMLoginKey guards it): a command
	// in a pull request's comment acts as the user it names.
	SCMLogin string `dynamodbav:"scm_login,omitempty"`
}

// UserEmailRef is a user's email guard, pointing at the user.
type UserEmailRef struct {
	ddb.Key
	UserID int64 `dynamodbav:"user_id"`
}

// CredentialRef is a global look-up item (API key hash or token subject)
// that points at a user inside its company. An API key's also carries the
// key's id, expiry (the table's TTL attribute, epoch seconds) and last use.
// A subject has one per company that maps it.
type CredentialRef struct {
	ddb.Key
	CompanyID  int64  `dynamodbav:"company_id"`
	UserID     int64  `dynamodbav:"user_id"`
	CreatedAt  string `dynamodbav:"created_at"`
	KeyID      int64  `dynamodbav:"key_id,omitempty"`
	LastUsedAt string `dynamodbav:"last_used_at,omitempty"`
	ExpiresAt  int64  `dynamodbav:"expires_at,omitempty"`
}

// APIKey is the company-side record of an API key: what lists show. The key
// itself is never stored; its SHA-256 keys the global look-up item that
// authentication reads, and is kept here only until revocation, to delete
// that item.
type APIKey struct {
	ddb.Key
	GSI1PK     string `dynamodbav:"GSI1PK"` // the owner's keys, by id
	GSI1SK     string `dynamodbav:"GSI1SK"`
	ID         int64  `dynamodbav:"id"`
	CompanyID  int64  `dynamodbav:"company_id"`
	UserID     int64  `dynamodbav:"user_id"`
	Name       string `dynamodbav:"name"`
	Prefix     string `dynamodbav:"prefix"`
	CreatedAt  string `dynamodbav:"created_at"`
	LastUsedAt string `dynamodbav:"last_used_at,omitempty"`
	ExpiresAt  string `dynamodbav:"key_expires_at,omitempty"`
	RevokedAt  string `dynamodbav:"revoked_at,omitempty"`
	Hash       string `dynamodbav:"key_hash,omitempty"`
}

// IdempotentAnswer is a creation's answer as kept for replays. A withheld
// secret answer keeps no body: it is never stored.
type IdempotentAnswer struct {
	Status       int               `dynamodbav:"status,omitempty"`
	Header       map[string]string `dynamodbav:"header,omitempty"`
	Body         []byte            `dynamodbav:"body,omitempty"`
	BodyWithheld bool              `dynamodbav:"body_withheld,omitempty"`
}

// IdempotencyItem is what a client's Idempotency-Key holds: the request
// that claimed it (fingerprint, claim token, lease) and its answer once
// its state is done.
type IdempotencyItem struct {
	ddb.Key
	Fingerprint string `dynamodbav:"fingerprint"`
	State       string `dynamodbav:"state"`
	Claim       string `dynamodbav:"claim"`
	LeaseUntil  int64  `dynamodbav:"lease_until"`
	ExpiresAt   int64  `dynamodbav:"expires_at"`
	IdempotentAnswer
}
