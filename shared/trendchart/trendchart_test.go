package trendchart

import (
	"bytes"
	"encoding/xml"
	"strings"
	"testing"
	"time"

	"github.com/acme/codescan-api/shared/trendmath"
)

func TestNiceMax(t *testing.T) {
	for v, want := range map[int64]int64{0: 1, 1: 1, 2: 2, 7: 8, 9: 10, 11: 15, 16: 20, 21: 25, 205: 250, 801: 1000, 1_000_001: 1_500_000} {
		if got := niceMax(v); got != want {
			t.Errorf("niceMax(%d) = %d, want %d", v, got, want)
		}
	}
}

// wellFormed parses s as XML (what an SVG must be) and counts its elements.
func wellFormed(t *testing.T, s []byte) map[string]int {
	t.Helper()
	n := map[string]int{}
	dec := xml.NewDecoder(bytes.NewReader(s))
	for {
		tok, err := dec.Token()
		if err != nil {
			if err.Error() != "EOF" {
				t.Fatalf("not well-formed: %v\n%s", err, s)
			}
			return n
		}
		if el, ok := tok.(xml.StartElement); ok {
			n[el.Name.Local]++
		}
	}
}

func TestSVG(t *testing.T) {
	points := []trendmath.Point{
		{Date: "2026-03-08", Opened: 3, Open: trendmath.ByUrgency{1, 0, 0, 0}},
		{Date: "2026-03-09", Fixed: 2, Reopened: 1, Open: trendmath.ByUrgency{2, 0, 0, 0}},
		{Date: "2026-03-10", Opened: 1, Dismissed: 4, Open: trendmath.ByUrgency{4, 0, 0, 1}},
	}
	svg := SVG(`Trend of <script>alert("x")</script> & co`, points)
	if !bytes.Equal(svg, SVG(`Trend of <script>alert("x")</script> & co`, points)) {
		t.Error("two renderings differ")
	}
	els := wellFormed(t, svg)
	if els["polygon"] != 4 || els["polyline"] != 2 || els["title"] != 1 || els["desc"] != 1 || els["script"] != 0 {
		t.Errorf("elements %v", els)
	}
	s := string(svg)
	for _, want := range []string{
		"<title>Trend of &lt;script&gt;alert(&#34;x&#34;)&lt;/script&gt; &amp; co</title>",
		"<desc>From 2026-03-08 to 2026-03-10: 4 opened, 2 fixed, 1 reopened, 4 dismissed; open at the end: 4 critical, 0 high, 0 medium, 1 low.</desc>",
		// x: 56, 400, 744; open scale 5 (max 5): y = 220 - 36 v; the critical area over zero
		`<polygon fill="#c62828" stroke="none" points="56.0,184.0 400.0,148.0 744.0,76.0 744.0,220.0 400.0,220.0 56.0,220.0"/>`,
		// low: 4..5 on the last day, 0 height before
		`<polygon fill="#78909c" stroke="none" points="56.0,184.0 400.0,148.0 744.0,40.0 744.0,76.0 400.0,148.0 56.0,184.0"/>`,
		// opened 3, 0, 1 on a scale of 3: y = 362 - 100 v / 3
		`<polyline fill="none" stroke="#1565c0" stroke-width="2.5" stroke-linejoin="round" points="56.0,262.0 400.0,362.0 744.0,328.7"/>`,
		`<polyline fill="none" stroke="#2e7d32" stroke-width="2.5" stroke-linejoin="round" points="56.0,362.0 400.0,295.3 744.0,362.0"/>`,
		`text-anchor="start" fill="#444">Mar 8, 2026</text>`, `text-anchor="end" fill="#444">Mar 10, 2026</text>`,
		`<text x="50.0" y="44.0" text-anchor="end" fill="#444">5</text>`, // top of the open axis
	} {
		if !strings.Contains(s, want) {
			t.Errorf("missing %s\nin %s", want, s)
		}
	}
	for _, banned := range []string{"<script", "href", "url(", "<image", "<foreignObject", "No issues"} {
		if strings.Contains(s, banned) {
			t.Errorf("the chart holds %q", banned)
		}
	}
}

