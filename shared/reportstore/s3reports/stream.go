package s3reports

import (
	"bytes"
	"context"
	"fmt"
	"mime"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/s3/types"

	"github.com/acme/codescan-api/shared/reportstore"
)

var _ reportstore.Exports = (*Store)(nil)

// PartSize is the size of each part of a streamed object: S3's parts are
// at least 5 MiB (the last excepted) and at most 10,000, so an object may
// reach 80 GB, and a writer holds one part in memory.
const PartSize = 8 << 20

// Create starts a streamed object. An object smaller than one part is
// written with one PutObject at Close; a larger one is a multipart upload,
// begun when the first part is full.
func (s *Store) Create(ctx context.Context, key, contentType string) (reportstore.ObjectWriter, error) {
	return &streamWriter{ctx: ctx, s: s, key: key, contentType: contentType, buf: make([]byte, 0, PartSize)}, nil
}

// streamWriter buffers one part and uploads each part as it fills.
type streamWriter struct {
	ctx         context.Context
	s           *Store
	key         string
	contentType string
	buf         []byte
	uploadID    string
	parts       []types.CompletedPart
	err         error
}

func (w *streamWriter) Write(p []byte) (int, error) {
	if w.err != nil {
		return 0, w.err
	}
	n := 0
	for len(p) > 0 {
		k := copy(w.buf[len(w.buf):cap(w.buf)], p)
		w.buf = w.buf[:len(w.buf)+k]
		p, n = p[k:], n+k
		if len(w.buf) == cap(w.buf) {
			if w.err = w.flushPart(); w.err != nil {
				return n, w.err
			}
		}
	}
	return n, nil
}

// flushPart uploads the buffer as the next part.
func (w *streamWriter) flushPart() error {
	if w.uploadID == "" {
		out, err := w.s.Client.CreateMultipartUpload(w.ctx, &s3.CreateMultipartUploadInput{
			Bucket: aws.String(w.s.Bucket), Key: aws.String(w.key), ContentType: aws.String(w.contentType)})
		if err != nil {
			return fmt.Errorf("start object upload: %w", err)
		}
		w.uploadID = aws.ToString(out.UploadId)
	}
	num := int32(len(w.parts) + 1)
	out, err := w.s.Client.UploadPart(w.ctx, &s3.UploadPartInput{
		Bucket: aws.String(w.s.Bucket), Key: aws.String(w.key), UploadId: aws.String(w.uploadID),
		PartNumber: aws.Int32(num), Body: bytes.NewReader(w.buf), ContentLength: aws.Int64(int64(len(w.buf)))})
	if err != nil {
		return fmt.Errorf("upload object part %d: %w", num, err)
	}
	w.parts = append(w.parts, types.CompletedPart{ETag: out.ETag, PartNumber: aws.Int32(num)})
	w.buf = w.buf[:0]
	return nil
}

// Close completes the object.
func (w *streamWriter) Close() error {
	if w.err != nil {
		return w.err
	}
	if w.uploadID == "" {
		_, err := w.s.Client.PutObject(w.ctx, &s3.PutObjectInput{
			Bucket: aws.String(w.s.Bucket), Key: aws.String(w.key), ContentType: aws.String(w.contentType),
			Body: bytes.NewReader(w.buf), ContentLength: aws.Int64(int64(len(w.buf)))})
		if err != nil {
			return fmt.Errorf("put object: %w", err)
		}
		return nil
	}
	if len(w.buf) > 0 {
		if err := w.flushPart(); err != nil {
			return err
		}
	}
	_, err := w.s.Client.CompleteMultipartUpload(w.ctx, &s3.CompleteMultipartUploadInput{
		Bucket: aws.String(w.s.Bucket), Key: aws.String(w.key), UploadId: aws.String(w.uploadID),
		MultipartUpload: &types.CompletedMultipartUpload{Parts: w.parts}})
	if err != nil {
		return fmt.Errorf("complete object upload: %w", err)
	}
	return nil
}

// Abort discards the parts uploaded (the bucket's lifecycle rule removes
// those of a writer that could not even abort).
func (w *streamWriter) Abort() error {
	w.err = fmt.Errorf("object upload aborted")
	if w.uploadID == "" {
		return nil
	}
	_, err := w.s.Client.AbortMultipartUpload(context.WithoutCancel(w.ctx), &s3.AbortMultipartUploadInput{
		Bucket: aws.String(w.s.Bucket), Key: aws.String(w.key), UploadId: aws.String(w.uploadID)})
	return err
}

// Link presigns a GET of the object, answered as an attachment named
// filename. Signing is local: nothing here touches the network.
func (s *Store) Link(ctx context.Context, key, filename string, expiry time.Duration) (string, error) {
	req, err := s3.NewPresignClient(s.Client).PresignGetObject(ctx, &s3.GetObjectInput{
		Bucket: aws.String(s.Bucket), Key: aws.String(key),
		ResponseContentDisposition: aws.String(mime.FormatMediaType("attachment", map[string]string{"filename": filename})),
	}, s3.WithPresignExpires(expiry))
	if err != nil {
		return "", fmt.Errorf("presign object link: %w", err)
	}
	return req.URL, nil
}
