package main

import (
	"fmt"

	"github.com/gogo/protobuf/plugin/unmarshal"
	"github.com/gogo/protobuf/protoc-gen-gogo/generator"
)

// main registers gogo/protobuf's unmarshal plugin with a generator and
// runs it: the code path of GO-2021-0053 (CVE-2021-3121).
func main() {
	g := generator.New()
	p := unmarshal.NewUnmarshal()
	p.Init(g)
	p.Generate(nil)
	fmt.Println(p.Name())
}
