package ingest

import (
	"bytes"
	"compress/gzip"
	"context"
	"errors"
	"io"

	"github.com/acme/codescan-api/shared/reportfinding"
	"github.com/acme/codescan-api/shared/store/scans"
	"github.com/acme/codescan-api/shared/store/schema"
)

// Limits of one uploaded report, GitHub code scanning's: at most 25,000
// results (the format readers also hold each SARIF run to 25,000 results
// and a file to 20 runs), at most 10 MiB as uploaded when gzip-compressed,
// and at most MaxReportBytes once decompressed (a gzip bomb stops there,
// while it is read).
const (
	MaxFindings        = 25_000
	MaxCompressedBytes = 10 << 20
	MaxReportBytes     = 64 << 20
)

// Errors of Decode.
var (
	ErrBadGzip  = errors.New("the report is not valid gzip")
	ErrTooLarge = errors.New("the decompressed report exceeds the limit")
)

// IsGzip reports whether data starts with the gzip magic number: a report
// stored compressed (a chunked upload of a .gz file, or a whole one sent
// without Content-Encoding).
func IsGzip(data []byte) bool { return len(data) >= 2 && data[0] == 0x1f && data[1] == 0x8b }

// Decode returns the report in data: decompressed (at most MaxReportBytes,
// counted while reading) when data is gzip, else data itself.
func Decode(data []byte) ([]byte, error) {
	if !IsGzip(data) {
		if len(data) > MaxReportBytes {
			return nil, ErrTooLarge
		}
		return data, nil
	}
	zr, err := gzip.NewReader(bytes.NewReader(data))
	if err != nil {
		return nil, ErrBadGzip
	}
	out, err := io.ReadAll(io.LimitReader(zr, MaxReportBytes+1))
	if err != nil {
		return nil, ErrBadGzip
	}
	if len(out) > MaxReportBytes {
		return nil, ErrTooLarge
	}
	return out, nil
}

// Write stores every finding of a parsed report as the scan's, through the
// store's idempotent write paths (issue ids derive from the company, the
// tool and the finding's identity, so writing the same report again
// changes nothing), and completes the scan: quality issues, SCA issues,
// then the SAST issues, whose lifecycle marks the scan complete.
func Write(ctx context.Context, st Store, companyID int64, sc scans.Scan, proj schema.Project, fs []reportfinding.Finding) error {
	if err := st.Quality.PutQualityIssues(ctx, companyID, Quality(companyID, sc, proj, fs)); err != nil {
		return err
	}
	if err := st.SCA.PutScanSCAIssues(ctx, companyID, sc, SCA(companyID, sc, proj, fs)); err != nil {
		return err
	}
	_, err := st.Findings.ApplyScan(ctx, companyID, sc, Issues(companyID, sc, proj, fs))
	return err
}
