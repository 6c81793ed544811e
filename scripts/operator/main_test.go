package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/cloudformation"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/acme/codescan-api/functions/accounts"
	"github.com/acme/codescan-api/functions/teams"
	"github.com/acme/codescan-api/internal/testenv"
	"github.com/acme/codescan-api/shared/auth"
	"github.com/acme/codescan-api/shared/store/ddb"
	"github.com/acme/codescan-api/shared/store/ledger"
	"github.com/acme/codescan-api/shared/store/page"
	"github.com/acme/codescan-api/shared/store/tenancy"
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

// TestOnboarding is the operator's onboarding end to end on an empty table (docs/tenants.md, "The operator").
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
	operator(t, env, &changed, "deactivate-company", "--company", fmt.Sprint(c.Company.ID))
	if !changed.Changed {
		t.Fatal("deactivate-company changed nothing")
	}
	bodies = append(bodies, call(acct, "GET", "/api-keys", "", http.StatusUnauthorized, adminKey...).Body)
	operator(t, env, &changed, "reactivate-company", "--company", fmt.Sprint(c.Company.ID))
	bodies = append(bodies, call(acct, "GET", "/api-keys", "", http.StatusOK, adminKey...).Body)

	// No response, log line or stored item holds a key; no response or log
	// line holds a key's hash.
	logs := env.Logs.String()
	for _, key := range []string{c.APIKey, keyA, keyB} {
		secret, hash := strings.TrimPrefix(key, auth.APIKeyPrefix), tenancy.HashAPIKey(key)
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
	out, err := env.Store.Client().Scan(context.Background(), &dynamodb.ScanInput{TableName: aws.String(env.Store.TableName())})
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
		if _, err := env.Store.Tenancy.CredentialByAPIKey(context.Background(), key, time.Now()); err != nil {
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
		{"deactivate-company", "--company", "x"},
		{"create-company", "--nme", "x"},
		// Values are checked as the command line is parsed, before a
		// store exists: missing flags are usage errors there too.
		{"create-company", "--name", "x"},
		{"deactivate-company"},
	} {
		if _, _, err := parse(args); !errors.Is(err, errUsage) {
			t.Errorf("%v: %v, want a usage error", args, err)
		}
	}
	env := testenv.New(t)
	cmd, _, _ := parse([]string{"deactivate-company", "--company", "404"})
	if err := execute(context.Background(), cmd, env.Store, &bytes.Buffer{}); err == nil || !strings.Contains(err.Error(), "no company 404") {
		t.Errorf("unknown company: %v", err)
	}
}

// Every command line names its table: no connection flag, or a mix that
// could mean two tables, is a usage error (exit 2) before any table is
// touched; --help anywhere prints the usage on standard output (exit 0).
func TestConnectionAndExitStatus(t *testing.T) {
	for _, c := range []struct {
		args   []string
		status int
		stdout string // in standard output
	}{
		{[]string{"--help"}, exitOK, "usage: operator"},
		{[]string{"-h"}, exitOK, "exit status: 0 done"},
		{[]string{"help"}, exitOK, "mint-key"},
		{[]string{"list-users", "--help"}, exitOK, "flags of list-users:\n  --company"},
		{[]string{"--local", "mint-key", "-h"}, exitOK, "--expires-in-days"},
		{nil, exitUsage, ""},
		{[]string{"drop-table", "--local"}, exitUsage, ""},
		{[]string{"list-companies"}, exitUsage, ""},
		{[]string{"--local", "--region", "eu-central-1", "list-companies"}, exitUsage, ""},
		{[]string{"--region", "eu-central-1", "list-companies"}, exitUsage, ""},
		{[]string{"--region", "eu-central-1", "--stack", "s", "--table", "t", "list-companies"}, exitUsage, ""},
		{[]string{"--region", "eu-central-1", "--table", "t", "--endpoint", "http://127.0.0.1:1", "list-companies"}, exitUsage, ""},
		{[]string{"--local", "--stack", "s", "list-companies"}, exitUsage, ""},
	} {
		var stdout, stderr bytes.Buffer
		status := runMain(context.Background(), c.args, &stdout, &stderr)
		if status != c.status || !strings.Contains(stdout.String(), c.stdout) {
			t.Errorf("%q: exit %d, stdout %q; want %d and %q", c.args, status, stdout.String(), c.status, c.stdout)
		}
		if status == exitUsage && !strings.Contains(stderr.String(), "usage: operator") {
			t.Errorf("%q: the usage error does not show the usage: %q", c.args, stderr.String())
		}
		if status == exitOK && stderr.Len() > 0 {
			t.Errorf("%q: help wrote to standard error: %q", c.args, stderr.String())
		}
	}

	// Against the test table: a missing company is exit 3, a found one 0.
	env := testenv.New(t)
	local := []string{"--local", "--endpoint", testenv.Endpoint(), "--table", env.Store.TableName()}
	var stdout, stderr bytes.Buffer
	if status := runMain(context.Background(), append(local, "deactivate-company", "--company", "404"), &stdout, &stderr); status != exitNotFound || !strings.Contains(stderr.String(), "no company 404") {
		t.Errorf("unknown company: exit %d, %q", status, stderr.String())
	}
	stdout.Reset()
	if status := runMain(context.Background(), append(local, "create-company", "--name", "Pied Piper", "--admin-email", "richard@piedpiper.test", "--admin-name", "Richard Hendricks"), &stdout, &stderr); status != exitOK || !strings.Contains(stdout.String(), `"created": true`) {
		t.Errorf("create-company: exit %d, %s", status, stdout.String())
	}
}

