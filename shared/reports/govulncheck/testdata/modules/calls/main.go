// Command calls reaches vulnerable gjson symbols through a helper package
// and imports golang.org/x/text/language without calling its vulnerable
// functions.
package main

import (
	"fmt"

	"golang.org/x/text/language"

	"example.com/calls/internal/query"
)

func main() {
	fmt.Println(query.Name(`{"name":"gopher"}`))
	fmt.Println(language.Make("en-US"))
}
