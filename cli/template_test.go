package cli

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/hookinbox/hookinbox/internal/stacktemplate"
)

func TestTemplateWritesTheGeneratedTemplate(t *testing.T) {
	business := filepath.Join("..", "examples", "custom-business", "business.yaml")
	raw, err := os.ReadFile(business)
	if err != nil {
		t.Fatal(err)
	}
	want, err := stacktemplate.Generate(raw)
	if err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(t.TempDir(), "template.yaml")
	var stdout, stderr bytes.Buffer
	if code := run(context.Background(), []string{"template", "--business", business, "-o", out}, &stdout, &stderr); code != 0 {
		t.Fatalf("exit %d: %s", code, stderr.String())
	}
	if got, err := os.ReadFile(out); err != nil || !bytes.Equal(got, want) {
		t.Errorf("-o wrote %d bytes (%v), want the %d of stacktemplate.Generate", len(got), err, len(want))
	}
	stdout.Reset()
	if code := run(context.Background(), []string{"template", "--business", business}, &stdout, &stderr); code != 0 || !bytes.Equal(stdout.Bytes(), want) {
		t.Errorf("stdout: exit %d, %d bytes; want 0 and the generated template", code, stdout.Len())
	}
	if code := run(context.Background(), []string{"template"}, &stdout, &stderr); code != 2 {
		t.Errorf("without --business: exit %d, want 2 (usage)", code)
	}
}
