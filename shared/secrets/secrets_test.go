package secrets_test

import (
	"bytes"
	"context"
	"crypto/aes"
	"crypto/cipher"
	"crypto/rand"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/kms"

	"github.com/acme/codescan-api/shared/secrets"
)

const token = "ghp_16C7e42F292c6912E7710c838347Ae178B4a"

// checkSealer exercises the contract every sealer keeps.
func checkSealer(t *testing.T, s secrets.Sealer) {
	t.Helper()
	ctx := context.Background()
	sealed, err := s.Seal(ctx, token, "integration/1/a")
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(sealed, token) {
		t.Fatalf("sealed value contains the plaintext: %s", sealed)
	}
	again, err := s.Seal(ctx, token, "integration/1/a")
	if err != nil || again == sealed {
		t.Fatalf("sealing twice gave the same value (%v)", err)
	}
	if got, err := s.Open(ctx, sealed, "integration/1/a"); err != nil || got != token {
		t.Fatalf("open: %q, %v", got, err)
	}
	if _, err := s.Open(ctx, sealed, "integration/2/a"); !errors.Is(err, secrets.ErrMalformed) {
		t.Fatalf("opened for another record: %v", err)
	}
	tampered := sealed[:len(sealed)-2] + "AA"
	if tampered == sealed {
		tampered = sealed[:len(sealed)-2] + "BB"
	}
	if _, err := s.Open(ctx, tampered, "integration/1/a"); !errors.Is(err, secrets.ErrMalformed) {
		t.Fatalf("opened a tampered value: %v", err)
	}
	if _, err := s.Open(ctx, "plain-text", "integration/1/a"); !errors.Is(err, secrets.ErrMalformed) {
		t.Fatalf("opened an unsealed value: %v", err)
	}
}

func TestLocal(t *testing.T) {
	key := make([]byte, 32)
	_, _ = rand.Read(key)
	s, err := secrets.NewLocal(key)
	if err != nil {
		t.Fatal(err)
	}
	checkSealer(t, s)

	other := make([]byte, 32)
	_, _ = rand.Read(other)
	o, _ := secrets.NewLocal(other)
	sealed, _ := s.Seal(context.Background(), token, "r")
	if _, err := o.Open(context.Background(), sealed, "r"); !errors.Is(err, secrets.ErrMalformed) {
		t.Fatalf("opened with another key: %v", err)
	}
	if _, err := secrets.NewLocal(key[:16]); err == nil {
		t.Fatal("accepted a 16-byte key")
	}
}

func TestKeyFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "sub", "integration-token.key")
	var wg sync.WaitGroup
	sealers := make([]*secrets.Local, 8)
	errs := make([]error, 8)
	for i := range sealers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			sealers[i], errs[i] = secrets.LoadOrCreateKeyFile(path)
		}()
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	fi, err := os.Stat(path)
	if err != nil || fi.Size() != 32 || fi.Mode().Perm() != 0o600 {
		t.Fatalf("key file: %v %v", fi, err)
	}
	// Every concurrent first use ended up with the one key in the file.
	sealed, _ := sealers[0].Seal(context.Background(), token, "r")
	for i, s := range sealers {
		if got, err := s.Open(context.Background(), sealed, "r"); err != nil || got != token {
			t.Fatalf("sealer %d: %q %v", i, got, err)
		}
	}
	reloaded, err := secrets.LoadOrCreateKeyFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if got, err := reloaded.Open(context.Background(), sealed, "r"); err != nil || got != token {
		t.Fatalf("reloaded: %q %v", got, err)
	}
	entries, _ := os.ReadDir(filepath.Dir(path))
	if len(entries) != 1 {
		t.Fatalf("temporary files left: %v", entries)
	}
}

