// Command gen writes types_gen.go and methods_gen.go from protocol/schema.json.
//
//	go run ./internal/gen [-schema ../../protocol/schema.json] [-out sidecar]   (from clients/go)
package main

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"

	"github.com/session-sidecar/session-sidecar/clients/go/internal/schemagen"
)

func main() {
	schema := flag.String("schema", "../../protocol/schema.json", "path of protocol/schema.json")
	out := flag.String("out", "sidecar", "folder of the sidecar package")
	flag.Parse()
	data, err := os.ReadFile(*schema)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	files, err := schemagen.Generate(data)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	for name, content := range files {
		if err := os.WriteFile(filepath.Join(*out, name), content, 0o644); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
	}
}
