package samtemplate

import (
	"bytes"
	_ "embed"
	"fmt"
	"os/exec"
)

//go:embed sam_translate.py
var translateScript string

// translateNeeds says what Translate runs.
const translateNeeds = "python3 with cfn-lint and its samtranslator (pip install cfn-lint; make test requires it)"

// Translate returns the CloudFormation template the SAM transform makes of
// the SAM template at path: what CloudFormation deploys, with the roles
// SAM generates and the statements it adds to them (event sources,
// policy templates, dead-letter queues). It runs samtranslator offline
// with python3 (translateNeeds).
func Translate(path string) (*Template, error) {
	python, err := exec.LookPath("python3")
	if err != nil {
		return nil, fmt.Errorf("SAM transform of %s needs %s: %w", path, translateNeeds, err)
	}
	var stderr bytes.Buffer
	cmd := exec.Command(python, "-c", translateScript, path)
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("SAM transform of %s: %w\n%s\nit needs %s", path, err, stderr.String(), translateNeeds)
	}
	tpl, err := Parse(out)
	if err != nil {
		return nil, fmt.Errorf("SAM transform of %s: %w", path, err)
	}
	return tpl, nil
}
