package trendchart

import (
	"bytes"
	"context"
	"encoding/xml"
	"image"
	"image/png"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/acme/codescan-api/shared/trendmath"
)

// page is the chart in a page with the HTML report's content security
// policy (nothing but inline styles may load), the chart at the top left.
func page(points []trendmath.Point) []byte {
	var b bytes.Buffer
	b.WriteString(`<!DOCTYPE html><html lang="en"><head><meta charset="utf-8">
<meta http-equiv="Content-Security-Policy" content="default-src 'none'; style-src 'unsafe-inline'">
<title>trend</title></head><body style="margin:0">
`)
	b.Write(SVG("Trend of demo <project>", points))
	b.WriteString("</body></html>\n")
	return b.Bytes()
}

// demoSeries is 90 days of a project whose open issues grow.
func demoSeries(t *testing.T) []trendmath.Point {
	today := time.Date(2026, 6, 30, 12, 0, 0, 0, time.UTC)
	var recs []trendmath.Day
	var open trendmath.ByUrgency
	for i := range 90 {
		d := trendmath.Day{Date: trendmath.Date(today.AddDate(0, 0, i-89)), Opened: int64(3 + i%5), Fixed: int64(i % 4)}
		d.Net = trendmath.ByUrgency{int64(i%7/6) * 2, int64(1 - i%2), int64(3 - 5*(i%2)), 1}
		for u := range d.Net {
			open[u] += d.Net[u]
		}
		recs = append(recs, d)
	}
	points, err := trendmath.Series(recs, open, today, 90)
	if err != nil {
		t.Fatal(err)
	}
	return points
}

// chromium is the browser `make test` installs (Debian's chromium).
func chromium(t *testing.T) string {
	bin, err := exec.LookPath("chromium")
	if err != nil {
		t.Fatalf("chromium is not installed (%v): run the tests with `make test`, whose test target installs it "+
			"(apt-get install --no-install-recommends chromium)", err)
	}
	return bin
}

// screenshot loads url in headless Chromium and decodes what it drew.
func screenshot(t *testing.T, bin, url string) image.Image {
	dir := t.TempDir()
	shot := filepath.Join(dir, "shot.png")
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
		"--disable-background-networking", "--disable-component-update", "--disable-sync", "--user-data-dir="+filepath.Join(dir, "profile"),
		"--hide-scrollbars", "--force-device-scale-factor=1", "--window-size=800,500", "--screenshot="+shot, url)
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
	return img
}

// plotAreas are the chart's plot rectangles, read from its SVG.
func plotAreas(t *testing.T, svg []byte) []image.Rectangle {
	var out []image.Rectangle
	dec := xml.NewDecoder(bytes.NewReader(svg))
	for {
		tok, err := dec.Token()
		if err != nil {
			break
		}
		el, ok := tok.(xml.StartElement)
		if !ok || el.Name.Local != "rect" {
			continue
		}
		attrs := map[string]float64{}
		class := ""
		for _, a := range el.Attr {
			if a.Name.Local == "class" {
				class = a.Value
			}
			attrs[a.Name.Local], _ = strconv.ParseFloat(a.Value, 64)
		}
		if class == "plot" { // inside the frame's stroke
			out = append(out, image.Rect(int(attrs["x"])+2, int(attrs["y"])+2, int(attrs["x"]+attrs["width"])-2, int(attrs["y"]+attrs["height"])-2))
		}
	}
	if len(out) != 2 {
		t.Fatalf("%d plot areas in the chart", len(out))
	}
	return out
}

// counts is the number of pixels inside areas near each colour ("#rrggbb").
func counts(img image.Image, areas []image.Rectangle, colours []string) map[string]int {
	type rgb struct{ r, g, b int }
	want := map[string]rgb{}
	for _, c := range colours {
		v, _ := strconv.ParseUint(c[1:], 16, 32)
		want[c] = rgb{int(v >> 16), int(v >> 8 & 0xff), int(v & 0xff)}
	}
	near := func(a, b int) bool { return a-b <= 6 && b-a <= 6 }
	out := map[string]int{}
	for _, area := range areas {
		for py := area.Min.Y; py < area.Max.Y; py++ {
			for px := area.Min.X; px < area.Max.X; px++ {
				r, g, b, _ := img.At(px, py).RGBA()
				for c, w := range want {
					if near(int(r>>8), w.r) && near(int(g>>8), w.g) && near(int(b>>8), w.b) {
						out[c]++
					}
				}
			}
		}
	}
	return out
}

// TestChartInBrowser renders the chart in headless Chromium from a
// loopback server and checks, on the screenshot, that the series are drawn
// inside the plot areas, and that an empty series draws the frames only.
func TestChartInBrowser(t *testing.T) {
	bin := chromium(t)
	zero := make([]trendmath.Point, 30)
	for i := range zero {
		zero[i].Date = trendmath.Date(time.Date(2026, 6, 1+i, 0, 0, 0, 0, time.UTC))
	}
	pages := map[string][]byte{"/drawn": page(demoSeries(t)), "/empty": page(zero)}
	var mu sync.Mutex
	var asked []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		asked = append(asked, r.URL.Path)
		mu.Unlock()
		body, ok := pages[r.URL.Path]
		if !ok {
			http.NotFound(w, r)
			return
		}
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		w.Write(body)
	}))
	defer srv.Close()

	series := slices.Concat(urgencyColours[:], []string{openedColour, fixedColour})
	const background = "#fafafa"
	measured := append(slices.Clone(series), background)
	areas := plotAreas(t, SVG("", demoSeries(t)))

	img := screenshot(t, bin, srv.URL+"/drawn")
	got := counts(img, areas, measured)
	for _, c := range urgencyColours {
		if got[c] < 500 {
			t.Errorf("area %s: %d pixels in the plot areas", c, got[c])
		}
	}
	for _, c := range []string{openedColour, fixedColour} {
		if got[c] < 300 {
			t.Errorf("line %s: %d pixels in the plot areas", c, got[c])
		}
	}
	if t.Failed() {
		t.Logf("pixels by colour: %v", got)
	}

	img = screenshot(t, bin, srv.URL+"/empty")
	got = counts(img, areas, measured)
	for _, c := range series {
		if got[c] != 0 {
			t.Errorf("empty series: %d pixels of %s in the plot areas", got[c], c)
		}
	}
	if plot := areas[0].Dx() * areas[0].Dy(); got[background] < plot {
		t.Errorf("empty series: the plot areas are not drawn (%d background pixels)", got[background])
	}

	mu.Lock()
	defer mu.Unlock()
	seen := map[string]int{}
	for _, p := range asked {
		seen[p]++
		if p != "/drawn" && p != "/empty" && p != "/favicon.ico" {
			t.Errorf("the page loaded %s", p)
		}
	}
	if seen["/drawn"] == 0 || seen["/empty"] == 0 {
		t.Errorf("the browser asked for %v", asked)
	}
}
