package projects_test

import (
	"context"
	"fmt"
	"image/png"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/acme/codescan-api/functions/projects"
	"github.com/acme/codescan-api/internal/testenv"
	"github.com/acme/codescan-api/shared/store"
	"github.com/acme/codescan-api/shared/store/bulkload"
	"github.com/acme/codescan-api/shared/store/findings"
)

// TestReportTrendDrawnInBrowser gives a project 60 days of history (written
// on a controlled clock into the same table), renders its scan's real HTML
// report through the API, serves it from a loopback server with the
// report's headers and checks on a headless Chromium screenshot that the
// trend chart's series are drawn and that the page loaded nothing else.
func TestReportTrendDrawnInBrowser(t *testing.T) {
	bin, err := exec.LookPath("chromium")
	if err != nil {
		t.Fatalf("chromium is not installed (%v): `make test` installs it (apt-get install --no-install-recommends chromium)", err)
	}
	w := newWorld(t)
	up := w.upload(t, w.acme, "payments", "main", sarif(result("sqli", "db.go", 3), result("xss", "web.go", 9)))
	ctx := context.Background()
	now := time.Now().UTC()
	day := now
	past := store.New(w.env.Store.Client(), w.env.Store.TableName(), store.WithClock(func() time.Time { return day }))
	var prev []findings.Issue
	for d := 60; d >= 1; d-- {
		day = now.AddDate(0, 0, -d)
		var batch []findings.Issue
		for k, u := range []string{"CR", "HI", "ME", "LO"} {
			batch = append(batch, findings.Issue{ID: findings.IssueID(w.acme.ID, up.ProjectID, "main", "seed", fmt.Sprint(d, "-", k)),
				ProjectID: up.ProjectID, ProjectName: "payments", Branch: "main", Tool: "seed", CWE: 79, FilePath: "a.go", Urgency: u, Status: "open"})
		}
		if _, err := bulkload.CreateIssues(ctx, past, w.acme.ID, batch); err != nil {
			t.Fatal(err)
		}
		for _, i := range prev[:d%3] {
			if _, err := bulkload.SetIssueStatus(ctx, past, w.acme.ID, i.ID, "fixed"); err != nil {
				t.Fatal(err)
			}
		}
		prev = batch
	}
	res := w.get(t, w.acme.Admin, "/scan/"+up.ScanID+"/report?format=json")
	if res.Status != 200 {
		t.Fatalf("json report: %d", res.Status)
	}
	page := w.getText(t, "/scan/"+up.ScanID+"/report")
	if !strings.Contains(page, "<svg") || !strings.Contains(page, "Trend of payments, last 90 days") || strings.Contains(page, "No issues in this period") {
		t.Fatalf("the report has no trend chart:\n%s", page)
	}
	var asked []string
	srv := httptest.NewServer(http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
		asked = append(asked, r.URL.Path)
		if r.URL.Path != "/report" {
			http.NotFound(rw, r)
			return
		}
		rw.Header().Set("Content-Type", "text/html; charset=utf-8")
		rw.Header().Set("Content-Security-Policy", projects.ReportCSP)
		rw.Write([]byte(page))
	}))
	defer srv.Close()

	dir := t.TempDir()
	shot := filepath.Join(dir, "shot.png")
	cctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(cctx, bin, "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
		"--disable-background-networking", "--disable-component-update", "--disable-sync", "--user-data-dir="+filepath.Join(dir, "profile"),
		"--hide-scrollbars", "--force-device-scale-factor=1", "--window-size=900,1100", "--screenshot="+shot, srv.URL+"/report")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("chromium: %v\n%s", err, out)
	}
	f, err := os.Open(shot)
	if err != nil {
		t.Fatalf("chromium wrote no screenshot: %v", err)
	}
	defer f.Close()
	img, err := png.Decode(f)
	if err != nil {
		t.Fatal(err)
	}
	// The chart's colours (shared/trendchart): the open areas by urgency,
	// the opened and fixed lines. The page's own styles use none of them.
	colours := []string{"#c62828", "#ef6c00", "#f9a825", "#78909c", "#1565c0", "#2e7d32"}
	seen := map[string]int{}
	b := img.Bounds()
	for y := b.Min.Y; y < b.Max.Y; y++ {
		for x := b.Min.X; x < b.Max.X; x++ {
			r, g, bl, _ := img.At(x, y).RGBA()
			for _, c := range colours {
				v, _ := strconv.ParseUint(c[1:], 16, 32)
				if near(int(r>>8), int(v>>16)) && near(int(g>>8), int(v>>8&0xff)) && near(int(bl>>8), int(v&0xff)) {
					seen[c]++
				}
			}
		}
	}
	for _, c := range colours {
		if seen[c] < 200 {
			t.Errorf("colour %s: %d pixels (all: %v)", c, seen[c], seen)
		}
	}
	for _, p := range asked {
		if p != "/report" && p != "/favicon.ico" {
			t.Errorf("the page loaded %s", p)
		}
	}
}

func near(a, b int) bool { return a-b <= 6 && b-a <= 6 }

func (w *world) getText(t *testing.T, path string) string {
	t.Helper()
	res := testenv.DoText(t, w.h, "GET", path, testenv.Key(w.acme.Admin)...)
	if res.Status != 200 {
		t.Fatalf("%s: %d %s", path, res.Status, res.Body)
	}
	return string(res.Body)
}
