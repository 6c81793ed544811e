// Command suppressed holds findings its author suppressed in the code and
// the same findings left unsuppressed, for the suppression fixtures.
package main

import (
	"crypto/md5"
	"fmt"
	"os"
	"strings"
)

func main() {
	// A checksum for a cache key, not for security.
	key := md5.Sum([]byte(os.Args[0])) // #nosec G401 -- cache key, not a security boundary
	fmt.Println(key)
	sum := md5.Sum([]byte(os.Args[1]))
	fmt.Println(sum)

	//lint:ignore S1003 kept to mirror the C original
	if strings.Index(os.Args[2], "x") != -1 {
		fmt.Println("found")
	}
	if strings.Index(os.Args[3], "y") != -1 {
		fmt.Println("found")
	}
}
