// Command readfile prints a file of the directory it is given: the path
// is joined from the caller's input, the weakness gosec's G304 reports.
package main

import (
	"fmt"
	"os"
	"path/filepath"
)

func show(dir, name string) error {
	f, err := os.Open(filepath.Join(dir, name))
	if err != nil {
		return err
	}
	defer f.Close()
	info, err := f.Stat()
	fmt.Println(info.Size())
	return err
}

func main() {
	if err := show("/srv/files", "report.txt"); err != nil {
		fmt.Println(err)
	}
}