func TestSVGDateAxis(t *testing.T) {
	points := make([]trendmath.Point, 90)
	for i := range points {
		points[i] = trendmath.Point{Date: trendmath.Date(time.Date(2026, 1, 1+i, 0, 0, 0, 0, time.UTC)), Opened: 1}
	}
	s := string(SVG("t", points))
	// six labels: days 0, 17, 35, 53, 71 and 89
	for _, want := range []string{">Jan 1, 2026<", ">Jan 18, 2026<", ">Feb 5, 2026<", ">Feb 23, 2026<", ">Mar 13, 2026<", ">Mar 31, 2026<"} {
		if !strings.Contains(s, want) {
			t.Errorf("missing label %s", want)
		}
	}
	if n := strings.Count(s, `fill="#444">Jan`) + strings.Count(s, `fill="#444">Feb`) + strings.Count(s, `fill="#444">Mar`); n != 6 {
		t.Errorf("%d date labels", n)
	}
	one := string(SVG("t", points[:1]))
	if strings.Count(one, ">Jan 1, 2026<") != 1 || !strings.Contains(one, `<polyline fill="none" stroke="#1565c0" stroke-width="2.5" stroke-linejoin="round" points="392.0,262.0 408.0,262.0"/>`) {
		t.Errorf("one day:\n%s", one)
	}
}

func TestSVGEmpty(t *testing.T) {
	zero := []trendmath.Point{{Date: "2026-03-09"}, {Date: "2026-03-10"}}
	for _, points := range [][]trendmath.Point{nil, zero} {
		svg := SVG("nothing", points)
		els := wellFormed(t, svg)
		if els["polygon"] != 0 || els["polyline"] != 0 || els["rect"] != 2 || !bytes.Contains(svg, []byte("No issues in this period")) {
			t.Errorf("%d points: %v\n%s", len(points), els, svg)
		}
	}
}

func TestTable(t *testing.T) {
	f := trendmath.FixStats{
		ByUrgency: [4]trendmath.Fixes{
			{Fixed: 3, WithinSLA: 2, Histogram: trendmath.Histogram{2: 1, 3: 1, 9: 1}},
			{Fixed: 8, WithinSLA: 1, Histogram: trendmath.Histogram{20: 2, trendmath.Over: 6}},
		},
		All: trendmath.Fixes{Fixed: 11, WithinSLA: 3, Histogram: trendmath.Histogram{2: 1, 3: 1, 9: 1, 20: 2, trendmath.Over: 6}},
	}
	s := string(Table(30, f, trendmath.ByUrgency{4, 0, 10, 6}, trendmath.ByUrgency{1, 0, 0, 6}))
	wellFormed(t, []byte(s))
	for _, want := range []string{
		"<caption>Time to fix and SLA compliance: fixes of the last 30 days, open issues now</caption>",
		"<tr><td>Critical</td><td>3</td><td>3</td><td>9</td><td>67 % (2 of 3)</td><td>25 % (1 of 4)</td></tr>",
		"<tr><td>High</td><td>8</td><td>over 365</td><td>over 365</td><td>13 % (1 of 8)</td><td>–</td></tr>",
		"<tr><td>Medium</td><td>0</td><td>–</td><td>–</td><td>–</td><td>0 % (0 of 10)</td></tr>",
		"<tr><td>Low</td><td>0</td><td>–</td><td>–</td><td>–</td><td>100 % (6 of 6)</td></tr>",
		// 11 fixes: the 6th (ceil 5.5) is over a year, as is the 10th
		"<tr><td>All</td><td>11</td><td>over 365</td><td>over 365</td><td>27 % (3 of 11)</td><td>35 % (7 of 20)</td></tr>",
	} {
		if !strings.Contains(s, want) {
			t.Errorf("missing %s\nin %s", want, s)
		}
	}
}

func TestSection(t *testing.T) {
	in := Input{Title: "Trend of a<b", Points: []trendmath.Point{{Date: "2026-03-10", Opened: 1}}}
	s := Section(in)
	els := wellFormed(t, s)
	if els["section"] != 1 || els["h2"] != 1 || els["svg"] != 1 || els["table"] != 1 {
		t.Errorf("elements %v", els)
	}
	if !bytes.HasPrefix(s, []byte("<section class=\"trend\">\n<h2>Trend of a&lt;b</h2>\n<svg ")) {
		t.Errorf("section starts %.80s", s)
	}
	if !bytes.Contains(s, []byte("fixes of the last 1 days")) {
		t.Error("the table does not span the series")
	}
}
