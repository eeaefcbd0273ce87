package main

import (
	"reflect"
	"strings"
	"testing"
)

// A dump in the linker's format: the reflective call is reached from the roots through a
// method kept by name, and the chain printed is the shortest one.
const sampleDump = `# example.com/cmd
_ -> _rt0_amd64_linux
 -> main.main
 -> go:main.inittasks
main.main -> fmt.Println
go:main.inittasks -> example.com/lib..inittask
example.com/lib..inittask -> example.com/lib.init
example.com/lib.init -> type:reflect.Value <UsedInIface>
main.main -> type:reflect.Value <UsedInIface>
type:reflect.Value <UsedInIface> -> reflect.Value.Methods
reflect.Value.Methods -> reflect.Value.Methods.func1 <ReflectMethod>
reflect.Value.Methods.func1 <ReflectMethod> -> reflect.Value.Method
fmt.Println -> os.Stdout
`

func TestReflectMethodChainNamesHowTheCallIsReached(t *testing.T) {
	g, err := parseDump(strings.NewReader(sampleDump))
	if err != nil {
		t.Fatal(err)
	}
	got := g.reflectMethodChains()
	want := [][]string{{"main.main", "type:reflect.Value", "reflect.Value.Methods", "reflect.Value.Methods.func1"}}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("chains = %q, want %q", got, want)
	}
}

func TestNoChainWhenNothingCallsMethodsReflectively(t *testing.T) {
	clean := strings.ReplaceAll(sampleDump, " <ReflectMethod>", "")
	g, err := parseDump(strings.NewReader(clean))
	if err != nil {
		t.Fatal(err)
	}
	if got := g.reflectMethodChains(); len(got) != 0 {
		t.Errorf("chains = %q, want none", got)
	}
}
