package store

import (
	"encoding/base64"
	"errors"
	"maps"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/acme/codescan-api/shared/tabledef"
)

// fuzzLists are lists of two companies whose tokens the targets decode:
// on the table with a sort key prefix, on GSI1, and without a prefix.
func fuzzLists() []List {
	var out []List
	for _, c := range []int64{1, 2} {
		out = append(out, teamList(c), integrationList(c),
			List{Partition: CompanyPK(c) + "#ROWS", Forward: true, OffsetPartition: CompanyPK(c) + "#ROWS#O"})
	}
	return out
}

// companyOf is the company a list's partition belongs to (C#<n>).
func companyOf(l List) string {
	parts := strings.SplitN(l.Partition, "#", 3)
	return parts[0] + "#" + parts[1]
}

// FuzzDecodeToken: a token of queryPage's lists (by index), as sent, or
// with its checksum recomputed for the list when forge is set (the
// checksum is no secret: anyone can compute it). decodeToken answers
// ErrBadPageToken, or a cursor inside the list: its exact key attributes,
// its partition (so its company), a sort key in its prefix, a position
// after the first item. No other list, of the same company or another,
// opens the token, and the cursor encodes back to what decodes to it.
func FuzzDecodeToken(f *testing.F) {
	lists := fuzzLists()
	for i, l := range lists {
		key := map[string]string{tabledef.PK: l.Partition, tabledef.SK: l.SKPrefix + "000000000007"}
		if l.Index.Name != "" {
			key = map[string]string{tabledef.PK: "C#1", tabledef.SK: "SCM#000000000007", l.Index.PK: l.Partition, l.Index.SK: "000000000007"}
		}
		token, err := encodeToken(l, cursor{Key: key, Offset: 7})
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
				token = data + "." + base64.RawURLEncoding.EncodeToString(tokenSum(l, b))
			}
		}
		c, err := decodeToken(l, token)
		if err != nil {
			if !errors.Is(err, ErrBadPageToken) || c.Key != nil || c.Offset != 0 {
				t.Fatalf("decodeToken = %+v, %v", c, err)
			}
			return
		}
		if !slices.Equal(slices.Sorted(maps.Keys(c.Key)), l.keyAttrs()) || c.Key[l.pkAttr()] != l.Partition ||
			!strings.HasPrefix(c.Key[l.skAttr()], l.SKPrefix) || c.Offset < 1 {
			t.Fatalf("list %+v opened a cursor outside it: %+v", l, c)
		}
		for _, other := range lists {
			if other.id() == l.id() {
				continue
			}
			if oc, err := decodeToken(other, token); err == nil {
				t.Fatalf("a token of %s (company %s) opens %s (company %s): %+v", l.id(), companyOf(l), other.id(), companyOf(other), oc)
			}
		}
		again, err := encodeToken(l, c)
		if err != nil {
			t.Fatal(err)
		}
		if back, err := decodeToken(l, again); err != nil || !reflect.DeepEqual(back, c) {
			t.Fatalf("re-encoded %+v decodes to %+v, %v", c, back, err)
		}
	})
}

// FuzzDecodeKeyToken: a plain key token (the lists of keypage.go) read for
// a company's partition: ErrBadPageToken, or string key attributes whose
// partition attribute is that partition, which no other company's
// partition accepts and which encode back to the same token content.
func FuzzDecodeKeyToken(f *testing.F) {
	partitions := []string{CompanyPK(1), CompanyPK(2), CompanyPK(1) + "#WEBHOOKS", CompanyPK(12)}
	for _, key := range []map[string]string{
		{tabledef.PK: CompanyPK(1), tabledef.SK: "USERBY#all#000000000003"},
		{tabledef.PK: CompanyPK(2), tabledef.SK: "PROJECT#000000000001"},
		{tabledef.PK: "C#1#WEBHOOKS", tabledef.SK: "x", tabledef.GSI1.PK: CompanyPK(1) + "#WEBHOOKS", tabledef.GSI1.SK: "2024#id"},
		{tabledef.PK: CompanyPK(1)},
		{tabledef.PK: CompanyPK(1), tabledef.SK: "", "extra": "x"},
	} {
		av := map[string]types.AttributeValue{}
		for k, v := range key {
			av[k] = &types.AttributeValueMemberS{Value: v}
		}
		token, err := encodeKeyToken(av)
		if err != nil {
			f.Fatal(err)
		}
		for i := range partitions {
			f.Add(uint8(i), token, false)
		}
	}
	for _, s := range []string{"", "e30", "bnVsbA", "WyJDIzEiXQ", "eyJQSyI6MX0", "eyJQSyI6IkMjMSIsIlBLIjoiQyMyIn0", "!!"} {
		f.Add(uint8(0), s, true)
	}
	f.Fuzz(func(t *testing.T, i uint8, token string, index bool) {
		partition := partitions[int(i)%len(partitions)]
		pkAttr := tabledef.PK
		if index {
			pkAttr = tabledef.GSI1.PK
		}
		start, err := decodeKeyToken(token, pkAttr, partition)
		switch {
		case err != nil:
			if !errors.Is(err, ErrBadPageToken) || start != nil {
				t.Fatalf("decodeKeyToken = %v, %v", start, err)
			}
			return
		case token == "":
			if start != nil {
				t.Fatalf("no token gave a start key %v", start)
			}
			return
		}
		plain := map[string]string{}
		for k, v := range start {
			s, ok := v.(*types.AttributeValueMemberS)
			if !ok {
				t.Fatalf("attribute %s is %T", k, v)
			}
			plain[k] = s.Value
		}
		if plain[pkAttr] != partition {
			t.Fatalf("token for %s gives partition %q", partition, plain[pkAttr])
		}
		for _, other := range partitions {
			if other != partition {
				if _, err := decodeKeyToken(token, pkAttr, other); err == nil {
					t.Fatalf("a token of %s opens %s", partition, other)
				}
			}
		}
		again, err := encodeKeyToken(start)
		if err != nil {
			t.Fatal(err)
		}
		back, err := decodeKeyToken(again, pkAttr, partition)
		if err != nil || !reflect.DeepEqual(back, start) {
			t.Fatalf("re-encoded %v decodes to %v, %v", start, back, err)
		}
	})
}
