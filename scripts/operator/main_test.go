package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/acme/codescan-api/functions/accounts"
	"github.com/acme/codescan-api/functions/teams"
	"github.com/acme/codescan-api/shared/auth"
	"github.com/acme/codescan-api/shared/store"
	"github.com/acme/codescan-api/shared/testenv"
)

func TestMain(m *testing.M) { testenv.Main(m) }

// operator runs a command line against env's table and decodes its output.
func operator(t *testing.T, env *testenv.Env, out any, args ...string) {
	t.Helper()
	cmd, _, err := parse(args)
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if err := execute(context.Background(), cmd, env.Store, &buf); err != nil {
		t.Fatalf("%v: %v", args, err)
	}
	if err := json.Unmarshal(buf.Bytes(), out); err != nil {
		t.Fatalf("%v: output %s: %v", args, buf.Bytes(), err)
	}
}

type created struct {
	Created bool        `json:"created"`
	Company companyJSON `json:"company"`
	Admin   adminJSON   `json:"admin"`
	APIKey  string      `json:"api_key"`
}

// TestOnboarding is issue 15's "done when", end to end on an empty table.
func TestOnboarding(t *testing.T) {
	env := testenv.New(t)
	acct, team := accounts.New(env.Deps), teams.New(env.Deps)
	var bodies [][]byte // every response, to check for key material
	call := func(h http.Handler, method, path, body string, want int, header ...string) *testenv.Response {
		t.Helper()
		res := testenv.Do(t, h, method, path, body, header...)
		if res.Status != want {
			t.Fatalf("%s %s: %d, want %d: %s", method, path, res.Status, want, res.Body)
		}
		return res
	}

	// The operator creates the company and prints the admin's first key.
	var c created
	operator(t, env, &c, "create-company", "--name", "Initech", "--admin-email", "bill@initech.test", "--admin-name", "Bill Lumbergh")
	if !c.Created || c.Company.Name != "Initech" || !c.Company.Active || !strings.HasPrefix(c.APIKey, auth.APIKeyPrefix) {
		t.Fatalf("create-company: %+v", c)
	}
	adminKey := []string{auth.APIKeyHeader, c.APIKey}

	// Idempotent: the same name (any case) answers with the company, no key.
	var again created
	operator(t, env, &again, "create-company", "--name", " initech ", "--admin-email", "bill@initech.test", "--admin-name", "Bill Lumbergh")
	if again.Created || again.Company.ID != c.Company.ID || again.APIKey != "" {
		t.Fatalf("second create-company: %+v", again)
	}
	var list []companyJSON
	operator(t, env, &list, "list-companies")
	if len(list) != 1 || list[0].ID != c.Company.ID {
		t.Fatalf("list-companies: %+v", list)
	}

	// The printed key works on authenticated routes of any group.
	bodies = append(bodies, call(acct, "GET", "/api-keys", "", http.StatusOK, adminKey...).Body)
	bodies = append(bodies, call(team, "GET", "/teams", "", http.StatusOK, adminKey...).Body)

	// The admin creates a second user and two keys for them.
	var u struct {
		User struct{ ID int64 } `json:"user"`
	}
	res := call(acct, "POST", "/users", `{"email":"peter@initech.test","first_name":"Peter","last_name":"Gibbons","permissions":["scans.upload_scan"]}`, http.StatusCreated, adminKey...)
	bodies = append(bodies, res.Body)
	res.Decode(t, &u)
	newKey := func() (string, int64) {
		var k struct {
			Key    string
			APIKey struct{ ID int64 } `json:"api_key"`
		}
		res := call(acct, "POST", "/api-keys", fmt.Sprintf(`{"name":"peter's CI","user_id":%d}`, u.User.ID), http.StatusCreated, adminKey...)
		res.Decode(t, &k)
		if n := strings.Count(string(res.Body), k.Key); n != 1 {
			t.Fatalf("the creation response holds the key %d times", n)
		}
		bodies = append(bodies, bytes.ReplaceAll(res.Body, []byte(k.Key), nil))
		return k.Key, k.APIKey.ID
	}
	keyA, idA := newKey()
	keyB, _ := newKey()
	bodies = append(bodies, call(acct, "GET", "/api-keys", "", http.StatusOK, auth.APIKeyHeader, keyA).Body)

	// Revoking key A makes the next call with it 401; key B still works.
	bodies = append(bodies, call(acct, "DELETE", fmt.Sprintf("/api-keys/%d", idA), "", http.StatusOK, adminKey...).Body)
	bodies = append(bodies, call(acct, "GET", "/api-keys", "", http.StatusUnauthorized, auth.APIKeyHeader, keyA).Body)
	bodies = append(bodies, call(acct, "GET", "/api-keys", "", http.StatusOK, auth.APIKeyHeader, keyB).Body)

	// Deactivating the user makes their other key 401.
	bodies = append(bodies, call(acct, "PATCH", fmt.Sprintf("/users/%d", u.User.ID), `{"active":false}`, http.StatusOK, adminKey...).Body)
	bodies = append(bodies, call(acct, "GET", "/api-keys", "", http.StatusUnauthorized, auth.APIKeyHeader, keyB).Body)

	// The audit log shows each step with the right actor.
	res = call(acct, "GET", "/audit-log?page_size=100", "", http.StatusOK, adminKey...)
	bodies = append(bodies, res.Body)
	var log struct {
		Entries []struct {
			Action string
			Actor  struct {
				UserID *int64 `json:"user_id"`
				Via    string
				KeyID  *int64 `json:"key_id"`
			}
			Target struct{ Type, ID string }
		}
	}
	res.Decode(t, &log)
	var got []string
	for _, e := range log.Entries {
		actor := e.Actor.Via
		if e.Actor.UserID != nil {
			actor = fmt.Sprintf("%s:%d", e.Actor.Via, *e.Actor.UserID)
			if e.Actor.KeyID == nil {
				t.Errorf("%s by an API key without its id", e.Action)
			}
		}
		got = append(got, e.Action+"/"+e.Target.Type+" by "+actor)
	}
	admin := fmt.Sprintf("api_key:%d", c.Admin.ID)
	want := []string{
		"user.update/user by " + admin,
		"api_key.revoke/api_key by " + admin,
		"api_key.create/api_key by " + admin,
		"api_key.create/api_key by " + admin,
		"user.create/user by " + admin,
		"api_key.create/api_key by operator",
		"user.create/user by operator",
		"company.create/company by operator",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Fatalf("audit log:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}

	// Deactivating the company refuses its admin's key at once.
	var changed struct{ Changed bool }
	operator(t, env, &changed, "deactivate-company", "--id", fmt.Sprint(c.Company.ID))
	if !changed.Changed {
		t.Fatal("deactivate-company changed nothing")
	}
	bodies = append(bodies, call(acct, "GET", "/api-keys", "", http.StatusUnauthorized, adminKey...).Body)
	operator(t, env, &changed, "reactivate-company", "--id", fmt.Sprint(c.Company.ID))
	bodies = append(bodies, call(acct, "GET", "/api-keys", "", http.StatusOK, adminKey...).Body)

	// No response, log line or stored item holds a key; no response or log
	// line holds a key's hash.
	logs := env.Logs.String()
	for _, key := range []string{c.APIKey, keyA, keyB} {
		secret, hash := strings.TrimPrefix(key, auth.APIKeyPrefix), store.HashAPIKey(key)
		for _, b := range bodies {
			if strings.Contains(string(b), secret) || strings.Contains(string(b), hash) {
				t.Fatalf("a response holds key material: %s", b)
			}
		}
		if strings.Contains(logs, secret) || strings.Contains(logs, hash) {
			t.Fatal("the log holds key material")
		}
		assertNotStored(t, env, secret)
	}
}

func assertNotStored(t *testing.T, env *testenv.Env, secret string) {
	t.Helper()
	out, err := env.Store.DB.Scan(context.Background(), &dynamodb.ScanInput{TableName: aws.String(env.Store.Table)})
	if err != nil {
		t.Fatal(err)
	}
	for _, item := range out.Items {
		for name, v := range item {
			if s, ok := v.(*types.AttributeValueMemberS); ok && strings.Contains(s.Value, secret) {
				t.Fatalf("attribute %s holds a key", name)
			}
		}
	}
}

func TestNewKeyForExistingCompany(t *testing.T) {
	env := testenv.New(t)
	var c, again created
	operator(t, env, &c, "create-company", "--name", "Hooli", "--admin-email", "gavin@hooli.test", "--admin-name", "Gavin Belson")
	operator(t, env, &again, "create-company", "--name", "Hooli", "--admin-email", "gavin@hooli.test", "--admin-name", "Gavin Belson", "--new-key")
	if again.Created || again.APIKey == "" || again.APIKey == c.APIKey || again.Admin.ID != c.Admin.ID {
		t.Fatalf("--new-key: %+v", again)
	}
	for _, key := range []string{c.APIKey, again.APIKey} {
		if _, err := env.Store.CredentialByAPIKey(context.Background(), key, time.Now()); err != nil {
			t.Fatalf("key does not authenticate: %v", err)
		}
	}
	cmd, _, err := parse([]string{"create-company", "--name", "Hooli", "--admin-email", "nobody@hooli.test", "--admin-name", "N O", "--new-key"})
	if err != nil {
		t.Fatal(err)
	}
	if err := execute(context.Background(), cmd, env.Store, &bytes.Buffer{}); err == nil {
		t.Fatal("--new-key for an unknown admin succeeded")
	}
}

func TestArguments(t *testing.T) {
	for _, args := range [][]string{
		{"drop-table"},
		{"list-companies", "extra"},
		{"deactivate-company", "--id", "x"},
		{"create-company", "--nme", "x"},
	} {
		if _, _, err := parse(args); !errors.Is(err, errUsage) {
			t.Errorf("%v: %v, want a usage error", args, err)
		}
	}
	env := testenv.New(t)
	for _, args := range [][]string{
		{"create-company", "--name", "x"},
		{"deactivate-company"},
	} {
		cmd, _, err := parse(args)
		if err != nil {
			t.Fatal(err)
		}
		if err := execute(context.Background(), cmd, env.Store, &bytes.Buffer{}); !errors.Is(err, errUsage) {
			t.Errorf("%v: %v, want a usage error", args, err)
		}
	}
	cmd, _, _ := parse([]string{"deactivate-company", "--id", "404"})
	if err := execute(context.Background(), cmd, env.Store, &bytes.Buffer{}); err == nil || !strings.Contains(err.Error(), "no company 404") {
		t.Errorf("unknown company: %v", err)
	}
	_, conn, err := parse([]string{"list-companies", "--region", "eu-central-1", "--endpoint", "http://127.0.0.1:1"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := conn.open(context.Background()); !errors.Is(err, errUsage) {
		t.Errorf("--region with --endpoint: %v", err)
	}
}
