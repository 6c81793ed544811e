// Command lintme holds the mistakes the SARIF fixtures report: security
// weaknesses for gosec, quality problems for staticcheck.
package main

import (
	"crypto/md5"
	"fmt"
	"net/http"
	"os"
	"strings"

	"example.com/lintme/store"
)

const password = "hunter2-secret-password"

func main() {
	sum := md5.Sum([]byte(os.Args[0]))
	fmt.Println(sum)
	data, _ := os.ReadFile(os.Args[1])
	if strings.Index(string(data), "x") != -1 {
		fmt.Println("found")
	}
	for _, b := range []byte(password) {
		_ = b
	}
	http.ListenAndServe(":8080", nil)
	fmt.Println(store.Query(os.Args[2]))
}
