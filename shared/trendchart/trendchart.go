// Package trendchart renders a scope's trend for the HTML report: an
// inline SVG chart of a dense series (open issues by urgency as stacked
// areas, issues opened and fixed per day as lines, dated axes, a legend)
// and a table of time to fix and SLA compliance. The output has no script
// and no outside resource, every text is escaped, and the same input
// always renders the same bytes. (Plain string building, not
// html/template: see the report package for why.)
package trendchart

import (
	"html"
	"strconv"
	"strings"
	"time"

	"github.com/acme/codescan-api/shared/trendmath"
)

// Colours of the series, by urgency in the order of trendmath.Urgencies, and
// of the two lines.
var urgencyColours = [4]string{"#c62828", "#ef6c00", "#f9a825", "#78909c"}

const (
	openedColour = "#1565c0"
	fixedColour  = "#2e7d32"
)

var urgencyNames = [4]string{"Critical", "High", "Medium", "Low"}

// Geometry: two plot areas over one time axis.
const (
	width       = 760
	height      = 430
	left        = 56.0 // room for the y labels
	right       = 16.0
	openTop     = 40.0
	openHeight  = 180.0
	flowTop     = 262.0
	flowHeight  = 100.0
	plotWidth   = width - left - right
	dateLabelsY = flowTop + flowHeight + 18
	legendY     = dateLabelsY + 28
)

// Input is what the report's trend section shows.
type Input struct {
	Title   string            // names the chart, e.g. "Trend of payments-api"
	Points  []trendmath.Point // the dense series, oldest first (trendmath.Series)
	Fixes   trendmath.FixStats
	Open    trendmath.ByUrgency // open issues now
	PastDue trendmath.ByUrgency // of them, past their SLA deadline
}

// Section is the report's trend section: a heading, the chart and the
// time-to-fix table.
func Section(in Input) []byte {
	var b strings.Builder
	b.WriteString("<section class=\"trend\">\n<h2>")
	b.WriteString(html.EscapeString(in.Title))
	b.WriteString("</h2>\n")
	b.Write(SVG(in.Title, in.Points))
	b.Write(Table(len(in.Points), in.Fixes, in.Open, in.PastDue))
	b.WriteString("</section>\n")
	return []byte(b.String())
}

// SVG is the chart of points (oldest first). A series that counts nothing
// (no point, or every count zero) draws its frames and says so, with no
// series drawn.
func SVG(title string, points []trendmath.Point) []byte {
	var b strings.Builder
	b.WriteString(`<svg xmlns="http://www.w3.org/2000/svg" role="img" width="760" height="430" viewBox="0 0 760 430" font-family="system-ui,sans-serif" font-size="11">`)
	b.WriteString("\n<title>")
	b.WriteString(html.EscapeString(title))
	b.WriteString("</title>\n<desc>")
	b.WriteString(html.EscapeString(describe(points)))
	b.WriteString("</desc>\n")
	caption(&b, openTop-8, "Open issues at the day's end, by urgency")
	caption(&b, flowTop-8, "Issues opened and fixed per day")
	frame(&b, openTop, openHeight)
	frame(&b, flowTop, flowHeight)
	if empty(points) {
		b.WriteString(`<text x="` + num(left+plotWidth/2) + `" y="` + num(openTop+openHeight/2) + `" text-anchor="middle" fill="#555">No issues in this period</text>` + "\n")
		b.WriteString("</svg>\n")
		return []byte(b.String())
	}
	openMax, flowMax := int64(0), int64(0)
	for _, p := range points {
		openMax = max(openMax, clampSum(p.Open))
		flowMax = max(flowMax, p.Opened, p.Fixed)
	}
	openScale, flowScale := niceMax(openMax), niceMax(flowMax)
	yAxis(&b, openTop, openHeight, openScale)
	yAxis(&b, flowTop, flowHeight, flowScale)
	areas(&b, points, openScale)
	line(&b, points, flowScale, openedColour, func(p trendmath.Point) int64 { return p.Opened })
	line(&b, points, flowScale, fixedColour, func(p trendmath.Point) int64 { return p.Fixed })
	dateAxis(&b, points)
	legend(&b)
	b.WriteString("</svg>\n")
	return []byte(b.String())
}

// num formats a coordinate (one decimal: the same bytes every time).
func num(v float64) string { return strconv.FormatFloat(v, 'f', 1, 64) }

func caption(b *strings.Builder, y float64, text string) {
	b.WriteString(`<text x="` + num(left) + `" y="` + num(y) + `" font-weight="bold" fill="#222">` + html.EscapeString(text) + "</text>\n")
}

// frame draws a plot area (class plot: what is drawn inside is the data).
func frame(b *strings.Builder, top, h float64) {
	b.WriteString(`<rect class="plot" x="` + num(left) + `" y="` + num(top) + `" width="` + num(plotWidth) + `" height="` + num(h) +
		`" fill="#fafafa" stroke="#bbbbbb"/>` + "\n")
}

