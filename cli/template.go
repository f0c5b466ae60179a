package cli

import (
	"context"
	"fmt"
	"io"
	"os"

	"github.com/hookinbox/hookinbox/internal/stacktemplate"
)

func cmdTemplate(_ context.Context, args []string, stdout, _ io.Writer) error {
	var business, output string
	fs := newFlagSet("template", "--business business.yaml [-o template.yaml]", `
Writes your stack's SAM template: hookinbox's template.yaml, as this version
of hookinbox ships it, with the example shop taken out and your business put
in from the business file (its parameters, resources, outputs, the
processor's environment and IAM statements). The file's EventTypes stripe
list becomes StripeEventTypes' default: the Stripe types the reconciler
looks for. A business table without a
DeletionPolicy keeps its data (Retain). See the stacktemplate package for
the file's keys and the contract. Generate again after upgrading hookinbox.`)
	fs.StringVar(&business, "business", "", "the business file (required)")
	fs.StringVar(&output, "o", "", "write the template to this file instead of stdout")
	rest, err := parseFlags(fs, args, stdout)
	if err != nil {
		return err
	}
	if len(rest) > 0 {
		return usagef("template takes no arguments, got %q", rest)
	}
	if business == "" {
		return usagef("--business is required")
	}
	raw, err := os.ReadFile(business)
	if err != nil {
		return err
	}
	out, err := stacktemplate.Generate(raw)
	if err != nil {
		return fmt.Errorf("%s: %w", business, err)
	}
	if output == "" {
		_, err = stdout.Write(out)
		return err
	}
	return os.WriteFile(output, out, 0o644)
}