// cloudFormation answers DescribeStacks in CloudFormation's query protocol
// for the stacks it knows (name -> outputs), and ValidationError for others.
func cloudFormation(t *testing.T, stacks map[string]map[string]string) *cloudformation.Client {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if err := r.ParseForm(); err != nil || r.Form.Get("Action") != "DescribeStacks" {
			t.Errorf("request %s %v", r.URL, r.Form)
		}
		name := r.Form.Get("StackName")
		outputs, ok := stacks[name]
		w.Header().Set("Content-Type", "text/xml")
		if !ok {
			w.WriteHeader(http.StatusBadRequest)
			fmt.Fprintf(w, `<ErrorResponse xmlns="http://cloudformation.amazonaws.com/doc/2010-05-15/"><Error><Type>Sender</Type><Code>ValidationError</Code><Message>Stack with id %s does not exist</Message></Error><RequestId>1</RequestId></ErrorResponse>`, name)
			return
		}
		var b strings.Builder
		for k, v := range outputs {
			fmt.Fprintf(&b, "<member><OutputKey>%s</OutputKey><OutputValue>%s</OutputValue></member>", k, v)
		}
		fmt.Fprintf(w, `<DescribeStacksResponse xmlns="http://cloudformation.amazonaws.com/doc/2010-05-15/"><DescribeStacksResult><Stacks><member><StackName>%s</StackName><StackStatus>CREATE_COMPLETE</StackStatus><Outputs>%s</Outputs></member></Stacks></DescribeStacksResult><ResponseMetadata><RequestId>2</RequestId></ResponseMetadata></DescribeStacksResponse>`, name, b.String())
	}))
	t.Cleanup(srv.Close)
	return cloudformation.New(cloudformation.Options{
		Region: "eu-central-1", BaseEndpoint: aws.String(srv.URL),
		Credentials: credentials.NewStaticCredentialsProvider("AKIDEXAMPLE", "secret", ""),
	})
}

// --stack finds the table through the stack's TableName output.
func TestStackTable(t *testing.T) {
	cf := cloudFormation(t, map[string]map[string]string{
		"codescan-api-prod-eu": {"ApiBaseUrl": "https://x.example/prod/api/v1", "TableName": "codescan-api-prod-eu-Table1A2B3C"},
		"other-stack":          {"BucketName": "b"},
	})
	ctx := context.Background()
	if table, err := stackTable(ctx, cf, "codescan-api-prod-eu"); err != nil || table != "codescan-api-prod-eu-Table1A2B3C" {
		t.Errorf("stack table: %q, %v", table, err)
	}
	if _, err := stackTable(ctx, cf, "other-stack"); err == nil || !strings.Contains(err.Error(), "has no TableName output") {
		t.Errorf("stack without the output: %v", err)
	}
	if _, err := stackTable(ctx, cf, "nope"); err == nil || !strings.Contains(err.Error(), "does not exist") {
		t.Errorf("missing stack: %v", err)
	}
}

