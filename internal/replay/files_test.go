package replay_test

import (
	"os"
	"path/filepath"
)

func readFunctionFile(name string) ([]byte, error) {
	return os.ReadFile(filepath.Join("..", "..", "functions", "dlq-replay", name))
}
