// Command requires imports golang.org/x/text/width, so it requires the
// golang.org/x/text module, but never imports the module's vulnerable
// language package.
package main

import (
	"fmt"

	"golang.org/x/text/width"
)

func main() { fmt.Println(width.Narrow.String("ｇｏｐｈｅｒ")) }
