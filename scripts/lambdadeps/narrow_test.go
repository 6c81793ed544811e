package main

import (
	"slices"
	"testing"
)

func TestStorePointers(t *testing.T) {
	for name, c := range map[string]struct {
		src  string
		want []int
	}{
		"field and parameter": {`package p
import "github.com/acme/codescan-api/shared/store"
type h struct{ st *store.Store }
func f(s *store.Store) {}`, []int{3, 4}},
		"renamed import": {`package p
import db "github.com/acme/codescan-api/shared/store"
var x *db.Store`, []int{3}},
		"an interface and store types": {`package p
import "github.com/acme/codescan-api/shared/store"
type Store interface{ Get() store.Issue }
var x *store.Issue
var y Store`, nil},
		"a composition": {`package p
import "github.com/acme/codescan-api/shared/store"
type Store struct{ Scans any }
func StoreOf(st *store.Store) Store { return Store{Scans: st.Scans} }`, nil},
		"a composition that calls the store": {`package p
import "github.com/acme/codescan-api/shared/store"
type Store struct{ Scans any }
func StoreOf(st *store.Store) Store { return Store{Scans: st.Client()} }`, []int{4}},
		"a composition of parts' compositions": {`package p
import "github.com/acme/codescan-api/shared/store"
type Store struct{ Part, Scans any }
func StoreOf(st *store.Store) Store { return Store{Part: part.PartOf(st), Scans: st.Scans} }`, nil},
		"a part's composition of something else": {`package p
import "github.com/acme/codescan-api/shared/store"
type Store struct{ Part any }
func StoreOf(st *store.Store) Store { return Store{Part: part.PartOf(st.Client())} }`, []int{4}},
		"a call that is no composition": {`package p
import "github.com/acme/codescan-api/shared/store"
type Store struct{ Part any }
func StoreOf(st *store.Store) Store { return Store{Part: part.Wrap(st)} }`, []int{4}},
		"a function that keeps the store": {`package p
import "github.com/acme/codescan-api/shared/store"
type Store struct{ All any }
func StoreOf(st *store.Store) Store { return Store{All: st} }`, []int{4}},
		"another package's Store": {`package p
import "github.com/acme/codescan-api/shared/reportstore"
var store struct{}
var x *reportstore.Store`, nil},
	} {
		got, err := storePointers(name+".go", []byte(c.src))
		if err != nil || !slices.Equal(got, c.want) {
			t.Errorf("%s: lines %v (%v), want %v", name, got, err, c.want)
		}
	}
}