// The operator lists a company's users and keys, mints a key (shown once)
// and revokes it; each action is in the company's audit log as the
// operator's, and no output holds a key's hash.
func TestUsersAndKeys(t *testing.T) {
	env := testenv.New(t)
	ctx := context.Background()
	var c created
	operator(t, env, &c, "create-company", "--name", "Globex", "--admin-email", "hank@globex.test", "--admin-name", "Hank Scorpio")
	company := fmt.Sprint(c.Company.ID)

	var users []userJSON
	operator(t, env, &users, "list-users", "--company", company)
	if len(users) != 1 || users[0].ID != c.Admin.ID || !users[0].IsAdmin || !users[0].Active {
		t.Fatalf("list-users: %+v", users)
	}
	var minted struct {
		Key    keyJSON `json:"key"`
		APIKey string  `json:"api_key"`
	}
	operator(t, env, &minted, "mint-key", "--company", company, "--user", fmt.Sprint(c.Admin.ID), "--name", "break-glass", "--expires-in-days", "7")
	if minted.Key.Name != "break-glass" || minted.Key.ExpiresAt == "" || !strings.HasPrefix(minted.APIKey, minted.Key.Prefix) {
		t.Fatalf("mint-key: %+v", minted)
	}
	if _, err := env.Store.Tenancy.CredentialByAPIKey(ctx, minted.APIKey, time.Now()); err != nil {
		t.Fatalf("the minted key does not authenticate: %v", err)
	}
	var keys []keyJSON
	operator(t, env, &keys, "list-keys", "--company", company, "--user", fmt.Sprint(c.Admin.ID))
	if len(keys) != 2 || keys[1].ID != minted.Key.ID {
		t.Fatalf("list-keys: %+v", keys)
	}
	var revoked struct {
		Changed bool    `json:"changed"`
		Key     keyJSON `json:"key"`
	}
	operator(t, env, &revoked, "revoke-key", "--company", company, "--key", fmt.Sprint(minted.Key.ID))
	if !revoked.Changed || revoked.Key.RevokedAt == "" {
		t.Fatalf("revoke-key: %+v", revoked)
	}
	if _, err := env.Store.Tenancy.CredentialByAPIKey(ctx, minted.APIKey, time.Now()); !errors.Is(err, ddb.ErrNotFound) {
		t.Fatalf("the revoked key still authenticates: %v", err)
	}
	operator(t, env, &revoked, "revoke-key", "--company", company, "--key", fmt.Sprint(minted.Key.ID))
	if revoked.Changed {
		t.Fatal("revoking a revoked key changed it")
	}

	for _, args := range [][]string{
		{"mint-key", "--company", company, "--user", "999999"},
		{"revoke-key", "--company", company, "--key", "999999"},
		{"list-users", "--company", "999999"},
		{"list-keys", "--company", company, "--user", "999999"},
	} {
		cmd, _, err := parse(args)
		if err != nil {
			t.Fatal(err)
		}
		if err := execute(ctx, cmd, env.Store, &bytes.Buffer{}); !errors.Is(err, errNotFound) {
			t.Errorf("%v: %v, want not found", args, err)
		}
	}
	for _, args := range [][]string{
		{"mint-key", "--company", company},
		{"mint-key", "--company", company, "--user", fmt.Sprint(c.Admin.ID), "--expires-in-days", "-1"},
		{"mint-key", "--company", company, "--user", fmt.Sprint(c.Admin.ID), "--name", " "},
		{"revoke-key", "--company", company},
		{"list-users"},
	} {
		if _, _, err := parse(args); !errors.Is(err, errUsage) {
			t.Errorf("%v: %v, want a usage error", args, err)
		}
	}

	entriesPage, err := env.Store.Tenancy.ListAudit(ctx, c.Company.ID, tenancy.AuditFilter{}, page.Request{Limit: 100})

	entries := entriesPage.Items
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, e := range entries {
		if e.Actor.Via != ledger.ViaOperator {
			t.Errorf("%s by %+v", e.Action, e.Actor)
		}
		got = append(got, e.Action+" "+e.TargetType)
	}
	want := []string{"api_key.revoke api_key", "api_key.list user", "api_key.create api_key", "user.list company",
		"api_key.create api_key", "user.create user", "company.create company"}
	if strings.Join(got, ", ") != strings.Join(want, ", ") {
		t.Errorf("audit log: %v\nwant %v", got, want)
	}
}
