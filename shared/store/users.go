package store

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"time"
)

// Company is a tenant.
type Company struct {
	Key
	ID   int64  `dynamodbav:"id"`
	Name string `dynamodbav:"name"`
}

// User belongs to one company.
type User struct {
	Key
	ID          int64    `dynamodbav:"id"`
	CompanyID   int64    `dynamodbav:"company_id"`
	Email       string   `dynamodbav:"email"`
	FirstName   string   `dynamodbav:"first_name"`
	LastName    string   `dynamodbav:"last_name"`
	Permissions []string `dynamodbav:"permissions,stringset,omitempty"`
	IsAdmin     bool     `dynamodbav:"is_admin"`
	Active      bool     `dynamodbav:"active"`
	Subject     string   `dynamodbav:"subject,omitempty"`
}

// credentialRef is a global look-up item (API key hash or token subject) that
// points at a user inside its company.
type credentialRef struct {
	Key
	CompanyID int64  `dynamodbav:"company_id"`
	UserID    int64  `dynamodbav:"user_id"`
	CreatedAt string `dynamodbav:"created_at"`
}

func userKey(companyID, userID int64) Key {
	return Key{PK: CompanyPK(companyID), SK: fmt.Sprintf("USER#%d", userID)}
}

func apiKeyKey(hash string) Key { return Key{PK: "APIKEY#" + hash, SK: "APIKEY"} }

func subjectKey(sub string) Key { return Key{PK: "SUBJECT#" + sub, SK: "SUBJECT"} }

// HashAPIKey is the only form in which an API key is stored.
func HashAPIKey(key string) string {
	sum := sha256.Sum256([]byte(key))
	return hex.EncodeToString(sum[:])
}

// PutCompany creates or replaces a company record.
func (s *Store) PutCompany(ctx context.Context, c Company) error {
	c.Key = Key{PK: CompanyPK(c.ID), SK: "COMPANY"}
	return s.putItem(ctx, c, nil)
}

// PutUser creates or replaces a user, and its subject look-up when it has one.
func (s *Store) PutUser(ctx context.Context, u User) error {
	u.Key = userKey(u.CompanyID, u.ID)
	if err := s.putItem(ctx, u, nil); err != nil {
		return err
	}
	if u.Subject == "" {
		return nil
	}
	ref := credentialRef{Key: subjectKey(u.Subject), CompanyID: u.CompanyID, UserID: u.ID, CreatedAt: now()}
	return s.putItem(ctx, ref, nil)
}

// GetUser reads a user of a company.
func (s *Store) GetUser(ctx context.Context, companyID, userID int64) (User, error) {
	var u User
	err := s.getItem(ctx, userKey(companyID, userID), &u)
	return u, err
}

// ListUsers returns every user of a company.
func (s *Store) ListUsers(ctx context.Context, companyID int64) ([]User, error) {
	var out []User
	err := s.queryAll(ctx, "", pkBeginsWith(CompanyPK(companyID), "USER#"), true, &out)
	return out, err
}

// PutAPIKey stores the hash of key for a user. The key itself is never stored.
func (s *Store) PutAPIKey(ctx context.Context, companyID, userID int64, key string) error {
	ref := credentialRef{Key: apiKeyKey(HashAPIKey(key)), CompanyID: companyID, UserID: userID, CreatedAt: now()}
	return s.putItem(ctx, ref, nil)
}

// UserByAPIKey finds the user that owns key.
func (s *Store) UserByAPIKey(ctx context.Context, key string) (User, error) {
	return s.userByRef(ctx, apiKeyKey(HashAPIKey(key)))
}

// UserBySubject finds the user mapped to a token subject.
func (s *Store) UserBySubject(ctx context.Context, sub string) (User, error) {
	return s.userByRef(ctx, subjectKey(sub))
}

func (s *Store) userByRef(ctx context.Context, k Key) (User, error) {
	var ref credentialRef
	if err := s.getItem(ctx, k, &ref); err != nil {
		return User{}, err
	}
	return s.GetUser(ctx, ref.CompanyID, ref.UserID)
}

// now is the store's clock in the API's date-time format.
func now() string { return time.Now().UTC().Format(time.RFC3339) }

// UsersByID reads the company's users with these ids (by key); ids that
// are not the company's users are absent from the map.
func (s *Store) UsersByID(ctx context.Context, companyID int64, ids []int64) (map[int64]User, error) {
	return byID(ctx, s, ids, func(id int64) Key { return userKey(companyID, id) }, func(u User) int64 { return u.ID })
}
