// Command reaches calls strings.ToUpper, which the test database lists.
package main

import (
	"fmt"
	"os"
	"strings"
)

func main() { fmt.Println(strings.ToUpper(strings.Join(os.Args, " "))) }
