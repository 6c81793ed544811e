package schema

import (
	"crypto/sha256"
	"encoding/base64"
	"fmt"
	"strings"

	"github.com/acme/codescan-api/shared/store/internal/ddb"
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

func UserKey(companyID, userID int64) ddb.Key {
	return ddb.Key{PK: CompanyPK(companyID), SK: fmt.Sprintf("USER#%d", userID)}
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
