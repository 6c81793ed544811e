package page

import (
	"encoding/base64"
	"errors"
	"maps"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/acme/codescan-api/shared/tabledef"
)

// fuzzLists are lists of two companies whose tokens the target opens: on
// the table with a sort key prefix, on GSI1, on the table without a range,
// and one with a view.
func fuzzLists() []List {
	var out []List
	for _, c := range []string{"C#1", "C#2"} {
		out = append(out, List{Partition: c, Range: Prefix("TEAM#"), Forward: true, OffsetPartition: c + "#TEAMS"},
			List{Index: tabledef.GSI1, Partition: c + "#INTEGRATIONS", Forward: true, OffsetPartition: c + "#INTEGRATIONS"},
			List{Partition: c + "#ROWS", Forward: true, OffsetPartition: c + "#ROWS#O"},
			List{Partition: c + "#ROWS", Forward: true, View: "status=open"})
	}
	return out
}

// companyOf is the company a list's partition belongs to (C#<n>).
func companyOf(l List) string {
	parts := strings.SplitN(l.Partition, "#", 3)
	return parts[0] + "#" + parts[1]
}

// FuzzOpen: a token of the lists (by index), as sent, or with its
// checksum recomputed for the list when forge is set (the checksum is no
// secret: anyone can compute it). Open answers ErrBadToken, or a cursor
// inside the list: its exact key attributes, its partition (so its
// company), a sort key in its range, a position after the first item. No
// other list, of the same company or another, opens the token, and the
// cursor seals back to what opens to it.
func FuzzOpen(f *testing.F) {
	lists := fuzzLists()
	for i, l := range lists {
		key := map[string]string{tabledef.PK: l.Partition, tabledef.SK: l.Range.From + "000000000007"}
		if l.Index.Name != "" {
			key = map[string]string{tabledef.PK: "C#1", tabledef.SK: "SCM#000000000007", l.Index.PK: l.Partition, l.Index.SK: "000000000007"}
		}
		token, err := l.Seal(Cursor{Key: key, Offset: 7})
		if err != nil {
			f.Fatal(err)
		}
		f.Add(uint8(i), token, false)
		f.Add(uint8((i+1)%len(lists)), token, false) // another list's
		f.Add(uint8((i+3)%len(lists)), token, true)  // the other company's list, checksum forged
		data, sum, _ := strings.Cut(token, ".")
		raw, _ := base64.RawURLEncoding.DecodeString(data)
		edited := base64.RawURLEncoding.EncodeToString([]byte(strings.Replace(string(raw), `"o":7`, `"o":0`, 1)))
		f.Add(uint8(i), edited+"."+sum, true)
	}
	for _, s := range []string{"", ".", "!!.!!", "e30.", "e30", `eyJrIjp7fSwibyI6MSwieCI6MX0.AAAA`} {
		f.Add(uint8(0), s, true)
	}
	f.Fuzz(func(t *testing.T, i uint8, token string, forge bool) {
		l := lists[int(i)%len(lists)]
		if data, _, ok := strings.Cut(token, "."); forge && ok {
			if b, err := base64.RawURLEncoding.DecodeString(data); err == nil {
				token = data + "." + base64.RawURLEncoding.EncodeToString(l.sum(b))
			}
		}
		c, err := l.Open(token)
		if err != nil {
			if !errors.Is(err, ErrBadToken) || c.Key != nil || c.Offset != 0 {
				t.Fatalf("Open = %+v, %v", c, err)
			}
			return
		}
		if !slices.Equal(slices.Sorted(maps.Keys(c.Key)), l.keyAttrs()) || c.Key[l.pkAttr()] != l.Partition ||
			!l.Range.holds(c.Key[l.skAttr()]) || c.Offset < 1 {
			t.Fatalf("list %+v opened a cursor outside it: %+v", l, c)
		}
		for _, other := range lists {
			if other.id() == l.id() {
				continue
			}
			if oc, err := other.Open(token); err == nil {
				t.Fatalf("a token of %s (company %s) opens %s (company %s): %+v", l.id(), companyOf(l), other.id(), companyOf(other), oc)
			}
		}
		again, err := l.Seal(c)
		if err != nil {
			t.Fatal(err)
		}
		if back, err := l.Open(again); err != nil || !reflect.DeepEqual(back, c) {
			t.Fatalf("re-encoded %+v decodes to %+v, %v", c, back, err)
		}
	})
}
