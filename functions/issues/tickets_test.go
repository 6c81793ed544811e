package issues_test

import (
	"context"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/acme/codescan-api/internal/testenv"
	"github.com/acme/codescan-api/shared/store/schema"
	storetickets "github.com/acme/codescan-api/shared/store/tickets"
)

// ids reads every page of GET /issues by number and returns the ids in
// order and the total.
func (w *world) ids(t *testing.T, q url.Values, size int) ([]string, int) {
	t.Helper()
	var out []string
	total := -1
	for n := 1; ; n++ {
		p := w.page(t, "/issues", clone(q, "page", strconv.Itoa(n), "page_size", strconv.Itoa(size)))
		if total >= 0 && p.TotalIssues != total {
			t.Fatalf("total moved from %d to %d", total, p.TotalIssues)
		}
		total = p.TotalIssues
		for _, i := range p.Issues {
			out = append(out, i.ID)
		}
		if len(p.Issues) < size {
			return out, total
		}
	}
}

// Tickets on issues: answers list an issue's tickets (an empty array when
// none); has_ticket and ticket_state take exactly the issues the ticket
// links list, with the other filters, totals and pages exact.
func TestTicketFilters(t *testing.T) {
	env := testenv.New(t)
	w := newWorld(t, env, "Acme", 80, 7)
	ctx := context.Background()
	area := storetickets.New(env.Store.Client(), env.Store.TableName(), nil)
	var all []string
	for id := range w.issues {
		all = append(all, id)
	}
	slices.Sort(all)
	openIDs, closedIDs := all[:20], all[15:30] // five issues on both tickets
	record := func(group, key string, ids []string) schema.TicketLink {
		l, err := area.ClaimLink(ctx, w.company.ID, "rule", group, 0, "o", time.Now(), time.Minute)
		if err != nil {
			t.Fatal(err)
		}
		l, err = area.RecordLink(ctx, w.company.ID, l.ID, "o", storetickets.Ticket{System: "jira", Integration: "in", Key: key,
			URL: "https://acme.atlassian.net/browse/" + key, State: storetickets.StateOpen}, ids)
		if err != nil {
			t.Fatal(err)
		}
		return l
	}
	record("a", "SEC-1", openIDs)
	closed := record("b", "SEC-2", closedIDs)
	if _, err := area.SetState(ctx, closed, storetickets.StateClosed, storetickets.ResolutionWont, false); err != nil {
		t.Fatal(err)
	}
	want := func(match func(id string) bool, status string) []string {
		var out []string
		for _, id := range all {
			if match(id) && (status == "" || w.issues[id].Status == status) {
				out = append(out, id)
			}
		}
		return out
	}
	inOpen := func(id string) bool { return slices.Contains(openIDs, id) }
	inClosed := func(id string) bool { return slices.Contains(closedIDs, id) }
	any := func(id string) bool { return inOpen(id) || inClosed(id) }
	status := w.issues[all[17]].Status
	for _, c := range []struct {
		q     url.Values
		match func(string) bool
		st    string
	}{
		{vals("has_ticket", "true"), any, ""},
		{vals("ticket_state", "open"), inOpen, ""},
		{vals("has_ticket", "true", "ticket_state", "closed"), inClosed, ""},
		{vals("has_ticket", "true", "status", status), any, status},
	} {
		got, total := w.ids(t, c.q, 7)
		exp := want(c.match, c.st)
		slices.Sort(got)
		if !slices.Equal(got, exp) || total != len(exp) {
			t.Errorf("%v: %d ids (total %d), want %d", c.q, len(got), total, len(exp))
		}
	}
	// has_ticket=false: the plain list's order without the ticketed ones.
	plain, _ := w.ids(t, vals("status", status), 9)
	without, total := w.ids(t, vals("has_ticket", "false", "status", status), 4)
	exp := slices.DeleteFunc(slices.Clone(plain), any)
	if !slices.Equal(without, exp) || total != len(exp) {
		t.Fatalf("has_ticket=false: %d ids (total %d), want %d", len(without), total, len(exp))
	}
	// The answers show the tickets; an issue with none shows [].
	res := w.get(t, "/issue/"+all[17], nil)
	if !strings.Contains(string(res.Body), `"tickets":[{"system":"jira","key":"SEC-1","url":"https://acme.atlassian.net/browse/SEC-1","state":"open"},`+
		`{"system":"jira","key":"SEC-2","url":"https://acme.atlassian.net/browse/SEC-2","state":"closed"}]`) {
		t.Fatalf("an issue on two tickets: %s", res.Body)
	}
	if res := w.get(t, "/issue/"+all[79], nil); !strings.Contains(string(res.Body), `"tickets":[]`) {
		t.Fatalf("an issue without tickets: %s", res.Body)
	}
	for _, q := range []url.Values{vals("has_ticket", "maybe"), vals("ticket_state", "done"), vals("has_ticket", "false", "ticket_state", "open")} {
		if res := w.get(t, "/issues", q); res.Status != 400 {
			t.Errorf("%v: %d %s", q, res.Status, res.Body)
		}
	}
	// Another company's tickets are not this one's.
	other := newWorld(t, env, "Globex", 5, 8)
	if p := other.page(t, "/issues", vals("has_ticket", "true")); p.TotalIssues != 0 {
		t.Fatalf("another company: %d ticketed", p.TotalIssues)
	}
}
