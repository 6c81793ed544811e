package secrets

import (
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/kms"
	"github.com/aws/aws-sdk-go-v2/service/kms/types"
)

// kmsPrefix marks values sealed by KMS (format version 1).
const kmsPrefix = "kms:v1:"

// contextKey is the encryption-context key that binds a value to its record.
const contextKey = "record"

// KMSAPI is the part of the KMS client the sealer uses.
type KMSAPI interface {
	Encrypt(ctx context.Context, in *kms.EncryptInput, opts ...func(*kms.Options)) (*kms.EncryptOutput, error)
	Decrypt(ctx context.Context, in *kms.DecryptInput, opts ...func(*kms.Options)) (*kms.DecryptOutput, error)
}

// KMS seals with a KMS key: each value is one Encrypt call.
type KMS struct {
	client KMSAPI
	keyID  string
}

// NewKMS returns a sealer that encrypts under keyID.
func NewKMS(client KMSAPI, keyID string) *KMS { return &KMS{client: client, keyID: keyID} }

// Seal encrypts plaintext for record.
func (k *KMS) Seal(ctx context.Context, plaintext, record string) (string, error) {
	out, err := k.client.Encrypt(ctx, &kms.EncryptInput{
		KeyId: aws.String(k.keyID), Plaintext: []byte(plaintext),
		EncryptionContext: map[string]string{contextKey: record},
	})
	if err != nil {
		return "", fmt.Errorf("kms encrypt: %w", err)
	}
	return kmsPrefix + base64.RawStdEncoding.EncodeToString(out.CiphertextBlob), nil
}

// Open decrypts a value sealed for record. Naming the key makes KMS refuse
// ciphertexts of any other key.
func (k *KMS) Open(ctx context.Context, sealed, record string) (string, error) {
	raw, ok := strings.CutPrefix(sealed, kmsPrefix)
	if !ok {
		return "", ErrMalformed
	}
	blob, err := base64.RawStdEncoding.DecodeString(raw)
	if err != nil {
		return "", ErrMalformed
	}
	out, err := k.client.Decrypt(ctx, &kms.DecryptInput{
		KeyId: aws.String(k.keyID), CiphertextBlob: blob,
		EncryptionContext: map[string]string{contextKey: record},
	})
	var invalid *types.InvalidCiphertextException
	var otherKey *types.IncorrectKeyException
	if errors.As(err, &invalid) || errors.As(err, &otherKey) {
		return "", ErrMalformed
	}
	if err != nil {
		return "", fmt.Errorf("kms decrypt: %w", err)
	}
	return string(out.Plaintext), nil
}
