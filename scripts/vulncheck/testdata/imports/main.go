// Command imports uses package strings but never strings.ToUpper.
package main

import (
	"fmt"
	"os"
	"strings"
)

func main() { fmt.Println(strings.ToLower(strings.Join(os.Args, " "))) }