func empty(points []trendmath.Point) bool {
	for _, p := range points {
		if p.Opened != 0 || p.Fixed != 0 || clampSum(p.Open) != 0 {
			return false
		}
	}
	return true
}

// clampSum is the stacked height of p's open counts; a negative count
// (records that are not one snapshot) draws as zero.
func clampSum(open trendmath.ByUrgency) int64 {
	var n int64
	for _, v := range open {
		n += max(v, 0)
	}
	return n
}

// niceMax is the top of an axis showing up to v: at least 1, and 1, 1.5,
// 2, 2.5, 3, 4, 5, 6 or 8 times a power of ten (whole numbers only), so
// the data fill at least half the height.
func niceMax(v int64) int64 {
	for p := int64(1); ; p *= 10 {
		for _, m := range []int64{10, 15, 20, 25, 30, 40, 50, 60, 80} {
			if top := m * p; top%10 == 0 && top/10 >= v {
				return top / 10
			}
		}
	}
}

// yAxis labels a plot area's bottom, middle and top with grid lines.
func yAxis(b *strings.Builder, top, h float64, scale int64) {
	for _, f := range []int64{0, 1, 2} {
		v := scale * f / 2
		if f == 1 && scale%2 != 0 {
			continue // 1: no whole middle
		}
		y := top + h - h*float64(f)/2
		if f > 0 {
			b.WriteString(`<line x1="` + num(left) + `" y1="` + num(y) + `" x2="` + num(left+plotWidth) + `" y2="` + num(y) + `" stroke="#e0e0e0"/>` + "\n")
		}
		b.WriteString(`<text x="` + num(left-6) + `" y="` + num(y+4) + `" text-anchor="end" fill="#444">` + strconv.FormatInt(v, 10) + "</text>\n")
	}
}

// x is the horizontal position of point i of n.
func x(i, n int) float64 {
	if n == 1 {
		return left + plotWidth/2
	}
	return left + plotWidth*float64(i)/float64(n-1)
}

func y(top, h float64, v, scale int64) float64 {
	return top + h - h*float64(v)/float64(scale)
}

// areas stacks the open counts, most urgent at the bottom.
func areas(b *strings.Builder, points []trendmath.Point, scale int64) {
	n := len(points)
	below := make([]int64, n)
	for u := range trendmath.Urgencies {
		above := make([]int64, n)
		for i, p := range points {
			above[i] = below[i] + max(p.Open[u], 0)
		}
		var pts strings.Builder
		for i := range n {
			pts.WriteString(num(x(i, n)) + "," + num(y(openTop, openHeight, above[i], scale)) + " ")
		}
		for i := n - 1; i >= 0; i-- {
			pts.WriteString(num(x(i, n)) + "," + num(y(openTop, openHeight, below[i], scale)))
			if i > 0 {
				pts.WriteByte(' ')
			}
		}
		if n == 1 { // one day: a bar, not a line
			x0, x1 := x(0, 1)-8, x(0, 1)+8
			y0, y1 := y(openTop, openHeight, above[0], scale), y(openTop, openHeight, below[0], scale)
			pts.Reset()
			pts.WriteString(num(x0) + "," + num(y0) + " " + num(x1) + "," + num(y0) + " " + num(x1) + "," + num(y1) + " " + num(x0) + "," + num(y1))
		}
		b.WriteString(`<polygon fill="` + urgencyColours[u] + `" stroke="none" points="` + pts.String() + `"/>` + "\n")
		below = above
	}
}

func line(b *strings.Builder, points []trendmath.Point, scale int64, colour string, v func(trendmath.Point) int64) {
	n := len(points)
	var pts strings.Builder
	for i, p := range points {
		if i > 0 {
			pts.WriteByte(' ')
		}
		pts.WriteString(num(x(i, n)) + "," + num(y(flowTop, flowHeight, v(p), scale)))
	}
	if n == 1 { // one day: a short level line
		yy := num(y(flowTop, flowHeight, v(points[0]), scale))
		pts.Reset()
		pts.WriteString(num(x(0, 1)-8) + "," + yy + " " + num(x(0, 1)+8) + "," + yy)
	}
	b.WriteString(`<polyline fill="none" stroke="` + colour + `" stroke-width="2.5" stroke-linejoin="round" points="` + pts.String() + `"/>` + "\n")
}

// dateAxis labels up to six days, the first and the last included.
func dateAxis(b *strings.Builder, points []trendmath.Point) {
	n := len(points)
	last := -1
	for k := range 6 {
		i := k * (n - 1) / 5
		if i == last {
			continue
		}
		last = i
		xi := x(i, n)
		b.WriteString(`<line x1="` + num(xi) + `" y1="` + num(flowTop+flowHeight) + `" x2="` + num(xi) + `" y2="` + num(flowTop+flowHeight+4) + `" stroke="#888"/>` + "\n")
		anchor := "middle"
		switch {
		case n > 1 && i == 0:
			anchor = "start"
		case n > 1 && i == n-1:
			anchor = "end"
		}
		b.WriteString(`<text x="` + num(xi) + `" y="` + num(dateLabelsY) + `" text-anchor="` + anchor + `" fill="#444">` +
			html.EscapeString(dateLabel(points[i].Date)) + "</text>\n")
	}
}

