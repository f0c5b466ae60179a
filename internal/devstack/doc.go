// Package devstack runs hookinbox against local AWS-compatible servers: the
// emulators pinned in local/ (dynalite for DynamoDB, local-aws-sqs for SQS),
// the template's tables and queues created on them, and Lambda functions under
// the Runtime Interface Emulator exactly as `sam local` runs them.
//
// Guarantees:
//
//   - Every server it starts listens on 127.0.0.1 only, on a port the server
//     picked or the caller gave.
//   - Every child process runs in its own process group and Stop kills the
//     group and waits for it. The emulators also exit on their own when the
//     Go process that started them exits, because they watch the stdin pipe
//     it holds; a Function's runtime exits when its emulator goes away.
//   - When AWS_ENDPOINT_URL_DYNAMODB, AWS_ENDPOINT_URL_SQS or AWS_ENDPOINT_URL
//     is set (LocalStack, for example), Start uses those endpoints and starts
//     nothing.
//   - Stacks are named per caller, so tests sharing one set of emulators do
//     not see each other's tables and queues.
//
// Start, CreateStack and the Function methods are safe for concurrent use;
// ForTest shares one set of emulators between all tests of a test binary.
// Library code here never exits the process or panics; failures are errors.
package devstack
