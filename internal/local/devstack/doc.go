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
//     group and waits for it. No child outlives the Go process that started
//     it: the emulators exit when the stdin pipe it holds closes, and on
//     Linux every child also gets SIGKILL as its parent death signal. A
//     Function's runtime, which aws-lambda-rie puts in a group of its own, is
//     killed by Stop and exits by itself when its Runtime API goes away.
//   - When AWS_ENDPOINT_URL_DYNAMODB, AWS_ENDPOINT_URL_SQS or AWS_ENDPOINT_URL
//     is set (LocalStack, for example), Start uses those endpoints and starts
//     nothing.
//   - Stacks are named per caller, so tests sharing one set of emulators do
//     not see each other's tables and queues.
//
// Start, CreateStack and the Function methods are safe for concurrent use;
// Shared shares one set of emulators between all callers of a process;
// devstacktest gives tests those and stacks of their own.
// Library code here never exits the process or panics; failures are errors.
package devstack
