package main

import (
	"bytes"
	"compress/gzip"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// snippet mirrors the shape of cwe-archive.xml: default namespace, entries
// out of id order, a multi-line description, a nested Description that is
// not the weakness's own, a category and a view.
const snippet = `<?xml version="1.0" encoding="UTF-8"?>
<Weakness_Catalog Name="CWE" Version="9.9" Date="2024-07-16" xmlns="http://cwe.mitre.org/cwe-7" xmlns:xhtml="http://www.w3.org/1999/xhtml">
  <Weaknesses>
    <Weakness ID="89" Name="SQL &apos;Injection&apos;" Abstraction="Base" Status="Stable">
      <Description>Builds a query
         from	input.</Description>
      <Potential_Mitigations>
        <Mitigation><Description><xhtml:p>Use prepared statements.</xhtml:p></Description></Mitigation>
      </Potential_Mitigations>
    </Weakness>
    <Weakness ID="79" Name="Cross-site &amp; Scripting" Status="Stable">
      <Description>Emits input into a page.</Description>
    </Weakness>
  </Weaknesses>
  <Categories>
    <Category ID="310" Name="Cryptographic Issues" Status="Draft">
      <Summary>Weaknesses about crypto.</Summary>
    </Category>
  </Categories>
  <Views>
    <View ID="1000" Name="Research Concepts" Type="Graph" Status="Draft">
      <Objective>Not a finding class.</Objective>
    </View>
  </Views>
</Weakness_Catalog>`

func gunzip(t *testing.T, b []byte) string {
	t.Helper()
	zr, err := gzip.NewReader(bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	text, err := io.ReadAll(zr)
	if err != nil {
		t.Fatal(err)
	}
	return string(text)
}

func TestConvert(t *testing.T) {
	var first, second bytes.Buffer
	if err := convert(&first, strings.NewReader(snippet)); err != nil {
		t.Fatal(err)
	}
	want := "9.9\n" +
		"79\tCross-site & Scripting\tEmits input into a page.\n" +
		"89\tSQL 'Injection'\tBuilds a query from input.\n" +
		"310\tCryptographic Issues\tWeaknesses about crypto.\n"
	if got := gunzip(t, first.Bytes()); got != want {
		t.Errorf("table:\n%s\nwant:\n%s", got, want)
	}
	if err := convert(&second, strings.NewReader(snippet)); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(first.Bytes(), second.Bytes()) {
		t.Error("two conversions of the same XML differ")
	}
}

func TestConvertRejects(t *testing.T) {
	cases := map[string]string{
		"no version": `<Weakness_Catalog><Weaknesses><Weakness ID="1" Name="A"><Description>d</Description></Weakness></Weaknesses></Weakness_Catalog>`,
		"no entries": `<Weakness_Catalog Version="4.15"><Views><View ID="1000" Name="V"/></Views></Weakness_Catalog>`,
		"duplicate":  `<Weakness_Catalog Version="4.15"><Weakness ID="1" Name="A"><Description>d</Description></Weakness><Category ID="1" Name="B"><Summary>s</Summary></Category></Weakness_Catalog>`,
		"no name":    `<Weakness_Catalog Version="4.15"><Weakness ID="1" Name=" "><Description>d</Description></Weakness></Weakness_Catalog>`,
		"no text":    `<Weakness_Catalog Version="4.15"><Weakness ID="1" Name="A"><Description><xhtml:p xmlns:xhtml="x">d</xhtml:p></Description></Weakness></Weakness_Catalog>`,
		"bad id":     `<Weakness_Catalog Version="4.15"><Weakness ID="x" Name="A"><Description>d</Description></Weakness></Weakness_Catalog>`,
		"zero id":    `<Weakness_Catalog Version="4.15"><Weakness ID="0" Name="A"><Description>d</Description></Weakness></Weakness_Catalog>`,
		"truncated":  `<Weakness_Catalog Version="4.15"><Weakness ID="1" Name="A"><Descr`,
	}
	for name, xml := range cases {
		var out bytes.Buffer
		if err := convert(&out, strings.NewReader(xml)); err == nil {
			t.Errorf("%s: converted without error", name)
		}
	}
}

func TestRunWritesFile(t *testing.T) {
	dir := t.TempDir()
	in, out := filepath.Join(dir, "in.xml"), filepath.Join(dir, "out.tsv.gz")
	if err := os.WriteFile(in, []byte(snippet), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := run(in, out); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	if got := gunzip(t, b); !strings.HasPrefix(got, "9.9\n79\t") {
		t.Errorf("written table starts %q", got[:min(len(got), 20)])
	}

	// A failed conversion leaves the previous table as it was.
	if err := os.WriteFile(in, []byte("<Weakness_Catalog>"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := run(in, out); err == nil {
		t.Fatal("run accepted a catalogue without entries")
	}
	after, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(after, b) {
		t.Error("a failed run changed the previous table")
	}
	if left, _ := filepath.Glob(filepath.Join(dir, ".catalogue-*")); len(left) > 0 {
		t.Errorf("temporary files left: %v", left)
	}
}