// dateLabel is "Mar 7, 2026" for "2026-03-07" (the date as given when it
// does not parse).
func dateLabel(d string) string {
	t, err := time.Parse(time.DateOnly, d)
	if err != nil {
		return d
	}
	return t.Format("Jan 2, 2006")
}

// legend names the areas and the lines, below the plots.
func legend(b *strings.Builder) {
	xx := left
	item := func(colour, label string, isLine bool) {
		if isLine {
			b.WriteString(`<line x1="` + num(xx) + `" y1="` + num(legendY-4) + `" x2="` + num(xx+14) + `" y2="` + num(legendY-4) + `" stroke="` + colour + `" stroke-width="2.5"/>` + "\n")
		} else {
			b.WriteString(`<rect x="` + num(xx) + `" y="` + num(legendY-10) + `" width="14" height="12" fill="` + colour + `"/>` + "\n")
		}
		b.WriteString(`<text x="` + num(xx+19) + `" y="` + num(legendY) + `" fill="#222">` + html.EscapeString(label) + "</text>\n")
		xx += 19 + 7*float64(len(label)) + 18
	}
	for u := range trendmath.Urgencies {
		item(urgencyColours[u], urgencyNames[u]+" open", false)
	}
	item(openedColour, "Opened", true)
	item(fixedColour, "Fixed", true)
}

// describe is the chart's text alternative.
func describe(points []trendmath.Point) string {
	if len(points) == 0 {
		return "No days to show."
	}
	var opened, fixed, reopened, dismissed int64
	for _, p := range points {
		opened += p.Opened
		fixed += p.Fixed
		reopened += p.Reopened
		dismissed += p.Dismissed
	}
	end := points[len(points)-1].Open
	s := "From " + points[0].Date + " to " + points[len(points)-1].Date + ": " +
		strconv.FormatInt(opened, 10) + " opened, " + strconv.FormatInt(fixed, 10) + " fixed, " +
		strconv.FormatInt(reopened, 10) + " reopened, " + strconv.FormatInt(dismissed, 10) + " dismissed; open at the end:"
	for u := range trendmath.Urgencies {
		if u > 0 {
			s += ","
		}
		s += " " + strconv.FormatInt(end[u], 10) + " " + strings.ToLower(urgencyNames[u])
	}
	return s + "."
}

// Table is the time to fix and SLA compliance of the last days days' fixes
// (f) and of the open issues now (open, of them pastDue).
func Table(days int, f trendmath.FixStats, open, pastDue trendmath.ByUrgency) []byte {
	by, all := trendmath.SLACompliance(f, open, pastDue)
	var b strings.Builder
	b.WriteString("<table class=\"trend-fixes\"><caption>Time to fix and SLA compliance: fixes of the last " + strconv.Itoa(days) +
		" days, open issues now</caption>\n<thead><tr><th>Urgency</th><th>Fixed</th><th>Median days to fix</th><th>90th percentile</th>" +
		"<th>Fixed within SLA</th><th>Open past SLA</th></tr></thead><tbody>\n")
	row := func(name string, fx trendmath.Fixes, c trendmath.Compliance) {
		m, okM := fx.Median()
		p, okP := fx.P90()
		b.WriteString("<tr><td>" + html.EscapeString(name) + "</td><td>" + strconv.FormatInt(fx.Fixed, 10) + "</td><td>" +
			quantile(m, okM) + "</td><td>" + quantile(p, okP) + "</td><td>" + share(c.FixedWithinSLA) + "</td><td>" + share(c.OpenPastSLA) + "</td></tr>\n")
	}
	for u := range trendmath.Urgencies {
		row(urgencyNames[u], f.ByUrgency[u], by[u])
	}
	row("All", f.All, all)
	b.WriteString("</tbody></table>\n")
	return []byte(b.String())
}

func quantile(q trendmath.Quantile, ok bool) string {
	switch {
	case !ok:
		return "–"
	case q.Over:
		return "over " + strconv.Itoa(trendmath.MaxBucket)
	}
	return strconv.Itoa(q.Days)
}

// share is "67 % (2 of 3)", the percentage rounded half up.
func share(s trendmath.Share) string {
	if s.Of == 0 {
		return "–"
	}
	pct := (s.Part*200 + s.Of) / (2 * s.Of)
	return strconv.FormatInt(pct, 10) + " % (" + strconv.FormatInt(s.Part, 10) + " of " + strconv.FormatInt(s.Of, 10) + ")"
}
