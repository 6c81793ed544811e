package s3local_test

import (
	"context"
	"encoding/xml"
	"errors"
	"io"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	v4 "github.com/aws/aws-sdk-go-v2/aws/signer/v4"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/smithy-go"

	"github.com/acme/codescan-api/shared/awsclient"
	"github.com/acme/codescan-api/shared/reporoot"
	"github.com/acme/codescan-api/shared/reportstore"
	"github.com/acme/codescan-api/shared/reportstore/s3reports"
	"github.com/acme/codescan-api/shared/s3local"
)

// server starts a server of the test's own (its data in a temporary
// directory) and returns it with the report bucket on it, signed with the
// local credentials as the service signs.
func server(t *testing.T) (*s3local.Process, *s3reports.Store) {
	t.Helper()
	root, err := reporoot.Find()
	if err != nil {
		t.Fatal(err)
	}
	begun := time.Now()
	p, err := s3local.Start(context.Background(), root, s3local.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("the S3 server answered %s after Start", time.Since(begun).Round(time.Millisecond))
	t.Cleanup(p.Stop)
	b, err := s3reports.New(context.Background(), s3local.Bucket, p.Endpoint)
	if err != nil {
		t.Fatal(err)
	}
	return p, b
}

// s3Error is the error document of an S3 answer.
type s3Error struct {
	Code string `xml:"Code"`
}

// get fetches u with no credentials of its own and returns the status,
// the error code (when not 2xx) and the body.
func get(t *testing.T, method, u string) (int, string, string) {
	t.Helper()
	req, err := http.NewRequest(method, u, nil)
	if err != nil {
		t.Fatal(err)
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	body, err := io.ReadAll(res.Body)
	if err != nil {
		t.Fatal(err)
	}
	var e s3Error
	if res.StatusCode/100 != 2 {
		_ = xml.Unmarshal(body, &e)
	}
	return res.StatusCode, e.Code, string(body)
}

// edit returns link with query parameter name set to value.
func edit(t *testing.T, link, name, value string) string {
	t.Helper()
	u, err := url.Parse(link)
	if err != nil {
		t.Fatal(err)
	}
	q := u.Query()
	if !q.Has(name) {
		t.Fatalf("link %s has no %s", link, name)
	}
	q.Set(name, value)
	u.RawQuery = q.Encode()
	return u.String()
}

// flipLast changes the last hex digit of s.
func flipLast(s string) string {
	last := s[len(s)-1]
	return s[:len(s)-1] + map[bool]string{true: "1", false: "0"}[last == '0']
}

// shiftedSigner signs as if it were shift later (earlier, when negative):
// a link signed minutes ago, without waiting for minutes.
type shiftedSigner struct {
	*v4.Signer
	shift time.Duration
}

func (s shiftedSigner) PresignHTTP(ctx context.Context, creds aws.Credentials, r *http.Request, payloadHash, service, region string, at time.Time, optFns ...func(*v4.SignerOptions)) (string, http.Header, error) {
	return s.Signer.PresignHTTP(ctx, creds, r, payloadHash, service, region, at.Add(s.shift), optFns...)
}

// linkSignedAgo presigns a GET of key signed ago, valid for expiry from
// then.
func linkSignedAgo(t *testing.T, b *s3reports.Store, key string, ago, expiry time.Duration) string {
	t.Helper()
	presign := s3.NewPresignClient(b.Client, func(o *s3.PresignOptions) {
		o.Presigner = shiftedSigner{Signer: v4.NewSigner(), shift: -ago}
	})
	req, err := presign.PresignGetObject(context.Background(), &s3.GetObjectInput{Bucket: aws.String(b.Bucket), Key: aws.String(key)},
		s3.WithPresignExpires(expiry))
	if err != nil {
		t.Fatal(err)
	}
	return req.URL
}

// A presigned link reads its object, as an attachment, until it expires;
// a link is bound to its object, its expiry and its signature: the same
// link with any of them edited, or past its expiry, is refused with 403,
// whatever the edit tries (an expired link given a longer life, another
// tenant's object under a valid signature).
func TestPresignedLinks(t *testing.T) {
	_, b := server(t)
	ctx := context.Background()
	mine, theirs := reportstore.ExportKey(1, "links", ".csv"), reportstore.ExportKey(2, "links", ".csv")
	for _, key := range []string{mine, theirs} {
		if err := b.Put(ctx, key, []byte("id,title\n1,"+key+"\n")); err != nil {
			t.Fatal(err)
		}
	}
	link, err := b.Link(ctx, mine, "findings.csv", time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	status, _, body := get(t, http.MethodGet, link)
	if status != http.StatusOK || !strings.Contains(body, mine) {
		t.Fatalf("the link: %d %q", status, body)
	}
	expired := linkSignedAgo(t, b, mine, 2*time.Minute, time.Minute)
	for _, c := range []struct {
		name, link, code string
	}{
		{"expiry lengthened", edit(t, link, "X-Amz-Expires", "604800"), "SignatureDoesNotMatch"},
		{"expiry shortened", edit(t, link, "X-Amz-Expires", "30"), "SignatureDoesNotMatch"},
		{"signature changed", edit(t, link, "X-Amz-Signature", flipLast(mustQuery(t, link, "X-Amz-Signature"))), "SignatureDoesNotMatch"},
		{"date moved", edit(t, link, "X-Amz-Date", time.Now().UTC().Add(time.Minute).Format("20060102T150405Z")), "SignatureDoesNotMatch"},
		{"another tenant's key", strings.Replace(link, "/exports/1/", "/exports/2/", 1), "SignatureDoesNotMatch"},
		{"disposition dropped", dropQuery(t, link, "response-content-disposition"), "SignatureDoesNotMatch"},
		{"expired", expired, "AccessDenied"},
		{"expired, expiry lengthened", edit(t, expired, "X-Amz-Expires", "604800"), "SignatureDoesNotMatch"},
	} {
		status, code, body := get(t, http.MethodGet, c.link)
		if status != http.StatusForbidden || code != c.code || strings.Contains(body, "1,exports/") {
			t.Errorf("%s: %d %s, want 403 %s (%s)", c.name, status, code, c.code, body)
		}
	}
	// Not refused for its age alone: signed two minutes ago for ten, it
	// still reads (the server counts the expiry from X-Amz-Date).
	if status, _, body := get(t, http.MethodGet, linkSignedAgo(t, b, mine, 2*time.Minute, 10*time.Minute)); status != http.StatusOK {
		t.Fatalf("a link within its expiry: %d %s", status, body)
	}
}

func mustQuery(t *testing.T, link, name string) string {
	t.Helper()
	u, err := url.Parse(link)
	if err != nil || !u.Query().Has(name) {
		t.Fatalf("link %s has no %s (%v)", link, name, err)
	}
	return u.Query().Get(name)
}

func dropQuery(t *testing.T, link, name string) string {
	t.Helper()
	u, err := url.Parse(link)
	if err != nil {
		t.Fatal(err)
	}
	q := u.Query()
	if !q.Has(name) {
		t.Fatalf("link %s has no %s", link, name)
	}
	q.Del(name)
	u.RawQuery = q.Encode()
	return u.String()
}

// Nothing is served to a request without a signature: not an object, not
// the bucket's listing (either version), not the list of buckets; nor is
// an object written.
func TestAnonymousRefused(t *testing.T) {
	p, b := server(t)
	ctx := context.Background()
	key := reportstore.ReportKey(1, "anonymous", "digest")
	if err := b.Put(ctx, key, []byte("secret report")); err != nil {
		t.Fatal(err)
	}
	bucket := p.Endpoint + "/" + s3local.Bucket
	for _, c := range []struct{ method, url string }{
		{http.MethodGet, bucket + "/" + key},
		{http.MethodHead, bucket + "/" + key},
		{http.MethodGet, bucket},
		{http.MethodGet, bucket + "?list-type=2&prefix=reports/"},
		{http.MethodGet, p.Endpoint + "/"},
		{http.MethodPut, bucket + "/reports/1/planted"},
	} {
		status, code, body := get(t, c.method, c.url)
		if status != http.StatusForbidden || strings.Contains(body, "secret report") || strings.Contains(body, "reports/1/") {
			t.Errorf("anonymous %s %s: %d %s %q, want 403", c.method, c.url, status, code, body)
		}
	}
	if objs, err := b.List(ctx, "reports/1/planted"); err != nil || len(objs) != 0 {
		t.Fatalf("after an anonymous PUT: %v %v", objs, err)
	}
}

// A request signed with the right access key but another secret is
// refused (the Authorization header's signature is checked too).
func TestWrongSecretRefused(t *testing.T) {
	p, b := server(t)
	ctx := context.Background()
	key := reportstore.ReportKey(1, "wrong-secret", "digest")
	if err := b.Put(ctx, key, []byte("report")); err != nil {
		t.Fatal(err)
	}
	client := s3.NewFromConfig(awsclient.Static("us-east-1", s3reports.LocalAccessKey, "not-the-secret", ""), func(o *s3.Options) {
		o.BaseEndpoint = aws.String(p.Endpoint)
		o.UsePathStyle = true
	})
	forger := &s3reports.Store{Client: client, Bucket: s3local.Bucket}
	for name, call := range map[string]func() error{
		"get":  func() error { _, err := forger.Get(ctx, key, 1<<20); return err },
		"put":  func() error { return forger.Put(ctx, key, []byte("forged")) },
		"list": func() error { _, err := forger.List(ctx, "reports/"); return err },
	} {
		var api smithy.APIError
		if err := call(); !errors.As(err, &api) || api.ErrorCode() != "SignatureDoesNotMatch" {
			t.Errorf("%s with another secret: %v, want SignatureDoesNotMatch", name, err)
		}
	}
	if got, err := b.Get(ctx, key, 1<<20); err != nil || string(got) != "report" {
		t.Fatalf("the object after a forged put: %q %v", got, err)
	}
}
