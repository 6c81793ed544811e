// Package reportstore names where uploaded reports, their chunks and the
// source files sent with them are kept
// (an S3 bucket per region in AWS, an S3-compatible server locally) and
// declares the few object operations the upload and the ingester need. The
// S3 implementation lives in s3reports, so that only the functions that
// touch the bucket link the S3 client.
package reportstore

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
)

// Store is the bucket of reports.
type Store interface {
	// Put stores body under key (replacing any object there).
	Put(ctx context.Context, key string, body []byte) error
	// Get reads the object at key; ErrNotFound when there is none, and
	// ErrTooLarge when it holds more than limit bytes (read no further).
	Get(ctx context.Context, key string, limit int64) ([]byte, error)
	// List returns the objects whose key starts with prefix, in key order.
	List(ctx context.Context, prefix string) ([]Object, error)
}

// Object is one listed object.
type Object struct {
	Key  string
	Size int64
}

// Errors of Get.
var (
	ErrNotFound = errors.New("report object not found")
	ErrTooLarge = errors.New("report object exceeds the limit")
)

// Key prefixes. Every key continues with the company id, so an object of a
// company is never named by another company's request; the bucket's
// lifecycle rules expire each prefix (ChunkDays, ReportDays).
const (
	ReportsPrefix = "reports/"
	ChunksPrefix  = "chunks/"
	SourcesPrefix = "sources/"
)

// Lifetimes of the objects (the bucket's lifecycle rules): a stored report
// is read by the ingester within seconds, kept a week for investigation and
// re-processing; chunks of an upload the client never finished go after a
// day; source files (a company's code) are only needed until their run's
// report is ingested, and go after a day too.
const (
	ReportDays = 7
	ChunkDays  = 1
	SourceDays = 1
)

// ReportKey is where the report of a scan is stored until it expires: the
// scan's report digest (store.Scan.ReportSHA256) ends it, so an attempt
// with another report never replaces the scan's.
func ReportKey(companyID int64, scanID, digest string) string {
	return fmt.Sprintf("%s%d/%s/%s", ReportsPrefix, companyID, scanID, digest)
}

// ChunkPrefix is the common prefix of the chunks of one chunked upload: the
// company, the run and the announced total length (a different length is a
// different upload).
func ChunkPrefix(companyID int64, runID string, length int64) string {
	return fmt.Sprintf("%s%d/%s/%d/", ChunksPrefix, companyID, runID, length)
}

// ChunkKey is the key of the chunk at offset: zero-padded, so keys list in
// offset order.
func ChunkKey(companyID int64, runID string, length, offset int64) string {
	return fmt.Sprintf("%s%020d", ChunkPrefix(companyID, runID, length), offset)
}

// SourcePrefix is the common prefix of the source files of one run.
func SourcePrefix(companyID int64, runID string) string {
	return fmt.Sprintf("%s%d/%s/", SourcesPrefix, companyID, runID)
}

// SourceKey is where the file at path (normalised, repository-relative) of
// a run is kept: under SourceName(path), so a key has the same short length
// whatever the path (a 1,024-byte path would pass S3's 1,024-byte key limit
// once prefixed, and a 255-byte segment a local file system's name limit
// once the S3 server adds its suffixes).
func SourceKey(companyID int64, runID, path string) string {
	return SourcePrefix(companyID, runID) + SourceName(path)
}

// SourceName is the last part of a source file's key: the SHA-256 of its
// path, in hex.
func SourceName(path string) string {
	sum := sha256.Sum256([]byte(path))
	return hex.EncodeToString(sum[:])
}

// Environment variables of the bucket.
const (
	EnvBucket   = "REPORTS_BUCKET"
	EnvEndpoint = "S3_ENDPOINT" // an S3-compatible server (local only); empty in AWS
)