func TestFromEnvLocal(t *testing.T) {
	path := filepath.Join(t.TempDir(), "k")
	t.Setenv(secrets.EnvKMSKeyID, "")
	t.Setenv("AWS_LAMBDA_FUNCTION_NAME", "")
	t.Setenv(secrets.EnvKeyFile, path)
	s, err := secrets.FromEnv(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	checkSealer(t, s)
	if _, err := os.Stat(path); err != nil {
		t.Fatalf("key file not created: %v", err)
	}
	t.Setenv("AWS_LAMBDA_FUNCTION_NAME", "integrations")
	if _, err := secrets.FromEnv(context.Background()); err == nil {
		t.Fatal("Lambda without a KMS key id was accepted")
	}
}

// fakeKMS speaks KMS's JSON 1.1 protocol for Encrypt and Decrypt. Its
// ciphertext blob names the key (as KMS's does) and is bound to the
// encryption context.
type fakeKMS struct {
	keyARN string
	aead   cipher.AEAD
}

func newFakeKMS(t *testing.T, keyARN string) *httptest.Server {
	key := make([]byte, 32)
	_, _ = rand.Read(key)
	block, _ := aes.NewCipher(key)
	aead, _ := cipher.NewGCM(block)
	f := &fakeKMS{keyARN: keyARN, aead: aead}
	srv := httptest.NewServer(http.HandlerFunc(f.serve(t)))
	t.Cleanup(srv.Close)
	return srv
}

func (f *fakeKMS) serve(t *testing.T) func(http.ResponseWriter, *http.Request) {
	return func(w http.ResponseWriter, r *http.Request) {
		if !strings.HasPrefix(r.Header.Get("Authorization"), "AWS4-HMAC-SHA256 ") ||
			r.Header.Get("Content-Type") != "application/x-amz-json-1.1" {
			t.Errorf("unsigned or wrong content type: %v", r.Header)
		}
		var in struct {
			KeyId             string
			Plaintext         []byte
			CiphertextBlob    []byte
			EncryptionContext map[string]string
		}
		if err := json.NewDecoder(r.Body).Decode(&in); err != nil {
			t.Errorf("request body: %v", err)
		}
		aad, _ := json.Marshal(in.EncryptionContext)
		reply := func(status int, v any) {
			w.Header().Set("Content-Type", "application/x-amz-json-1.1")
			w.WriteHeader(status)
			_ = json.NewEncoder(w).Encode(v)
		}
		fail := func(kind, msg string) { reply(400, map[string]string{"__type": kind, "message": msg}) }
		switch op := strings.TrimPrefix(r.Header.Get("X-Amz-Target"), "TrentService."); op {
		case "Encrypt":
			if in.KeyId != f.keyARN && in.KeyId != "alias/integrations" {
				fail("NotFoundException", "Key '"+in.KeyId+"' does not exist")
				return
			}
			nonce := make([]byte, f.aead.NonceSize())
			_, _ = rand.Read(nonce)
			blob := append([]byte(f.keyARN+"\x00"), f.aead.Seal(nonce, nonce, in.Plaintext, aad)...)
			reply(200, map[string]any{"CiphertextBlob": blob, "KeyId": f.keyARN, "EncryptionAlgorithm": "SYMMETRIC_DEFAULT"})
		case "Decrypt":
			arn, ct, ok := bytes.Cut(in.CiphertextBlob, []byte{0})
			n := f.aead.NonceSize()
			if !ok || len(ct) < n {
				fail("InvalidCiphertextException", "")
				return
			}
			if in.KeyId != "" && in.KeyId != string(arn) && in.KeyId != "alias/integrations" {
				fail("IncorrectKeyException", "The key ID in the request does not identify a CMK that can perform this operation.")
				return
			}
			plain, err := f.aead.Open(nil, ct[:n], ct[n:], aad)
			if err != nil {
				fail("InvalidCiphertextException", "")
				return
			}
			reply(200, map[string]any{"Plaintext": plain, "KeyId": string(arn), "EncryptionAlgorithm": "SYMMETRIC_DEFAULT"})
		default:
			fail("UnknownOperationException", op)
		}
	}
}

func kmsClient(endpoint string) *kms.Client {
	return kms.New(kms.Options{
		Region: "eu-west-1", BaseEndpoint: aws.String(endpoint),
		Credentials: credentials.NewStaticCredentialsProvider("AKIDEXAMPLE", "secret", ""),
	})
}

func TestKMS(t *testing.T) {
	const arn = "arn:aws:kms:eu-west-1:111122223333:key/1234abcd-12ab-34cd-56ef-1234567890ab"
	srv := newFakeKMS(t, arn)
	checkSealer(t, secrets.NewKMS(kmsClient(srv.URL), "alias/integrations"))

	// A value sealed under one key does not open when another key is named.
	s := secrets.NewKMS(kmsClient(srv.URL), arn)
	sealed, err := s.Seal(context.Background(), token, "r")
	if err != nil {
		t.Fatal(err)
	}
	other := secrets.NewKMS(kmsClient(srv.URL), "arn:aws:kms:eu-west-1:111122223333:key/other")
	if _, err := other.Open(context.Background(), sealed, "r"); !errors.Is(err, secrets.ErrMalformed) {
		t.Fatalf("opened under another key: %v", err)
	}
	// A KMS failure other than a bad ciphertext is an error, not ErrMalformed.
	if _, err := other.Seal(context.Background(), token, "r"); err == nil || errors.Is(err, secrets.ErrMalformed) {
		t.Fatalf("seal under a missing key: %v", err)
	}
	// A local value is not a KMS value.
	local, _ := secrets.NewLocal(make([]byte, 32))
	lv, _ := local.Seal(context.Background(), token, "r")
	if _, err := s.Open(context.Background(), lv, "r"); !errors.Is(err, secrets.ErrMalformed) {
		t.Fatalf("KMS sealer opened a local value: %v", err)
	}
}
