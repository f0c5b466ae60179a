package cli

import "testing"

func TestSelfCommandIn(t *testing.T) {
	tests := map[string]struct{ gomod, want string }{
		"hookinbox":          {"module github.com/hookinbox/hookinbox\n\ngo 1.26\n", "go run ./cmd/hookinbox"},
		"a team's tool line": {"module example.com/shop\n\ngo 1.26\n\ntool github.com/hookinbox/hookinbox/cmd/hookinbox\n", "go tool hookinbox"},
		"a tool block":       {"module example.com/shop\n\ntool (\n\tgithub.com/hookinbox/hookinbox/cmd/hookinbox\n)\n", "go tool hookinbox"},
		"a team's own main":  {"module example.com/shop\n\ngo 1.26\n\ntool example.com/shop/cmd/hookinbox\n", "go tool hookinbox"},
		"installed":          {"module example.com/other\n", "hookinbox"},
	}
	for name, tt := range tests {
		if got := selfCommandIn([]byte(tt.gomod)); got != tt.want {
			t.Errorf("%s: %q, want %q", name, got, tt.want)
		}
	}
}
