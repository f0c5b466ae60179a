package cli

import (
	"os"
	"path"
	"path/filepath"

	"golang.org/x/mod/modfile"
)

// selfCommand is how a user runs this CLI where they are: `go run
// ./cmd/hookinbox` in hookinbox's own module, `go tool hookinbox` in a
// module with a tool line for it or for its own main named hookinbox,
// else `hookinbox` (installed).
// Hints and banners name it, so every command they print runs as shown.
func selfCommand() string {
	wd, err := os.Getwd()
	if err != nil {
		return "hookinbox"
	}
	for d := wd; ; d = filepath.Dir(d) {
		raw, err := os.ReadFile(filepath.Join(d, "go.mod"))
		if err == nil {
			return selfCommandIn(raw)
		}
		if filepath.Dir(d) == d {
			return "hookinbox"
		}
	}
}

// selfCommandIn is selfCommand for the module whose go.mod is raw.
func selfCommandIn(gomod []byte) string {
	const module = "github.com/hookinbox/hookinbox"
	f, err := modfile.Parse("go.mod", gomod, nil)
	if err != nil {
		return "hookinbox"
	}
	if f.Module != nil && f.Module.Mod.Path == module {
		return "go run ./cmd/hookinbox"
	}
	for _, t := range f.Tool {
		if path.Base(t.Path) == "hookinbox" { // hookinbox's, or a team's own main (Main)
			return "go tool hookinbox"
		}
	}
	return "hookinbox"
}
