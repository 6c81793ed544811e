package s3reports_test

import (
	"bytes"
	"context"
	"errors"
	"io"
	"math/rand/v2"
	"net/http"
	"testing"
	"time"

	"github.com/acme/codescan-api/internal/testenv"
	"github.com/acme/codescan-api/shared/reportstore"
	"github.com/acme/codescan-api/shared/reportstore/s3reports"
)

func TestMain(m *testing.M) { testenv.Main(m) }

// write streams body to key in writes of odd sizes and closes the object.
func write(t *testing.T, b *s3reports.Store, key string, body []byte) {
	t.Helper()
	w, err := b.Create(context.Background(), key, "text/csv")
	if err != nil {
		t.Fatal(err)
	}
	for rest := body; len(rest) > 0; {
		n := min(len(rest), 100_003)
		if _, err := w.Write(rest[:n]); err != nil {
			t.Fatal(err)
		}
		rest = rest[n:]
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
}

// A streamed object reads back byte for byte, whether it fits one part (a
// single PutObject), fills parts exactly, or spans several parts and a
// last short one (a multipart upload); an empty one exists too. Its link
// reads it over HTTP; an aborted object is not there.
func TestStreamedObjects(t *testing.T) {
	b := testenv.Reports(t)
	ctx := context.Background()
	r := rand.New(rand.NewPCG(1, 2))
	for _, size := range []int{0, 1000, s3reports.PartSize, 2*s3reports.PartSize + 12_345} {
		body := make([]byte, size)
		for i := range body {
			body[i] = byte(r.IntN(256))
		}
		key := reportstore.ExportKey(1, "stream-test", "-"+time.Now().Format("150405.000000000"))
		write(t, b, key, body)
		got, err := b.Get(ctx, key, int64(size)+1)
		if err != nil || !bytes.Equal(got, body) {
			t.Fatalf("size %d: read back %d bytes, %v", size, len(got), err)
		}
		if size != 1000 {
			continue
		}
		link, err := b.Link(ctx, key, "x.csv", time.Minute)
		if err != nil {
			t.Fatal(err)
		}
		res, err := http.Get(link)
		if err != nil {
			t.Fatal(err)
		}
		viaLink, _ := io.ReadAll(res.Body)
		res.Body.Close()
		if res.StatusCode != http.StatusOK || !bytes.Equal(viaLink, body) || res.Header.Get("Content-Disposition") != `attachment; filename=x.csv` {
			t.Fatalf("link: %d %q, %d bytes", res.StatusCode, res.Header.Get("Content-Disposition"), len(viaLink))
		}
	}
	key := reportstore.ExportKey(1, "aborted", ".csv")
	w, err := b.Create(ctx, key, "text/csv")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := w.Write(make([]byte, s3reports.PartSize+1)); err != nil {
		t.Fatal(err)
	}
	// The multipart upload begun for the first full part is discarded,
	// and the aborted writer never completes the object.
	if err := w.Abort(); err != nil {
		t.Fatal(err)
	}
	if _, err := w.Write([]byte("x")); err == nil {
		t.Fatal("write after abort")
	}
	if err := w.Close(); err == nil {
		t.Fatal("close after abort")
	}
	if _, err := b.Get(ctx, key, 1<<30); !errors.Is(err, reportstore.ErrNotFound) {
		t.Fatalf("aborted object: %v", err)
	}
}
