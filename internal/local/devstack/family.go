package devstack

import (
	"context"
	"fmt"
	"os"
)

// Families of emulators Start runs. Neither is trusted alone: make test
// runs the conformance suites and pipeline tests on both, and
// docs/contributing.md lists each one's quirks.
const (
	// familyDynalite is dynalite (DynamoDB) and local-aws-sqs (SQS), the
	// Node packages pinned in local/, and gofakes3 (S3), pinned by a tool
	// line in go.mod: the default.
	familyDynalite = "dynalite"
	// FamilyMoto is moto_server (pip install "moto[server]"), one server
	// for DynamoDB, SQS and S3, started with MOTO_ACCOUNT_ID set to AccountID
	// so its ARNs match the ones the stack builds.
	FamilyMoto = "moto"
)

// familyEnv is the environment variable that selects the family when
// Options.Family is empty: HOOKINBOX_EMULATORS=moto.
const familyEnv = "HOOKINBOX_EMULATORS"

// familyFromEnv returns the family familyEnv names, familyDynalite when it
// is unset, or an error naming the accepted values.
func familyFromEnv() (string, error) {
	return family(os.Getenv(familyEnv))
}

func family(name string) (string, error) {
	switch name {
	case "", familyDynalite:
		return familyDynalite, nil
	case FamilyMoto:
		return FamilyMoto, nil
	}
	return "", fmt.Errorf("%s=%q: want %q (dynalite and local-aws-sqs, the default) or %q (moto_server)", familyEnv, name, familyDynalite, FamilyMoto)
}

// startMotoFamily starts moto_server (StartMoto) as the Emulators of
// FamilyMoto: one server for DynamoDB and SQS.
func startMotoFamily(ctx context.Context, opts Options) (*Emulators, error) {
	m, err := StartMoto(ctx, opts)
	if err != nil {
		return nil, fmt.Errorf("%w (or unset %s to use dynalite and local-aws-sqs)", err, familyEnv)
	}
	return &Emulators{DynamoDBURL: m.URL, SQSURL: m.URL, S3URL: m.URL, Family: FamilyMoto, racyConditions: !m.SerialDynamoDB, proc: m.proc}, nil
}
